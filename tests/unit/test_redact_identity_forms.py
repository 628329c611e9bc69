"""Secrets of enterprise identity and IT administration as their tools print them (the forty-first corpus's causes):
a national id under a camelCase HR key. Values written for these tests."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "value"), [
    ("employeeNationalId: 55050512345  # ref", None),
    ('workerNationalIdNumber = "111222333"', "111222333"),
    ("personNationalID: 811218-9876", "811218-9876")])
def test_a_national_id_under_a_camel_case_key(text: str, value: str | None) -> None:
    assert _values(text) == ([value] if value else [])


def test_a_camel_case_key_that_only_starts_with_national_is_not_a_label() -> None:
    assert _values("NationalIdCardPrinted: 2024-01-02") == []
    assert _values("internationalIdentifier: 111222333") == []
