"""Checks that turn a pattern's candidate into a finding: checksums, issuer ranges, entropy, plausible dates.

A pattern alone over-matches on real traces (16-digit ids, version strings, timestamps); each validator here
is what keeps a τ-bench reservation id or a commit hash from becoming a card or a secret.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import ipaddress
import math
import re
import urllib.parse
from collections import Counter
from datetime import date

from tracegym.redact import numbering, phones

_DIGITS = re.compile(r"\d")
_NOT_ALNUM = re.compile(r"[^0-9A-Za-z]")
_ALNUM = re.compile(r"[0-9A-Za-z]")


def digits_of(value: str) -> str:
    return "".join(_DIGITS.findall(value))


def luhn(number: str) -> bool:
    """The Luhn check digit of a payment card number (digits only)."""
    total = 0
    for i, ch in enumerate(reversed(number)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


PUBLISHED_TEST_CARDS = frozenset("""
4242424242424242 4000056655665556 5555555555554444 2223003122003222 5200828282828210 5105105105105100
378282246310005 371449635398431 6011111111111117 6011000990139424 6011981111111113 3056930009020004 36227206271667
6555900000604105 3566002020360505 6200000000000005 4000000000000002 4000000000009995 4000002500003155
4000000000003220 4000000000000077 4000000000000341 4000002760003184
4111111111111111 4005519200000004 4009348888881881 4012000033330026 4012000077777777 4012888888881881
4217651111111119 4500600000000061 3530111333300000 2223000048400011 36259600000004 38520000023237 30569309025904
6304000000000000
370000000000002 6011000000000012 3088000000000017 38000000000006 4007000000027 4012888818888 5424000000000015
2223000010309703 2223000010309711
4111111145551142 5555341244441115 2222400070000005 6011601160116611 3569990010095841 36006666333344
4400000000000008 5500000000000004
4444333322221111 5454545454545454 4917610000000000 3566111111111113 4222222222222
""".split())
"""Card numbers the payment providers publish for their sandboxes (Stripe, Braintree, Authorize.net, Adyen and
Worldpay's testing docs, by line): no person's card, and what coding agents' traces quote when they build a
checkout, so redacting them would hide nothing and break the tasks made from those traces."""

PUBLISHED_EXAMPLE_KEYS = frozenset({"sk_test_4eC39HqLyjWDarjtT1zdp7dc", "sk_test_BQokikJOvBiI2HlWgH4olfQ2",
                                    "zuf+tfteSlswRu7BJ86wekitnifILbZam1KYY3TG"})
"""Secret keys a provider prints in its own documentation for every reader to copy: Stripe's API reference's test
key (its code samples, `sk_test_4eC39…`, and the one its docs printed before, `sk_test_BQoki…`), MinIO's secret key
for its public playground `play.min.io` (its client's docs: `mc alias set play … Q3AM3UQ867SPQQA43P2F zuf+…`).
Published, as the sandbox cards above: no account's secret, so redacting them hides nothing and makes quoted docs
noisy."""


# Issuer prefixes (IIN ranges) and the lengths each issues: a Luhn-valid run of digits that no issuer uses is
# more likely an id or a timestamp than a card.
_ISSUERS: list[tuple[tuple[int, int], int, frozenset[int]]] = [
    ((4, 4), 1, frozenset({13, 16, 19})),                 # Visa
    ((51, 55), 2, frozenset({16})),                       # Mastercard
    ((2221, 2720), 4, frozenset({16})),                   # Mastercard 2-series
    ((34, 34), 2, frozenset({15})), ((37, 37), 2, frozenset({15})),  # American Express
    ((6011, 6011), 4, frozenset({16, 19})), ((644, 649), 3, frozenset({16, 19})),
    ((65, 65), 2, frozenset({16, 19})),                   # Discover
    ((3528, 3589), 4, frozenset({16, 17, 18, 19})),       # JCB
    ((300, 305), 3, frozenset({14, 16, 19})), ((36, 36), 2, frozenset({14, 16, 19})),
    ((38, 39), 2, frozenset({14, 16, 19})),               # Diners Club
    ((62, 62), 2, frozenset({16, 17, 18, 19})),           # UnionPay
    ((50, 50), 2, frozenset(range(12, 20))), ((56, 58), 2, frozenset(range(12, 20))),  # Maestro
    ((2200, 2204), 4, frozenset({16, 17, 18, 19})),       # Mir
    ((6304, 6304), 4, frozenset(range(12, 20))), ((6759, 6759), 4, frozenset(range(12, 20))),
    ((6761, 6763), 4, frozenset(range(12, 20))),          # Maestro (UK, international)
    ((9792, 9792), 4, frozenset({16})),                   # Troy (Türkiye)
    ((627780, 627780), 6, frozenset({16})), ((636297, 636297), 6, frozenset({16})),
    ((636368, 636368), 6, frozenset({16})),               # Elo (Brazil), outside the Visa/Maestro/Discover ranges
    ((60, 60), 2, frozenset({16})), ((81, 82), 2, frozenset({16})), ((508, 508), 3, frozenset({16})),
    ((353, 353), 3, frozenset({16})), ((356, 356), 3, frozenset({16})),  # RuPay (India), UnionPay's 81
]


_VERHOEFF_MUL = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 2, 3, 4, 0, 6, 7, 8, 9, 5), (2, 3, 4, 0, 1, 7, 8, 9, 5, 6),
    (3, 4, 0, 1, 2, 8, 9, 5, 6, 7), (4, 0, 1, 2, 3, 9, 5, 6, 7, 8), (5, 9, 8, 7, 6, 0, 4, 3, 2, 1),
    (6, 5, 9, 8, 7, 1, 0, 4, 3, 2), (7, 6, 5, 9, 8, 2, 1, 0, 4, 3), (8, 7, 6, 5, 9, 3, 2, 1, 0, 4),
    (9, 8, 7, 6, 5, 4, 3, 2, 1, 0))
_VERHOEFF_PERM = ((0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 5, 7, 6, 2, 8, 3, 0, 9, 4))


def verhoeff(digits: list[int]) -> bool:
    """Verhoeff's dihedral-group check (1969): the product over the digits, each permuted by its position, is 0."""
    c = 0
    for i, x in enumerate(reversed(digits)):
        p = x
        for _ in range(i % 8):
            p = _VERHOEFF_PERM[1][p]
        c = _VERHOEFF_MUL[c][p]
    return c == 0


_HOMEKIT_INVALID = frozenset({"12345678", "87654321", *(str(d) * 8 for d in range(10))})


def wallet_pin(value: str) -> bool:
    """A PIN told after its label: not one digit repeated, not a run up or down (`1111`, `1234`, `654321`: the
    docs' placeholders and the PINs wallets refuse)."""
    return len(set(value)) > 1 and value not in "01234567890" and value not in "09876543210"


def pairing_code(value: str) -> bool:
    """A device's setup code: a Matter manual pairing code (11 or 21 digits, the last a Verhoeff check digit over
    the others: Matter Core Specification 5.1.4.1), or a HomeKit setup code (`XXX-XX-XXX`, none of the codes the
    HomeKit Accessory Protocol forbids: all one digit, 12345678, 87654321)."""
    digits = [int(c) for c in value if c.isdigit()]
    if len(digits) == 8:
        return "".join(map(str, digits)) not in _HOMEKIT_INVALID
    return len(digits) in (11, 21) and len(set(digits)) > 2 and verhoeff(digits)


def five_by_five(value: str) -> bool:
    """Five groups of five capitals and digits (a Microsoft recovery code, a product key): letters and digits
    mixed in three groups or more, twelve distinct characters or more (not `AAAAA-…`, not a date's digits)."""
    groups = value.split("-")
    mixed = sum(bool(re.search(r"\d", g) and re.search(r"[A-Z]", g)) for g in groups)
    return mixed >= 3 and len(set(value.replace("-", ""))) >= 12


def mrz_line(value: str) -> bool:
    """A TD3 machine-readable zone's second line whose passport number (a digit among its characters) and birth
    date check out."""
    return any(c.isdigit() for c in value[:9]) and _mrz_checked(value[:10]) and _mrz_checked(value[13:20])


def _mrz_checked(field: str) -> bool:
    """A field of the machine-readable zone, then its check digit (ICAO 9303 part 3: each character's value,
    digits as themselves, A-Z as 10-35, `<` as 0, weighted 7, 3, 1 in turn, mod 10)."""
    if not field[-1].isdigit():
        return False
    total = sum((int(c) if c.isdigit() else 0 if c == "<" else ord(c) - 55) * (7, 3, 1)[i % 3]
                for i, c in enumerate(field[:-1]))
    return total % 10 == int(field[-1])


def card_number(value: str) -> bool | int:
    """A payment card: 13-19 digits from a known issuer range with a valid Luhn digit, grouped consistently. A
    match that ran over a line break into the next line's digits (a log line's number) keeps the line's part when
    that is one: its length; one that ran on into the groups after it (the expiry month) keeps the groups that
    are one."""
    if _card_whole(value):
        return True
    cut = _LINE_BREAK.search(value)
    if cut is not None:
        return cut.start() if _card_whole(value[:cut.start()]) else False
    if _card_shaped(value):
        return False  # a whole card's shape whose check digit fails: no shorter card inside it
    for sep in reversed(list(_GROUP_SEP.finditer(value))):
        card, rest = value[:sep.start()], digits_of(value[sep.start():])
        if len(rest) <= 4 and _printed_whole(card) and _card_whole(card):
            return sep.start()  # the card, then its expiry or code: `4111 1111 1111 1111 01/30`
    return False


def _printed_whole(value: str) -> bool:
    """Digits grouped as a whole card is printed (four of four, 4-6-5, 4-6-4) or written in one run of 13 or more:
    not the first groups of a longer number."""
    sizes = [len(g) for g in re.split(r"[^0-9]+", value) if g]
    return sizes in ([4, 4, 4, 4], [4, 6, 5], [4, 6, 4]) or len(sizes) == 1 and sizes[0] >= 13


_LINE_BREAK = re.compile(r"\\?\r?\n|\\n")
_GROUP_SEP = re.compile(r"[^0-9]+")


def _card_whole(value: str) -> bool:
    return _card_shaped(value) and luhn(digits_of(value))


def _card_shaped(value: str) -> bool:
    """A card's length from a known issuer, grouped as cards are: all but the check digit."""
    number = digits_of(value)
    if not 12 <= len(number) <= 19 or len(set(number)) < 2:
        return False
    groups = [g for g in re.split(r"[^0-9]+", value) if g]
    if len(groups) > 1 and not _card_grouping(groups):
        return False
    return any(lo <= int(number[:width]) <= hi and len(number) in lengths for (lo, hi), width, lengths in _ISSUERS)


def card_number_any_grouping(value: str) -> bool:
    """A payment card after a word naming one (`card`, `Kreditkarte`, `carta`): any grouping, as OCR and
    hand-typed forms split digits (`47 63 32417 5374241`); still a known issuer, its length and Luhn."""
    return _card_whole(digits_of(value))  # the digits alone: one group, no grouping to check


def fuel_card(value: str) -> bool:
    """A fleet fuel card (ISO/IEC 7812-1: major industry identifier 7, petroleum; the oil companies' and fleet
    issuers' cards, 16-19 digits): a Luhn-valid number opening with 7, in one run or in fours (the last group
    shorter). Only after a fuel card's label: a run of digits opening with 7 is no card by itself."""
    number = digits_of(value)
    groups = [g for g in re.split(r"[^0-9]+", value) if g]
    if not 16 <= len(number) <= 19 or number[0] != "7" or len(set(number)) < 3:
        return False
    return (len(groups) == 1 or _card_grouping(groups)) and luhn(number)


def _card_grouping(groups: list[str]) -> bool:
    """Digits written in groups the way cards are printed: 4-4-4-4(-3), 4-6-5 (Amex), 4-6-4 (Diners)."""
    sizes = [len(g) for g in groups]
    return all(s == 4 for s in sizes[:-1]) and 1 <= sizes[-1] <= 4 or sizes in ([4, 6, 5], [4, 6, 4])


# IBAN lengths by country (ISO 13616 registry), for the countries that issue them.
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29, "BY": 28,
    "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
    "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22,
    "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20,
    "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15,
    "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19,
    "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
    # Joined the registry since release 90 (2021-2024).
    "BI": 27, "DJ": 27, "FK": 18, "HN": 28, "LY": 25, "MN": 20, "NI": 28, "OM": 23, "RU": 33, "SD": 18, "SO": 23,
    "YE": 30,
    # IBANs issued nationally on the ISO 13616 pattern, outside the registry (Iran's Sheba, the BCEAO and BEAC
    # zones, the Maghreb, the lusophone countries).
    "AO": 25, "BF": 28, "BJ": 28, "CF": 27, "CG": 27, "CI": 28, "CM": 27, "CV": 25, "DZ": 26, "GA": 27, "GQ": 27,
    "GW": 25, "IR": 26, "KM": 27, "MA": 28, "MG": 27, "ML": 28, "MZ": 25, "NE": 28, "SN": 28, "TD": 27, "TG": 28,
}


def iban(value: str) -> bool | int:
    """An IBAN: a known country's length and the ISO 7064 mod-97 checksum. A match that runs on past the
    country's length (`DE89 3704 0044 0532 0130 00 I paid`) keeps the prefix that is one, its length, where a
    separator ends it."""
    code = _NOT_ALNUM.sub("", value).upper()
    length = IBAN_LENGTHS.get(code[:2])
    if length is None or len(code) < length or not "02" <= code[2:4] <= "98" or not _mod97(code[:length]):
        return False
    if len(code) == length:
        return True
    seen = 0
    for i, ch in enumerate(value):
        seen += ch.isalnum()
        if seen == length:
            return i + 1 if not value[i + 1].isalnum() else False  # no IBAN inside a longer run (an MRZ line)
    return False


# BBAN structures (SWIFT IBAN registry): n digits, a upper-case letters, c letters or digits, by count.
_BBAN = {
    "AD": "4n4n12c", "AE": "3n16n", "AT": "5n11n", "BE": "3n7n2n", "BG": "4a4n2n8c", "BR": "8n5n10n1a1c",
    "CH": "5n12c", "CY": "3n5n16c", "CZ": "4n6n10n", "DE": "8n10n", "DK": "4n9n1n", "EE": "2n2n11n1n",
    "ES": "4n4n1n1n10n", "FI": "3n11n", "FR": "5n5n11c2n", "GB": "4a6n8n", "GR": "3n4n16c", "HR": "7n10n",
    "HU": "3n4n1n15n1n", "IE": "4a6n8n", "IS": "4n2n6n10n", "IT": "1a5n5n12c", "LI": "5n12c", "LT": "5n11n",
    "LU": "3n13c", "LV": "4a13c", "MC": "5n5n11c2n", "MT": "4a5n18c", "NL": "4a10n", "NO": "4n6n1n",
    "PL": "8n16n", "PT": "4n4n11n2n", "RO": "4a16c", "SE": "3n16n1n", "SI": "5n8n2n", "SK": "4n6n10n",
    "SM": "1a5n5n12c", "TR": "5n1n16c", "SA": "2n18c", "IR": "22n",
}
_BBAN_PARTS = {"n": "[0-9]", "a": "[A-Z]", "c": "[A-Z0-9]"}
_BBAN_RE = {cc: re.compile("".join(f"{_BBAN_PARTS[t]}{{{n}}}" for n, t in re.findall(r"(\d+)([nac])", spec)))
            for cc, spec in _BBAN.items()}


def iban_structured(value: str) -> bool | int:
    """An IBAN whose BBAN has its country's structure too (digits where the registry has digits, letters where
    it has letters): what lets a compact lower-case IBAN stand without a word like IBAN before it. Countries
    outside the table: not taken."""
    code = _NOT_ALNUM.sub("", value).upper()
    shape = _BBAN_RE.get(code[:2])
    kept = iban(value)
    if shape is None or kept is False:
        return False
    return kept if shape.fullmatch(code[4:IBAN_LENGTHS[code[:2]]]) else False


def clabe(value: str) -> bool:
    """Mexico's CLABE (Banxico, Clave Bancaria Estandarizada): eighteen digits, bank (3), plaza (3), account (11)
    and a check digit: the seventeen weighted 3, 7, 1 repeating, each product mod 10, summed; 10 minus the sum's
    last digit, mod 10."""
    digits = [int(c) for c in value if c.isdigit()]
    if len(digits) != 18 or len(set(digits)) < 3:
        return False
    total = sum(d * w % 10 for d, w in zip(digits[:17], (3, 7, 1) * 6, strict=False))
    return digits[17] == (10 - total % 10) % 10


def au_account(value: str) -> bool:
    """An Australian account number beside its BSB (BECS: up to nine digits; five or more as banks issue them), not
    one digit repeated (a form's filler)."""
    digits = [c for c in value if c.isdigit()]
    return 5 <= len(digits) <= 9 and len(set(digits)) > 1


def _mod97(code: str) -> bool:
    moved = code[4:] + code[:4]
    return int("".join(str(int(ch, 36)) for ch in moved)) % 97 == 1


_SAMPLE_JWT_SECRETS = {"HS256": (hashlib.sha256, b"your-256-bit-secret"),
                       "HS384": (hashlib.sha384, b"your-384-bit-secret"),
                       "HS512": (hashlib.sha512, b"your-512-bit-secret")}
"""The secrets jwt.io's debugger signs its sample tokens with, as it prints them (one per HMAC algorithm)."""


def not_sample_jwt(value: str) -> bool:
    """A JWT that is not a documentation sample: one whose HMAC signature the secret jwt.io's debugger publishes for
    its algorithm checks is a sample (`eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6…`,
    copied into READMEs and tutorials): anyone can forge it, it guards nothing and names no one."""
    head, _, rest = value.partition(".")
    payload, _, signature = rest.partition(".")
    try:
        header = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)).decode()
    except (binascii.Error, ValueError):
        return True
    algorithm = re.search(r'"alg"\s*:\s*"(HS\d{3})"', header)
    if algorithm is None or algorithm.group(1) not in _SAMPLE_JWT_SECRETS:
        return True
    digest, secret = _SAMPLE_JWT_SECRETS[algorithm.group(1)]
    mac = hmac.new(secret, f"{head}.{payload}".encode(), digest).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode() != signature


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def high_entropy_secret(value: str) -> bool:
    """A random-looking token: letters and digits mixed (or a long mixed-case run), high entropy; not a hex
    digest (commit hashes, content hashes) nor a path or a dotted identifier."""
    if len(value) < 16 or re.fullmatch(r"[0-9a-f]+|[0-9A-F]+", value):
        return False
    if _path_or_code(value):
        return False
    if re.search(r"\d", value):
        return bool(re.search(r"[A-Za-z]", value)) and entropy(value) >= 3.5
    # Without digits only a long, mixed-case, very random run reads as a key rather than a name: or random letters
    # of both cases whose humps are no words (Razorpay's 24-letter key secrets).
    return len(value) >= 24 and bool(re.search(r"[a-z]", value) and re.search(r"[A-Z]", value)) \
        and entropy(value) >= 4.2 or _random_letters(value) and entropy(value) >= 3.5


