"""Phone numbers, keys and ids as hotels, channel managers and rail operators in Southern Europe and the Alps write
them (the fifty-sixth corpus's causes): Greece's `τηλ.`, Switzerland's `Natel`, Liechtenstein's closed plan, a
Romansh `Clav API`; a booking's confirmation number after the word for number, a free line named in Croatian or
Italian, a product's version after its word; the AHV/AVS, AMKA, OIB, Austrian SVNR and Cartão de Cidadão numbers
after their labels, a DNI after its Basque name. Values written for these tests."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


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
    "Build 7.5.36.209"])
def test_four_numbers_named_a_version_are_no_address(text: str) -> None:
    assert _values(text) == []


def test_an_address_after_other_words_is_still_one() -> None:
    assert "93.184.216.34" in _values("guest wifi login from 93.184.216.34 at 02:14")
