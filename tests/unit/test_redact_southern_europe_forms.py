"""Phone numbers, keys and ids as hotels, channel managers and rail operators in Southern Europe and the Alps write
them (the fifty-sixth corpus's causes): Greece's `τηλ.`, Switzerland's `Natel`, Liechtenstein's closed plan, a
Romansh `Clav API`; a booking's confirmation number after the word for number, a free line named in Croatian or
Italian, a product's version after its word; the AHV/AVS, AMKA, OIB, Austrian SVNR and Cartão de Cidadão numbers
after their labels, a DNI after its Basque name. Values written for these tests."""

from __future__ import annotations

import pytest

from tracegym.redact import national
from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "number"), [
    ("Στοιχεία επικοινωνίας - τηλ. 2310 457812", "2310 457812"),
    ("Τηλ.: 26610 21473", "26610 21473"),
    ("ΤΗΛ 2109 334512", "2109 334512"),
    ("κράτηση 4/8, τηλ. 694 812 3307", "694 812 3307"),
    ("τηλ. 6971234508", "6971234508"),
    ("τηλ. 0030 6945512873", "0030 6945512873")])
def test_a_greek_number_after_the_abbreviation_for_telephone(text: str, number: str) -> None:
    assert number in _values(text)


@pytest.mark.parametrize(("text", "number"), [
    ("Gast erreichbar, Natel: 079 412 56 83", "079 412 56 83"),
    ("Natel 776 12 40", "776 12 40"),
    ("Mobil: 232 18 07", "232 18 07"),
    ("Telefon 392 44 61", "392 44 61")])
def test_a_swiss_mobile_word_and_liechtensteins_seven_digits(text: str, number: str) -> None:
    assert number in _values(text)


@pytest.mark.parametrize("text", [
    "Mobil: 150 48 20",
    "Tel. 438 24 1"])
def test_seven_digits_no_plan_holds_are_left(text: str) -> None:
    assert _values(text) == []


def test_a_key_under_a_romansh_label() -> None:
    key = "7F3A09C2D15E4B88A06C31F9E2B7D4C0-A91E5520B7C34F6D8E0A1B2C3D4E5F60"
    assert key in _values('{"integration": "Protel", "credentials": {"Clav API": "%s"}}' % key)


@pytest.mark.parametrize("text", [
    "Prenotazione confermata, numero di conferma 372915604 (Hotel Miramare)",
    "Reserva confirmada, número de confirmación 615 204 337",
    "Reserva, número de confirmação 912 443 018",
    "Buchung bestätigt, Nummer Bestätigungsnummer 694201337",
    "numero di prenotazione 345 118 2209"])
def test_a_confirmation_number_after_the_word_for_number_is_left(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("text", [
    "Besplatni info telefon: 0800 7712",
    "Besplatan broj, telefon: 0800 2219",
    "Brezplačna številka, telefon 080 1920",
    "Numero verde, telefono 800 123 456"])
def test_a_free_line_named_before_the_phone_word_is_left(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("text", [
    "OPERA PMS version 5.6.31.88",
    "Suite8 versione 8.14.22.71",
    "firmware: 6.2.40.113",
    "Build 7.5.36.209",
    "Protel Air 4.12.80.3 build 2231",  # a build number after them
    "WinPMS 12.1.40.7 (Build 5520)"])
def test_four_numbers_named_a_version_are_no_address(text: str) -> None:
    assert _values(text) == []


def test_an_address_after_other_words_is_still_one() -> None:
    assert "93.184.216.34" in _values("guest wifi login from 93.184.216.34 at 02:14")
    assert "93.184.216.34" in _values("blocked 93.184.216.34, rebuild 2 queued")


@pytest.mark.parametrize(("text", "value"), [
    ("AHV-Nr. 756.9217.0804.56", "756.9217.0804.56"),
    ("n° AVS : 756.3390.1472.89", "756.3390.1472.89"),
    ('{"ahvNumber": "756.4805.3312.62"}', "756.4805.3312.62"),
    ("Ospite 756.9217.0804.56 registrato", "756.9217.0804.56"),
    ("ΑΜΚΑ: 21047812348", "21047812348"),
    ('{"amka": "05118623452"}', "05118623452"),
    ("OIB: 69435151530", "69435151530"),
    ("<oib>94577403194</oib>", "94577403194"),
    ("SV-Nummer: 1237 010180", "1237 010180"),
    ('{"svNr": "2457 150972"}', "2457 150972"),
    ("Cartão de Cidadão n.º 31415926 5 AB0", "31415926 5 AB0"),
    ('{"documentNumber": "12345678 0 ZZ0"}', "12345678 0 ZZ0"),
    ("Kaixo, hona hemen datuak - NAN: 45127809S", "45127809S"),
    ("Nortasun Agiri Nazionala 45127809S", "45127809S")])
def test_southern_european_ids_after_their_labels(text: str, value: str) -> None:
    assert value in _values(text)


@pytest.mark.parametrize("text", [
    "AHV-Nr. 756.9217.0804.57",
    "ΑΜΚΑ: 21047812349",
    "OIB: 69435151531",
    "Cartão de Cidadão n.º 12345678 0 ZZ8",
    "ref 69435151530",
    "NAN: 45127809T",
    "loss NaN: 45127809S",
    "Bestellung 94577403194 versandt"])
def test_ids_failing_their_check_or_without_a_label_are_left(text: str) -> None:
    assert _values(text) == []


def test_the_checks_by_their_published_rules() -> None:
    assert national.ahv("7569217080456") and not national.ahv("7559217080456")
    assert national.amka("21047812348") and not national.amka("32137812348")
    assert national.oib("69435151530") and not national.oib("69435151531")
    assert national.svnr_at("1237 010180") and not national.svnr_at("0237 010180")
    assert national.cc_pt("31415926 5 AB0") and not national.cc_pt("31415926 5 AB1")