def symbol_secret(value: str) -> bool:
    """A secret written whole between delimiters, symbols and all (Django's 50 printable characters, an OAuth
    client secret with `~`): random-looking, letters with digits or symbols, no word run, not a path, a URL, a
    reference or code; no backslash (a regular expression's `\\d`: no generator's alphabet holds one)."""
    if len(value) < 16 or " " in value or "\\" in value or "://" in value \
            or value.startswith(("$", "{", "%(", "<")):
        return False
    if _path_or_code(value) or not re.search(r"[A-Za-z]", value) or not re.search(r"[^A-Za-z]", value):
        return False
    if sum(len(w) for w in _WORDLIKE.findall(value)) * 3 >= len(value):
        return False
    return high_entropy_secret(value) or entropy(value) >= 4.0


def aws_secret(value: str) -> bool:
    """An AWS secret access key: 40 characters of base64, mixed case, random-looking (not a path of words)."""
    return len(value) == 40 and bool(re.search(r"[a-z]", value) and re.search(r"[A-Z]", value)) \
        and bool(re.search(r"[0-9+/]", value)) and entropy(value) >= 4.0


def twilio_secret(value: str) -> bool:
    """A Twilio auth token (32 hex) or API key secret (32 letters and digits) beside its SID: random-looking."""
    return len(set(value)) >= 10 and entropy(value) >= 3.0


