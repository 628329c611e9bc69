"""Government, tax and benefits desks' forms of secrets and personal values (tracegym/redact), each read by its
cause: the public format of a number, a key or a label, not the strings of one corpus."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector
from tracegym.redact.validators import itin

DETECTOR = Detector()


def found(text: str) -> list[tuple[str, str]]:
    return [(f.rule.name, f.value) for f in DETECTOR.find(text)]


def values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


def test_itin_check_reads_the_irs_ranges():
    assert itin("912-78-3456") and itin("955621234") and itin("990 94 1208")
    assert not itin("912-45-3456")  # fourth and fifth digits outside the ITIN ranges
    assert not itin("812-78-3456")  # an SSN's area, not 9
    assert not itin("999-99-9999")  # one digit repeated


@pytest.mark.parametrize(("text", "value"), [
    ("ITIN: 912-78-3456", "912-78-3456"),
    ("Taxpayer id (ITIN) 955621234 on file", "955621234"),
    ("Individual Taxpayer Identification Number = 970 84 1233", "970 84 1233"),
    ("after the W-7 came back, ITIN 990-94-1208", "990-94-1208"),
    (json.dumps({"itin": "963-51-7720"}), "963-51-7720"),
    ("itin_number=987730146", "987730146"),
])
def test_itins_after_their_label(text: str, value: str) -> None:
    assert ("itin", value) in found(text)


@pytest.mark.parametrize("text", [
    "ITIN: 912-45-3456",  # the fourth and fifth digits are no ITIN's
    "itinerary 955621234 confirmed",  # another word
    "ITIN: 9556212345678",  # a longer figure
    "EIN: 95-5621234",  # an employer's number, grouped 2-7
    "booking 912-78-3456",  # no label: 9xx is no SSN, and an ITIN is read after its own
])
def test_not_itins(text: str) -> None:
    assert not [r for r, _ in found(text) if r in ("itin", "ssn")]


_SERVICE = "1c9e7a52-3f0d-4b8a-9e21-6d5f0a3b7c44"
_SECRET = "a07b3c9d-52e1-4f6a-b8d3-0e9f1c2a7b65"


@pytest.mark.parametrize("text", [
    f'notifications_client = NotificationsAPIClient("reminders_prod-{_SERVICE}-{_SECRET}")',
    f"key for the letters service: letters-{_SERVICE}-{_SECRET}",
    json.dumps({"log": f"init notify with test_key-{_SERVICE}-{_SECRET}"}),
])
def test_govuk_notify_keys_anywhere(text: str) -> None:
    assert any(_SECRET in value for value in values(text))  # the notify rule's, or a labelled key's whole
    assert ("notify_key", _SECRET) in found(f"NotificationsAPIClient('x-{_SERVICE}-{_SECRET}')")


@pytest.mark.parametrize("text", [
    f"request {_SERVICE} then {_SECRET}",  # two ids apart
    "job-6ba7b810-9dad-11d1-80b4-00c04fd430c8-6ba7b811-9dad-11d1-80b4-00c04fd430c8",  # time-based UUIDs
    f"trace {_SECRET}",
])
def test_not_notify_keys(text: str) -> None:
    assert not [r for r, _ in found(text) if r == "notify_key"]


@pytest.mark.parametrize(("text", "value"), [
    ("N° SS : 1 85 05 75 112 233 44", "1 85 05 75 112 233 44"),
    ("| n° s.s. | 185057511223344 |", "185057511223344"),
])
def test_french_nir_after_n_ss(text: str, value: str) -> None:
    assert value in values(text)


def test_french_nir_after_n_ss_needs_its_key() -> None:
    assert not values("N° SS : 1 85 05 75 112 233 45")


@pytest.mark.parametrize("text", ["NN 78.03.15-123.19", "registered as 78.03.15-123.19 in Brussels",
                                  json.dumps({"memo": "id checked (78.03.15-123.19)"})])
def test_belgian_national_number_printed_as_the_register_prints_it(text: str) -> None:
    assert ("national_id", "78.03.15-123.19") in found(text)


@pytest.mark.parametrize("text", ["ref 78.03.15-123.20", "build 24.13.40-100.01", "78.03.15123.19",
                                  "v78.03.15-123.19"])
def test_not_belgian_national_numbers(text: str) -> None:
    assert not [r for r, _ in found(text) if r == "national_id"]


def test_nino_after_its_welsh_name() -> None:
    assert "JK482719C" in values("rhif Yswiriant Gwladol: JK482719C")
    assert not values("rhif Yswiriant Gwladol: JK482719E")  # suffix A-D only


@pytest.mark.parametrize(("text", "value"), [("| hetu | 120384-3183 |", "120384-3183"),
                                             ("| pnr | 811218-9876 |", "811218-9876")])
def test_short_names_as_a_table_rows_label_cell(text: str, value: str) -> None:
    assert ("national_id", value) in found(text)


def test_a_table_row_still_needs_the_ids_check() -> None:
    assert not values("| hetu | 120384-3184 |")


@pytest.mark.parametrize(("text", "value"), [
    ("Your personal key: 4827 1953", "4827 1953"),
    ("personal key = 8c2f1-a04d7", "8c2f1-a04d7"),
    ("login.gov personal key: 4KQ7-9MZR-2D8P-XW3T", "4KQ7-9MZR-2D8P-XW3T"),
])
def test_login_gov_personal_key_labels_a_recovery_code(text: str, value: str) -> None:
    assert ("recovery_code", value) in found(text)


@pytest.mark.parametrize("text", ["my personal key ring has 3 keys", "personal key: see the vault"])
def test_not_personal_keys(text: str) -> None:
    assert not found(text)


@pytest.mark.parametrize(("text", "value"), [
    ("0687214365 (portable)", "0687214365"),
    ("remarks: 0687214365 (numéro de mobile)", "0687214365"),
    ("0687214365 (tél.)", "0687214365"),
    ("0171 2345678 (Handy)", "0171 2345678"),
    ("9876012345 (मोबाइल नंबर)", "9876012345"),
    ("E1001,1200.00,80.00,080 4123 5678 (ph)", "080 4123 5678"),
    ("09876012345 (mobile no.)", "09876012345"),
])
def test_phone_numbers_with_their_label_after_them_in_parentheses(text: str, value: str) -> None:
    assert value in values(text)


def test_hindi_word_for_telephone_before_a_number() -> None:
    assert "9876012345" in values("दूरभाष 9876012345")


@pytest.mark.parametrize("text", ["ticket 4471228190 (contact)", "invoice 0687214365 (number)",
                                  "batch 1234 (phone)"])
def test_not_phones_in_parentheses(text: str) -> None:
    assert not [r for r, _ in found(text) if r.startswith("phone")]


_COOKIE = "q8w7e6r5t4y3u2i1o0p9a8s7d6f5g4h3"


@pytest.mark.parametrize("prefix", ["[web] ", "E100,12.00,", "| note | ", "- "])
def test_devtools_cookie_row_after_a_prefix(prefix: str) -> None:
    assert ("session_cookie", _COOKIE) in found(f"{prefix}sessionid\t{_COOKIE}\tportal.example.gov\t/\tSession")


def test_devtools_row_of_another_cookie_is_not_a_session() -> None:
    assert not found(f"[web] theme\t{_COOKIE}\tportal.example.gov\t/\tSession")


@pytest.mark.parametrize("text", ["Employer identification number (EIN) 12-3456782",
                                  "employer id / identification number: 123456782",
                                  "identification number 12-3456782"])
def test_an_employers_ein_is_no_persons_id(text: str) -> None:
    assert not found(text)


def test_a_persons_id_after_the_generic_label_stays() -> None:
    assert ("national_id", "123456782") in found("identification number 123456782")
