"""National ids by their public checks (tracegym/redact/national.py): values built here from each specification's
algorithm (a body, then its check computed), found after their labels in several languages, as keys in JSON and
in prose; the same values with a wrong check, and numbers of other kinds after other words, not found."""

from __future__ import annotations

import random

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()
RNG = random.Random(7)


def _ds(n: int) -> str:
    return "".join(RNG.choice("0123456789") for _ in range(n))


def _mod11(body: str, weights: list[int]) -> int:
    return sum(int(c) * w for c, w in zip(body, weights, strict=True)) % 11


def make_cpf() -> str:
    b = "3" + _ds(8)
    for n in (9, 10):
        r = _mod11(b, list(range(n + 1, 1, -1)))
        b += str(0 if r < 2 else 11 - r)
    return f"{b[:3]}.{b[3:6]}.{b[6:9]}-{b[9:]}"


def make_pesel() -> str:
    b = "8" + str(RNG.randint(0, 9)) + "0" + str(RNG.randint(1, 9)) + "1" + str(RNG.randint(0, 8)) + _ds(4)
    return b + str((10 - sum(int(c) * w for c, w in zip(b, [1, 3, 7, 9] * 2 + [1, 3], strict=True)) % 10) % 10)


def make_bsn() -> str:
    while True:
        b = "1" + _ds(7)
        r = sum(int(c) * (9 - i) for i, c in enumerate(b)) % 11
        if r < 10:
            return b + str(r)


_D5 = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
       [3, 4, 0, 1, 2, 8, 9, 5, 6, 7], [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
       [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3], [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
       [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]]
_P = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4], [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
      [8, 9, 1, 6, 0, 4, 3, 5, 2, 7], [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
      [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8]]
_INV = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9]


def make_aadhaar() -> str:
    b = str(RNG.randint(2, 9)) + _ds(10)
    c = 0
    for i, ch in enumerate(reversed(b)):
        c = _D5[c][_P[(i + 1) % 8][int(ch)]]
    n = b + str(_INV[c])
    return f"{n[:4]} {n[4:8]} {n[8:]}"


def make_tc() -> str:
    b = str(RNG.randint(1, 9)) + _ds(8)
    odd = sum(int(b[i]) for i in (0, 2, 4, 6, 8))
    even = sum(int(b[i]) for i in (1, 3, 5, 7))
    b += str((odd * 7 - even) % 10)
    return b + str(sum(map(int, b)) % 10)


def _luhn_digit(body: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return str((10 - total % 10) % 10)


def make_personnummer() -> str:
    b = f"{RNG.randint(50, 99)}{RNG.randint(1, 12):02d}{RNG.randint(1, 28):02d}" + _ds(3)
    return f"{b[:6]}-{b[6:]}{_luhn_digit(b)}"


def make_hetu() -> str:
    dd, mm, yy, n = RNG.randint(1, 28), RNG.randint(1, 12), RNG.randint(0, 99), RNG.randint(2, 899)
    body = f"{dd:02d}{mm:02d}{yy:02d}{n:03d}"
    return f"{body[:6]}-{body[6:]}" + "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(body) % 31]


def make_cn() -> str:
    b = f"110105{RNG.randint(1950, 2005)}{RNG.randint(1, 12):02d}{RNG.randint(1, 28):02d}" + _ds(3)
    s = sum(int(c) * w for c, w in zip(b, [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2], strict=True))
    return b + "10X98765432"[s % 11]


def make_za() -> str:
    b = f"{RNG.randint(50, 99)}{RNG.randint(1, 12):02d}{RNG.randint(1, 28):02d}" + _ds(4) + "08"
    return b + _luhn_digit(b)


def make_nif_pt() -> str:
    b = "2" + _ds(7)
    r = 11 - sum(int(c) * (9 - i) for i, c in enumerate(b)) % 11
    return b + str(0 if r >= 10 else r)


def make_nhs() -> str:
    while True:
        b = "9" + _ds(8)
        r = 11 - sum(int(c) * (10 - i) for i, c in enumerate(b)) % 11
        if r != 10:
            n = b + str(r % 11)
            return f"{n[:3]} {n[3:6]} {n[6:]}"


def make_kennitala() -> str:
    while True:
        b = f"{RNG.randint(1, 28):02d}{RNG.randint(1, 12):02d}{RNG.randint(50, 99)}" + _ds(2)
        r = 11 - sum(int(c) * w for c, w in zip(b, [3, 2, 7, 6, 5, 4, 3, 2], strict=True)) % 11
        if r != 10:
            return f"{b[:6]}-{b[6:]}{r % 11}9"


def make_nir() -> str:
    b = f"{RNG.choice('12')}{RNG.randint(50, 99)}{RNG.randint(1, 12):02d}{RNG.randint(1, 95):02d}" + _ds(6)
    k = 97 - int(b) % 97
    return f"{b[0]} {b[1:3]} {b[3:5]} {b[5:7]} {b[7:10]} {b[10:]} {k:02d}"


_CF_ODD = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23]


