"""Secrets and phone numbers as port, shipping, fisheries and relief agents in the Pacific Islands and South Asia
write them (the fifty-ninth corpus's causes): Fijian, Bislama, Dzongkha and Dhivehi words for phone, Viber as a
messenger named by its user's number, the Maldives' closed plan of seven digits written 3-4, Tok Pisin's and
Dhivehi's words for an API key and Bislama's for password; and what looks like them without being one. Values
written for these tests."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "number"), [
    ("Mere Vakaloloma, naba ni talevoni: 9715 392 441", "9715 392 441"),
    ("Kaiava: talevoni 9846 021 355", "9846 021 355"),
    ("Jimmy Tari, namba blong fon: 9841 206 733", "9841 206 733"),
    ("Dorji Wangmo, ཁ་པར་ཨང་: 9851 044 712", "9851 044 712"),
    ("Aishath Shifa, ފޯނު ނަންބަރު: 9723 318 440", "9723 318 440"),
    ("Viber: 9812 447 105 (crew liaison)", "9812 447 105")])
def test_a_phone_number_after_a_regional_word(text: str, number: str) -> None:
    assert number in _values(text)


@pytest.mark.parametrize(("text", "number"), [
    ("Ahmed Nizam, phone: 964-3318", "964-3318"),
    ("mobile 971 2045 (harbour master)", "971 2045"),
    ("Mohamed Riyaz, ފޯނު ނަންބަރު: 332-1507", "332-1507")])
def test_a_maldivian_number_after_a_phone_word(text: str, number: str) -> None:
    assert number in _values(text)


@pytest.mark.parametrize("text", [
    "phone 9643318 (ext)",  # seven digits in one run after a phone word: an extension's or a record's
    "vessel MV Dhoni, berth 964-3318 assigned",  # no phone word
    "mobile: 96-43318",  # not the Maldives' 3-4
    "Maldives phone: 112-4407"])  # 1xx: no Maldivian range
def test_seven_digits_that_are_no_maldivian_number(text: str) -> None:
    assert not any(v.replace("-", "").endswith(("9643318", "1124407")) for v in _values(text))


@pytest.mark.parametrize(("text", "secret"), [
    ("ki bilong API: 7d41e0b9c2a85f36e1d0947bc8a2f53e6b19d0c4", "7d41e0b9c2a85f36e1d0947bc8a2f53e6b19d0c4"),
    ("API ކީ: 5f0c9a7e21d84b3f96ae0c1d7b2a48e9f3c6d0b1", "5f0c9a7e21d84b3f96ae0c1d7b2a48e9f3c6d0b1"),
    ("Port desk, paswod: Tavua7Reef.2x9", "Tavua7Reef.2x9"),
    ('{"remarks": "paswod: Nausori.41reef"}', "Nausori.41reef")])
def test_a_key_or_password_after_a_regional_label(text: str, secret: str) -> None:
    assert secret in _values(text)


@pytest.mark.parametrize(("text", "nic"), [
    ("NIC no: 786512345V", "786512345V"),  # old: 1978, day 651 (a woman's: 151 + 500)
    ("applicant NIC number 933451207x, verified", "933451207x"),
    ('{"nic_no": "198824503318"}', "198824503318"),  # new: 1988, day 245, 0, serial
    ("ජාතික හැඳුනුම්පත අංකය: 200156704421", "200156704421")])
def test_a_sri_lanka_nic_after_its_label(text: str, nic: str) -> None:
    assert nic in _values(text)


@pytest.mark.parametrize("text", [
    "NIC no: 783992345V",  # day 399: no day of the year, a man's (1-366) or a woman's (501-866)
    "NIC no: 198824513318",  # no 0 after the day
    "NIC eth0 rx_bytes 198824503318 packets",  # a network card's counter: NIC names no number
    "ref 786512345V"])  # no label
def test_what_is_no_sri_lanka_nic(text: str) -> None:
    assert _values(text) == []