def labelled_key(value: str) -> bool:
    """A key after an explicit key label (`API Key:`): random-looking letters and digits, hex (many services
    issue hex keys) included, and random letters of both cases with no digit (one in 42 of Elasticsearch's
    22-character keys); not a word, an identifier or a path."""
    if len(value) < 16 or not re.search(r"[A-Za-z]", value):
        return False
    if not re.search(r"\d", value):
        return _random_letters(value) and entropy(value) >= 3.0
    return not _path_or_code(value) and entropy(value) >= 3.0


# A dotted name whose parts are words or identifiers (`settings.SECRET_KEY`, `self.api_key2`): letters, then
# digits at most at the end of a part, or a part of digits alone between them (an index, as OpenInference flattens
# lists: `llm.input_messages.0.message.role`, an OTLP attribute's key); a random key with a dot in it
# (`Sit.We3liMuOx...`) mixes them.
_DOTTED_CODE = re.compile(r"[A-Za-z_][A-Za-z_]*\d*(?:\.(?:[A-Za-z_][A-Za-z_]*\d*|\d{1,4}(?=\.)))+")
# A path segment that is a word or a file name: lower case, digits only after it, an extension.
_PATH_WORD = re.compile(r"[a-z_][a-z_-]{2,}\d*(?:\.[A-Za-z0-9]{1,5})?|[^/]*\.[a-z]{1,5}")


def _path_or_code(value: str) -> bool:
    """A path (`/etc/app/key.pem`, `config/prod`) or a dotted identifier, not a key: base64 keys hold `/` too
    (`KASTkk/YRKxAuPVX`), but between random runs, not between words."""
    if _DOTTED_CODE.fullmatch(value):
        return True
    if "/" not in value or re.search(r"[+=]", value):
        return False
    return value.startswith(("/", "./", "~/")) or any(_PATH_WORD.fullmatch(p) for p in value.split("/") if p)


def hex_key(value: str) -> bool:
    """A key issued as hex after a label naming a key (Datadog's 32-hex API and 40-hex application keys,
    Twilio's 32-hex auth token, webhook signing secrets): 32+ hex digits, letters and digits mixed, not a
    repeated pattern. What tells it from a digest is the label, which the rule checks."""
    return len(value) >= 32 and _random_hex(value)


def _random_hex(value: str) -> bool:
    """Hex digits of one case, letters and digits mixed, random-looking."""
    return bool(re.fullmatch(r"[0-9a-f]+|[0-9A-F]+", value)) \
        and bool(re.search(r"[a-fA-F]", value) and re.search(r"\d", value)) and entropy(value) >= 3.0


def crc_key(value: str) -> bool:
    """Przelewy24's CRC key (the salt of its SHA-384 `sign`): 16 hex digits, one case, letters and digits mixed,
    seven distinct or more (a placeholder repeats a few: `0000…`, `abcdabcd…`); 16 random digits fall under
    `_random_hex`'s entropy one time in ten."""
    return bool(re.fullmatch(r"[0-9a-f]{16}|[0-9A-F]{16}", value)) and bool(re.search(r"[a-fA-F]", value)) \
        and bool(re.search(r"\d", value)) and len(set(value)) >= 7


def short_hex_secret(value: str) -> bool:
    """A hex secret of 24-31 digits after a name ending in secret (Plaid's 30): one case, letters and digits
    mixed, random-looking."""
    return 24 <= len(value) <= 31 and _random_hex(value)


def basic_credentials(value: str) -> bool:
    """RFC 7617 basic credentials: base64 of `user-id:password`, printable text with a colon."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return False
    user, colon, secret = decoded.partition(":")
    return bool(colon and secret) and decoded.isprintable() and len(user) <= 256


def age_identity(value: str) -> bool:
    """An age identity (`AGE-SECRET-KEY-1` + bech32): a random body, not a placeholder (`AGE-SECRET-KEY-1XXXX…`)."""
    return len(set(value.removeprefix("AGE-SECRET-KEY-1"))) >= 10


def encoded_private_key(value: str) -> bool:
    """Base64 of a PEM block that holds a private key (`-----BEGIN … PRIVATE KEY-----`), not a certificate."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)[:80]
    except ValueError:
        return False
    return b"PRIVATE KEY" in decoded


_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_EXTENDED_PRIVATE = frozenset(bytes.fromhex(h) for h in (
    "0488ade4", "04358394", "049d7878", "044a4e28", "04b2430c", "045f18bc", "0295b005", "024285b5", "02aa7a99",
    "02575048"))
"""BIP32's version bytes of extended private keys: mainnet `xprv` and testnet `tprv`, and SLIP-132's for other
script types (`yprv`/`uprv` BIP49, `zprv`/`vprv` BIP84, `Yprv`/`Uprv`/`Zprv`/`Vprv` multisig)."""


def base58check(value: str) -> bytes | None:
    """The payload of a Base58Check string (Bitcoin's: base58, then four bytes of double SHA-256), or None when the
    checksum fails."""
    number = 0
    for ch in value:
        digit = _BASE58.find(ch)
        if digit < 0:
            return None
        number = number * 58 + digit
    raw = b"\0" * (len(value) - len(value.lstrip("1"))) + number.to_bytes((number.bit_length() + 7) // 8, "big")
    payload, check = raw[:-4], raw[-4:]
    return payload if hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4] == check else None


def extended_private_key(value: str) -> bool:
    """A BIP32 extended private key (`xprv…`, 111 characters): Base58Check over 78 bytes, a private version, and
    the key data a private key's (`00` before its 32 bytes)."""
    payload = base58check(value)
    return payload is not None and len(payload) == 78 and payload[:4] in _EXTENDED_PRIVATE and payload[45] == 0


def ssn(value: str) -> bool:
    """A US Social Security number the SSA issues: area 001-899 but not 666, group 01-99, serial 0001-9999
    (SSA, "Social Security Number Randomization"); not one digit repeated."""
    number = digits_of(value)
    if len(number) != 9 or len(set(number)) < 3:
        return False
    area, group, serial = number[:3], number[3:5], number[5:]
    return "001" <= area <= "899" and area != "666" and group != "00" and serial != "0000"


_ITIN_GROUPS = frozenset(range(50, 66)) | frozenset(range(70, 89)) | {90, 91, 92} | frozenset(range(94, 100))


def itin(value: str) -> bool:
    """A US Individual Taxpayer Identification Number the IRS issues: nine digits, the first 9, the fourth and fifth
    in 50-65, 70-88, 90-92 or 94-99 (IRS, ITIN assignment ranges), where an SSN's area never starts with 9."""
    number = digits_of(value)
    return len(number) == 9 and number[0] == "9" and int(number[3:5]) in _ITIN_GROUPS and len(set(number)) > 2


_NINO_UNUSED = frozenset({"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"})
_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


def national_id(value: str) -> bool:
    """A national id by its public rules: a UK NINO (HMRC NIM39110: prefix letters the pattern allows, less the
    prefixes never issued, six digits, suffix A-D), a Spanish DNI/NIF or NIE (Real Decreto 1553/2005: the letter is
    the number mod 23, an NIE's X/Y/Z read as 0/1/2), a Canadian SIN (Service Canada: nine digits, Luhn, not
    starting 0 or 8)."""
    compact = _NOT_ALNUM.sub("", value).upper()
    if len(compact) == 9 and compact[:2].isalpha():
        return compact[:2] not in _NINO_UNUSED and len(set(compact[2:8])) > 1
    if len(compact) == 9 and compact[-1].isalpha():
        number = str("XYZ".index(compact[0])) + compact[1:8] if compact[0] in "XYZ" else compact[:8]
        return number.isdigit() and len(set(number)) > 2 and _DNI_LETTERS[int(number) % 23] == compact[-1]
    return len(compact) == 9 and compact.isdigit() and compact[0] not in "08" and len(set(compact)) > 2 \
        and luhn(compact)


_CALENDAR_DATE = re.compile(r"(?:(?:19|20)\d\d([-/.])(?:0?[1-9]|1[0-2])\1(?:0?[1-9]|[12]\d|3[01])|"
                            r"(?:0?[1-9]|[12]\d|3[01])([-/.])(?:0?[1-9]|1[0-2])\2(?:19|20)\d\d)(?:$|[ T])")