def make_cf() -> str:
    letters = "".join(RNG.choice("BCDFGLMNPRSTVZ") for _ in range(6))
    s = f"{letters}{RNG.randint(50, 99)}{RNG.choice('ABCDEHLMPRST')}{RNG.randint(1, 28):02d}H{RNG.randint(100, 999)}"
    total = 0
    for i, c in enumerate(s):
        v = int(c) if c.isdigit() else ord(c) - 65
        total += (_CF_ODD[v] if c.isalpha() else [1, 0, 5, 7, 9, 13, 15, 17, 19, 21][v]) if i % 2 == 0 else v
    return s + chr(65 + total % 26)


def make_steuer() -> str:
    while True:
        digits = RNG.sample("123456789", 8)
        b = digits[0] + digits[1] + digits[1] + "".join(digits[2:]) + RNG.choice("0")
        if len(b) != 10:
            continue
        p = 10
        for c in b:
            s = (int(c) + p) % 10 or 10
            p = s * 2 % 11
        return b + str((11 - p) % 10)


def make_fnr() -> str:
    while True:
        b = f"{RNG.randint(1, 28):02d}{RNG.randint(1, 12):02d}{RNG.randint(50, 99)}" + _ds(3)
        k1 = 11 - sum(int(c) * w for c, w in zip(b, [3, 7, 6, 1, 8, 9, 4, 5, 2], strict=True)) % 11
        if k1 == 10:
            continue
        b += str(k1 % 11)
        k2 = 11 - sum(int(c) * w for c, w in zip(b, [5, 4, 3, 2, 7, 6, 5, 4, 3, 2], strict=True)) % 11
        if k2 != 10:
            return b + str(k2 % 11)


def make_be() -> str:
    b = f"{RNG.randint(50, 99)}{RNG.randint(1, 12):02d}{RNG.randint(1, 28):02d}" + _ds(3)
    return f"{b[:2]}.{b[2:4]}.{b[4:6]}-{b[6:]}.{97 - int(b) % 97:02d}"


def make_rut() -> str:
    b = str(RNG.randint(10_000_000, 25_000_000))
    s = sum(int(c) * (2 + i % 6) for i, c in enumerate(reversed(b)))
    dv = {11: "0", 10: "K"}.get(11 - s % 11, str(11 - s % 11))
    return f"{b[:-6]}.{b[-6:-3]}.{b[-3:]}-{dv}"


_CURP_CHARS = "0123456789ABCDEFGHIJKLMNÑOPQRSTUVWXYZ"


def make_curp() -> str:
    s = (f"GO{RNG.choice('MNLR')}Z{RNG.randint(50, 99)}{RNG.randint(1, 12):02d}{RNG.randint(1, 28):02d}"
         f"{RNG.choice('HM')}DFRRN0")
    return s + str((10 - sum(_CURP_CHARS.index(c) * (18 - i) for i, c in enumerate(s)) % 10) % 10)


def make_rrn() -> str:
    b = f"{RNG.randint(50, 99)}{RNG.randint(1, 12):02d}{RNG.randint(1, 28):02d}{RNG.choice('12')}" + _ds(5)
    c = (11 - sum(int(x) * w for x, w in zip(b, [2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5], strict=True)) % 11) % 10
    return f"{b[:6]}-{b[6:]}{c}"


