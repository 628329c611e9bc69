"""Secrets and personal data as back offices hold them (issue 40, the thirtieth corpus's causes): airline
bookings' encoded e-mail and form of payment, providers' key formats (Mailchimp, Login with Amazon, Plaid),
short hex secrets, letter-only secrets, shop and WordPress cookies, a user and `pass:` on one line, Australia's
tax file number. Values written for these tests."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "value"), [
    ("  5 SSR CTCE BA HK1/OCONNOR.LUCAS75//HEY.COM", "OCONNOR.LUCAS75//HEY.COM"),
    ("SSR CTCE LH HK1 M..ROSSI+TRIPS//EXAMPLE./MAIL.IT", "M..ROSSI+TRIPS//EXAMPLE./MAIL.IT"),
    ('{"note": "FP CCVI4088261162791664/0129"}', "4088261162791664"),
    ("  6 FP PAX CCCA5425233430109903/0827", "5425233430109903")])
def test_an_airline_bookings_email_and_card(text: str, value: str) -> None:
    assert _values(text) == [value]
    assert _values("FP CCVI4088261162791665/0129") == []  # not Luhn


@pytest.mark.parametrize("value", [
    "15744a68e3db4bc55c4c94fd141ca1d5-us18",
    "Atzr|IwEBWQdp9jeTLC1vUZNeI-1jgDIC16g4EDjLsmSyQ3B_Ara-tBeD3vOxLVj9mu1ce78x4puGbpa5RPBFF6hQuhuB",
    "amzn1.oa2-cs.v1.47df3881875cdad2f1b9827793d37ad35b9b45bca76715397473617f2ef080d3",
    "access-production-7fee6701-b47b-402e-a9c5-3fb1daf9944b",
    "processor-sandbox-0b4e9c2a-51f7-4c3d-8e6a-9d2f1b7c4a05"])
def test_provider_keys_by_their_format_with_no_label(value: str) -> None:
    assert _values(f"Use this for the integration: {value} (thanks)") == [value]


@pytest.mark.parametrize(("text", "value"), [
    ("export PLAID_SECRET='276b7ee8f05065795ab0b5820dadf5'", "276b7ee8f05065795ab0b5820dadf5"),
    (json.dumps({"razorpay_key_secret": "gzEWHZyZhrbGHTLbrgxGdUct"}), "gzEWHZyZhrbGHTLbrgxGdUct")])
def test_short_hex_and_letter_only_secrets_after_a_secret_label(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", ["object_secret_id: 507f1f77bcf86cd799439011", "secret_name: rotateDatabaseCreds"])
def test_ids_and_names_after_a_secret_label_stay(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("Set-Cookie: _secure_session_id=148a8052b3a0d8e3a22b3610a8d3b465; path=/; secure; HttpOnly",
     "148a8052b3a0d8e3a22b3610a8d3b465"),
    ("Cookie: wordpress_logged_in_79efb8ba87c8f5803ad1bfdd2f10874f=acme-ops%7C1718354321%7C6r9pqcIpsFql1Ime7mi"
     "VefbhKASBiMEvr9b4UfHFIGA%7C3ed376cd4b936148c253d96a8a36850e; wp-settings-1=libraryContent%3Dbrowse",
     "acme-ops%7C1718354321%7C6r9pqcIpsFql1Ime7miVefbhKASBiMEvr9b4UfHFIGA%7C3ed376cd4b936148c253d96a8a36850e")])
def test_shop_and_wordpress_session_cookies(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_a_password_after_pass_right_after_a_user() -> None:
    text = "SFTP host: sftp.payroll-files.example  user: acme_payroll  pass: Marble-Quartz-Canyon-Lantern40\n"
    assert _values(text) == ["Marble-Quartz-Canyon-Lantern40"]
    assert _values("tests: 41  pass: 39  fail: 2") == []


@pytest.mark.parametrize(("text", "value"), [("TFN: 889 950 261", "889 950 261"),
                                             ("Tax file number: 352377687", "352377687")])
def test_an_australian_tax_file_number_after_its_label(text: str, value: str) -> None:
    assert _values(text) == [value]
    assert _values("TFN: 889 950 262") == []


@pytest.mark.parametrize(("text", "value"), [
    ("P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\nL898902C36UTO7408122F1204159ZE184226B<<<<<10",
     "L898902C36UTO7408122F1204159ZE184226B<<<<<10"),
    ("SSR DOCS BA HK1 P/FRA/80QU02760/FRA/12JUL82/F/15JAN30/DOE/JANE", "80QU02760"),
    ("Passport No. 262115749  Nationality USA  Expiry 15 JAN 2030", "262115749"),
    (json.dumps({"passport_number": "X1234567"}), "X1234567")])
def test_a_passports_number_in_its_mrz_a_booking_or_after_its_label(text: str, value: str) -> None:
    assert _values(text) == [value]
    assert _values("L898902C37UTO7408122F1204159ZE184226B<<<<<10") == []  # the check digit is 6
    assert _values("passport: valid until 2030") == []


def test_a_uuid_after_a_key_word_of_api_in_romance_languages() -> None:
    for label in ("Clave de API", "Chave da API", "Chiave di API"):
        assert _values(f"{label}: 39e7990d-ba13-4a7e-a9ab-37b674807d5d") == ["39e7990d-ba13-4a7e-a9ab-37b674807d5d"]