"""A calendar date, year first (ISO 8601) or last (`12.05.2024`), one separator, alone or before its time: what a
log writes after "phone changed" or "tel. since", not a number as a plan groups it."""


# A number in NANP's grouping (`(877) 412-9930`, `1-844-230-7781`): NANP's plan reads it, its `1` before it.
_NANP_GROUPED = re.compile(r"(?:1[ .-]?)?(?:\([2-9]\d\d\)[ .-]?|[2-9]\d\d[.-])\d{3}[ .-]\d{4}")


def _nanp_read(value: str) -> str:
    """The digits of a number as its plan reads them: a number grouped as NANP's with its `1` (without it,
    `877…` is an Indian mobile too), any other as written."""
    number = digits_of(value)
    if _NANP_GROUPED.fullmatch(value):
        return "1" + (number[1:] if len(number) == 11 else number)
    return number


def _phone_mask(value: str) -> bool:
    """A form's mask or a placeholder for a phone: one digit throughout after the first group (`(00) 00000-0000`,
    `(11) 99999-9999`, `+55 00 00000-0000`)."""
    rest = "".join(re.findall(r"\d+", value.lstrip("+"))[1:])
    return len(rest) >= 6 and len(set(rest)) == 1


def national_phone(value: str) -> bool | int:
    """A phone number in a national format after a word like phone, tel or Handy: a number of one of the
    national numbering plans (tracegym/redact/phones.py), or an international one (+CC, 00CC). A match that runs
    on into other digits keeps the longest prefix of whole groups that is one: its length. Groups joined by one
    and the same separator are read as one number, which past 15 digits (E.164's most) is no phone number, nor
    is any prefix of it (a card number after "número")."""
    if len(set(re.findall(r"\D+", value.lstrip("+(")))) == 1 and len(digits_of(value)) > 15:
        return False
    if _CALENDAR_DATE.match(value) or _phone_mask(value):
        return False
    groups = list(re.finditer(r"\d+", value))
    for n in range(len(groups), 0, -1):
        end = groups[n - 1].end()
        if _plan_number(value[:end]):
            if not value.startswith("+") and numbering.service(_nanp_read(value[:end])):
                return False  # a toll-free, premium-rate or shared-cost number: a business's
            return True if end == len(value) else end
    return False


def wallet_phone(value: str) -> bool | int:
    """A mobile-money wallet's number after the wallet's name alone (`MoMo : 677 50 05 55`, `Wave 77 123 45 67`,
    `Orange Money 2250707123456`): a number `national_phone` reads that is a mobile of a country the wallets run
    in (`numbering.wallet_number`), as a wallet is its owner's mobile number; a year range or an amount after the
    name is none."""
    found = national_phone(value)
    if not found:
        return False
    return found if numbering.wallet_number(digits_of(value if found is True else value[:found])) else False


_SSN_GROUPS = re.compile(r"\d{3}-\d{2}-\d{4}")
_NOT_DIGIT = re.compile(r"\D")


def grouped_phone(value: str) -> bool:
    """A phone number known by its grouping and its plan alone (tracegym/redact/numbering.py): nine digits at
    least, not a calendar date and not an SSN's `3-2-4`."""
    number = digits_of(value)
    if len(number) < 9 or _CALENDAR_DATE.match(value) or _SSN_GROUPS.fullmatch(value):
        return False
    return numbering.grouped_number(number, _NOT_DIGIT.split(value, maxsplit=1)[0])


def vcard_phone(value: str) -> bool:
    """A vCard TEL value: 6 to 15 digits (E.164's most; short ones are extensions and internal lines)."""
    return 6 <= len(digits_of(value)) <= 15 and not _CALENDAR_DATE.match(value)


def subscriber_number(value: str) -> bool | int:
    """A number a telecom record's field holds for a subscriber: an MSISDN as 3GPP TS 23.003 writes it (country
    code first, no `+`) or with `+`, of a plan the table knows; or a national number (a trunk 0 first, or written
    in groups)."""
    if value.lstrip("(").startswith("0") or not value.isdigit() and not value.startswith("+"):
        return national_phone(value)
    number = digits_of(value)
    return phones.international(number) or phones.national(number, grouped=False)


def nanp_written(value: str) -> bool:
    """A North American number as written with separators: area code [2-9]XX after an optional leading 1; not a
    toll-free or premium-rate one (`1-800-…`, `(888) …`, `900-…`: a business's). Its grouping is NANP's, so NANP's
    plan reads it with its `1` (without it, `888…` is an Indian mobile too)."""
    number = digits_of(value)
    return (number[1:] if len(number) == 11 else number)[0] not in "01" and not numbering.service(_nanp_read(value))


def area_code_phone(value: str) -> bool:
    """E.123 national notation, the area code in parentheses: a trunk 0 in them (UK, Germany, France, Australia,
    India) and 9-12 digits in all (a German subscriber number in one run too), or Brazil's two-digit DDD with a
    mobile or landline number in groups; or a three-digit country code in parentheses, as the Caribbean and Central
    America write the code they dial from abroad (`(509) 3412-5678`, `(505) 2274-9188`), and a number of its plan;
    not a form's mask."""
    area = value[1:value.index(")")]
    number = digits_of(value)
    if _phone_mask(value):
        return False
    if area.startswith("0"):
        return 9 <= len(number) <= 12
    if len(area) == 3 and phones.with_country_code(area, number):
        return True
    return len(area) == 2 and phones.brazil(number) and not re.search(r"\d{6}", value[value.index(")"):])


def _plan_number(value: str) -> bool:
    number = digits_of(value.replace("(0)", "", 1))  # +44 (0)20 ...: the trunk 0 is not dialled from abroad
    if value.startswith("+"):
        return phones.international(number)
    if value.startswith("00"):
        return phones.international(number[2:])
    if value.startswith("0xx"):
        return phones.brazil(number[1:])  # Anatel's notation for the carrier code a caller picks: 0xx + DDD
    # a country code without `+`, a separator after it, or in parentheses (`(509) 3412-5678`)
    head = re.match(r"\(([1-9]\d{0,2})\)[ .-]?|([1-9]\d{0,2})[ .-]", value)
    groups = tuple(len(g) for g in re.findall(r"\d+", value))
    if phones.national(number, grouped=not value.isdigit(), groups=groups) \
            or head is not None and phones.with_country_code(head.group(1) or head.group(2), number):
        return True
    # Compact with its country code and no `+` (`919876543210`, `6281234567890`: how databases, CRMs and
    # messaging APIs store numbers): a country code of the table whose plan reads the rest.
    return value.isdigit() and 11 <= len(value) <= 14 and any(phones.with_country_code(number[:n], number)
                                                               for n in (1, 2, 3))


_CODE_VALUE = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*(?:\(\)?)?|None|null|true|false|undefined|\*+|x+|\.+")
_PLACEHOLDER_WORDS = {"password", "passwd", "secret", "changeme", "example", "your_password", "yourpassword",
                      "xxxxxx", "redacted", "hidden", "required", "optional", "string"}
_PLACEHOLDER_PARTS = frozenset({"changeme", "changeit", "replaceme", "placeholder", "example", "redacted"})
"""Words that only ever stand in for a password, found as one part of a phrase joined by `-`, `_` or `.`
(`changeme-in-vault`, `replaceme_later`): the phrase is a note to set one, not a password."""
_MASK_SEPARATORS = re.compile(r"[-_ ./]")


# What stands in for a password without being one: a variable or template reference ($DB_PASSWORD, ${PW},
# $(cat f), %PW%, {{ pw }}, <password>, Python's %(DB_PASS)s) or a YAML tag (Ansible's `!vault |`, `!Ref`).
_REFERENCE = re.compile(r"\$\{?[A-Za-z_]\w*\}?|\$[({].*|%\w+%|%\(\w+\)[a-z]|%\[.*\]|\{.*|<.*|"
                        r"!{1,2}[A-Za-z][A-Za-z_-]*\d{0,3}")
"""A reference to a value kept elsewhere: shell and Windows variables, Python's `%(name)s`, HAProxy's `%[env(X)]`,
templates, YAML tags (a word: `!vault`, `!!str`, `!Base64`; not `!` before letters and digits mixed, a
password's)."""


_CMDLET = re.compile(r"(?:Get|Set|New|Remove|Add|Clear|Copy|Move|Rename|Invoke|Start|Stop|Restart|Import|Export|"
                     r"Read|Write|Test|Out|ConvertTo|ConvertFrom|Select|Update|Enable|Disable|Install|Uninstall|"
                     r"Register|Unregister|Connect|Disconnect|Send|Receive|Find|Format|Join|Split|Show|Grant|Revoke|"
                     r"Protect|Unprotect|Save|Reset|Restore|Backup|Publish|Sync|Initialize|Wait|Resolve)-[A-Z][A-Za-z]+")
"""A PowerShell cmdlet: one of the approved verbs (`Get-Verb`), a dash and a noun."""


def _random_letters(value: str) -> bool:
    """Letters of both cases in no word's order (`QGQyLm_RKsNAHxM`, `gSBxAHbjkbtiaNru`, a generator's output): the
    case changes at least twice in five letters and no lower-case run is a word's length, or its humps are not
    words; a camelCase name (`getUserPassword`, `parseHTTPResponse`) changes case at its humps only, each a word."""
    letters = value.replace("_", "").replace("-", "")
    if len(letters) < 10 or not letters.isalpha() or len(value) - len(letters) > 2 or letters.lower() == letters \
            or letters.upper() == letters:
        return False
    changes = sum(a.isupper() != b.isupper() for a, b in zip(letters, letters[1:], strict=False))
    if changes * 5 >= len(letters) * 2 and max(len(r) for r in re.findall(r"[a-z]+|$", letters)) <= 4:
        return True
    return not _humps_are_words(letters)


