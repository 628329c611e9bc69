"""Property and tenancy records of the Gulf, Turkey and North Africa: phone numbers after the region's words for them
(Gulf and Egyptian Arabic, Maghrebi darija, Farsi, Turkish, the Saudi `jawal` in Latin letters), in other scripts'
digits behind a JSON or URL escape, with a Gulf or Maghreb country code and no `+`; the identity numbers of the
region after their labels; and what is none of those after the same words (a contact record's other fields, a call
centre's line, a permit's number, a company's tax number, placeholders). Values written for these tests."""

from __future__ import annotations

import json
import urllib.parse

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


def _read(text: str) -> list[str]:
    """The values found, as read (an escaped value's normal form)."""
    return [f.key for f in DETECTOR.find(text)]


# ---- the region's phone words ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    ("واتساب: 6012 3487", "6012 3487"),
    ("نقال: 5061-2234", "5061-2234"),
    ("موبايل: 0111 234 5678", "0111 234 5678"),
    ("رقم التواصل: 0553187724", "0553187724"),
    ("رقم الواتس 0127 445 3310", "0127 445 3310"),
    ("نومرو: 98 431 207", "98 431 207"),
    ("شماره تماس: 3398 1402", "3398 1402"),
    ("İletişim numarası: 05324182790", "05324182790"),
    ("Jawal: 0547221903", "0547221903"),
    (json.dumps({"jawal": "0547221903"}), "0547221903"),
    (json.dumps({"واتساب": "9741 2250"}, ensure_ascii=False), "9741 2250"),
])
def test_a_phone_number_after_the_regions_word_for_one(text: str, value: str) -> None:
    assert _values(text) == [value]


# ---- other scripts' digits behind an escape --------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "read"), [
    (json.dumps({"mobile": "٠٥٥٢٣٤٨٧١٠"}), "0552348710"),
    (json.dumps({"phone": "۰۹۱۲ ۳۴۵ ۶۷۱۸"}), "0912 345 6718"),
    (json.dumps({"jawal": "+٩٦٦٥٥٢٣٤٨٧١٠"}), "+966552348710"),
    ("GET /owners?tel=" + urllib.parse.quote("٠٥٥٢٣٤٨٧١٠") + " HTTP/1.1", "0552348710"),
])
def test_arabic_indic_and_persian_digits_escaped_in_json_or_a_url_read_as_digits(text: str, read: str) -> None:
    assert _read(text) == [read]


# ---- the Gulf's and the Maghreb's plans ------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    ("Tel: 973 1729 3456", "973 1729 3456"),
    ("Tel: 216 98 431 207", "216 98 431 207"),
    ("Tél: 212 661 234 578", "212 661 234 578"),
    ("phone: 96560123487", "96560123487"),
    ("mobile: 96899123874", "96899123874"),
])
def test_a_number_with_a_gulf_or_maghreb_country_code_and_no_plus(text: str, value: str) -> None:
    assert _values(text) == [value]


# ---- a contact record's other fields, a call centre's line, a permit's number ----------------------------------------

@pytest.mark.parametrize("text", [
    json.dumps({"contact": {"ts": "1767312000"}}),
    json.dumps({"contact": {"tax_id": "VKN 1234567890"}}),
    json.dumps({"contact": {"helpdesk_line": "800 1234567"}}),
    "Unified call centre number: 9200 12345",
    "Call center: 800 1234567",
    "هاتف مركز الاتصال: 800 1234567",
    "Numéro de permis: licence 1198765432",
    "Telefon ruhsatı 4471 2281",
])
def test_no_phone_number_where_the_words_name_something_else(text: str) -> None:
    assert _values(text) == []


def test_a_contact_object_opening_with_a_phone_key_keeps_its_number() -> None:
    assert _values(json.dumps({"contact": {"mobile": "0551234870"}})) == ["0551234870"]
    assert _values(json.dumps({"contact": {"mobile_no": "0551234870", "ts": "1767312000"}})) == ["0551234870"]


# ---- a company's tax number after a tax label ------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    json.dumps({"tax_id": "SIREN 732829320"}),
    "Tax ID: EIN 536824417",
    "tax id (VAT) 536824417",
])
def test_no_ssn_where_a_companys_tax_scheme_is_named_before_the_number(text: str) -> None:
    assert _values(text) == []