# id -> (generator, label templates in its languages and English; `{v}` the value)
FORMS = {
    "cpf": (make_cpf, ["CPF: {v}", '{{"cpf": "{v}"}}', "o CPF do cliente é {v}", "clienteCpf={v}"]),
    "pesel": (make_pesel, ["PESEL: {v}", "numer PESEL {v}", '{{"pesel": "{v}"}}', "pesel={v}"]),
    "bsn": (make_bsn, ["BSN: {v}", "burgerservicenummer {v}", '{{"bsn": "{v}"}}', "Mijn BSN is {v}",
                         "graag bsn {v} controleren"]),
    "aadhaar": (make_aadhaar, ["Aadhaar: {v}", "आधार संख्या: {v}", '{{"aadhaar_number": "{v}"}}',
                               "my Aadhaar number is {v}"]),
    "tc": (make_tc, ["T.C. Kimlik No: {v}", "kimlik numarası {v}", '{{"tcKimlikNo": "{v}"}}', "TC No: {v}"]),
    "se": (make_personnummer, ["personnummer: {v}", "Mitt personnummer är {v}", '{{"personnummer": "{v}"}}',
                                     "tack, jag använde pnr {v}"]),
    "fi": (make_hetu, ["henkilötunnus: {v}", "HETU {v}", '{{"hetu": "{v}"}}', "personal identity code {v}",
                           "kiitos, käytin hetu {v} ja jatkoin"]),
    "cn": (make_cn, ["身份证号：{v}", "公民身份号码 {v}", '{{"idCard": "{v}"}}', "resident identity number {v}"]),
    "za": (make_za, ["RSA ID number: {v}", "SA ID {v}", '{{"sa_id_number": "{v}"}}']),
    "pt": (make_nif_pt, ["NIF: {v}", "número de contribuinte {v}", '{{"nif": "{v}"}}']),
    "nhs": (make_nhs, ["NHS number: {v}", "NHS no. {v}", '{{"nhs_number": "{v}"}}']),
    "is": (make_kennitala, ["kennitala: {v}", "kt. {v}", '{{"kennitala": "{v}"}}']),
    "fr": (make_nir, ["numéro de sécurité sociale : {v}", "NIR {v}", "n° de sécu {v}"]),
    "it": (make_cf, ["codice fiscale: {v}", "C.F. {v}", '{{"codiceFiscale": "{v}"}}']),
    "de": (make_steuer, ["Steuer-ID: {v}", "Steueridentifikationsnummer {v}", '{{"steuer_id": "{v}"}}']),
    "no": (make_fnr, ["fødselsnummer: {v}", "fnr {v}", '{{"fodselsnummer": "{v}"}}']),
    "be": (make_be, ["rijksregisternummer: {v}", "numéro national {v}", '{{"rijksregisternummer": "{v}"}}']),
    "cl": (make_rut, ["RUT: {v}", "RUN {v}", '{{"rut": "{v}"}}', "rol único tributario {v}"]),
    "mx": (make_curp, ["CURP: {v}", '{{"curp": "{v}"}}', "mi CURP es {v}"]),
    "kr": (make_rrn, ["주민등록번호: {v}", "주민번호 {v}", "resident registration number {v}"]),
}
CASES = [(kind, form, gen()) for kind, (gen, forms) in FORMS.items() for form in forms]


def _found(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text) if f.rule.name == "national_id"]


@pytest.mark.parametrize("kind,form,value", CASES)
def test_found_after_its_label(kind: str, form: str, value: str) -> None:
    text = form.format(v=value)
    assert _found(text) == [value], text


def _wrong_check(kind: str, value: str) -> str:
    if kind == "is":  # a kennitala's check digit is the ninth, its century the tenth
        return value[:-2] + str((int(value[-2]) + 1) % 10) + value[-1]
    last = value[-1]
    if last.isdigit():
        return value[:-1] + str((int(last) + 1) % 10)
    return value[:-1] + ("B" if last == "A" else "A")


