"""benchmarks/corpus_formats.py, the formats the redaction corpora share: each check agrees with its
specification's published examples, and each encoding is read back by a real parser."""

from __future__ import annotations

import base64
import random
import zlib

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from benchmarks.corpus_formats import (
    base62,
    bban,
    crc_ok,
    crc_token,
    der_int,
    der_len,
    der_seq,
    group_card,
    iban_check,
    iban_ok,
    luhn_digit,
    luhn_ok,
    openssh_ed25519_blob,
)


def test_luhn_and_mod97_agree_with_published_values() -> None:
    """The card networks' test number and ISO 13616's example IBANs (print form, compact, lower case)."""
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112") and luhn_digit("411111111111111") == "1"
    assert iban_ok("GB82 WEST 1234 5698 7654 32") and not iban_ok("GB83WEST12345698765432")
    assert iban_ok("DE89370400440532013000") and iban_ok("fr1420041010050500013m02606")
    assert iban_check("GB", "WEST12345698765432") == "82" and iban_check("DE", "370400440532013000") == "89"


def test_generated_bbans_and_tokens_pass_their_checks() -> None:
    rng = random.Random(0)
    for _ in range(50):
        body = bban(rng, "4a6n8n")
        assert body[:4].isalpha() and body[4:].isdigit() and len(body) == 18
        assert iban_ok("GB" + iban_check("GB", body) + body)
        token = crc_token(rng, "ghp_")
        assert len(token) == 40 and crc_ok(token) and not crc_ok(token[:-1] + ("0" if token[-1] != "0" else "1"))
    assert crc_ok("ghp_" + "a" * 30 + base62(zlib.crc32(b"a" * 30), 6))


def test_card_print_groups() -> None:
    assert group_card("378282246310005", " ") == "3782 822463 10005"
    assert group_card("30569309025904", "-") == "3056-930902-5904"
    assert group_card("4111111111111111", "") == "4111111111111111"
    assert group_card("6212345678901234567", " ") == "6212 3456 7890 1234 567"


def test_der_follows_x690() -> None:
    assert der_len(5) == b"\x05" and der_len(200) == b"\x81\xc8" and der_len(300) == b"\x82\x01\x2c"
    assert der_int(0) == b"\x02\x01\x00" and der_int(127) == b"\x02\x01\x7f" and der_int(128) == b"\x02\x02\x00\x80"
    assert der_seq(der_int(1), der_int(256)) == b"\x30\x07\x02\x01\x01\x02\x02\x01\x00"


def test_openssh_blob_is_read_back_by_cryptography() -> None:
    seed = bytes(range(32))
    public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    blob = openssh_ed25519_blob(seed, public, b"\x01\x02\x03\x04", b"ci@runner")
    pem = b"-----BEGIN OPENSSH PRIVATE KEY-----\n" + base64.encodebytes(blob) + b"-----END OPENSSH PRIVATE KEY-----\n"
    key = serialization.load_ssh_private_key(pem, password=None)
    assert isinstance(key, ed25519.Ed25519PrivateKey)
    assert key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                             serialization.NoEncryption()) == seed
