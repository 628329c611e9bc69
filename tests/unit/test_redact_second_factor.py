"""What opens an account past its password: two-factor recovery codes, an authenticator's shared secret, a
BitLocker recovery password, Meta's access tokens and the sign-in cookies of Google, Microsoft and ASP.NET."""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable

import pytest

from tracegym.redact.detect import Detector
from tracegym.redact.pseudonyms import Pseudonyms
from tracegym.redact.tables import Redactor

DETECTOR = Detector()
RNG = random.Random(7)


def redacted(text: str, is_json: bool = False) -> str:
    return Redactor(DETECTOR, lambda _trace: Pseudonyms(), Pseudonyms, {}).text(text, is_json=is_json)


def github_code() -> str:
    hexdigits = "0123456789abcdef"
    return "".join(RNG.choice(hexdigits) for _ in range(5)) + "-" + "".join(RNG.choice(hexdigits) for _ in range(5))


def google_code() -> str:
    return f"{RNG.randint(1000, 9999)} {RNG.randint(1000, 9999)}"


def base32_secret(chars: int) -> str:
    return base64.b32encode(RNG.randbytes(chars * 5 // 8)).decode().rstrip("=")


@pytest.mark.parametrize("layout", [
    "GitHub recovery codes:\n{0}\n{1}\n{2}", "Backup codes\n1. {0}\n2. {1}\n3. {2}", "Your backup codes: {0}, {1}, {2}",
    "Wiederherstellungscodes:\n- {0}\n- {1}\n- {2}", "Tus códigos de respaldo son: {0} {1} {2}",
    "codes de récupération :\n* {0}\n* {1}\n* {2}"])
@pytest.mark.parametrize("code", [github_code, google_code])
def test_every_recovery_code_of_a_list_is_replaced(layout: str, code: Callable[[], str]) -> None:
    codes = [code() for _ in range(3)]
    out = redacted(layout.format(*codes))
    assert not any(c in out for c in codes), out
    assert out.startswith(layout[:10])


def test_recovery_codes_in_a_json_array_keep_the_json_valid() -> None:
    codes = [github_code() for _ in range(4)]
    out = redacted(json.dumps({"user": "jane", "recovery_codes": codes}), is_json=True)
    assert json.loads(out)["user"] == "jane" and not any(c in out for c in codes)


def test_a_microsoft_recovery_code_is_replaced() -> None:
    code = "-".join("".join(RNG.choice("BCDFGHJKMPQRTVWXY2346789") for _ in range(5)) for _ in range(5))
    assert code not in redacted(f"Microsoft account recovery code: {code}")


@pytest.mark.parametrize("text", [
    "Recovery codes for GitHub are stored in 1Password under \"GitHub 2FA\".", "backup code rotation: every 90 days",
    "see backup codes section 2024-05-06 version 1.2.3-beta4", "recovery codes: 2024-05-06",
    "Scratch codes: none left, regenerate them"])
def test_talk_about_recovery_codes_is_left(text: str) -> None:
    assert DETECTOR.find(text) == []


@pytest.mark.parametrize("label", ["Your setup key", "Secret key", "TOTP secret", "Clé secrète",
                                   "Einrichtungsschlüssel"])
def test_an_authenticator_secret_in_groups_after_its_label(label: str) -> None:
    secret = base32_secret(32).lower()
    while sum(any(ch in "234567" for ch in secret[i:i + 4]) for i in range(0, 32, 4)) < 2:
        secret = base32_secret(32).lower()
    grouped = " ".join(secret[i:i + 4] for i in range(0, 32, 4))
    assert [f.value for f in DETECTOR.find(f"{label}: {grouped}")] == [grouped]
    assert [f.value for f in DETECTOR.find(f"Can't scan it? Enter this code instead\n{grouped}\nthen press Next")] \
        == [grouped]


def test_words_in_groups_of_four_are_no_secret() -> None:
    for text in ("this will make sure that they have what they want", "Secret key: your eyes only when safe",
                 "a3f2 9bc1 77de 0a41 8c2d e9f0 1b3c 4d5e"):
        assert DETECTOR.find(text) == []


def bitlocker_key() -> str:
    return "-".join(f"{RNG.randrange(0, 65536) * 11:06d}" for _ in range(8))


def test_a_bitlocker_recovery_password_is_found_alone_and_a_wrong_group_is_not() -> None:
    key = bitlocker_key()
    assert [f.value for f in DETECTOR.find(f"Password:\n  ID: {{A1B2}}\n  Password:\n    {key}\n")] == [key]
    assert [f.value for f in DETECTOR.find(key)] == [key]
    groups = key.split("-")
    groups[3] = f"{int(groups[3]) + 1:06d}"
    assert DETECTOR.find("-".join(groups)) == []


def test_meta_tokens_and_sign_in_cookies() -> None:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    token = "EAAG" + "".join(RNG.choice(alphabet) for _ in range(180))
    assert [f.value for f in DETECTOR.find(f"curl 'https://graph.facebook.com/v19.0/me' -d {token}")] == [token]
    value = "g.a000" + "".join(RNG.choice(alphabet + "_-") for _ in range(60))
    for name in ("__Secure-1PSID", "__Secure-3PSIDTS", "SAPISID", "ESTSAUTHPERSISTENT", ".AspNetCore.Cookies"):
        assert [f.value for f in DETECTOR.find(f"Cookie: NID=511; {name}={value}; lang=en")] == [value], name


def test_a_pypi_token_after_an_assignment_however_long() -> None:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    token = "pypi-AgEIcHlwaS5vcmc" + "".join(RNG.choice(alphabet) for _ in range(172))
    assert [f.value for f in DETECTOR.find(f"TWINE_PASSWORD={token}\nStopping app")] == [token]
