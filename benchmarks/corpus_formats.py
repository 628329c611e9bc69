"""The public formats the redaction corpora (redact_corpus, redact_holdout, redact_fresh, redact_unseen,
redact_fifth) write values in: check digits, encodings and print forms, each from its specification.

Each corpus was written on its own and wrote these again; they were moved here afterwards with the corpora's
output unchanged to the byte. So these helpers draw from the generator exactly as the corpora did: `pick` makes
one `rng.choice` per character; a corpus that draws otherwise (redact_unseen's `rng.choices`) passes its own
draw to the helpers that take one.
"""

from __future__ import annotations

import base64
import random
import string
import zlib
from collections.abc import Callable

B62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
"""Base62 in GitHub's order: digits, then upper case, then lower case."""

Draw = Callable[[random.Random, str, int], str]
"""(rng, alphabet, n) -> n characters of alphabet."""


def pick(rng: random.Random, alphabet: str, n: int) -> str:
    """n characters of `alphabet`, one `rng.choice` each."""
    return "".join(rng.choice(alphabet) for _ in range(n))


def digits(rng: random.Random, n: int) -> str:
    """n decimal digits, drawn as `pick` draws."""
    return pick(rng, string.digits, n)


def group(text: str, size: int, sep: str) -> str:
    """`text` in runs of `size` joined by `sep`, the last run shorter (IBAN print form, ISO 13616: fours)."""
    return sep.join(text[i:i + size] for i in range(0, len(text), size))


def group_card(number: str, sep: str) -> str:
    """A card number as printed on the card (ISO/IEC 7812): 15 digits (Amex) 4-6-5, 14 (Diners) 4-6-4, else
    fours."""
    if len(number) in (14, 15):
        return sep.join((number[:4], number[4:10], number[10:]))
    return group(number, 4, sep)


# ---- check digits ---------------------------------------------------------------------------------------------

def base62(n: int, width: int) -> str:
    """`n` in base62 (`B62`), left-padded with 0 to `width`."""
    out = ""
    while n:
        n, r = divmod(n, 62)
        out = B62[r] + out
    return out.rjust(width, "0")


def crc_b62(payload: str) -> str:
    """The checksum of GitHub's token format (2021) and npm's: CRC32 (ISO-HDLC, zlib's) of the random part in
    6 base62 characters."""
    return base62(zlib.crc32(payload.encode()), 6)


def crc_token(rng: random.Random, prefix: str, draw: Draw = pick) -> str:
    """A GitHub (`ghp_`, `gho_`, ...) or npm (`npm_`) token: `prefix`, 30 random base62 characters, `crc_b62` of
    them."""
    body = draw(rng, B62, 30)
    return prefix + body + crc_b62(body)


def crc_ok(token: str) -> bool:
    """Whether a `crc_token` (prefix up to the first `_`) carries the right checksum."""
    body = token.split("_", 1)[1]
    return crc_b62(body[:30]) == body[30:]


def luhn_digit(partial: str) -> str:
    """The Luhn (ISO/IEC 7812-1, annex B) check digit that completes `partial`."""
    total = 0
    for i, ch in enumerate(reversed(partial)):
        d = int(ch) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return str((10 - total % 10) % 10)


def luhn_ok(number: str) -> bool:
    """Whether a string of digits ends with its Luhn check digit."""
    return len(number) > 1 and luhn_digit(number[:-1]) == number[-1]


def iban_numeric(text: str) -> int:
    """ISO 13616's letters-to-digits step: each letter becomes 10-35 (either case), digits stay."""
    return int("".join(str(int(c, 36)) for c in text))


def iban_check(country: str, bban: str) -> str:
    """The two IBAN check digits (ISO 13616, ISO 7064 MOD 97-10): 98 - (BBAN + country + 00) mod 97."""
    return f"{98 - iban_numeric(bban + country + '00') % 97:02d}"


def iban_ok(iban: str) -> bool:
    """Whether an IBAN (spaces, dashes or either case allowed) passes the MOD 97-10 check (remainder 1)."""
    s = "".join(iban.split()).replace("-", "").upper()
    return len(s) > 4 and iban_numeric(s[4:] + s[:4]) % 97 == 1


def bban(rng: random.Random, structure: str, draw: Draw = pick) -> str:
    """A random BBAN of the SWIFT IBAN registry's structure notation (`4a6n8n`: n digits, a upper-case letters,
    c upper-case letters and digits); no national check digits."""
    classes = {"n": string.digits, "a": string.ascii_uppercase, "c": string.ascii_uppercase + string.digits}
    out, count = [], ""
    for ch in structure:
        if ch.isdigit():
            count += ch
        else:
            out.append(draw(rng, classes[ch], int(count)))
            count = ""
    return "".join(out)


# ---- encodings ------------------------------------------------------------------------------------------------

def bech32_checksum(hrp: str, data: list[int]) -> list[int]:
    """BIP 173's six checksum groups for `hrp` and the 5-bit `data`."""
    gen = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
    chk = 1
    for v in [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp] + data + [0] * 6:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if (top >> i) & 1 else 0
    chk ^= 1
    return [(chk >> 5 * (5 - i)) & 31 for i in range(6)]


def bech32(hrp: str, payload: bytes) -> str:
    """`payload` in bech32 under `hrp` (BIP 173), lower case."""
    charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
    bits = "".join(f"{b:08b}" for b in payload)
    bits += "0" * (-len(bits) % 5)
    data = [int(bits[i:i + 5], 2) for i in range(0, len(bits), 5)]
    return hrp + "1" + "".join(charset[d] for d in data + bech32_checksum(hrp, data))


def b64url(data: bytes) -> str:
    """Base64url without padding (RFC 4648 section 5, as JWS/JWT write it, RFC 7515)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def der_len(n: int) -> bytes:
    """A DER length (ITU-T X.690, 8.1.3): short form under 128, else 0x80 | byte count and the bytes."""
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def der(tag: int, body: bytes) -> bytes:
    """A DER TLV (X.690): tag, `der_len`, contents."""
    return bytes([tag]) + der_len(len(body)) + body


def der_int(n: int) -> bytes:
    """A DER INTEGER (X.690, 8.3) of a non-negative `n`: minimal two's complement, a 0 byte when the top bit is
    set."""
    return der(0x02, n.to_bytes(n.bit_length() // 8 + 1, "big"))


def der_seq(*parts: bytes) -> bytes:
    """A DER SEQUENCE (X.690, 8.9) of already encoded parts."""
    return der(0x30, b"".join(parts))


def ssh_string(data: bytes) -> bytes:
    """An SSH `string` (RFC 4251, section 5): uint32 length, then the bytes."""
    return len(data).to_bytes(4, "big") + data


def openssh_ed25519_blob(seed: bytes, public: bytes, check: bytes, comment: bytes) -> bytes:
    """An unencrypted `openssh-key-v1` private key (OpenSSH PROTOCOL.key) holding one Ed25519 key: `seed` its
    32-byte private seed, `public` its 32-byte public key, `check` the 4 check bytes."""
    pub = ssh_string(b"ssh-ed25519") + ssh_string(public)
    private = check + check + pub + ssh_string(seed + public) + ssh_string(comment)
    private += bytes(range(1, 1 + (-len(private) % 8)))
    return (b"openssh-key-v1\x00" + ssh_string(b"none") + ssh_string(b"none") + ssh_string(b"")
            + (1).to_bytes(4, "big") + ssh_string(pub) + ssh_string(private))
