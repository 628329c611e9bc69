"""Finance desks' forms of secrets and personal values (tracegym/redact), each read by its cause: the public format
of a field, a file or a label, not the strings of one corpus."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def found(text: str) -> list[tuple[str, str]]:
    return [(f.rule.name, f.value) for f in DETECTOR.find(text)]


def values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]



@pytest.mark.parametrize(("text", "seed"), [
    ("Clave 2FA: MZXW6YTBOI3DQNRT", "MZXW6YTBOI3DQNRT"),
    ("2FA-Schlüssel: KRUGS4ZANFZSA3TP", "KRUGS4ZANFZSA3TP"),
    ("Clé de secours 2FA : NB2HI4DTHIXS6ZDF", "NB2HI4DTHIXS6ZDF"),
    ("chave TOTP: GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"),
    ("MFA-nyckel: ONSWG4TFOQ5DEMZU", "ONSWG4TFOQ5DEMZU"),
    ('{"memo": "Backup Key (write it down to restore your authenticator): JV4GK3TBMRSW4ZLS"}', "JV4GK3TBMRSW4ZLS"),
])
def test_totp_seed_under_other_languages_labels(text, seed):
    assert ("totp_seed", seed) in found(text)


@pytest.mark.parametrize("text", [
    "Clave 2FA: ACTIVADA",
    "2FA-Schlüssel: neu erstellen",
    "backup key rotated yesterday by the ops team",
    "Clé 2FA : voir l'application",
])
def test_totp_labels_without_a_seed(text):
    assert not any(rule == "totp_seed" for rule, _ in found(text))


@pytest.mark.parametrize(("text", "number"), [
    ("alternate number 9876543210", "9876543210"),
    ("Alternative number: 7012345678", "7012345678"),
    ('{"alternate_number": "8123456789"}', "8123456789"),
])
def test_alternate_phone_number(text, number):
    assert ("phone_national", number) in found(text)


@pytest.mark.parametrize("text", [
    "alternate number of shares 1200000",
    "alternate number 12",
    "alternate number 2024-05-01",
])
def test_alternate_number_that_is_no_phone(text):
    assert not any(rule.startswith("phone") for rule, _ in found(text))