def test_an_ssn_after_a_tax_id_label_is_still_found() -> None:
    assert _values("tax id: 536-82-4417") == ["536-82-4417"]


# ---- placeholders, masks and documented keys -------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "Password: changeme-in-prod",
    "password: placeholder-for-prod",
    "Password: xxxx-xxxx-xxxx",
    "Password: 0000-0000-0000",
    "SENDGRID_API_KEY=SG." + "a" * 22 + "." + "b" * 43,
    "Stripe docs: sk_test_BQokikJOvBiI2HlWgH4olfQ2",
    "mc alias set play https://play.min.io Q3AM3UQ867SPQQA43P2F zuf+tfteSlswRu7BJ86wekitnifILbZam1KYY3TG",
])
def test_placeholders_masks_and_documented_keys_are_no_secrets(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("Password: correct-horse-battery", "correct-horse-battery"),
    ("Password: x7Kq-x7Kq-x7Kq", "x7Kq-x7Kq-x7Kq"),
    ("SENDGRID_API_KEY=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",
     "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"),
])
def test_passwords_and_keys_beside_those_are_still_found(text: str, value: str) -> None:
    assert value in _values(text)


# ---- the region's identity numbers -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    ("EID: 784-1985-3127645-3", "784-1985-3127645-3"),
    ("ایمرٹس آئی ڈی: 784200170462137", "784200170462137"),
    ("ת.ז. 031284474", "031284474"),
    ("هوية: 1098765439", "1098765439"),
    (json.dumps({"iqama": "38104726540"}), "38104726540"),
    (json.dumps({"kimlik_no": "2305174688"}), "2305174688"),
    ("IQAMA=784-2001-7046213-7", "784-2001-7046213-7"),
    ("unit,national_id,updated\nB-12,315297069,2026-03-04", "315297069"),
    ("unit,national_id,updated\nC-7,52019384732,2026-03-04", "52019384732"),
])
def test_a_regional_id_after_its_label_or_a_label_that_names_no_country(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "EID: 784-1985-3127645-4",
    "Eid Mubarak 2026, office closed 30/03",
    "ת.ז. 031284475",
    json.dumps({"iqama": "38104726541"}),
    "unit,national_id,updated\nB-12,315297068,2026-03-04",
])
def test_a_regional_id_whose_check_fails_is_none(text: str) -> None:
    assert _values(text) == []


# ---- the region's words for a password, a Wi-Fi code and a two-step sign-in's key ---------------------------------

@pytest.mark.parametrize(("text", "value"), [
    ("Tamam — الباسورد: k3@vRT^p.Zx9", "k3@vRT^p.Zx9"),
    ("پسورد: k3@vRT^p.Zx9", "k3@vRT^p.Zx9"),
    ("Code Wi-Fi : Gate26-vLmqpr", "Gate26-vLmqpr"),
    ("código del wifi: Gate26-vLmqpr", "Gate26-vLmqpr"),
    ("کلید احراز هویت دومرحله\u200cای: jbsw y3dp ehpk 3pxp", "jbsw y3dp ehpk 3pxp"),
    ("İki adımlı doğrulama anahtarı: jbsw y3dp ehpk 3pxp", "jbsw y3dp ehpk 3pxp"),
])
def test_a_password_or_a_setup_key_after_the_regions_word_for_it(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_a_wifi_code_too_short_for_a_passphrase_is_none() -> None:
    assert _values("Code Wi-Fi : 1234") == []


# ---- a password column named as an export names it ----------------------------------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    ("unit,db_pass,updated\nA-12,k3@vRT^p.Zx9,2026-03-05", "k3@vRT^p.Zx9"),
    ("smtp_pass;host\nk3@vRT^p.Zx9;mail.example.net", "k3@vRT^p.Zx9"),
    ("| unit | portal.pass |\n|---|---|\n| B-3 | k3@vRT^p.Zx9 |", "k3@vRT^p.Zx9"),
])
def test_a_password_under_a_column_whose_name_ends_in_pass(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_a_column_named_bypass_is_no_password_column() -> None:
    assert _values("unit,bypass,updated\nA-1,Kx9mPq2vL7,2026-03-05") == []
