"""Passwords and keys after a word for key or token as people hand them over (the fifty-first and fifty-second
corpora's disguised causes): a passphrase or a short secret after `clave`, `ключ`, `Schlüssel`; a generated
password after a bare `key:`, read past its `=`; a short random key after `token`; dotted passphrases after a
credential's name; and, hidden the corpora's ways (full-width, JSON escapes, URL-encoding), the same values.
Values written for these tests."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "secret"), [
    ("clave: Pampa4471*", "Pampa4471*"),
    ("ключ: Берёза2290!", "Берёза2290!"),
    ("Schlüssel für das Tor: Linde+Amsel+Fluss31", "Linde+Amsel+Fluss31"),
    ("chiave: Oliva.Torre.Vento58", "Oliva.Torre.Vento58"),
    ("klucz = Wisla77?Krak", "Wisla77?Krak"),
    ("toegangssleutel: Duin-Meeuw-Kade12", "Duin-Meeuw-Kade12")])
def test_a_password_after_a_word_for_key_abroad(text: str, secret: str) -> None:
    assert secret in _values(text)


@pytest.mark.parametrize(("text", "secret"), [
    ("key: 7r?Vq2=Xm!b9Lw", "7r?Vq2=Xm!b9Lw"),
    ("the key is Hq4@z=Pn8$Wc", "Hq4@z=Pn8$Wc")])
def test_a_generated_password_after_a_bare_key_is_read_whole(text: str, secret: str) -> None:
    assert _values(text) == [secret]


@pytest.mark.parametrize(("text", "secret"), [
    ("token => qR7tkW2vZp4M", "qR7tkW2vZp4M"),
    ("API key: Bx81nQzL0vKs", "Bx81nQzL0vKs"),
    ("token: lapis.Morena42", "lapis.Morena42"),
    ('{"secret": "cedro.Árvore.Lago9"}', "cedro.Árvore.Lago9")])
def test_a_short_key_after_a_credential_word(text: str, secret: str) -> None:
    assert secret in _values(text)


@pytest.mark.parametrize(("text", "secret"), [
    ("clave: Ｐａｍｐａ４４７１＊", "Ｐａｍｐａ４４７１＊"),
    ("ключ: Pampa%2BRio%2BSol44", "Pampa%2BRio%2BSol44"),
    ('{"text": "clave: \\u0050ampa4471\\u002a"}', "\\u0050ampa4471\\u002a"),
    ("token: qR7t\u200bkW2vZp4M", "qR7t\u200bkW2vZp4M")])
def test_the_same_values_disguised(text: str, secret: str) -> None:
    found = DETECTOR.find(text)
    assert any(f.start <= text.index(secret) and text.index(secret) + len(secret) <= f.end for f in found), found


@pytest.mark.parametrize("text", [
    "key: Ctrl+Shift+F5",
    "Schlüssel: Strg+Umschalt+Z9",
    "clave: config.yaml.bak2",
    "key: Order#2024-11",
    "see Order#2024-11 for the refund",
    "PK: USER#alice42",
    "token: MyToken2024",
    "token: Release2Beta",
    "token: auth.Token2",
    "key: uploads/Report_Q3-2024.pdf",
    "llave: Caja-B12"])
def test_names_shortcuts_and_references_after_those_words_are_left(text: str) -> None:
    assert _values(text) == []
