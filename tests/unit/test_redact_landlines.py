"""A landline named as one (German `Festnetz`, French `Fixe`, Spanish `fijo`), and a German subscriber number
written in one run after its area code in parentheses (`(030) 2072513`: up to eight digits)."""

from __future__ import annotations

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def test_landline_words_and_a_german_subscriber_number_in_one_run() -> None:
    assert [f.value for f in DETECTOR.find("Festnetz: (030) 2072513")] == ["(030) 2072513"]
    assert [f.value for f in DETECTOR.find("Fixe : 0245044571")] == ["0245044571"]
    assert [f.value for f in DETECTOR.find("teléfono fijo: 912 34 56 78")] == ["912 34 56 78"]
    assert DETECTOR.find("order (12) 34567890") == []