_HUMP = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+|[A-Z]")
_UNSPOKEN = re.compile(r"[bcdfghjklmnpqrstvwxz]{5}")


def _humps_are_words(letters: str) -> bool:
    """Whether a camelCase run reads as words: at most one hump of one or two letters that is no acronym (`myX`,
    `isOK`), and no longer hump with five consonants in a row (`Http`, `Length`, `Ctx` read as words). A random
    run of both cases breaks into many one-letter humps (`g|S|Bx|A|Hbjkbtia|Nru`)."""
    humps = _HUMP.findall(letters)
    short = sum(1 for h in humps if len(h) <= 2 and not h.isupper() or len(h) == 1)
    return short <= 1 and not any(_UNSPOKEN.search(h.lower()) for h in humps if len(h) > 2 and not h.isupper())


def password(value: str) -> bool:
    """A password given after a password label; code (`password=password`, `pwd=self.pwd`), references to one
    (`$DB_PASSWORD`, `{{ pw }}`), YAML tags (`!vault`) and doc placeholders are not."""
    bare = value.strip("'\"")
    if not _ALNUM.search(bare):
        return False  # punctuation: the label ended a JSON string (`"Password: "}, {`)
    if len(bare) < 4 or bare.lower() in _PLACEHOLDER_WORDS or _REFERENCE.fullmatch(bare) \
            or len(set(_MASK_SEPARATORS.sub("", bare))) == 1:
        return False  # a mask (0000, ****, xxxx-xxxx-xxxx) is one character repeated, in groups or not
    parts = re.split(r"[-_.]", bare.lower())
    if len(parts) > 1 and all(p.isalpha() for p in parts) and not _PLACEHOLDER_PARTS.isdisjoint(parts):
        return False  # a placeholder phrase: `changeme-in-vault`
    if re.fullmatch(r"[\[(][A-Za-z][A-Za-z _.-]{0,30}[\])]", bare):
        return False  # a mask written in brackets: [REDACTED], [MASKED], (hidden)
    if _CODE_VALUE.fullmatch(bare.rstrip(".,")) and not re.search(r"\d", bare) and not _random_letters(bare):
        return False  # an identifier without digits reads as a variable name (or a word ending a sentence)
    if re.fullmatch(r"[A-Za-z_][\w.]*(?:\([\w.,\s\"']*\)?|\[[\w.\"']*\]?)", bare):
        return False  # a call or an index: getpass(prompt), os.environ["PW"]
    if re.fullmatch(r"[A-Za-z_][\w.]*\)+", bare):
        return False  # a call's last argument: `… % (self.username, self.password)` then `(method, path)`
    if re.fullmatch(r"--?[A-Za-z][\w-]*", bare):
        return False  # another flag: `mongo -u admin -p --authenticationDatabase admin` prompts for the password
    if re.fullmatch(r"/[A-Za-z][\w:]*", bare):
        return False  # a Windows switch (`net user bob /delete`) or a directory
    if re.fullmatch(r"\?[A-Za-z][A-Za-z _-]*", bare):
        return False  # the shell's message for an unset variable (`${PGPASSWORD:?unset}`), not a default
    if _CMDLET.fullmatch(bare):
        return False  # a PowerShell cmdlet (`$pw = ConvertTo-SecureString …`: the value is what it converts)
    if re.fullmatch(r"@[\w-]+(?:\.[\w-]+)*(?::\d+)?/\S*", bare):
        return False  # a URL's host and path after a placeholder password (`postgresql://user:<password>@host/db`)
    return not _CSS_PSEUDO.fullmatch(bare)  # a selector's pseudo-class: `input[name="password"]:nth-child(2)`


def wifi_passphrase(value: str) -> bool:
    """A WPA passphrase (IEEE 802.11i, H.4.1: 8 to 63 printable ASCII characters) or a 64-hex-digit PSK, by
    `password`'s rules; a leading dash allowed, as after a Wi-Fi key's label no command line takes it for a flag."""
    bare = value.strip("'\"")
    if not (8 <= len(bare) <= 63 and all(" " <= c <= "~" for c in bare)) and not re.fullmatch(r"[0-9A-Fa-f]{64}", bare):
        return False
    return password(bare.lstrip("-"))


def connection_password(value: str) -> bool:
    """The password field of a connection string (ODBC's `Pwd=`, a JDBC URL's `password=`): one by `password`'s
    rules, or a value shaped like an identifier there too (`BxKqTmRw.pLz`, `QmTrvXk_hPz`: random letters with a
    dot or an underscore), which in that field is a literal, not code; both cases in it, eight characters or more,
    and no word for a password in it (`DbPassword`, `settings.DB_PWD`: a placeholder or a reference). ODBC's braces
    quote a value (`Pwd={a;b}`). A leading dash is the value's own there, no flag (`Pwd=-xK2…;`)."""
    bare = value[1:-1] if value.startswith("{") and value.endswith("}") else value
    if password(bare) or bare.startswith("-") and password(bare.lstrip("-")):
        return True
    return bool(_CODE_VALUE.fullmatch(bare)) and len(bare) >= 8 and bare.lower() != bare and bare.upper() != bare \
        and not re.search(r"(?i:pass|pwd|secret|change|example|your)", bare)


_CSS_PSEUDO = re.compile(r"(?:nth-(?:last-)?(?:child|of-type)|(?:first|last|only)-(?:child|of-type)|not|is|where|has|"
                         r"focus(?:-within|-visible)?|hover|active|checked|disabled|enabled|required|optional|"
                         r"(?:in)?valid|placeholder-shown|read-only|read-write|autofill)(?:\(\S*)?")


def snmp_secret(value: str) -> bool:
    """An SNMP community or passphrase as a password is; not the defaults every manual shows (`public`, `private`),
    which guard nothing."""
    return value.lower() not in ("public", "private") and password(value)


def sim_key(value: str) -> bool:
    """A SIM's Ki, K or OPc: 128 bits as 32 hex digits (spaces between groups of eight, as Open5GS prints them),
    random-looking: not one digit repeated or a run of zeros."""
    compact = value.replace(" ", "")
    return len(compact) == 32 and len(set(compact.lower())) >= 6


_EMPTY_PASSWORD_HASHES = frozenset({"aad3b435b51404eeaad3b435b51404ee", "31d6cfe0d16ae931b73c59d7e0c089c0"})
"""The LM and NT hashes of the empty password: the constants a dump prints for a disabled LM column or a blank
password, which open nothing."""


def nt_hash(value: str) -> bool:
    """An NT (or LM) hash of a password: 32 hex digits, random-looking (not a placeholder of one digit repeated),
    not the empty password's constant. Whoever holds it logs on as the user (pass-the-hash)."""
    return len(set(value.lower())) >= 6 and value.lower() not in _EMPTY_PASSWORD_HASHES


def json_pass(value: str) -> bool:
    """A password under a JSON key `pass`: one by `password`'s rules, and no path, test id, count or word (a test
    report's `"PASS": "tests/test_io.py::test_read"`, `"pass": "12"`, `"pass": "skipped"`)."""
    return password(value) and not re.search(r"[/\\:]", value) and not value.isdigit() \
        and not re.fullmatch(r"[a-z]+", value)


def bare_password(value: str) -> bool:
    """A password after its label with nothing but spaces between (no `:`, `=` or "is" to say the label names
    it): 8+ characters, letters and digits (or both cases and a generator's symbol: `Tyh#JVuLXgqjM#*Hvo=`), not
    code (`varchar(128)`, `hash2(pw)`) nor a path or a URL."""
    mixed = bool(re.search(r"\d", value) and re.search(r"[^\W\d_]", value)) \
        or bool(re.search(r"[a-z]", value) and re.search(r"[A-Z]", value) and re.search(r"[!#$%&*+=?@^~]", value))
    return len(value) >= 8 and mixed \
        and "://" not in value and not value.startswith(("/", "./", "(")) and password(value)


_MASK_RUN = re.compile(r"[*•]{3}|[xX]{4}|\.{3}")
"""A masked key's hidden middle (`sk-proj-****C7JE`)."""


def short_secret(value: str) -> bool:
    """A secret a person chose or was handed, after a word that names a credential (`token: Niebieski138&`,
    `secret: Tmp-Zsrt-6823-`): 8 to 64 characters holding lower and upper case, a digit and a symbol, and a
    password by `password`'s reading; not a path, a URL, a reference or a dotted name (a passphrase of dotted words
    is no name)."""
    if not 8 <= len(value) <= 64 or not all(re.search(c, value) for c in (r"[a-z]", r"[A-Z]", r"\d", r"[^A-Za-z0-9]")):
        return False
    if "://" in value or value.startswith(("$", "{", "%(")) or _MASK_RUN.search(value):
        return False
    return (_dotted_passphrase(value) or not _path_or_code(value)) and password(value)


_DOTTED_PASSPHRASE = re.compile(r"[A-Za-z]{4,12}(?:\.[A-Za-z]{4,12}){1,4}\d{1,4}")
_CODE_PARTS = frozenset({"token", "secret", "key", "password", "pass", "pwd", "auth", "api", "config", "settings",
                         "env", "self", "this", "process", "props", "state", "options", "credentials", "request"})


def _dotted_passphrase(value: str) -> bool:
    """Words joined by dots, a capital in them and a number after the last (`velebit.Svetlo06`,
    `Koala.Sakura.Cielo7`): after a word that names a credential, a passphrase, where it would read as a dotted
    name elsewhere; not one whose parts name code (`auth.Token2`, `self.Secret1`)."""
    return _DOTTED_PASSPHRASE.fullmatch(value) is not None and re.search(r"[A-Z]", value) is not None \
        and not _CODE_PARTS & {part.rstrip("0123456789").lower() for part in value.split(".")}


