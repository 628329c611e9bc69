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



@pytest.mark.parametrize(("text", "password"), [
    ("Logon 553=desk4 554=cobalt-Cobalt-meadow71 98=0 108=30", "cobalt-Cobalt-meadow71"),
    ("Logon 553=ops12 554=Yt^3q+Lm@Pz-9= 98=0 108=30", "Yt^3q+Lm@Pz-9="),
    ("35=A|49=BUYSIDE|56=VENUE|98=0|108=30|553=ops12|554=Rk7!wQ2#zN|10=101|", "Rk7!wQ2#zN"),
    ("password reset: 553=ops12 925=Vb8*Hn3!pQ", "Vb8*Hn3!pQ"),
])
def test_fix_logon_password_without_header(text, password):
    assert password in values(text) or any(password in v for v in values(text))


@pytest.mark.parametrize("text", [
    "a Logon carries 553 (Username) and 554 (Password) when the venue asks",
    "Logon 553=ops12 554=**** 98=0",
    "the order had 38=100 44=25.50 54=1 55=MSFT",
])
def test_fix_fields_that_are_no_password(text):
    assert not any(rule == "password" for rule, _ in found(text))


@pytest.mark.parametrize(("text", "password"), [
    ("Broker portal login -- user: desk31 / pass: willow-Willow-harbor318", "willow-Willow-harbor318"),
    ("user: desk31 / pass: Gh7#kLp2!vQ", "Gh7#kLp2!vQ"),
    ("vendor login: noor13 / password: Tmp-i12R-8807&", "Tmp-i12R-8807&"),
])
def test_login_pair_with_a_password_label(text, password):
    assert ("password", password) in found(text)
    assert "pass:" not in values(text) and "password:" not in values(text)


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
