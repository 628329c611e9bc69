"""Secrets and personal data as universities and research in the Nordics, the Baltics and the Low Countries hold
them (the fifty-fifth corpus's causes): Iceland's and Estonia's seven-digit numbers, the closed plans' service
ranges, Northern Sami words, the names of free numbers and company numbers in these languages, the groups after an
IBAN's head, jwt.io's sample token. Values written for these tests."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


def _rules(text: str) -> list[str]:
    return [f.rule.name for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "value"), [
    ("sími: 421 7788", "421 7788"),  # Iceland, geographic (Reykjanes)
    ("farsími 694-2210", "694-2210"),  # Iceland, mobile
    ('{"sími": "862 0147"}', "862 0147"),
    ("telefon: 627 3391", "627 3391"),  # Estonia, Tallinn geographic
    ("mobiil 512 4470", "512 4470"),  # Estonia, a seven-digit mobile
    ("tel. 736 0924", "736 0924")])  # Estonia, Tartu geographic
def test_seven_digit_numbers_of_iceland_and_estonia_after_a_phone_word(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "telefon: 800 33 221",  # Norway's free-of-charge range (Nkom)
    "tlf. 80 20 30 40",  # Denmark's 80
    "sími 800 4455",  # Iceland's freephone
    "telefon 800 1234",  # Estonia's
    "sími 112 3456"])  # no plan of the table opens a seven-digit number with 1 (9: the Maldives' mobiles)
def test_service_numbers_of_the_closed_plans_are_no_person_s(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("telefovdna: 412 34 567", "412 34 567"),
    ("mobiila 924 81 350", "924 81 350")])
def test_northern_sami_phone_words(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "maksuton palvelunumero 0800 412 733",
    "gratis nummer 0800-2231 (klantenservice)",
    "grønt nummer 800 41 515",
    "grönt nummer 020-12 34 56",
    "ondernemingsnummer 0403.170.701",
    "numéro d'entreprise 0403.170.701"])
def test_free_numbers_and_company_numbers_named_as_such(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("s. 587 2240", "587 2240"),
    ("Kveðja, Jón. S.: 699-1873", "699-1873"),
    ('{"s.": "771 0452"}', "771 0452")])
def test_icelandic_numbers_after_the_abbreviation_for_simi(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "s. 800 1234",  # Iceland's free-of-charge range
    "se s. 412-418",  # pages
    "s. 587 22401"])  # more digits than the plan's seven
def test_the_abbreviation_for_simi_needs_iceland_s_shape(text: str) -> None:
    assert _values(text) == []

@pytest.mark.parametrize("text", ["sími 4217788", "telefon 6273391", "tel. 7352013"])
def test_seven_digits_in_one_run_are_no_number_of_the_grouped_plans(text: str) -> None:
    assert _values(text) == []


def test_the_groups_after_an_iban_head_are_no_card() -> None:
    assert "card" not in _rules("IBAN check failed: LT12 4571 6203 8815 2908")
    assert _values("card 4571 6203 8815 2908") == ["4571 6203 8815 2908"]


_HEAD = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0NzExIiwibmFtZSI6IkthcmkgTm9yZG1hbm4iLCJpYXQiOjE3MDAwMDAwMDB9"


def test_a_jwt_signed_with_the_debugger_s_published_secret_is_a_sample() -> None:
    sample = f"{_HEAD}.z6nyi_N8iPePYcrd-DbY4xWRE-yzihnGUQHMGbmHTPU"  # HS256, `your-256-bit-secret`
    sample512 = ("eyJhbGciOiJIUzUxMiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0NzExIiwibmFtZSI6IkthcmkgTm9yZG1hbm4iLCJpYXQiOjE3M"
                 "DAwMDAwMDB9.7RM0Y6SPBABNPQZ1H2frd4IgFDkS_6bg0LBXGOJBwPur7ijrzBfvxa7LcQMtPgmEQQz1QAV81YmnRgJy4iuxkA")
    signed = f"{_HEAD}.KbCUYcTZrJwTwthBb5whFsQRtnOdoLaMj_e44Hp88ZU"  # another secret
    assert "jwt" not in _rules(f"README: try {sample}")
    assert "jwt" not in _rules(f"README: try {sample512}")
    assert _values(f"Authorization: Bearer {signed}") == [signed]


@pytest.mark.parametrize(("text", "value"), [
    ("db password (salasana) Rk7wQm2ZtLp9xVb4", "Rk7wQm2ZtLp9xVb4"),
    ("admin password (mot de passe) Hq3vNz8TkW5mYd2s", "Hq3vNz8TkW5mYd2s"),
    ("PASSWORD .......... Tn6pXc4RwK9mLq2z", "Tn6pXc4RwK9mLq2z"),
    ("beassansátni: guolli-várri-jávri27", "guolli-várri-jávri27"),
    ("PEPPI_DBPASS=tammi-koivu-kuusi58", "tammi-koivu-kuusi58"),
    ("mc alias set archive https://s3.lab.example.org svc-archive 'kuusi-tammi-lumi44'", "kuusi-tammi-lumi44")])
def test_password_forms_of_nordic_forms_and_tools(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize(("text", "value"), [
    ("row;field;value\n118;salasana;Ruska-2031-kelo", "Ruska-2031-kelo"),
    ("id,key,value\n7,wachtwoord,Polder-8812-duin", "Polder-8812-duin"),
    ("record;attribute;value\n55;clé API Zenodo;c7e1d09b4a3f52e8b6d9a0f1e2c3b4a5", "c7e1d09b4a3f52e8b6d9a0f1e2c3b4a5")])
def test_key_value_exports_label_the_value_cell_with_the_field_cell(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_a_key_value_export_needs_its_header() -> None:
    assert _values("row;note;comment\n118;salasana;Ruska-2031-kelo") == []


@pytest.mark.parametrize(("text", "value"), [
    ("2FA seed HQZK4WTPN3YB7DJM", "HQZK4WTPN3YB7DJM"),
    ("authenticator key 4kqz wbn7 tpyh dm2x", "4kqz wbn7 tpyh dm2x"),
    ("MFA-avain: PW7QJ3TKZB4NXHMD", "PW7QJ3TKZB4NXHMD"),
    ("Moodle čoavdda: 9b1f3e7a2c4d6058e1a3b5c7d9f02468", "9b1f3e7a2c4d6058e1a3b5c7d9f02468")])
def test_second_factor_seeds_and_keys_after_their_labels(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize(("text", "value"), [
    ("Kaltura API raktas Zq8RkT3mWp2XvN7cLd4Y", "Zq8RkT3mWp2XvN7cLd4Y"),
    ("API-sleutel voor Zenodo Hn4TqW8zKp3VmR6cXb", "Hn4TqW8zKp3VmR6cXb")])
def test_short_keys_right_after_api_key_words(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_a_word_after_api_key_words_is_no_key() -> None:
    assert _values("API-sleutel voor Zenodo aangevraagd door onderzoeksgroep") == []


@pytest.mark.parametrize(("text", "value"), [
    ("CPR-nr.: 070761-4285", "070761-4285"),
    ('{"cpr": "1302059917"}', "1302059917"),  # a seventh digit 9 and year 05: born 2005
    ("CPR number 250348-1733", "250348-1733"),
    ("personas kods: 120489-14572", "120489-14572"),
    ("Latvian personal code 29029211389", "29029211389"),
    ("persovdnanummar: 19880714-3212", "19880714-3212"),
    ("Estonian personal code 49103152741", "49103152741"),
    ("Nationalregisternummer: 85073003328", "85073003328")])
def test_nordic_and_baltic_national_ids_after_their_labels(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "CPR-nr.: 320161-4285",  # no 32nd day
    "CPR training on 2024-05-06",
    "personas kods: 120489-14573",  # check digit off
    "personas kods: 120489-34572"])  # no century 3
def test_nordic_and_baltic_national_ids_need_their_checks(text: str) -> None:
    assert _values(text) == []


_UUID_KEY = "3f9c2a71-58d4-4e0b-9a6c-1d2e7b40c5f8"


@pytest.mark.parametrize("text", [
    f"Panopto nøkkel {_UUID_KEY}",
    f'{{"clé Dataverse": "{_UUID_KEY}"}}',
    f"sleutel voor Zenodo: {_UUID_KEY}",
    f"Kaltura nyckel .......... {_UUID_KEY}",
    f"Heroku anahtarı: {_UUID_KEY}",  # every word for key the rules list, Turkish and Vietnamese too
    f"khóa Dataverse: {_UUID_KEY}",
    f"claves de Mux: {_UUID_KEY}"])
def test_a_uuid_after_a_key_word_a_service_names_is_its_key(text: str) -> None:
    assert _values(text) == [_UUID_KEY]


@pytest.mark.parametrize("text", [
    f"Votre clé : {_UUID_KEY}",  # a determiner, no service
    f"partition sleutel Orders {_UUID_KEY}",  # a key named by what it keys
    f"Redis key {_UUID_KEY}"])  # English: a bare key word before a UUID names an id
def test_a_uuid_after_a_bare_key_word_stays_an_id(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("cookie _shibsession_a1b2c3d4e5f60718293a4b5c6d7e8f90=_9f8e7d6c5b4a39281706f5e4d3c2b1a0",
     "_9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ("note: SimpleSAMLAuthToken=_3c1f0e9d8b7a69584736251403f2e1d0c9b8a7f6",
     "_3c1f0e9d8b7a69584736251403f2e1d0c9b8a7f6")])
def test_single_sign_on_cookies_of_the_research_federations(text: str, value: str) -> None:
    assert _values(text) == [value]