def short_secret_any_script(value: str) -> bool:
    """A short secret by `short_secret`'s reading whose letters are not all ASCII (`Ąžuolas1986%`, `Chór2013?`:
    passwords people choose in their own language), each such letter read as an ASCII one of its case; no
    punctuation beyond ASCII (quotes, dashes and ellipses of prose)."""
    folded = _ascii_letters(value)
    return folded is not None and folded != value and short_secret(folded)


def _ascii_letters(value: str) -> str | None:
    """`value` with each letter beyond ASCII read as an ASCII one of its case (`Ąžuolas` as `Aauolas`); None where
    it holds punctuation beyond ASCII (quotes, dashes and ellipses of prose)."""
    if any(ord(c) > 127 and not c.isalpha() for c in value):
        return None
    return "".join(c if ord(c) < 128 else "A" if c.isupper() else "a" for c in value)


def _words_and_number(joins: str) -> re.Pattern[str]:
    """Three to seven words joined by one of `joins`, then a number (`harbor-copper-ember-65`)."""
    return re.compile(rf"[A-Za-z]{{3,12}}(?:[{joins}][A-Za-z]{{3,12}}){{2,6}}[{joins}]?\d{{1,4}}")


_PASSPHRASE = _words_and_number("-.")
_STRONG_SYMBOL = re.compile(r"[!#$%&*+=?@^|~]")
_FIELDS = re.compile(r"(?:^|[&;?])[A-Za-z_][\w.-]*=")
"""A query's or a form's fields (`bob&password=…&client_id=…`): the value is one of them, not the run."""
_FIELD_PREFIX = re.compile(r"[a-z]{2,8}:")
"""A field's or a scheme's name before the token (`data:c+oLs3…` inside SOPS' `ENC[…]`)."""
_TYPED_ID = re.compile(r"[a-z]{2,12}[_-][A-Za-z0-9]{8,}")
"""An id behind its type (`call_K3LxZq79Yw…`, `req-8fK2…`): an API's object id, not a password."""


def near_password(value: str) -> bool:
    """A password a few words from its label: a passphrase of words and a number (`harbor-copper-ember-65`), or a
    short secret by `short_secret`'s reading whose symbol a generator draws (`Tmp-i12R-8807&`); with only `-`,
    `.` or `_` for symbols, letters in no word's order (`Rqvts8_s26xw6G`, not `TestLogin_2FA` or `v2.Alpha-3`) and
    no id behind its type (`call_K3LxZq79Yw…`)."""
    if _PASSPHRASE.fullmatch(value):
        return password(value)
    if not short_secret(value) or value.endswith(":") or _FIELDS.search(value) or _FIELD_PREFIX.match(value):
        return False
    if _STRONG_SYMBOL.search(value):
        return True
    letters = re.sub(r"[^A-Za-z]", "", value)
    return len(letters) >= 6 and not _humps_are_words(letters) and not _TYPED_ID.fullmatch(value)


_PASSPHRASE_WORDS = _words_and_number("-.+_")
"""A passphrase as people join its words after a word for key (`Kirschblüte+Sakura+Volga20`), `+` and `_` too."""
_NAME_PARTS = re.compile(r"[a-z0-9]+(?:[._][a-z0-9]+)+")
"""Lower-case words joined by dots or underscores: a file's or a setting's name (`config.yaml.bak2`), where a
passphrase joined so capitalises a word."""
_REFERENCE_NUMBER = re.compile(r"(?i:order|invoice|inv|ticket|case|issue|bug|task|job|item|po|pr|ref|req|request|"
                               r"booking|reservation|res|room|unit|apt|suite|user|customer|cust|account|acct|no|nr|"
                               r"id|row|pk|sk)[#№]\w")
"""An order's, a ticket's or a row's number behind its name (`Order#2024-11`, `INV#88`), a composite key's
(DynamoDB's `USER#alice42`): where a password (`Summer#2024`) has a word of its own."""
_SHORTCUT = re.compile(r"(?i:ctrl|control|strg|shift|umschalt|alt|altgr|option|opt|cmd|command|meta|super|win|fn)"
                       r"[+-]")
"""A keyboard shortcut's first key (`Ctrl+Shift+F5`, `Strg+Umschalt+T1`): what a key's name holds, not a password."""


def keyed_password(value: str) -> bool:
    """A password after a word for key in a language other than English (`clave: Volga7904*`, `ключ: Lune9582*`,
    `Schlüssel: Drache.Bambu.Cielo80`), where a key given in a message is one to a door or an account: a passphrase
    of three words or more and a number, or a short secret by `short_secret`'s reading with a symbol people and
    generators add (`*`, `!`, `+`, `?`); letters beyond ASCII read as ASCII ones of their case, no punctuation beyond
    ASCII; not a keyboard shortcut, a file's name or a reference number."""
    folded = _ascii_letters(value)
    if folded is None or _SHORTCUT.match(folded) or _NAME_PARTS.fullmatch(folded) or _REFERENCE_NUMBER.match(folded):
        return False
    if _PASSPHRASE_WORDS.fullmatch(folded):
        return password(folded)
    return short_secret(folded) and _STRONG_SYMBOL.search(folded) is not None


def short_random(value: str) -> bool:
    """A short random key after a word that names a credential (`token => jk31aJzWrqgM`): 10 to 15 letters and
    digits, both cases and a digit, hardly a character twice, and humps that are no words (`MyToken2024`,
    `Release2Beta` are names)."""
    if not 10 <= len(value) <= 15 or not all(re.search(c, value) for c in (r"[a-z]", r"[A-Z]", r"\d")):
        return False
    letters = re.sub(r"[^A-Za-z]", "", value)
    return len(letters) >= 5 and len(set(value)) >= 0.75 * len(value) and not _humps_are_words(letters)


def symbol_password(value: str) -> bool:
    """A generated password after a prose label, with the brackets, braces and semicolons that end a value
    elsewhere (`t]u]$De:Io]=gP!`, `}kP7{tV?DdK3`): 8+ printable characters of three of upper case, lower case,
    digits and symbols, letters among them, a bracket or a semicolon in it; not a placeholder wrapped in a
    pair (`[REDACTED]`, `(see vault)`), a reference (`${PW}`, `{{ pw }}`, `<password>`), code or a CTF flag
    (`os.environ[k]`, `get(k);`, `flag{…}`) nor a path."""
    if not 8 <= len(value) <= 128 or not re.search(r"[()\[\]{}<>;]", value) or len(set(value)) < 6:
        return False
    if value[0] + value[-1] in ("[]", "()", "{}", "<>") or value.startswith(("{{", "{%", "$", "%")) \
            or _path_or_code(value):
        return False
    if re.fullmatch(r"[A-Za-z_][\w.]*(?:\(.*\)|\[.*\]|\{.*\});?", value):
        return False
    classes = sum(bool(re.search(c, value)) for c in (r"[a-z]", r"[A-Z]", r"\d", r"[^A-Za-z0-9]"))
    return bool(re.search(r"[A-Za-z]", value)) and classes >= 3


# File extensions of images and documents: `logo@2x.png`, `icon@1.5x.webp` (an image-density suffix) name
# files, not mailboxes; none of them is a top-level domain.
_FILE_EXTENSIONS = frozenset({"png", "jpg", "jpeg", "gif", "svg", "webp", "avif", "bmp", "ico", "tif", "tiff",
                              "heic", "pdf", "js", "css", "map", "json", "txt", "mp4", "webm"})
_DENSITY = re.compile(r"@\d+(?:\.\d+)?x\.", re.IGNORECASE)


# systemd unit types: `getty@tty1.service`, `openvpn-client@home.service` name a template unit's instance
# (systemd.unit(5)); none of them is a top-level domain.
_UNIT_TYPES = frozenset({"service", "socket", "timer", "target", "mount", "automount", "path", "slice", "scope",
                         "device", "swap"})


# The local host's names (RFC 6761 `localhost`; `localhost.localdomain` as distributions name it): a mailbox
# there is a system account (`nobody@`, `root@`), never a person's address.
_LOCAL_DOMAINS = frozenset({"localhost", "localdomain"})


_CALENDAR_ID = re.compile(r"(?i)@(?:group\.v|group|import)\.calendar\.google\.com$")
"""A Google Calendar's id (`…#holiday@group.v.calendar.google.com`, a secondary calendar's `…@group.calendar…`):
a calendar's name in the API, not a mailbox."""
_HINT_ADDRESS = re.compile(r"(?i)(?:you|your[._-]?(?:name|e-?mail|address)?|tu(?:[._-]?(?:nombre|correo|e-?mail))?|"
                           r"seu(?:[._-]?(?:nome|e-?mail))?|voce)@(?:[\w-]+\.)*"
                           r"(?:example|ejemplo|exemplo)(?:\.(?:com|org|net)(?:\.[a-z]{2})?)?$")
"""A form's or a doc's hint (`you@example.com`, `your.name@example.org`): `you`/`your…` at a domain RFC 2606
reserves for examples; in Spanish and Portuguese `tu@ejemplo.com`, `seu.nome@exemplo.com.br`, the word for
example as the domain. Any other address there (`jane.doe@`, `user@example.com`, `ana@ejemplo.com`) is still taken:
tests plant them."""


