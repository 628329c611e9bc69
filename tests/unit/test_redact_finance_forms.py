"""Finance desks' forms of secrets and personal values (tracegym/redact), each read by its cause: the public format
of a field, a file or a label, not the strings of one corpus."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from tracegym.redact.detect import Detector
from tracegym.redact.validators import base58check, extended_private_key

DETECTOR = Detector()
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def found(text: str) -> list[tuple[str, str]]:
    return [(f.rule.name, f.value) for f in DETECTOR.find(text)]


def values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]



def b58check(payload: bytes) -> str:
    """Base58Check as Bitcoin writes it: the payload and four bytes of double SHA-256, leading zeros as `1`."""
    raw = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    number, out = int.from_bytes(raw, "big"), ""
    while number:
        number, digit = divmod(number, 58)
        out = _B58[digit] + out
    return "1" * (len(raw) - len(raw.lstrip(b"\0"))) + out


def extended(version: str, key_data: bytes) -> str:
    """A BIP32 serialization: version, depth, parent fingerprint, child number, chain code, key data (78 bytes)."""
    chain = hashlib.sha256(b"chain code of a test wallet").digest()
    return b58check(bytes.fromhex(version) + b"\x01" + bytes.fromhex("a1b2c3d4") + bytes(4) + chain + key_data)


XPRV = extended("0488ade4", b"\0" + hashlib.sha256(b"a private key for tests").digest())
ZPRV = extended("04b2430c", b"\0" + hashlib.sha256(b"another private key").digest())
XPUB = extended("0488b21e", b"\x02" + hashlib.sha256(b"a public key for tests").digest())


def test_base58check_reads_the_checksum():
    assert base58check(XPRV) is not None and len(base58check(XPRV) or b"") == 78
    broken = XPRV[:50] + ("2" if XPRV[50] != "2" else "3") + XPRV[51:]
    assert base58check(broken) is None
    assert extended_private_key(XPRV) and extended_private_key(ZPRV)
    assert not extended_private_key(XPUB)  # public: its version and key data are a public key's


@pytest.mark.parametrize("text", [
    f"wallet descriptor: wpkh({XPRV}/84h/0h/0h/0/*)",
    f"restore from {ZPRV}",
    json.dumps({"note": f"sh(wpkh({XPRV}/49h/0h/0h/1/*))"}),
])
def test_extended_private_keys_anywhere(text):
    assert ("private_key", XPRV if XPRV in text else ZPRV) in found(text)


def test_extended_key_with_a_broken_checksum_is_no_private_key():
    broken = XPRV[:60] + ("x" if XPRV[60] != "x" else "y") + XPRV[61:]
    assert ("private_key", broken) not in found(f"descriptor wpkh({broken}/0/*)")
    assert not any(rule == "private_key" for rule, _ in found(f"watch-only wpkh({XPUB}/0/*)"))


KRAKEN_API = base64.b64encode(hashlib.sha256(b"kraken api key").digest() * 2)[:56].decode()
KRAKEN_PRIVATE = base64.b64encode(hashlib.sha512(b"kraken private key").digest()).decode()


@pytest.mark.parametrize("text", [
    f"kraken.key:\n{KRAKEN_API}\n{KRAKEN_PRIVATE}\n",
    f"$ cat ~/.config/kraken.key\n{KRAKEN_API}\n{KRAKEN_PRIVATE}",
    json.dumps({"memo": f"kraken.key:\n{KRAKEN_API}\n{KRAKEN_PRIVATE}"}),
])
def test_kraken_key_file_private_key(text):
    assert ("exchange_secret", KRAKEN_PRIVATE) in found(text)


def test_kraken_key_file_placeholder_is_left():
    placeholder = "A" * 86 + "=="
    assert placeholder not in values(f"kraken.key:\n{KRAKEN_API}\n{placeholder}\n")


@pytest.mark.parametrize(("text", "token"), [
    ("alerts -> https://api.telegram.org/bot8123456701:Zq4-Lm9_TrPwXk2NvBy7HsDc3GfJa6EuRt0/sendMessage",
     "8123456701:Zq4-Lm9_TrPwXk2NvBy7HsDc3GfJa6EuRt0"),
    ('requests.post("https://api.telegram.org/bot60011223:kP0wQe7RtYu2IoP-aSdF_gHjK9lZxCvBnM4/getUpdates")',
     "60011223:kP0wQe7RtYu2IoP-aSdF_gHjK9lZxCvBnM4"),
])
def test_telegram_bot_token_in_bot_api_urls(text, token):
    assert ("telegram_bot_token", token) in found(text)


@pytest.mark.parametrize("text", [
    "https://api.telegram.org/bot<token>/sendMessage",
    "https://api.telegram.org/bot123456789:XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX/getMe",
    "see https://core.telegram.org/bots/api#making-requests",
])
def test_telegram_placeholders_are_left(text):
    assert not any(rule == "telegram_bot_token" for rule, _ in found(text))


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


@pytest.mark.parametrize(("text", "password"), [
    ("Driver={ODBC Driver 18 for SQL Server};Server=gl-2.corp.example;Database=GL;Uid=svc;Pwd=QmTrvXkaPLzWn.hRt;",
     "QmTrvXkaPLzWn.hRt"),
    ("jdbc:mysql://ar-1.corp.example:3306/ar?user=svc&password=KwPzrTvmqB_xYd&useSSL=true", "KwPzrTvmqB_xYd"),
    ("Driver={SQL Server};Server=db7;Uid=sa;Pwd={Ab;c9x!wQ};", "{Ab;c9x!wQ}"),
])
def test_connection_string_password_fields(text, password):
    assert ("password", password) in found(text)


@pytest.mark.parametrize("text", [
    "Server=db;Database=x;User Id=sa;Password=YourPassword;",
    "Server=db;Uid=sa;Pwd={{ db_pw }};",
    "jdbc:postgresql://h/db?user=u&password=${DB_PASSWORD}",
    "Server=db;Uid=sa;Pwd=settings.DbPwd;",
])
def test_connection_string_placeholders_are_left(text):
    assert not any(rule == "password" for rule, _ in found(text))


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


@pytest.mark.parametrize(("text", "key"), [
    ("Clé API : 7RKD3M9QZT2WXLPV", "7RKD3M9QZT2WXLPV"),
    ("مفتاح API: 3fa9c1d27b804e5a96c0d1e2f3a4b5", "3fa9c1d27b804e5a96c0d1e2f3a4b5"),
    ("APIキー: 9c0d1e2f3a4b53fa9c1d27b804e5a9", "9c0d1e2f3a4b53fa9c1d27b804e5a9"),
    ("Chave da API: Zx81KqPm02LdVw7Ty", "Zx81KqPm02LdVw7Ty"),
])
def test_api_key_words_in_other_languages(text, key):
    assert ("labelled_key", key) in found(text)


@pytest.mark.parametrize("text", [
    "Clé API : voir le coffre-fort",
    "Clé API : config.settings.api_key",
    "Chave da API: /etc/app/keys/prod.json",
])
def test_api_key_words_without_a_key(text):
    assert not any(rule == "labelled_key" for rule, _ in found(text))


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


def personnummer(birth_and_serial: str) -> str:
    """YYMMDD-NNN and the Luhn digit over the nine, as Skatteverket prints a personnummer."""
    total = 0
    for i, ch in enumerate(birth_and_serial):
        d = int(ch) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return f"{birth_and_serial[:6]}-{birth_and_serial[6:]}{(10 - total % 10) % 10}"


PNR = personnummer("850709123")


@pytest.mark.parametrize("text", [f"personal_number {PNR}", f"Personal number: {PNR.replace('-', '')}"])
def test_personnummer_under_its_english_name(text):
    assert any(rule == "national_id" for rule, _ in found(text))


def test_personal_number_that_is_no_personnummer():
    broken = PNR[:-1] + str((int(PNR[-1]) + 1) % 10)
    assert not any(rule == "national_id" for rule, _ in found(f"personal_number {broken}"))
    assert not any(rule == "national_id" for rule, _ in found("personal number 0412 345 678"))
