"""Health-insurance ids by their published rules (tracegym/redact/national.py): Germany's Krankenversichertennummer,
Australia's Medicare card number and the US Medicare Beneficiary Identifier, values built here from each rule,
found after their labels in prose, tables, keys, FHIR identifier systems and HL7 v2 CX fields; the same shapes with
a broken check or a letter CMS never issues, and numbers of other kinds after other words, not found."""

from __future__ import annotations

import random

import pytest

from tracegym.redact.detect import Detector
from tracegym.redact.national import au_medicare, kvnr, us_mbi

DETECTOR = Detector()
RNG = random.Random(40)
_MBI_LETTERS = "ACDEFGHJKMNPQRTUVWXY"


def make_kvnr() -> str:
    letter = RNG.choice("ABCDEFGHJKLMNPRSTUVWXYZ")
    body = "".join(RNG.choice("0123456789") for _ in range(8))
    digits = f"{ord(letter) - 64:02d}{body}"
    total = sum(sum(divmod(int(c) * (1 + i % 2), 10)) for i, c in enumerate(digits))
    return f"{letter}{body}{total % 10}"


def make_medicare() -> str:
    body = str(RNG.randint(2, 6)) + "".join(RNG.choice("0123456789") for _ in range(7))
    check = sum(int(c) * w for c, w in zip(body, (1, 3, 7, 9, 1, 3, 7, 9), strict=True)) % 10
    return f"{body[:4]} {body[4:]}{check} {RNG.randint(1, 9)}"


def make_mbi() -> str:
    pick = {"N": "123456789", "0": "0123456789", "A": _MBI_LETTERS, "B": _MBI_LETTERS + "0123456789"}
    return "".join(RNG.choice(pick[p]) for p in ("N", "A", "B", "0", "A", "B", "0", "A", "A", "0", "0"))


def _found(text: str) -> set[str]:
    return {f.value for f in DETECTOR.find(text)}


def test_the_checks_follow_the_published_rules() -> None:
    assert kvnr("A123456780") and not kvnr("A123456781") and not kvnr("1234567890")
    assert au_medicare("2123 45670 1") and au_medicare("21234567011") and not au_medicare("2123 45671 1")
    assert not au_medicare("7123 45670 1") and not au_medicare("2123456710 0")
    assert us_mbi("1EG4-TE5-MK73") and not us_mbi("0EG4TE5MK73") and not us_mbi("1SG4TE5MK73")
    assert not us_mbi("1EG4TE5MKZ3") and not us_mbi("1EG4TE5M273")
    for _ in range(50):
        assert kvnr(make_kvnr()) and au_medicare(make_medicare()) and us_mbi(make_mbi())


@pytest.mark.parametrize("template", [
    "Krankenversichertennummer: {v}",
    "Versicherten-Nr. {v} laut Karte",
    "eGK Versichertennummer={v}",
    "Patientin, KVNR {v}, Aufnahme heute",
    "| KVNR | {v} |",
    '{{"kvnr": "{v}"}}',
    '{{"patientKvnr": "{v}"}}',
    '{{"identifier": [{{"system": "http://fhir.de/sid/gkv/kvid-10", "value": "{v}"}}]}}',
])
def test_kvnr_after_its_label(template: str) -> None:
    value = make_kvnr()
    assert value in _found(template.format(v=value))


@pytest.mark.parametrize("template", [
    "Medicare number: {v}",
    "Medicare card no. {v} (exp 04/27)",
    "Medicare # {v}",
    "| Medicare card number | {v} |",
    '{{"medicareNumber": "{v}"}}',
    '{{"identifier": [{{"system": "http://ns.electronichealth.net.au/id/medicare-number", "value": "{c}"}}]}}',
    "PID|1||{c}^^^AUSHIC^MC~MRN4471^^^BAYSIDE^MR||CITIZEN^ALEX",
])
def test_au_medicare_after_its_label(template: str) -> None:
    value = make_medicare()
    compact = value.replace(" ", "")
    found = _found(template.format(v=value, c=compact))
    assert value in found or compact in found


@pytest.mark.parametrize("template", [
    "Medicare Beneficiary Identifier (MBI): {v}",
    "MBI {v} on file",
    "Medicare ID={v}",
    "| MBI | {v} |",
    '{{"mbi": "{v}"}}',
    '{{"beneficiaryMbi": "{v}"}}',
    '{{"identifier": [{{"system": "http://hl7.org/fhir/sid/us-mbi", "value": "{v}"}}]}}',
    "PID|1||MRN8812^^^HOSP^MR~{v}^^^CMS&2.16.840.1.113883.4.927&ISO^MC||DOE^JAMIE",
])
@pytest.mark.parametrize("dashed", [False, True])
def test_mbi_after_its_label(template: str, dashed: bool) -> None:
    value = make_mbi()
    if dashed:
        value = f"{value[:4]}-{value[4:7]}-{value[7:]}"
    assert value in _found(template.format(v=value))