def email(value: str) -> bool:
    """An e-mail address, not a file name with an image-density suffix or a file extension for a domain, nor a
    systemd unit instance name, nor a Google Calendar's id, nor a hint (`you@example.com`)."""
    suffix = value.rsplit(".", 1)[-1].lower()
    return not (_DENSITY.search(value) or suffix in _FILE_EXTENSIONS or suffix in _UNIT_TYPES
                or suffix in _LOCAL_DOMAINS or _CALENDAR_ID.search(value)
                or _HINT_ADDRESS.fullmatch(value))


def url_password(value: str) -> bool:
    """The password of `scheme://user:password@host`; not a placeholder, nor a port and the rest of a JDBC URL
    (`sqlserver://host:1433;user=…;password=a%40b`, whose decoded `@` is inside the password). A placeholder in any
    case: a template's `USER:PASSWORD@HOST` is written in capitals."""
    return value.lower() not in ("*", "***", "password", "pass") and not re.match(r"\d{1,5}[;/?#]", value)


def public_ip(value: str) -> bool:
    """An IP address that could point at someone: public (not private, loopback, link-local, multicast or
    reserved), and not a dotted version number (four small numbers)."""
    try:
        ip = ipaddress.ip_address(value)
    except ValueError:
        return False
    if ip.is_private or ip.is_loopback or ip.is_unspecified or ip.is_multicast or ip.is_reserved \
            or ip.is_link_local:
        return False
    if ip.version == 6:
        groups = [g for g in value.split(":") if g]
        return len(groups) >= 3 and sum(len(g) for g in groups) >= 6
    return any(int(octet) > 20 for octet in value.split("."))  # 2.0.0.3, 1.0.4.2: package versions


_MONTHS = {m: i + 1 for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"])}


def birth_date(value: str) -> bool:
    """A calendar date a living person could be born on (1900 to this year)."""
    parts = re.findall(r"\d+|[A-Za-z]+", value)
    nums = [int(p) for p in parts if p.isdigit()]
    month_names = [_MONTHS[p[:3].lower()] for p in parts if p[:3].lower() in _MONTHS]
    years = [n for n in nums if n > 31]
    year = years[0] if years else (nums[-1] + 1900 if nums and nums[-1] < 100 else None)
    if year is None or not 1900 <= (year if year >= 100 else year + 1900) <= date.today().year:
        return False
    rest = [n for n in nums if n != year][:2]
    if month_names:
        return bool(rest) and 1 <= rest[0] <= 31
    return len(rest) == 2 and any(1 <= r <= 12 for r in rest) and all(1 <= r <= 31 for r in rest)


def prose_secret(value: str) -> bool:
    """A key after a word for one in prose: a hex key, or a random string of letters and digits."""
    if _UUID.fullmatch(value) or len(_SNAKE_WORD.findall(value)) >= 2 or _SHORTCUT.match(value):
        return False  # a UUID, a name of words with an id in it (foo_bar_id_1c3b3088_uniq), a keyboard shortcut
    return hex_key(value) or high_entropy_secret(value) or len(value) >= 24 and hex_key(value * 2) \
        and entropy(value) >= 3.5  # a shorter hex secret (Plaid's 30): random, after a word for a key


_SNAKE_WORD = re.compile(r"(?:^|_)[A-Za-z][a-z]{2,}(?=_|$)")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


# Prefixes that name a digest, a revision or a build, not an issuer: `sha-…`, `git-…`, `commit_…` hold hashes.
_DIGEST_PREFIXES = frozenset({"sha", "md", "git", "commit", "rev", "revision", "hash", "digest", "blake", "etag",
                              "build", "checksum", "crc", "integrity", "cache", "hmac", "fingerprint",
                              "req", "request", "tr", "trace", "span", "run", "evt", "event", "msg", "job",
                              "audit", "template"})
"""Words before a hex run that make it a digest, or an object's id as services issue them (OpenAI's
`req_<32 hex>` request ids, MLflow's `tr-<32 hex>` traces, SafetyCulture's `audit_<32 hex>` inspections and
`template_<32 hex>` templates)."""
_TOKEN_HEAD = re.compile(r"(?:[a-z]{2,10}|[A-Z]{2,10})(?:[._-](?:[a-z]{2,10}|v\d{1,2}))*[._-]")
_ID_HEADS = frozenset({"wamid."})
"""Prefixes of an object's id whatever its body: the WhatsApp Business (Cloud API) message id, `wamid.` + base64
of the message's key, which webhooks and message logs carry and which grants nothing."""
_WORDLIKE = re.compile(r"[a-z]{5,}")


def prefixed_token(value: str) -> bool:
    """An issuer-prefixed API token (`lin_api_…`, `shpat_…`, `dop_v1_…`, `key-…`, `PMAK-…`): a short prefix, then
    a body of 32+ random characters, letters and digits mixed, its entropy near what its charset gives (hex or
    base62/base64url). Not a hash behind a digest's name (`sha-`, `git-`) nor a hex id behind an object's
    (`req_`), a UUID behind an object's name (`req_<uuid>`), words joined by `-`/`_`, nor a camelCase
    identifier."""
    head = _TOKEN_HEAD.match(value)
    if head is None or head.group().lower() in _ID_HEADS:
        return False
    body = value[head.end():]
    if len(body) < 32 or _UUID.fullmatch(body) or not re.search(r"\d", body) or not re.search(r"[A-Za-z]", body):
        return False
    parts = [p for p in re.split(r"[_-]", body) if p]
    if max(len(p) for p in parts) < 16 or len(_SNAKE_WORD.findall(body)) >= 2:
        return False  # words or short ids joined by separators, a UUID-like id
    run = "".join(parts)
    if re.fullmatch(r"[0-9a-f]+|[0-9A-F]+", run):
        words = {w.lower() for w in re.split(r"[._-]", value[:head.end()]) if w}
        return not words & _DIGEST_PREFIXES and entropy(run) >= 3.2
    if sum(len(w) for w in _WORDLIKE.findall(run)) * 3 >= len(run):
        return False  # mostly lower-case words: an identifier
    return entropy(run) >= 0.8 * math.log2(min(len(run), 62))


def path_token(value: str) -> bool:
    """The secret segment of a webhook's URL: 24+ characters, letters and digits mixed, random (not words joined
    by `_`/`-`, not a UUID: an object's id)."""
    if len(value) < 24 or not _DIGITS.search(value) or not re.search(r"[A-Za-z]", value) or _UUID.fullmatch(value):
        return False
    parts = [p for p in re.split(r"[_-]", value) if p]
    run = "".join(parts)
    if max(len(p) for p in parts) < 16 or sum(len(w) for w in _WORDLIKE.findall(run)) * 3 >= len(run):
        return False
    return entropy(run) >= 3.5


def stream_key(value: str) -> bool:
    """The last segment of an RTMP ingest URL read as a stream key: random as a labelled key is, and not a stream
    name of words (`camera-front-door-1080p`: a self-hosted server's path, no credential)."""
    parts = re.split(r"[_.~=-]", value)
    return labelled_key(value) and sum(len(w) for p in parts for w in _WORDLIKE.findall(p)) * 3 < len("".join(parts))


def discord_token(value: str) -> bool:
    """A Discord bot token: its first part the bot's user id (a snowflake, 17 to 20 digits) in base64, its last
    part random; a JWT-like run of three base64 parts decodes to no id."""
    head, _, rest = value.partition(".")
    try:
        user_id = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except ValueError:
        return False
    return user_id.isdigit() and 17 <= len(user_id) <= 20 and len(set(rest.rpartition(".")[2])) >= 10


# A camelCase name, digits only at its end (`createOrderWithCode2`): words, not a generator's output.
_CAMEL_NAME = re.compile(r"[a-z]+(?:[A-Z][a-z]+)*\d*")


def mollie_key(value: str) -> bool:
    """A Mollie API key (`live_`/`test_` + 30): its body random letters and digits (a documented token's), not a
    test's name in camelCase nor lower-case words."""
    return _random_body(value.split("_", 1)[1])


def databento_key(value: str) -> bool:
    """A Databento API key (`db-` + 29: 32 characters in all, as its docs give them): its body random as a Mollie
    key's is, not a database host's or a branch's name in words (`db-primaryReplicaWestEurope01`)."""
    return _random_body(value[3:])


def _random_body(body: str) -> bool:
    """A fixed-length key body of random letters and digits: a digit in it (a random 29 of base62 lacks one once
    in 170), entropy near its alphabet's, not a camelCase name nor words run together."""
    if not issuer_token(body) or not _DIGITS.search(body) or entropy(body) < 3.9:
        return False
    return sum(len(w) for w in _WORDLIKE.findall(body)) * 3 < len(body) and not _CAMEL_NAME.fullmatch(body)


def issuer_token(value: str) -> bool:
    """A token of a documented format: random (ten distinct characters or more; digits, or both cases: a base62
    body of 24 may hold no digit), not a placeholder (`hvs.XXXX…`, `dapi000…`)."""
    body = value.split(".", 1)[-1] if value.startswith(("hv", "dt0c01")) else value
    if value.startswith(("ak-", "as-")):  # Modal's: a digit in 22 base62 characters, unlike a hyphenated word
        return len(set(body)) >= 10 and bool(_DIGITS.search(body[3:]))
    mixed = bool(_DIGITS.search(body)) or body.lower() != body and body.upper() != body
    return len(set(body)) >= 10 and mixed


def provider_token(value: str) -> bool:
    """A token of a documented prefix or structure: its longest part between separators (the random body, not the
    prefix: `FLWSECK-000…-X` is a placeholder; X's bearer tokens' run of `A`s aside) random as `issuer_token` reads
    it; with no digit (Hugging Face's `api_org_` + 34 letters) not words in camelCase; a body of capitals and digits
    (Octopus' `API-…`) with three digits or more, unlike a name in capitals."""
    body = max(re.split(r"[._~%-]", value.lstrip("A")), key=len)
    if not issuer_token(body):
        return False
    if not _DIGITS.search(value):
        return _random_letters(body)
    return not value.startswith("API-") or len(_DIGITS.findall(value)) >= 3


# What binary formats a base64 run decodes to when it is no key: DER (certificates, public keys: `MII…`), the SSH
# wire format (`AAAAC3NzaC1lZDI1NTE5…`), PNG, JPEG, GIF, ZIP, gzip.
_MAGIC = (b"\x30\x82", b"\x30\x81", b"\x30\x59", b"\x30\x2a", b"\x00\x00\x00", b"\x89PNG", b"\xff\xd8\xff",
          b"GIF8", b"PK\x03\x04", b"\x1f\x8b")
_ID_HEAD = re.compile(r"[a-z]{2,12}\d{0,4}[_-]|[A-Za-z]{1,12}[_-]\d+[_-]")
"""An object's id as services write them: a lower-case type word, then `_`/`-` (`call_…`, `gen-1763…-…`, `msg_…`,
`chatcmpl-…`, `sha384-…`)."""
_WORD_RUN = re.compile(r"[A-Z]?[a-z]{4,}")
_KEY_GROUPS = re.compile(r"[A-Z0-9]{4,8}(?:-[A-Z0-9]{4,8}){3,}")
"""A licence-style key: upper-case groups joined by dashes (`EVJFMM-TFPZO2-Z1XRF6-M848D3-OAAPBQ`)."""


def random_token(value: str) -> bool:
    """A key with no label to name it: 32+ characters of base62/base64url drawn at random (both cases, digits,
    entropy near what the alphabet gives) or upper-case groups with digits; not hex (digests), a UUID, an object's
    id behind its type (`call_…`), words run together (`RemovedInSphinx40Warning`), nor base64 that decodes to text
    or to a binary format's header (a certificate's or an image's first line)."""
    if re.fullmatch(r"[0-9a-fA-F_-]+", value) or _UUID.search(value):
        return False
    if _KEY_GROUPS.fullmatch(value):
        run = value.replace("-", "")
        return len(_DIGITS.findall(run)) >= 3 and len(re.findall(r"[A-Z]", run)) * 3 >= len(run) \
            and entropy(run) >= 3.8
    if _ID_HEAD.match(value) and not prefixed_token(value):
        return False
    parts = [p for p in re.split(r"[_-]", value) if p]
    if max(len(p) for p in parts) < 16 or not re.search(r"[a-z]", value) or not re.search(r"[A-Z]", value) \
            or len(_DIGITS.findall(value)) < 2:
        return False
    run = "".join(parts)
    if sum(len(w) for w in _WORD_RUN.findall(run)) * 3 >= len(run) or _decodes_to_data(value):
        return False
    return entropy(run) >= 0.8 * math.log2(min(len(run), 62))


def _decodes_to_data(value: str) -> bool:
    """Base64 (a whole number of quads) that decodes to printable text or opens with a binary format's header."""
    if len(value) % 4 or not re.fullmatch(r"[A-Za-z0-9+/]+={0,2}", value):
        return _decodes_to_prose(value)
    try:
        raw = base64.b64decode(value, validate=True)
    except binascii.Error:
        return False
    printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in raw)
    return printable >= 0.85 * len(raw) or raw.startswith(_MAGIC)