@pytest.mark.parametrize("kind,form,value", CASES)
def test_wrong_check_not_found(kind: str, form: str, value: str) -> None:
    text = form.format(v=_wrong_check(kind, value))
    assert not _found(text), text


@pytest.mark.parametrize("text,value", [
    ("Paid by 111.444.777-35 yesterday", "111.444.777-35"),          # punctuated CPF, no label
    ("cliente RSSMRA85T10A562S, Roma", "RSSMRA85T10A562S"),           # codice fiscale, no label
    ("registro HEGG560427MVZRRL04 ok", "HEGG560427MVZRRL04"),          # CURP (RENAPO's example), no label
    ("user 11010519491231002X logged in", "11010519491231002X"),        # GB 11643's example, no label
    ("| Name | PESEL |\n|---|---|\n| Jan Kowalski | 44051401359 |", "44051401359"),  # a table's column
    ("PESEL: 44051401359", "44051401359"),
    ("Skatteverket: 811228-9874", None),
    ("personnummer 19811228-9874", "19811228-9874"),
    ("HETU: 131052-308T", "131052-308T"),
    ("NHS number 943 476 5919", "943 476 5919"),
    ("rijksregisternummer 85.07.30-033.28", "85.07.30-033.28"),
])
def test_published_examples(text: str, value: str | None) -> None:
    assert _found(text) == ([value] if value else []), text


@pytest.mark.parametrize("text", [
    "order 44051401359 shipped",                        # an 11-digit order number
    "invoice 10000000146 paid",
    "tracking number 86095742719",
    "call me on 943 476 5919",                          # a phone number, no NHS label
    "timestamp 1717171717171",                         # milliseconds
    "ID number: 1717171717171",                        # not a South African id: no valid check
    "ts=20240315123045123456",
    "build 123.456.789-00 of the app",                 # a CPF-shaped version whose check fails
    "run 12.345.678-9 passed",                         # not after RUT
    "PESEL: 44051401358",
    "order_id=8001015009087",
    "user 110105194912310021 logged in",               # 18 digits, wrong MOD 11-2 character
])
def test_near_misses_not_found(text: str) -> None:
    assert not _found(text), text


@pytest.mark.parametrize("text,value", [
    ("¿Puedes revisar por qué falla esto? documento: 28019824M", "28019824M"),  # DNI, its mod-23 letter
    ("user pasted documento: X9692276F", "X9692276F"),                        # NIE
    ("documento: 28019824N", None),                                           # the wrong letter
    ("el documento 2024-118 fue enviado", None),
])
def test_a_spanish_id_after_documento(text: str, value: str | None) -> None:
    assert _found(text) == ([value] if value else []), text


@pytest.mark.parametrize("text,value", [
    ('{"document": {"type": "fr_nir", "number": "1 84 12 76 451 089 46"}}', "1 84 12 76 451 089 46"),  # INSEE's
    ("Content-Disposition: form-data; name=\"id_number\"\r\n\r\n811228-9874\r\n", "811228-9874"),
    ("national_id=131052-308T", "131052-308T"),
    ("national_id: 150305A417U", "150305A417U"),  # HETU's century sign A (2000s) inside
    ("document number: 85.07.30-033.28 thanks", "85.07.30-033.28"),
    ('{"customer": {"user_fnr": "08108425971"}}', "08108425971"),
    ('{"document": {"type": "se_pnr", "number": "811228-9874"}}', "811228-9874"),   # a short name in a type
    ('{"document": {"type": "be_nrn", "number": "85.07.30-033.28"}}', "85.07.30-033.28"),
    ('{"content": "Content-Disposition: form-data; name=\\"id_number\\"\\r\\n\\r\\n131052-308T"}', "131052-308T"),
    ("id_number: 811228-9877", None),          # a check no id's algorithm gives
    ("order id no. 111222333", None),          # another thing's id
    ("ticket_id_number 111222333", None),
])
def test_an_id_whose_label_names_no_country_passes_some_check(text: str, value: str | None) -> None:
    """`ID number` alone says an identity number but not whose: any id's check reads it (a ZA-labelled one must pass
    the ZA check, above)."""
    assert _found(text) == ([value] if value else []), text