@pytest.mark.parametrize("text", [
    "Order 2123456701 shipped",
    "Invoice no. 4123 45670 1 due",
    "Medicare claim total 2123 45670 1",
    "Medicare number: 2123 45671 1",
    "KVNR: A123456781",
    "Versichertennummer: A111111111",
    "Artikel B123456789 im Lager",
    "MBI: 1SG4-TE5-MK73",
    "MBI 1EG4TE5MKZ3",
    "SKU 1EG4TE5MK73 restocked",
    "build 3KP5-KE7-TD88 deployed",
    "PID|1||1234567890^^^HOSP^MC||DOE^JANE",
    "PID|1||2123456701^^^HOSP^MR||DOE^JANE",
])
def test_other_numbers_and_broken_checks_are_left(text: str) -> None:
    assert not {f for f in DETECTOR.find(text) if f.rule.name == "national_id"}


@pytest.mark.parametrize("text, value", [
    ("Guest Wi-Fi (SSID WARD-GUEST) key: maple-otter-cloud-42", "maple-otter-cloud-42"),
    ("WLAN-Schlüssel: Tannen#Wald77", "Tannen#Wald77"),
    ("mot de passe du Wi-Fi : Soleil-Rouge-19", "Soleil-Rouge-19"),
    ("clave WiFi = Lluvia.Norte.88", "Lluvia.Norte.88"),
    ("Wi-Fi-avain: kuu+Tahti91", "kuu+Tahti91"),
    ("סיסמת Wi-Fi = Zq81!mmpQ", "Zq81!mmpQ"),
    ("Ο κωδικός Wi-Fi είναι Kypros2024!x", "Kypros2024!x"),
    ("chiave Wi-Fi: -Rq7v-31mTz", "-Rq7v-31mTz"),
    ("/interface wireless security-profiles add name=lab wpa2-pre-shared-key=Rt7+mQ?x-Lp2", "Rt7+mQ?x-Lp2"),
    ("/interface wireless security-profiles add name=lab wpa2-pre-shared-key=!Bx3wGk5wqYWOyU", "!Bx3wGk5wqYWOyU"),
])
def test_a_wifi_key_named_with_its_network(text: str, value: str) -> None:
    assert value in _found(text)


@pytest.mark.parametrize("text", [
    "Wi-Fi key: see the sticker",
    "Wi-Fi key rotation: monthly",
    "chiave Wi-Fi: --verbose",
    "the wifi token is refreshed hourly",
    "psk: !vault |",
    "password: !Base64",
])
def test_wifi_words_without_a_key_are_left(text: str) -> None:
    assert not _found(text)


def test_a_steamcmd_login_still_ends_at_the_next_command() -> None:
    assert "Hunter22pw" in _found("steamcmd +login bob Hunter22pw +quit")


@pytest.mark.parametrize("text, value", [
    ("NTE|1|P|संपर्क — 09812345670 (शाम के बाद)\r", "09812345670"),
    ("संपर्क: 98123 45670", "98123 45670"),
])
def test_a_number_after_hindi_contact(text: str, value: str) -> None:
    assert value in _found(text)


def test_a_record_id_after_hindi_contact_is_left() -> None:
    assert not _found("संपर्क 620600585")


@pytest.mark.parametrize("text, value", [
    ("2FA / TOTP - hier die Daten.\n\n• Geheimnis: JBSWY3DPEHPK3PXP\n", "JBSWY3DPEHPK3PXP"),
    ('{"note": "MFA setup — Aquí tienes los datos:\\n- clave secreta: KRSXG5CTMVRXEZLU"}', "KRSXG5CTMVRXEZLU"),
    ("TOTP — Heto ang hiniling mo.\n\n• sikreto: MZXW6YTBOI4DQNRT\n", "MZXW6YTBOI4DQNRT"),
    ("2FA — إليك ما طلبت.\n• المفتاح السري: GEZDGNBVGY3TQOJQ\n", "GEZDGNBVGY3TQOJQ"),
])
def test_a_totp_secret_under_a_second_factor_heading(text: str, value: str) -> None:
    assert value in _found(text)


@pytest.mark.parametrize("text", [
    "2FA enabled for the account.\n\nkey: see the vault\n",
    "MFA rollout notes\n\nkey id: 9f8e1c0b7a6d5e4f\n",
    "TOTP drift seen on the kiosk.\nticket: INC0012345\n",
])
def test_a_second_factor_heading_without_a_secret_is_left(text: str) -> None:
    assert not {f for f in DETECTOR.find(text) if f.rule.name == "totp_seed"}