def _decodes_to_prose(value: str) -> bool:
    """Base64url, unpadded as Gmail's API writes a message's body, that decodes to prose: printable words between
    spaces and no JSON (a JWT's pieces decode to JSON, a key to bytes)."""
    if len(value) % 4 == 1 or not re.fullmatch(r"[A-Za-z0-9_-]+", value):
        return False
    raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    return all(32 <= b < 127 or b in (9, 10, 13) for b in raw) and raw.count(b" ") >= 3 \
        and not re.search(rb'["{}]', raw)


_GENERATOR_SYMBOL = re.compile(r"[!#$%?@~]")
_USER_AT_HOST = re.compile(r"[a-z_][a-z0-9_.-]*@[A-Za-z0-9][\w.-]*")
_ANCHOR = re.compile(r"\.[A-Za-z]{1,5}#|#L\d|!\$?[A-Z]{1,3}\$?\d*$|^[a-z][a-z0-9]{1,7}#S(?:256|384|512)$")
"""A file's anchor (`utils.py#L45`, `guide.md#Setup2`), a spreadsheet's cell (`Sheet2!A1`, `Q1!$B$2`) or a JOSE
parameter named for its SHA-2 digest (RFC 7515's `x5t#S256`, the certificate's thumbprint)."""
_PERCENT_ESCAPES = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def generated_password(value: str) -> bool:
    """A password with no label to name it, as generators and people's policies make them: 8-64 characters of
    upper case, lower case, digits and a symbol (`!#$%?@~`), random-looking; not a path or a URL, a mail address
    or a shell prompt's `user@host`, a file's anchor (`utils.py#L45`), a cell (`Sheet2!A1`), a JOSE parameter's
    name (`x5t#S256`), a reference number (`Order#2024-11`), URL-encoded text
    (`Hello%20World1`), markup (`**Step1!**`, `#Tag1`) or words joined by underscores or dashes
    (`p3rl_6_iz_BETTER!!1`, a test's parameters `cols6-at$-include6-None`)."""
    classes = (r"[a-z]", r"[A-Z]", r"\d", _GENERATOR_SYMBOL.pattern)
    if not 8 <= len(value) <= 64 or len(set(value)) < 6 or not all(re.search(c, value) for c in classes):
        return False
    if value[0] in "!#$%*@~/&." or value[-1] in "*#~/" or value.count("/") > 1 or value.count("_") > 1 \
            or value.count("-") > 2:
        return False
    if _USER_AT_HOST.fullmatch(value) or re.search(r"@[\w-]+\.[\w-]", value) or _ANCHOR.search(value) \
            or _REFERENCE_NUMBER.match(value):
        return False
    if "%" in value and _url_encoded(value):
        return False
    return not _path_or_code(value) and entropy(value) >= min(3.0, 0.85 * math.log2(len(value)))


def _url_encoded(value: str) -> bool:
    """Whether a run of `%XX` escapes decodes to what URLs escape (a space, `/`, `é` as `%C3%A9`), not to letters
    or digits (`River%3031Harbor`) nor to bytes that are no UTF-8 (`Xjvn%BFuI`: a `%` among a password's symbols)."""
    for run in _PERCENT_ESCAPES.findall(value):
        try:
            text = urllib.parse.unquote(run, errors="strict")
        except UnicodeDecodeError:
            continue
        if not (text.isascii() and text.isalnum()):
            return True
    return False


def bitlocker_key(value: str) -> bool:
    """A BitLocker recovery password (Microsoft's `manage-bde -protectors -get` prints it): eight groups of six
    digits, each a multiple of 11 below 720,896 (a 16-bit block times 11). A random group passes 1 time in 11."""
    groups = value.split("-")
    return len(groups) == 8 and all(int(g) % 11 == 0 and int(g) < 720_896 for g in groups) \
        and len(set(groups)) > 2


def letters_and_digits(value: str) -> bool:
    """A random key of capitals and digits holds both (a FileVault recovery key's 24 from 36 misses either once in
    ~10^4): a run of one or the other is a word or a number in groups (`ABCD-EFGH-…`, `2024-0101-…`)."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


_CODE_SPLIT = re.compile(r"[^A-Za-z0-9-]+")
"""What stands between recovery codes: spaces, commas, line breaks, quotes."""


def recovery_codes(value: str) -> bool:
    """Two-factor recovery codes after their label (the rule's pattern reads each code's shape and its digit):
    three distinct characters or more in all (a mask repeats one or two: `0000 0000`, `1212 1212`; one in 400
    of Google's random eight-digit codes holds three), no date among them; two groups of five capitals, not both
    with two vowels or more (words do; random letters in one pair of 17)."""
    if re.fullmatch(r"[A-Z]{5}-[A-Z]{5}", value) and all(len(re.findall(r"[AEIOU]", g)) > 1 for g in value.split("-")):
        return False  # two words of capitals (`RESET-CODES`, `ABOUT-LOGIN`), not a random pair
    return len(set(_CODE_SPLIT.sub("", value))) > 2 and not any(_CALENDAR_DATE.match(c)
                                                                 for c in _CODE_SPLIT.split(value))


def totp_seed(value: str) -> bool:
    """An authenticator's shared secret as its setup page or its URI writes it: RFC 4648 base32 (letters and
    2-7), one case, 16 characters or more. In groups of four, a digit in one group, in two of seven groups or more
    (random base32 holds one in 56% of groups of four: 96% of four groups have one such group, 97% of seven or
    eight two; words none); whole, eight distinct characters, and a digit or ten distinct letters (a secret of
    letters alone: one in 28 of 16 characters)."""
    groups = value.split()
    compact = "".join(groups)
    if len(compact) < 16 or (compact.lower() != compact and compact.upper() != compact):
        return False
    if len(groups) > 1:
        with_digit = sum(bool(re.search(r"[2-7]", g)) for g in groups)
        if with_digit == 0 and len(groups) < 7:  # letters alone: one in 25 of four groups; a word has a vowel
            return len(set(compact)) >= 10 and any(not re.search(r"[aeiouy]", g.lower()) for g in groups)
        return with_digit >= (1 if len(groups) < 7 else 2) and len(set(compact)) >= 8
    return len(set(compact)) >= 8 and (bool(re.search(r"[2-7]", compact)) or len(set(compact)) >= 10)
