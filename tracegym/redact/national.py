"""National identity numbers with a public check, beyond the UK, Spanish and Canadian ones of `national_id`.

One small function per id checks a value by its issuer's published algorithm (cited in its docstring); `IDS` holds,
per id, the words that label it, the shape of its value, its check, and a shape it is found in without a label where
shape and check together make a chance match rare. `rules.py` makes one `national_id` rule of each entry.
Checks read the value's letters and digits alone (`123.456.789-09` as `12345678909`).

How often a random string passes (200,000 drawn per id, seed 1): with no label, a CPF's `ddd.ddd.ddd-dd` 0.96%,
a codice fiscale's shape (its month letter included) 2.4%, a CURP's shape 0.018%, eighteen random digits as a
Chinese id 0.003% (a province, a date from 1900, MOD 11-2); shapes that random text, ids and figures hardly take.
After a label, random digits of the id's length: BSN 9.0%, NHS 9.1%, Aadhaar 8.0%, NIF (PT) 8.0%, PESEL 1.8%,
Korean RRN 1.4%, T.C. Kimlik 0.92%, personnummer 0.74%, Steuer-ID 0.35%, Belgian number 0.34%, kennitala 0.21%,
fødselsnummer 0.13%, South African id 0.10%, RNOKPP 4.9%, rodné číslo 1.5%, EGN 1.1%, JMBG 0.38%, the Baltic
codes 0.30%, IIN 0.22%, CNP 0.19%: the label carries the rest.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass

from tracegym.redact import words
from tracegym.redact.validators import luhn, national_id, verhoeff

_NOT_ALNUM = re.compile(r"[^0-9A-Za-z]")


def _compact(value: str) -> str:
    return _NOT_ALNUM.sub("", value).upper()


def _digits(value: str, n: int) -> list[int] | None:
    """The value's digits when it is exactly `n` of them, not all one digit (an unissued filler)."""
    s = _compact(value)
    if len(s) != n or not s.isdigit() or len(set(s)) < 2:
        return None
    return [int(c) for c in s]


def _date(year: int, month: int, day: int) -> bool:
    try:
        datetime.date(year, month, day)
    except ValueError:
        return False
    return True


def _weighted(digits: list[int], weights: tuple[int, ...]) -> int:
    """The sum of the first digits, each times its weight."""
    return sum(x * w for x, w in zip(digits[:len(weights)], weights, strict=True))


def _luhn(digits: list[int]) -> bool:
    return luhn("".join(map(str, digits)))


def cpf(value: str) -> bool:
    """Brazil's CPF (Receita Federal, Instrução Normativa RFB 1548/2015): nine digits, then two mod-11 check
    digits, the first over weights 10..2, the second over 11..2 (a remainder under 2 gives 0)."""
    d = _digits(value, 11)
    if d is None:
        return False
    for n in (9, 10):
        r = sum(x * (n + 1 - i) for i, x in enumerate(d[:n])) % 11
        if d[n] != (0 if r < 2 else 11 - r):
            return False
    return True


def pesel(value: str) -> bool:
    """Poland's PESEL (Ustawa o ewidencji ludności, 2010): YYMMDD with the century in the month (+80 1800s, +0
    1900s, +20 2000s, +40 2100s, +60 2200s), a serial, and a check digit over weights 1-3-7-9."""
    d = _digits(value, 11)
    if d is None or (10 - _weighted(d, (1, 3, 7, 9, 1, 3, 7, 9, 1, 3)) % 10) % 10 != d[10]:
        return False
    month = d[2] * 10 + d[3]
    century = {0: 1900, 1: 1900, 2: 2000, 3: 2000, 4: 2100, 5: 2100, 6: 2200, 7: 2200, 8: 1800, 9: 1800}[d[2]]
    return _date(century + d[0] * 10 + d[1], month % 20, d[4] * 10 + d[5])


def _number(d: list[int], start: int, n: int) -> int:
    """The number the digits from `start` spell, `n` of them."""
    return int("".join(map(str, d[start:start + n])))


def rodne_cislo(value: str) -> bool:
    """Czechia's and Slovakia's rodné číslo (zákon 133/2000 Sb.; Slovak zákon 301/1995 Z.z.), ten digits as issued
    from 1954: YYMMDD (a woman's month + 50, + 20 more from 2004 when a day's numbers ran out), a serial and a check
    digit that makes the whole a multiple of 11 (or 0 where the first nine leave 10, as until 1985)."""
    d = _digits(value, 10)
    if d is None:
        return False
    whole = _number(d, 0, 10)
    if whole % 11 and not (_number(d, 0, 9) % 11 == 10 and d[9] == 0):
        return False
    yy, month = _number(d, 0, 2), _number(d, 2, 2) % 50
    return _date((1900 if yy >= 54 else 2000) + yy, month - 20 if month > 20 else month, _number(d, 4, 2))


def egn(value: str) -> bool:
    """Bulgaria's ЕГН, единен граждански номер (Закон за гражданската регистрация, чл. 20-21): YYMMDD (the month
    + 20 for the 1800s, + 40 for the 2000s), a region's serial, a check digit: weights 2,4,8,5,10,9,7,3,6 mod 11
    (10 gives 0)."""
    d = _digits(value, 10)
    if d is None or d[9] != _weighted(d, (2, 4, 8, 5, 10, 9, 7, 3, 6)) % 11 % 10:
        return False
    month = _number(d, 2, 2)
    century = {0: 1900, 20: 1800, 40: 2000}.get(month // 20 * 20 if month % 20 else -1)
    return century is not None and _date(century + _number(d, 0, 2), month % 20, _number(d, 4, 2))


def jmbg(value: str) -> bool:
    """The former Yugoslavia's JMBG / ЈМБГ, EMŠO in Slovenia, ЕМБГ in North Macedonia (Zakon o jedinstvenom
    matičnom broju građana, 1976): DDMMYYY (the year's last three digits), a region, a serial, and
    11 - (weights 7,6,5,4,3,2,7,6,5,4,3,2 mod 11), 10 and 11 giving 0."""
    d = _digits(value, 13)
    if d is None:
        return False
    k = 11 - _weighted(d, (7, 6, 5, 4, 3, 2, 7, 6, 5, 4, 3, 2)) % 11
    yyy = _number(d, 4, 3)
    return d[12] == (0 if k > 9 else k) and _date((1000 if yyy >= 800 else 2000) + yyy, _number(d, 2, 2),
                                                  _number(d, 0, 2))


_CNP_CENTURY = {1: 1900, 2: 1900, 3: 1800, 4: 1800, 5: 2000, 6: 2000}
_CNP_COUNTIES = frozenset([*range(1, 49), 51, 52, 70, 80, 81, 82, 83])
"""The counties' codes (SIRUTA's order: 40-48 Bucharest and its sectors, 51-52 the two counties made in 1981) and
the codes for residents (70) and the undetermined (80-83)."""


def cnp(value: str) -> bool:
    """Romania's CNP, codul numeric personal (Legea 119/1996; HG 1375/2006): sex and century (1-2 1900s, 3-4 1800s,
    5-6 2000s, 7-9 residents), YYMMDD, a county's code, a serial, a check digit: weights 2,7,9,1,4,6,3,5,8,2,7,9
    mod 11 (10 gives 1)."""
    d = _digits(value, 13)
    if d is None or d[0] == 0 or _number(d, 7, 2) not in _CNP_COUNTIES:
        return False
    r = _weighted(d, (2, 7, 9, 1, 4, 6, 3, 5, 8, 2, 7, 9)) % 11
    if d[12] != (1 if r == 10 else r):
        return False
    yy, month, day = _number(d, 1, 2), _number(d, 3, 2), _number(d, 5, 2)
    centuries = (_CNP_CENTURY[d[0]],) if d[0] in _CNP_CENTURY else (1900, 2000)
    return any(_date(c + yy, month, day) for c in centuries)


def rnokpp(value: str) -> bool:
    """Ukraine's РНОКПП, the taxpayer's registration number (ІПН; Податковий кодекс, ст. 70; ДПС): the birth date
    as days from 31 December 1899 (five digits: up to 2036), a serial, a check digit: weights -1,5,7,9,4,6,10,5,7,
    mod 11, mod 10."""
    d = _digits(value, 10)
    return d is not None and d[0] <= 4 and _number(d, 0, 5) > 0 \
        and d[9] == _weighted(d, (-1, 5, 7, 9, 4, 6, 10, 5, 7)) % 11 % 10


def _mod11_twice(d: list[int], first: tuple[int, ...], second: tuple[int, ...]) -> int:
    """A check digit over `first`'s weights mod 11, or where that leaves 10 over `second`'s (10 again: 10)."""
    r = _weighted(d, first) % 11
    return _weighted(d, second) % 11 if r == 10 else r


_IIN_CENTURY = {1: 1800, 2: 1800, 3: 1900, 4: 1900, 5: 2000, 6: 2000}


def iin(value: str) -> bool:
    """Kazakhstan's ИИН / ЖСН, the individual identification number (Закон «О национальных реестрах
    идентификационных номеров», 2007): YYMMDD, the century and sex (1-2 1800s, 3-4 1900s, 5-6 2000s), a serial, a
    check digit over weights 1..11 mod 11, or where that gives 10 over 3..11,1,2 (10 again: never issued)."""
    d = _digits(value, 12)
    if d is None or d[6] not in _IIN_CENTURY:
        return False
    check = _mod11_twice(d, tuple(range(1, 12)), (3, 4, 5, 6, 7, 8, 9, 10, 11, 1, 2))
    return check == d[11] and _date(_IIN_CENTURY[d[6]] + _number(d, 0, 2), _number(d, 2, 2), _number(d, 4, 2))


_BALTIC_CENTURY = {1: 1800, 2: 1800, 3: 1900, 4: 1900, 5: 2000, 6: 2000, 7: 2100, 8: 2100}


def baltic_personal_code(value: str) -> bool:
    """Estonia's isikukood (EVS 585:2007) and Lithuania's asmens kodas (LST 1185): the century and sex (1-2 1800s,
    3-4 1900s, 5-6 2000s), YYMMDD, a serial, a check digit over weights 1..9,1 mod 11, or where that gives 10 over
    3..9,1,2,3 (10 again gives 0)."""
    d = _digits(value, 11)
    if d is None or d[0] not in _BALTIC_CENTURY:
        return False
    check = _mod11_twice(d, (1, 2, 3, 4, 5, 6, 7, 8, 9, 1), (3, 4, 5, 6, 7, 8, 9, 1, 2, 3)) % 10
    return check == d[10] and _date(_BALTIC_CENTURY[d[0]] + _number(d, 1, 2), _number(d, 3, 2), _number(d, 5, 2))


def cpr(value: str) -> bool:
    """Denmark's CPR-nummer (CPR-loven; the CPR office's "Personnummeret i CPR"): DDMMYY, then four digits, the
    first of which with the year gives the century (0-3: 1900s; 4 and 9: 2000s up to 36, else 1900s; 5-8: 2000s up
    to 57, else 1800s). The modulus-11 check held until 2007 and is no longer issued by, so only the date is read:
    after its label, random ten digits pass at 3.7%."""
    d = _digits(value, 10)
    if d is None:
        return False
    yy, seventh = _number(d, 4, 2), d[6]
    if seventh <= 3:
        century = 1900
    elif seventh in (4, 9):
        century = 2000 if yy <= 36 else 1900
    else:
        century = 2000 if yy <= 57 else 1800
    return _date(century + yy, _number(d, 2, 2), _number(d, 0, 2))


def latvian_personal_code(value: str) -> bool:
    """Latvia's personas kods as issued until 2017 (Ministru kabineta noteikumi; PMLP): DDMMYY, the century (0
    1800s, 1 1900s, 2 2000s), a serial of three digits and a check digit (1101 - the digits times 1, 6, 3, 7, 9, 10,
    5, 8, 4, 2) mod 11."""
    d = _digits(value, 11)
    if d is None or d[6] > 2:
        return False
    if (1101 - _weighted(d, (1, 6, 3, 7, 9, 10, 5, 8, 4, 2))) % 11 != d[10]:
        return False
    return _date(1800 + 100 * d[6] + _number(d, 4, 2), _number(d, 2, 2), _number(d, 0, 2))


def bsn(value: str) -> bool:
    """The Netherlands' burgerservicenummer (Wet algemene bepalingen burgerservicenummer; Logius): nine digits
    (eight with a leading zero dropped) passing the 11-proof, 9*d1 + 8*d2 + ... + 2*d8 - d9 divisible by 11."""
    s = _compact(value)
    d = _digits(s.zfill(9) if len(s) == 8 else s, 9)
    return d is not None and d[0] + d[1] > 0 and (sum(x * (9 - i) for i, x in enumerate(d[:8])) - d[8]) % 11 == 0


def aadhaar(value: str) -> bool:
    """India's Aadhaar number (UIDAI, "Aadhaar Numbering Scheme", 2010): twelve digits, the first 2-9, the last
    a Verhoeff check digit."""
    d = _digits(value, 12)
    return d is not None and d[0] >= 2 and verhoeff(d)


def tc_kimlik(value: str) -> bool:
    """Türkiye's T.C. Kimlik No (Nüfus ve Vatandaşlık İşleri, MERNİS): eleven digits, the first not 0; the tenth
    is 7*(d1+d3+d5+d7+d9) - (d2+d4+d6+d8) mod 10, the eleventh the sum of the first ten mod 10."""
    d = _digits(value, 11)
    return d is not None and d[0] != 0 and (7 * sum(d[0:9:2]) - sum(d[1:8:2])) % 10 == d[9] \
        and sum(d[:10]) % 10 == d[10]


def personnummer(value: str) -> bool:
    """Sweden's personnummer (Skatteverket, SKV 704): YYMMDD-NNNN (`+` from the 100th year) or YYYYMMDDNNNN, a
    valid date (a samordningsnummer's day + 60), a Luhn digit over the ten digits from YY."""
    s = _compact(value)
    d = _digits(s, len(s)) if len(s) in (10, 12) else None
    if d is None:
        return False
    short = d[-10:]
    day = short[4] * 10 + short[5]
    month = short[2] * 10 + short[3]
    years = [int(s[:4])] if len(s) == 12 else [c + short[0] * 10 + short[1] for c in (1800, 1900, 2000)]
    return any(_date(y, month, day - 60 if day > 60 else day) for y in years) and _luhn(short)


_HETU_CENTURY = {"+": 1800, "-": 1900, "U": 1900, "V": 1900, "W": 1900, "X": 1900, "Y": 1900,
                 "A": 2000, "B": 2000, "C": 2000, "D": 2000, "E": 2000, "F": 2000}
_HETU_CHECK = "0123456789ABCDEFHJKLMNPRSTUVWXY"


def hetu(value: str) -> bool:
    """Finland's henkilötunnus (Valtioneuvoston asetus 128/2010; DVV): DDMMYY, a century sign (+ 1800s; - U-Y
    1900s; A-F 2000s), a serial NNN (002-899), and the check character of DDMMYYNNN mod 31."""
    s = value.strip().upper()
    if len(s) != 11 or s[6] not in _HETU_CENTURY or not (s[:6] + s[7:10]).isdigit():
        return False
    if not _date(_HETU_CENTURY[s[6]] + int(s[4:6]), int(s[2:4]), int(s[:2])) or not 2 <= int(s[7:10]) <= 899:
        return False
    return _HETU_CHECK[int(s[:6] + s[7:10]) % 31] == s[10]


_CN_PROVINCES = frozenset("11 12 13 14 15 21 22 23 31 32 33 34 35 36 37 41 42 43 44 45 46 50 51 52 53 54 61 62 63 "
                          "64 65 71 81 82 83".split())


def china_resident_id(value: str) -> bool:
    """China's resident identity number (GB 11643-1999): a region code (a province's two digits first), the
    birth date YYYYMMDD (1900 on), a serial, and an ISO 7064 MOD 11-2 check character (X for 10)."""
    s = _compact(value)
    if len(s) != 18 or not s[:17].isdigit() or s[:2] not in _CN_PROVINCES:
        return False
    if not 1900 <= int(s[6:10]) <= datetime.date.today().year or not _date(int(s[6:10]), int(s[10:12]),
                                                                            int(s[12:14])):
        return False
    total = sum(int(c) * pow(2, 17 - i, 11) for i, c in enumerate(s[:17]))
    return "10X98765432"[total % 11] == s[17]


def south_africa_id(value: str) -> bool:
    """South Africa's identity number (Department of Home Affairs): YYMMDD, a sequence SSSS, citizenship 0-2, a
    digit (8 or 9 today), and a Luhn digit; the date valid."""
    d = _digits(value, 13)
    return d is not None and d[10] <= 2 and _date(2000 + d[0] * 10 + d[1], d[2] * 10 + d[3], d[4] * 10 + d[5]) \
        and _luhn(d)


def nif_pt(value: str) -> bool:
    """Portugal's NIF (Autoridade Tributária; Decreto-Lei 14/2013): nine digits, the first 1-3 or 5-9, the last
    11 - (sum of d1..d8 weighted 9..2 mod 11), 0 where that is 10 or 11."""
    d = _digits(value, 9)
    if d is None or d[0] in (0, 4):
        return False
    r = 11 - sum(x * (9 - i) for i, x in enumerate(d[:8])) % 11
    return d[8] == (0 if r >= 10 else r)


def ahv(value: str) -> bool:
    """Switzerland's AHV/AVS number, the AHVN13 (AHVG art. 50c; ZAS/CdC): 756 (Switzerland's ISO 3166 code), nine
    digits and an EAN-13 check digit (GS1: the twelve weighted 1, 3, 1, 3, ... from the left, 10 - the sum mod 10,
    mod 10); printed 756.xxxx.xxxx.xx."""
    d = _digits(value, 13)
    return d is not None and d[:3] == [7, 5, 6] and (10 - _weighted(d, (1, 3) * 6) % 10) % 10 == d[12]


def amka(value: str) -> bool:
    """Greece's AMKA, the social security registration number (Ν. 2972/2001 art. 21; ΗΔΙΚΑ): the birth date
    DDMMYY, four digits and a Luhn check digit over the eleven."""
    d = _digits(value, 11)
    if d is None or not _luhn(d):
        return False
    day, month, year = _number(d, 0, 2), _number(d, 2, 2), _number(d, 4, 2)
    return _date(1900 + year, month, day) or _date(2000 + year, month, day)


def oib(value: str) -> bool:
    """Croatia's OIB, the personal identification number (Zakon o osobnom identifikacijskom broju, NN 60/08; Porezna
    uprava): ten random digits and an ISO 7064 MOD 11,10 check digit. Random digits pass at 1 in 10: only after its
    label."""
    d = _digits(value, 11)
    if d is None:
        return False
    product = 10
    for x in d[:10]:
        product = ((x + product) % 10 or 10) * 2 % 11
    return (11 - product) % 10 == d[10]


def svnr_at(value: str) -> bool:
    """Austria's Sozialversicherungsnummer (Dachverband der Sozialversicherungsträger): a serial of three digits
    (the first not 0), a check digit and the birth date DDMMYY (a month over 12 where the date is unknown); the check
    the serial's and the date's digits weighted 3, 7, 9 and 5, 8, 4, 2, 1, 6 mod 11 (10 is never issued)."""
    d = _digits(value, 10)
    if d is None or d[0] == 0 or d[3] != _weighted(d, (3, 7, 9, 0, 5, 8, 4, 2, 1, 6)) % 11:
        return False
    return 1 <= _number(d, 4, 2) <= 31 and 1 <= _number(d, 6, 2) <= 14


def cc_pt(value: str) -> bool:
    """Portugal's Cartão de Cidadão document number (AMA, "Validação de Número de Documento do Cartão de
    Cidadão"): the civil identification number's eight digits and its check digit, two letters and a version
    digit; the twelve characters read as 0-35 (A = 10), every second from the right doubled (less 9 where that
    passes 9), the sum a multiple of 10."""
    s = _compact(value)
    if len(s) != 12 or not s[:9].isdigit() or not s[9:11].isalpha() or not s[11].isdigit() or len(set(s[:8])) < 2:
        return False
    total = 0
    for i, c in enumerate(reversed(s)):
        x = int(c, 36)
        if i % 2:
            x = x * 2 - 9 if x * 2 > 9 else x * 2
        total += x
    return total % 10 == 0


def nhs_number(value: str) -> bool:
    """The UK's NHS number (NHS Data Dictionary, "NHS Number"): ten digits, the last 11 - (d1..d9 weighted 10..2
    mod 11), 11 read as 0 and 10 never issued."""
    d = _digits(value, 10)
    if d is None:
        return False
    r = 11 - sum(x * (10 - i) for i, x in enumerate(d[:9])) % 11
    return r != 10 and d[9] == r % 11


def tfn(value: str) -> bool:
    """Australia's tax file number (ATO): nine digits whose sum weighted 1, 4, 3, 7, 5, 8, 6, 9, 10 is a multiple
    of 11."""
    d = _digits(value, 9)
    return d is not None and len(set(d)) > 2 and _weighted(d, (1, 4, 3, 7, 5, 8, 6, 9, 10)) % 11 == 0


def kennitala(value: str) -> bool:
    """Iceland's kennitala (Þjóðskrá Íslands): DDMMYY (a company's day + 40), two digits, a check digit
    11 - (weights 3,2,7,6,5,4,3,2 mod 11), and the century (8, 9, 0)."""
    d = _digits(value, 10)
    if d is None or d[9] not in (8, 9, 0):
        return False
    r = 11 - _weighted(d, (3, 2, 7, 6, 5, 4, 3, 2)) % 11
    if r == 10 or d[8] != r % 11:
        return False
    day = d[0] * 10 + d[1]
    year = {8: 1800, 9: 1900, 0: 2000}[d[9]] + d[4] * 10 + d[5]
    return _date(year, d[2] * 10 + d[3], day - 40 if day > 40 else day)


def lk_nic(value: str) -> bool:
    """Sri Lanka's national identity card number (Department for Registration of Persons): the old one, a
    two-digit birth year, the day of the year (500 added for a woman), a serial of four digits and `V` or `X`; the
    new one (since 2016), the four-digit year, the day, a `0` and a serial of four digits. The Department publishes
    no check: the day of the year and the century are what is read."""
    s = _compact(value)
    if len(s) == 10 and s[:9].isdigit() and s[9] in "VX":
        day = int(s[2:5])
    elif len(s) == 12 and s.isdigit() and s[:2] in ("19", "20") and s[7] == "0":
        day = int(s[4:7])
    else:
        return False
    return len(set(s[:9])) > 1 and (1 <= day <= 366 or 501 <= day <= 866)


def nir(value: str) -> bool:
    """France's NIR, the numéro de sécurité sociale (INSEE; Décret 82-103): sex (1, 2; 3, 4, 7, 8 provisional),
    YY, MM (01-12, 20-42 or 50-99 when unknown), the département (2A and 2B for Corsica), commune, order, and a
    key 97 - (the thirteen digits mod 97), Corsica's 2A read as 19 and 2B as 18."""
    s = _compact(value)
    if len(s) != 15 or s[0] not in "123478":
        return False
    body = s[:5] + {"2A": "19", "2B": "18"}.get(s[5:7], s[5:7]) + s[7:13]
    if not body.isdigit() or not s[13:].isdigit():
        return False
    month = int(s[3:5])
    if not (1 <= month <= 12 or 20 <= month <= 42 or month >= 50):
        return False
    return 97 - int(body) % 97 == int(s[13:])


_CF_ODD = dict(zip("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                   (1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8,
                    12, 14, 16, 10, 22, 25, 24, 23), strict=True))
_CF_MONTHS = "ABCDEHLMPRST"
_CF_OMOCODE = str.maketrans("LMNPQRSTUV", "0123456789")


def codice_fiscale(value: str) -> bool:
    """Italy's codice fiscale (DM 23 December 1976; DPR 605/1973): six letters, YY, a month letter, the day (a
    woman's + 40), a municipality's letter and three digits, and the check letter: the odd positions' values from
    the decree's table plus the even positions' (A-Z and 0-9 as 0-25) mod 26. An omocode swaps digits for
    L-V."""
    s = value.strip().upper()
    if len(s) != 16 or not s.isalnum():
        return False
    digits = s[6:8] + s[9:11] + s[12:15]
    plain = digits.translate(_CF_OMOCODE)
    if not s[:6].isalpha() or s[8] not in _CF_MONTHS or not plain.isdigit() or not s[11].isalpha():
        return False
    day = int(plain[2:4])
    if not _date(2000 + int(plain[:2]), _CF_MONTHS.index(s[8]) + 1, day - 40 if day > 40 else day):
        return False
    total = sum(_CF_ODD[c] if i % 2 == 0 else (ord(c) - 65 if c.isalpha() else int(c)) for i, c in enumerate(s[:15]))
    return chr(65 + total % 26) == s[15]


def steuer_id(value: str) -> bool:
    """Germany's Steuer-ID (BZSt; §139b AO, StIdV): eleven digits, the first not 0, in the first ten one digit
    twice or three times (never side by side three times) and some digit missing, the last an ISO 7064 MOD 11,10
    check digit."""
    d = _digits(value, 11)
    if d is None or d[0] == 0:
        return False
    counts = sorted((d[:10].count(x) for x in set(d[:10])), reverse=True)
    if counts[0] not in (2, 3) or counts[1] != 1:
        return False
    product = 10
    for x in d[:10]:
        total = (x + product) % 10 or 10
        product = total * 2 % 11
    return (11 - product) % 10 == d[10]


def fodselsnummer(value: str) -> bool:
    """Norway's fødselsnummer (Skatteetaten, Folkeregisteret): DDMMYY (a D-number's day + 40, an H-number's month
    + 40), an individual number, and two mod-11 check digits over weights 3,7,6,1,8,9,4,5,2 and 5,4,3,2,7,6,5,4,3,2."""
    d = _digits(value, 11)
    if d is None:
        return False
    for n, weights in ((9, (3, 7, 6, 1, 8, 9, 4, 5, 2)), (10, (5, 4, 3, 2, 7, 6, 5, 4, 3, 2))):
        r = 11 - _weighted(d, weights) % 11
        if r == 10 or d[n] != r % 11:
            return False
    day, month = d[0] * 10 + d[1], d[2] * 10 + d[3]
    return _date(2000, month - 40 if month > 40 else month, day - 40 if day > 40 else day)


def belgium_national_number(value: str) -> bool:
    """Belgium's rijksregisternummer / numéro national (Rijksregister; Wet van 8 augustus 1983): YYMMDD (a bis
    number's month + 20 or + 40, unknown parts 0), a serial, and 97 - (the nine digits mod 97); for a birth from
    2000 the nine digits are read after a 2."""
    d = _digits(value, 11)
    if d is None or d[2] * 10 + d[3] > 52 or d[4] * 10 + d[5] > 31:
        return False
    body, key = int("".join(map(str, d[:9]))), d[9] * 10 + d[10]
    return 97 - body % 97 == key or 97 - (2_000_000_000 + body) % 97 == key


def rut(value: str) -> bool:
    """Chile's RUT / RUN (Servicio de Impuestos Internos): a body of 7-8 digits and a check character, 11 - (the
    body's digits from the right weighted 2..7 repeating, mod 11), 11 read as 0 and 10 as K."""
    s = _compact(value)
    if not 8 <= len(s) <= 9 or not s[:-1].isdigit() or len(set(s[:-1])) < 2:
        return False
    total = sum(int(c) * (2 + i % 6) for i, c in enumerate(reversed(s[:-1])))
    return "0123456789K0"[11 - total % 11] == s[-1]


_CURP_STATES = frozenset("AS BC BS CC CL CM CS CH DF DG GT GR HG JC MC MN MS NT NL OC PL QT QR SP SL SR TC TS TL VZ YN "
                         "ZS NE".split())
_CURP_ALPHABET = "0123456789ABCDEFGHIJKLMNÑOPQRSTUVWXYZ"


def curp(value: str) -> bool:
    """Mexico's CURP (RENAPO, Instructivo Normativo para la Asignación de la CURP): four letters, YYMMDD (a valid
    date), sex H/M/X, a state, three consonants, a homonym character and a check digit: 10 - (the seventeen
    characters' values weighted 18..2 mod 10), mod 10."""
    s = value.strip().upper()
    if len(s) != 18 or s[10] not in "HMX" or s[11:13] not in _CURP_STATES or not s[4:10].isdigit():
        return False
    if not _date(2000 + int(s[4:6]), int(s[6:8]), int(s[8:10])) or not s[17].isdigit():
        return False
    total = sum(_CURP_ALPHABET.index(c) * (18 - i) for i, c in enumerate(s[:17]) if c in _CURP_ALPHABET)
    return all(c in _CURP_ALPHABET for c in s[:17]) and (10 - total % 10) % 10 == int(s[17])


def korea_rrn(value: str) -> bool:
    """South Korea's resident registration number (주민등록법 시행령; 행정안전부): YYMMDD, a digit for sex and
    century (9, 0: 1800s; 1, 2, 5, 6: 1900s; 3, 4, 7, 8: 2000s), six more; the date valid; for births before 2020
    the check digit issued until October 2020, (11 - (weights 2-9, 2-5 mod 11)) mod 10."""
    d = _digits(value, 13)
    if d is None:
        return False
    century = {9: 1800, 0: 1800, 1: 1900, 2: 1900, 5: 1900, 6: 1900}.get(d[6], 2000)
    year = century + d[0] * 10 + d[1]
    if not _date(year, d[2] * 10 + d[3], d[4] * 10 + d[5]):
        return False
    return year >= 2020 or (11 - _weighted(d, (2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5)) % 11) % 10 == d[12]


def kvnr(value: str) -> bool:
    """Germany's Krankenversichertennummer, its unchangeable part (§ 290 SGB V; GKV-Spitzenverband, "Richtlinien
    für den Aufbau und das Verfahren zur Vergabe der Krankenversichertennummer"): a letter, eight digits and a check
    digit; the letter read as its place in the alphabet (01-26), the ten digits weighted 1, 2, 1, 2, ..., each
    product's digits summed, the total mod 10."""
    s = _compact(value)
    if len(s) != 10 or not s[0].isalpha() or not s[1:].isdigit() or len(set(s[1:9])) < 2:
        return False
    digits = [int(c) for c in f"{ord(s[0]) - 64:02d}{s[1:9]}"]
    total = sum(sum(divmod(x * (1 + i % 2), 10)) for i, x in enumerate(digits))
    return total % 10 == int(s[9])


def au_medicare(value: str) -> bool:
    """Australia's Medicare card number (Services Australia; AIHW METeOR 270101): ten digits, the first 2-6, the
    ninth a check digit, the first eight weighted 1, 3, 7, 9, 1, 3, 7, 9 mod 10, the tenth the card's issue number;
    an eleventh, the individual reference number 1-9, may follow."""
    s = _compact(value)
    d = _digits(s, len(s)) if len(s) in (10, 11) else None
    if d is None or not 2 <= d[0] <= 6 or (len(d) == 11 and d[10] == 0):
        return False
    return _weighted(d, (1, 3, 7, 9, 1, 3, 7, 9)) % 10 == d[8]


_MBI_LETTER = "ACDEFGHJKMNPQRTUVWXY"
_MBI_POSITIONS = ("N", "A", "AN", "0", "A", "AN", "0", "A", "A", "0", "0")
"""CMS's position rules: N a digit 1-9, 0 a digit 0-9, A a letter, AN either."""


def us_mbi(value: str) -> bool:
    """The US Medicare Beneficiary Identifier (CMS, "Understanding the MBI format"): eleven characters, no check
    digit; by position a digit 1-9, a letter, a letter or digit, a digit, a letter, a letter or digit, a digit, two
    letters, two digits; the letters upper case A-Z less S, L, O, I, B, Z. Printed with dashes, 4-3-4."""
    s = _compact(value)
    if len(s) != 11:
        return False
    allowed = {"N": "123456789", "0": "0123456789", "A": _MBI_LETTER, "AN": _MBI_LETTER + "0123456789"}
    return all(c in allowed[p] for c, p in zip(s, _MBI_POSITIONS, strict=True))


_TW_LETTERS = dict(zip("ABCDEFGHJKLMNPQRSTUVXYWZIO", range(10, 36), strict=True))


def taiwan_id(value: str) -> bool:
    """Taiwan's national identification number (國民身分證統一編號; Ministry of the Interior): a letter for the
    place of first registration read as 10-35 (A-H, J-N, P-V, X, Y, W, Z, I, O), a sex digit 1 or 2 (8 or 9 for a
    resident certificate since 2021), seven digits and a check digit; the letter's two digits weighted 1 and 9, the
    nine digits 8..1 and 1, the total a multiple of 10."""
    s = _compact(value)
    if len(s) != 10 or s[0] not in _TW_LETTERS or not s[1:].isdigit() or s[1] not in "1289":
        return False
    n = _TW_LETTERS[s[0]]
    return (n // 10 + n % 10 * 9 + sum(int(c) * w for c, w in zip(s[1:], (8, 7, 6, 5, 4, 3, 2, 1, 1), strict=True))) \
        % 10 == 0


def my_number(value: str) -> bool:
    """Japan's My Number, the individual number (個人番号; MIC ordinance 85 of 2014, art. 5): eleven digits and a
    check digit, 11 - (the sum of P_n, the n-th digit from the right, times n + 1 for n <= 6 and n - 5 after,
    mod 11), 0 where that remainder is 0 or 1."""
    d = _digits(value, 12)
    if d is None:
        return False
    r = sum(p * (n + 1 if n <= 6 else n - 5) for n, p in enumerate(reversed(d[:11]), start=1)) % 11
    return d[11] == (0 if r <= 1 else 11 - r)


def hkid(value: str) -> bool:
    """Hong Kong's identity card number (Immigration Department; Registration of Persons Regulations): one or two
    letters, six digits and a check character (0-9 or A, often in brackets); a missing first letter read as 36,
    letters as 10-35, weighted 9, 8, then the digits 7..2, the check making the total a multiple of 11."""
    s = _compact(value)
    if not 8 <= len(s) <= 9 or not s[:-7].isalpha() or not s[-7:-1].isdigit() or s[-1] not in "0123456789A":
        return False
    letters = [36] * (9 - len(s)) + [ord(c) - 55 for c in s[:-7]]
    total = letters[0] * 9 + letters[1] * 8 + sum(int(c) * w for c, w in zip(s[-7:-1], range(7, 1, -1), strict=True))
    return (total + (10 if s[-1] == "A" else int(s[-1]))) % 11 == 0


_NRIC_LETTERS = {"S": (0, "JZIHGFEDCBA"), "T": (4, "JZIHGFEDCBA"), "F": (0, "XWUTRQPNMLK"),
                 "G": (4, "XWUTRQPNMLK"), "M": (3, "XWUTRQPNJLK")}


def nric(value: str) -> bool:
    """Singapore's NRIC and FIN (ICA): a prefix (S, T for citizens and PRs born before and from 2000; F, G, M for
    foreigners), seven digits and a check letter: the digits weighted 2, 7, 6, 5, 4, 3, 2, plus 4 after T or G and
    3 after M, mod 11, read from the prefix's table."""
    s = _compact(value)
    if len(s) != 9 or s[0] not in _NRIC_LETTERS or not s[1:8].isdigit():
        return False
    offset, table = _NRIC_LETTERS[s[0]]
    return table[(offset + _weighted([int(c) for c in s[1:8]], (2, 7, 6, 5, 4, 3, 2))) % 11] == s[8]


def il_teudat_zehut(value: str) -> bool:
    """Israel's identity number (Teudat Zehut, Population and Immigration Authority): nine digits (fewer padded
    with zeros), the digits weighted 1, 2, 1, 2, ... with each product's digits summed, a multiple of 10 (Luhn)."""
    d = _digits(value, 9)
    return d is not None and _luhn(d)


def emirates_id(value: str) -> bool:
    """The UAE's Emirates ID number (ICP): 784 (the UAE's ISO 3166 code), the holder's birth year, seven digits and
    a Luhn check digit, fifteen digits in all."""
    d = _digits(value, 15)
    return d is not None and d[:3] == [7, 8, 4] and 1900 <= int("".join(map(str, d[3:7]))) <= 2099 and _luhn(d)


def saudi_id(value: str) -> bool:
    """Saudi Arabia's national id (1…) or iqama, a resident's (2…) (Absher, NIC): ten digits, a Luhn check
    digit last."""
    d = _digits(value, 10)
    return d is not None and d[0] in (1, 2) and _luhn(d)


def iran_melli_code(value: str) -> bool:
    """Iran's national code (Kart-e Melli, NOCR): ten digits, the last a check digit: the first nine weighted
    10 down to 2, mod 11: under 2 the digit itself, else 11 minus it."""
    d = _digits(value, 10)
    if d is None:
        return False
    r = _weighted(d, (10, 9, 8, 7, 6, 5, 4, 3, 2)) % 11
    return d[9] == (r if r < 2 else 11 - r)


_RFC_CHARS = "0123456789ABCDEFGHIJKLMN&OPQRSTUVWXYZ Ñ"


def mx_rfc(value: str) -> bool:
    """Mexico's RFC of a person (SAT, persona física): four letters, YYMMDD (a valid date), two homoclave
    characters and a check character: the twelve before it weighted 13..2 mod 11, 11 minus it, 10 written A and a
    remainder of 0 written 0. A company's (three letters) is printed on its invoices and is left alone."""
    s = value.replace(" ", "").replace("-", "").upper()
    if len(s) != 13 or not s[4:10].isdigit() or not all(c in _RFC_CHARS for c in s) or not s[:4].isalpha():
        return False
    if not _date(2000 + int(s[4:6]), int(s[6:8]), int(s[8:10])):
        return False
    r = sum(_RFC_CHARS.index(c) * (13 - i) for i, c in enumerate(s[:12])) % 11
    return s[12] == ("0" if r == 0 else "A" if r == 1 else str(11 - r))


def ar_cuit(value: str) -> bool:
    """Argentina's CUIT / CUIL of a person (AFIP, RG 10/97): type 20, 23, 24 or 27, the DNI's eight digits and a
    check digit: 11 - (the ten weighted 5432765432 mod 11), 11 read as 0 (10 is never issued). A company's types
    (30, 33, 34) are printed on every receipt and are left alone."""
    d = _digits(value, 11)
    if d is None or d[0] * 10 + d[1] not in (20, 23, 24, 27):
        return False
    check = 11 - _weighted(d, (5, 4, 3, 2, 7, 6, 5, 4, 3, 2)) % 11
    return check != 10 and d[10] == check % 11


def th_id(value: str) -> bool:
    """Thailand's citizen id (เลขประจำตัวประชาชน; Department of Provincial Administration): thirteen digits, the
    first a person's category 0-8, the last (11 - (the twelve weighted 13..2 mod 11)) mod 10; printed 1-4-5-2-1."""
    d = _digits(value, 13)
    return d is not None and d[0] <= 8 and d[12] == (11 - _weighted(d, tuple(range(13, 1, -1))) % 11) % 10


# JPN's place-of-birth codes: the states (01-16, again 21-59), and the foreign countries (60-68, 71-72, 74-79,
# 82-93, 98-99).
_MYKAD_PLACES = frozenset([*range(1, 17), *range(21, 69), 71, 72, *range(74, 80), *range(82, 94), 98, 99])


def my_mykad(value: str) -> bool:
    """Malaysia's MyKad number (No. K/P; Jabatan Pendaftaran Negara): the birth date YYMMDD, a place-of-birth code,
    four digits (the last odd for a man). No check digit: a valid date and a code JPN issues."""
    d = _digits(value, 12)
    if d is None or _number(d, 6, 2) not in _MYKAD_PLACES:
        return False
    year, month, day = _number(d, 0, 2), _number(d, 2, 2), _number(d, 4, 2)
    return _date(1900 + year, month, day) or _date(2000 + year, month, day)


# BPS / Kemendagri province codes (Permendagri 72/2019, the Papuan provinces of 2022 too).
_NIK_PROVINCES = frozenset([*range(11, 20), 21, *range(31, 37), 51, 52, 53, *range(61, 66), *range(71, 77), 81, 82,
                            *range(91, 98)])


def id_nik(value: str) -> bool:
    """Indonesia's NIK (Nomor Induk Kependudukan; UU 24/2013, Permendagri 72/2019): province, regency and district
    codes, the birth date DDMMYY (a woman's day + 40), a four-digit serial from 0001. No check digit: a province's
    code, codes from 01, a valid date."""
    d = _digits(value, 16)
    if d is None or _number(d, 0, 2) not in _NIK_PROVINCES or not _number(d, 2, 2) or not _number(d, 4, 2):
        return False
    day, month, year = _number(d, 6, 2), _number(d, 8, 2), _number(d, 10, 2)
    day -= 40 if day > 40 else 0
    return _number(d, 12, 4) > 0 and (_date(1900 + year, month, day) or _date(2000 + year, month, day))


def id_npwp(value: str) -> bool:
    """Indonesia's NPWP (Nomor Pokok Wajib Pajak; DJP): a taxpayer type, a six-digit serial, a Luhn check digit
    over those eight, a tax office and a branch (three digits each); printed 99.999.999.9-999.999."""
    d = _digits(value, 15)
    return d is not None and _luhn(d[:9])


# The province codes of the CCCD (Thông tư 07/2016/TT-BCA, annex): the 63 provinces and cities.
_VN_PROVINCES = frozenset([1, 2, 4, 6, 8, 10, 11, 12, 14, 15, 17, 19, 20, 22, 24, 25, 26, 27, 30, 31, 33, 34, 35, 36,
                           37, 38, 40, 42, 44, 45, 46, 48, 49, 51, 52, 54, 56, 58, 60, 62, 64, 66, 67, 68, 70, 72, 74,
                           75, 77, 79, 80, 82, 83, 84, 86, 87, 89, 91, 92, 93, 94, 95, 96])


def vn_cccd(value: str) -> bool:
    """Vietnam's citizen identity card number (Căn cước công dân; Thông tư 07/2016/TT-BCA): a province's code of
    three digits, a century-and-sex digit (0-1 born in the 1900s, 2-3 in the 2000s), the birth year's two digits,
    six random digits. No check digit: a province's code and a birth year not in the future."""
    d = _digits(value, 12)
    if d is None or _number(d, 0, 3) not in _VN_PROVINCES or d[3] > 3:
        return False
    return 1900 + 100 * (d[3] // 2) + _number(d, 4, 2) <= datetime.date.today().year


def vn_mst(value: str) -> bool:
    """Vietnam's tax code (mã số thuế; Thông tư 105/2020/TT-BTC): ten digits, the tenth 10 - (the nine weighted
    31, 29, 23, 19, 17, 13, 7, 5, 3 mod 11); a remainder of 0 is never issued."""
    d = _digits(value, 10)
    if d is None:
        return False
    r = _weighted(d, (31, 29, 23, 19, 17, 13, 7, 5, 3)) % 11
    return r != 0 and d[9] == 10 - r


def nz_ird(value: str) -> bool:
    """New Zealand's IRD number (Inland Revenue, "Resident Withholding Tax ... IRD number validation"): eight or
    nine digits from 10,000,000 to 150,000,000, the last a check digit: the eight before weighted 3, 2, 7, 6, 5,
    4, 3, 2, 11 - (the sum mod 11), 0 for 11; for a 10 the weights 7, 4, 3, 2, 5, 2, 7, 6, a second 10 invalid."""
    s = _compact(value)
    d = _digits(s.zfill(9), 9) if len(s) in (8, 9) else None
    if d is None or not 10_000_000 <= _number(d, 0, 9) <= 150_000_000:
        return False
    for weights in ((3, 2, 7, 6, 5, 4, 3, 2), (7, 4, 3, 2, 5, 2, 7, 6)):
        check = -_weighted(d, weights) % 11
        if check != 10:
            return d[8] == check
    return False


def do_cedula(value: str) -> bool:
    """The Dominican Republic's cédula de identidad y electoral (Junta Central Electoral): a three-digit
    municipality, seven digits and a check digit by Luhn's weights 1, 2."""
    d = _digits(value, 11)
    return d is not None and _luhn(d)


def ec_cedula(value: str) -> bool:
    """Ecuador's cédula (Registro Civil): a province 01-24 (30: born abroad), a third digit under 6, six digits and
    a mod-10 check with weights 2, 1 (a product over 9 less 9): Luhn's, over the ten."""
    d = _digits(value, 10)
    if d is None or not (1 <= d[0] * 10 + d[1] <= 24 or d[0] * 10 + d[1] == 30) or d[2] > 5:
        return False
    return _luhn(d)


def ec_ruc(value: str) -> bool:
    """Ecuador's RUC of a natural person (SRI): the holder's cédula and the establishment `001`."""
    s = _compact(value)
    return len(s) == 13 and s.endswith("001") and ec_cedula(s[:10])


_PE_DNI_DIGITS = "67890112345"
_PE_DNI_LETTERS = "KABCDEFGHIJ"


def pe_dni(value: str) -> bool:
    """Peru's DNI (RENIEC): eight digits, with the check character its card prints after them perhaps (weights 3,
    2, 7, 6, 5, 4, 3, 2; 11 less the sum mod 11, written as a digit or a letter); eight digits alone have no check:
    only a label that names the DNI makes them one."""
    s = _compact(value)
    d = _digits(s[:8], 8)
    if d is None or len(s) not in (8, 9):
        return False
    if len(s) == 8:
        return True
    key = 11 - _weighted(d, (3, 2, 7, 6, 5, 4, 3, 2)) % 11
    key = 0 if key == 11 else key
    return s[8] in (_PE_DNI_DIGITS[key], _PE_DNI_LETTERS[key])


def pe_ruc(value: str) -> bool:
    """Peru's RUC of a person (SUNAT): 10 (then the DNI), 15 or 17 (no DNI: born abroad, or before it), eight digits
    and a mod-11 check with weights 5, 4, 3, 2, 7, 6, 5, 4, 3, 2 (11 less the sum mod 11; 10 written 0, 11 written
    1); not a company's, 20 first (a business's number, public)."""
    d = _digits(value, 11)
    if d is None or d[0] * 10 + d[1] not in (10, 15, 17):
        return False
    r = 11 - _weighted(d, (5, 4, 3, 2, 7, 6, 5, 4, 3, 2)) % 11
    return d[10] == r % 10


_CO_NIT_WEIGHTS = (3, 7, 13, 17, 19, 23, 29, 37, 41, 43, 47, 53, 59, 67, 71)


def co_nit(value: str) -> bool:
    """Colombia's NIT (DIAN): up to fifteen digits and a check digit after a dash, by mod 11 with the weights 3, 7,
    13, 17, 19, 23, 29, 37, 41, 43 ... from the right (a remainder of 0 or 1 is the check, else 11 less it); a
    person's, the cédula's number: not a company's, nine digits from 800.000.000 up (a business's, public)."""
    if "-" not in value:
        return False
    s = _compact(value)
    if not s.isdigit() or not 7 <= len(s) <= 16 or len(set(s)) < 2 or len(s) == 10 and s[0] in "89":
        return False
    r = sum(int(c) * w for c, w in zip(reversed(s[:-1]), _CO_NIT_WEIGHTS, strict=False)) % 11
    return int(s[-1]) == (r if r < 2 else 11 - r)


def cr_cedula(value: str) -> bool:
    """Costa Rica's cédula de identidad (TSE): a province 1-9, a volume (tomo) and an entry (asiento) of four
    digits each, none of them zero; it carries no check digit: only its label makes it one."""
    d = _digits(value, 9)
    return d is not None and d[0] != 0 and _number(d, 1, 4) > 0 and _number(d, 5, 4) > 0


_GT_MUNICIPALITIES = (17, 8, 16, 16, 14, 14, 19, 8, 24, 21, 9, 30, 32, 21, 8, 17, 14, 5, 11, 11, 7, 17)


def gt_cui(value: str) -> bool:
    """Guatemala's CUI, the DPI's number (RENAP): eight digits, a check by mod 11 with the weights 2-9, and the
    department (01-22) and one of its municipalities of the birth's registration."""
    d = _digits(value, 13)
    if d is None or _weighted(d, (2, 3, 4, 5, 6, 7, 8, 9)) % 11 != d[8]:
        return False
    department, municipality = _number(d, 9, 2), _number(d, 11, 2)
    return 1 <= department <= 22 and 1 <= municipality <= _GT_MUNICIPALITIES[department - 1]


def gt_nit(value: str) -> bool:
    """Guatemala's NIT (SAT): digits and a check after a dash, by mod 11 with the weights 2, 3, ... from the right
    (11 less the sum mod 11, mod 11; 10 written K)."""
    body, _, check = value.upper().rpartition("-")
    if not body.isdigit() or not 4 <= len(body) <= 12 or len(check) != 1 or len(set(body)) < 2:
        return False
    r = (11 - sum(int(c) * (i + 2) for i, c in enumerate(reversed(body))) % 11) % 11
    return check == ("K" if r == 10 else str(r))


@dataclass(frozen=True)
class NationalId:
    """One id: the words that label it, its value's shape, its check, and where it needs no label."""

    name: str
    words: str
    """Label words in any case, after a word boundary or `_` (RE2 and Python syntax)."""
    value: str
    check: Callable[[str], bool]
    short: str = ""
    """Short names that are words in prose too (RUN, NIF): in capitals, or in any case as a key (`"nif":`)."""
    said: str = ""
    """Short names written in lower case in prose (`hetu 010101-123N`, `pnr 811218-9876`): a label there only
    when the value follows at once."""
    camel: str = ""
    """The label inside a camelCase name after a lower-case letter or digit (`clienteCpf`, `tcKimlikNo`)."""
    stems: str = ""
    """Literal stems every label holds, for RE2's prefilter and a column's header: distinctive ones, not the short
    names."""
    bare: str = ""
    """The value's shape where it is found with no label (empty: never)."""
    bare_trigger: str = ""
    generic: bool = True
    """Whether a label that names no country (`document_number`) reads the value by this check too: not where
    the check passes a short figure too often (New Zealand's IRD: eight digits, 1 in 11)."""


_D = r"[ .-]?"  # between a number's groups: a space, a dot or a dash
# The labels of the Andes', Central America's and the Dominican Republic's ids: a cédula (de identidad, de
# ciudadanía, y electoral: `C.I.` in Ecuador), a RUC (Ecuador's SRI, Peru's SUNAT), a NIT (Colombia's DIAN,
# Guatemala's SAT; `Nit.` as Colombian forms abbreviate it). Several ids share one: each reads its value by its check.
_CEDULA = (r"c[eé]dula(?:[ _-]de[ _-](?:identidad(?:[ _-]y[ _-]electoral)?|ciudadan[ií]a))?|"
           r"c\.[ ]?i\.|c[eé]d\.")
_CEDULA_STEMS = r"(?i:c[eé]dula|c\.[ ]?i\.|c[eé]d\.)|C[EÉ]DULA|Cédula"
_RUC = r"registro[ _-][uú]nico[ _-]de[ _-]contribuyentes?"
_RUC_STEMS = r"(?i:registro[ _-][uú]nico[ _-]de[ _-]contribuyente|ruc[\"']?[ \t]*[:=])|\bRUC\b"
_NIT = r"n[uú]mero[ _-]de[ _-]identificaci[oó]n[ _-]tributaria|nit\.?"
_NIT_STEMS = r"(?i:identificaci[oó]n[ _-]tributaria|\bnit\b)"
IDS: tuple[NationalId, ...] = (
    NationalId("cpf", r"cpf|cadastro[ _-]de[ _-]pessoas?[ _-]f[ií]sicas?", r"\d{3}\.?\d{3}\.?\d{3}[-.]?\d{2}", cpf,
               camel="Cpf|CPF",
               bare=r"\d{3}\.\d{3}\.\d{3}-\d{2}", bare_trigger=r"\d{3}\.\d{3}\.\d{3}-\d{2}",
               stems=r"(?i:cpf|cadastro[ _-]de[ _-]pessoa)"),
    NationalId("pesel", r"pesel", r"\d{11}", pesel, camel="Pesel|PESEL",
               stems=r"(?i:pesel)"),
    NationalId("cz_rodne_cislo", r"rodn[eé][ _-]?[cč][ií]sl[oa]|rodn[eé]ho[ _-][cč][ií]sla|r\.[ ]?[cč]\.|"
               r"birth[ _-]number", r"\d{6}[ ]?/?[ ]?\d{4}", rodne_cislo, short="rč", camel="RodneCislo",
               stems=r"(?i:rodn[eé]|birth[ _-]number)|r\.[ ]?[čc]\.|R\.[ ]?Č\.|RČ|Rč|(?i:rč)[\"']?[ \t]*[:=]"),
    NationalId("bg_egn", r"единен[ _-]граждански[ _-]номер|edinen[ _-]grazhdanski[ _-]nomer", r"\d{10}", egn,
               short="егн|egn", camel="Egn|EGN",
               stems=r"(?i:единен[ _-]граждански|edinen[ _-]grazhdanski|egn[\"']?[ \t]*[:=])|ЕГН|\bEGN\b|Egn"),
    NationalId("jmbg", r"jmbg|јмбг|ембг|em[sš]o|mati[cč]ni[ _-]broj(?:[ _-]gra[dđ]ana)?|матични[ _-]број|"
               r"jedinstveni[ _-]mati[cč]ni[ _-]broj", r"\d{13}", jmbg, camel="Jmbg|JMBG|Emso|EMSO",
               stems=r"(?i:jmbg|јмбг|ембг|em[sš]o|mati[cč]ni[ _-]broj|матични[ _-]број)|ЈМБГ|ЕМБГ"),
    NationalId("ahv", r"ahv(?:n13)?(?:[ _-]?(?:nr\.?|nummer|number|no\.?))?|avs|num[eé]ro[ _-]avs|"
               r"n[°.][ ]?avs|nr\.[ ]?avs|swiss[ _-]social[ _-]security(?:[ _-]number)?",
               r"756[ .]?\d{4}[ .]?\d{4}[ .]?\d{2}", ahv, camel="Ahv|AHV|Avs|AVS|AhvNumber|AhvNr",
               bare=r"756\.\d{4}\.\d{4}\.\d{2}", bare_trigger=r"756\.\d{4}\.\d{4}\.\d{2}",
               stems=r"(?i:ahv|avs[\"']?[ \t]*[:=]|n[°.][ ]?avs|nr\.[ ]?avs|num[eé]ro[ _-]avs|swiss[ _-]social)|"
               r"\bAVS\b|Ahv|Avs"),
    NationalId("amka", r"amka|αμκα|α\.μ\.κ\.α\.?|αριθμ[οό]ς[ _-]μητρ[ωώ]ου[ _-]κοινωνικ[ηή]ς[ _-]ασφ[αά]λισης",
               r"[0-3]\d[01]\d{8}", amka, camel="Amka|AMKA",
               stems=r"(?i:amka)|ΑΜΚΑ|αμκα|Αμκα|Α\.Μ\.Κ\.Α|μητρώου[ _-]κοινωνικής|ΜΗΤΡΩΟΥ[ _-]ΚΟΙΝΩΝΙΚΗΣ"),
    NationalId("oib", r"oib|osobn[a-z]{1,2}[ _-]identifikacijsk[a-z]{1,2}[ _-]broj", r"\d{11}", oib,
               camel="Oib|OIB", generic=False,
               stems=r"(?i:oib|osobn[a-z]{1,2}[ _-]identifikacijsk)"),
    NationalId("svnr_at", r"sozialversicherungs[ _-]?(?:nummer|nr\.?)|sv[ _-](?:nummer|nr\.?)|svnr|"
               r"austrian[ _-]social[ _-]security(?:[ _-]number)?",
               r"[1-9]\d{3}[ ]?\d{6}", svnr_at, camel="SvNr|Svnr|SVNR|SvNummer",
               stems=r"(?i:sozialversicherungs|sv[ _-]nummer|sv[ _-]nr|svnr|austrian[ _-]social)|SvNr"),
    NationalId("cc_pt", r"cart[aã]o[ _-]de[ _-]cidad[aã]o|portuguese[ _-]citizen[ _-]card",
               r"\d{8}[ ]?\d[ ]?[A-Za-z]{2}\d", cc_pt, camel="CartaoCidadao|CartaoDeCidadao",
               stems=r"(?i:cart[aã]o[ _-]de[ _-]cidad|portuguese[ _-]citizen)"),
    NationalId("ro_cnp", r"cod(?:ul)?[ _-]numeric[ _-]personal", r"[1-9]\d{12}", cnp, short="cnp", camel="Cnp|CNP",
               stems=r"(?i:numeric[ _-]personal|cnp[\"']?[ \t]*[:=])|\bCNP\b|Cnp"),
    NationalId("ua_rnokpp", r"рнокпп|ідентифікаційн(?:ий|ого)[ _-](?:код|номер)|"
               r"реєстраційн(?:ий|ого)[ _-]номер(?:а)?[ _-]облікової[ _-]картки|rnokpp", r"[0-4]\d{9}", rnokpp,
               short="іпн", camel="Rnokpp|RNOKPP|Ipn",
               stems=r"(?i:рнокпп|ідентифікаційн|реєстраційн|rnokpp|іпн[\"']?[ \t]*[:=])|РНОКПП|Рнокпп|ІПН"),
    NationalId("kz_iin", r"индивидуальн(?:ый|ого)[ _-]идентификационн(?:ый|ого)[ _-]номер(?:а)?|"
               r"жеке[ _-]сәйкестендіру[ _-]нөмірі", r"\d{12}", iin, short="иин|жсн|iin", camel="Iin|IIN",
               stems=r"(?i:идентификационн|сәйкестендіру|иин[\"']?[ \t]*[:=]|жсн[\"']?[ \t]*[:=]|"
               r"iin[\"']?[ \t]*[:=])|ИИН|ЖСН|\bIIN\b"),
    NationalId("baltic_personal_code", r"asmens[ _-]kod(?:as|o|ą|ui)|a\.[ ]?k\.|isikukood(?:i|iga|ile)?|"
               r"(?:estonian|lithuanian)[ _-]personal[ _-](?:id(?:entification)?[ _-])?code",
               r"[1-8]\d{10}", baltic_personal_code, camel="AsmensKodas|Isikukood",
               stems=r"(?i:asmens[ _-]kod|isikukood|a\.[ ]?k\.|estonian[ _-]personal|lithuanian[ _-]personal)"),
    NationalId("latvian_personal_code", r"personas[ _-]kod(?:s|a|u)|p\.[ ]?k\.|"
               r"latvian[ _-]personal[ _-](?:id(?:entification)?[ _-])?code",
               r"\d{6}-?\d{5}", latvian_personal_code, camel="PersonasKods",
               stems=r"(?i:personas[ _-]kod|p\.[ ]?k\.|latvian[ _-]personal)"),
    NationalId("cpr", r"cpr[ _-]?(?:nr\.?|nummer|number|no\.?)|cpr|danish[ _-](?:personal[ _-])?id(?:[ _-]number)?",
               r"\d{6}-?\d{4}", cpr, short="cpr", camel="Cpr|CPR|CprNr|CprNummer",
               stems=r"(?i:cpr[ _-]?(?:nr|nummer|number|no)|danish[ _-](?:personal[ _-])?id)|\bCPR\b|"
               r"(?i:cpr)[\"']?[ \t]*[:=]"),
    NationalId("bsn", r"burger[ _-]?service[ _-]?nummer|sofi[ _-]?nummer|citizen[ _-]service[ _-]number",
               rf"\d{{4}}{_D}\d{{2}}{_D}\d{{3}}|\d{{3}}{_D}\d{{3}}{_D}\d{{3}}|\d{{8,9}}", bsn, short="bsn", said="bsn",
               camel="Bsn|BSN|Burgerservicenummer",
               stems=r"(?i:burgerservice|sofinummer|citizen[ _-]service|bsn[\"']?[ \t]*[:=])|\bBSN\b|Bsn"),
    NationalId("aadhaar", r"aadhaa?r|adhaar|uidai|आधार|আধার|ஆதார்", r"[2-9]\d{3}[ -]?\d{4}[ -]?\d{4}", aadhaar,
               camel="Aadhaa?r",
               stems=r"(?i:aadhaar|aadhar|adhaar|uidai)|आधार|আধার|ஆதார்"),
    NationalId("tc_kimlik", r"t\.?[ ]?c\.?[ _-]?kimlik|tckn|t\.c\.[ ]?(?:no|numaras[ıi])|"
               r"kimlik[ _-]?(?:no|numaras[ıi])|turkish[ _-]id(?:entity)?[ _-]?(?:number|no)",
               r"[1-9]\d{10}", tc_kimlik, short=r"tc[ _-]?no|tcno|tc", camel="TcKimlik|TCKimlik|Tckn|TCKN",
               stems=r"(?i:kimlik|tckn|t\.c\.|tc[ _-]?no)|\bTC\b"),
    NationalId("personnummer", r"person[ _-]?nummer|personnr|pers\.?[ _-]?nr|samordningsnummer|persovdnanummar|"
               r"swedish[ _-]personal[ _-]identity[ _-]number|personal[ _-]number",
               r"(?:19|20)?\d{6}[-+ ]?\d{4}", personnummer, said=r"pnr|pers\.?nr",
               camel="Personnummer|PersonNummer",
               stems=r"(?i:personnummer|personnr|pers\.nr|pers[ _-]nr|samordningsnummer|persovdnanummar|"
               r"personal[ _-]identity[ _-]number|personal[ _-]number)"),
    NationalId("hetu", r"henkil[oö]tunnus|henkil[oö]tunnukse(?:n|si)|personbeteckning|"
               r"personal[ _-]identity[ _-]code|finnish[ _-](?:personal[ _-])?id",
               r"\d{6}[-+A-FU-Ya-fu-y]\d{3}[0-9A-Ya-y]", hetu, short="hetu", said="hetu",
               camel="Hetu|HETU|Henkilotunnus",
               stems=r"(?i:henkil|hetu|personbeteckning|personal[ _-]identity[ _-]code|finnish[ _-]id|"
               r"finnish[ _-]personal)"),
    NationalId("china_resident_id", r"身份证(?:号码?|号)?|公民身份号码|居民身份证|身份證(?:號碼?)?|"
               r"resident[ _-]identity[ _-](?:card|number)|chinese[ _-]id",
               r"\d{6}(?:19|20)\d{2}[01]\d[0-3]\d\d{3}[0-9Xx]", china_resident_id,
               camel="IdCard|IdCardNo|SfzNo|Sfzh",
               bare=r"[1-8]\d{5}(?:19|20)\d{2}[01]\d[0-3]\d\d{3}[0-9X]", bare_trigger=r"\d{6}(?:19|20)\d{9}[0-9X]",
               stems=r"身份|(?i:resident[ _-]identity|chinese[ _-]id)|IdCard|SfzNo|Sfzh"),
    NationalId("south_africa_id", r"(?:sa|rsa|south[ _-]african)[ _-]id|id[ _-]?(?:number|no\b|nr\b|num\b)|"
               r"identity[ _-](?:number|no\b)|inombolo[ _-](?:ka|ya)mazisi",
               r"\d{6}[ ]?\d{4}[ ]?\d{2}[ ]?\d", south_africa_id, camel="IdNumber|IdNo|IDNumber|IdentityNumber",
               stems=r"(?i:id[ _-]number|id[ _-]no|id[ _-]nr|id[ _-]num|idnumber|idno|identity[ _-]number|"
               r"identity[ _-]no|sa[ _-]id|rsa[ _-]id|african[ _-]id|inombolo[ _-](?:ka|ya)mazisi)"),
    NationalId("nif_pt", r"contribuinte|n[uú]mero[ _-]de[ _-]identifica[cç][aã]o[ _-]fiscal",
               r"[1-35-9]\d{2}[ .]?\d{3}[ .]?\d{3}", nif_pt, short="nif", camel="Nif|NIF|Contribuinte",
               stems=r"(?i:contribuinte|identifica)|\bNIF\b|Nif|(?i:nif)[\"']?[ \t]*[:=]"),
    NationalId("nhs_number", r"nhs[ _-]?(?:number|num|no|nr|#)|nhs[ _-]?id|chi[ _-]number",
               r"\d{3}[ -]?\d{3}[ -]?\d{4}", nhs_number, short="nhs", camel="NhsNumber|NHSNumber|NhsNo|NHSNo",
               stems=r"(?i:nhs|chi[ _-]number)"),
    NationalId("tfn", r"tax[ _-]file[ _-](?:number|no)", r"\d{3}[ -]?\d{3}[ -]?\d{3}", tfn, short="tfn",
               camel="Tfn|TFN|TaxFileNumber", stems=r"(?i:tax[ _-]file[ _-]n)|\bTFN\b|(?i:tfn)[\"']?[ \t]*[:=]"),
    NationalId("lk_nic", r"ජාතික[ _-]හැඳුනුම්පත|sri[ _-]lankan?[ _-](?:nic|national[ _-]identity[ _-]card)|"
               r"nic[ _-]?(?:no|number|num|nr)|nic[ ]අංකය", r"\d{9}[VvXx]|\d{12}", lk_nic,
               camel="NicNo|NicNumber|NICNo", generic=False,
               stems=r"ජාතික[ _-]හැඳුනුම්පත|(?i:sri[ _-]lankan?[ _-]n|nic[ _-]?(?:no|number|num|nr))|(?i:nic)[ ]අංකය"),
    NationalId("kennitala", r"kennitala|kennit[oö]lu|icelandic[ _-]id|kt\.", r"\d{6}-?\d{4}", kennitala,
               short=r"kt\.?", camel="Kennitala",
               stems=r"(?i:kennit|icelandic[ _-]id|kt[\"']?[ \t]*[:=]|\bkt\.)|\bKT\b"),
    NationalId("nir", r"s[eé]curit[eé][ _-]sociale|num[eé]ro[ _-]de[ _-]s[eé]cu|num[eé]ro[ _-]d'inscription|"
               r"carte[ _-]vitale|french[ _-]social[ _-]security|n°[ ]?(?:de[ ]?)?s[eé]cu|n°[ ]?s\.?s\b\.?|insee",
               r"[1-478][ ]?\d{2}[ ]?\d{2}[ ]?(?:\d{2}|2[ABab])[ ]?\d{3}[ ]?\d{3}[ ]?\d{2}", nir, short="nir|nss",
               camel="Nir|NIR|SecuriteSociale",
               stems=r"(?i:curit|num[eé]ro[ _-]de[ _-]s|n°[ _-]de[ _-]s|n°[ ]?s\.?s|vitale|insee|d'inscription)|"
               r"\bNIR\b|\bNSS\b|Nir|"
               r"(?i:nir|nss)[\"']?[ \t]*[:=]"),
    NationalId("codice_fiscale", r"codice[ _-]?fiscale|cod\.?[ ]?fisc\.?|c\.f\.|italian[ _-]tax[ _-](?:code|id)",
               r"[A-Za-z]{6}[0-9LMNP-Vlmnp-v]{2}[A-Za-z][0-9LMNP-Vlmnp-v]{2}[A-Za-z][0-9LMNP-Vlmnp-v]{3}[A-Za-z]",
               codice_fiscale, short="cf", camel="CodiceFiscale|CodFisc",
               bare=r"[A-Z]{6}[0-9LMNP-V]{2}[ABCDEHLMPRST][0-9LMNP-V]{2}[A-Z][0-9LMNP-V]{3}[A-Z]",
               bare_trigger=r"[A-Z]{6}[0-9LMNP-V]{2}[ABCDEHLMPRST][0-9LMNP-V]{2}[A-Z]",
               stems=r"(?i:fiscale|cod\.[ _-]?fisc|c\.f\.|italian[ _-]tax)|\bCF\b|(?i:cf)[\"']?[ \t]*[:=]|CodFisc"),
    NationalId("steuer_id", r"steuer[ _-]?id(?:[ _-]?nr)?|steuer[ _-]?identifikations[ _-]?nummer|"
               r"steuerliche[ _-]identifikationsnummer|identifikationsnummer|id[ _-]?nr\.?|german[ _-]tax[ _-]id",
               r"[1-9]\d[ ]?\d{3}[ ]?\d{3}[ ]?\d{3}", steuer_id, camel="SteuerId|SteuerID|SteuerIdNr",
               stems=r"(?i:steuer|identifikationsnummer|id-nr|idnr|id[ _-]nr|german[ _-]tax)"),
    NationalId("fodselsnummer", r"f[oø]dselsnummer|f[oø]dselsnr|fnr|f\.[ ]?nr\.?|personnummer|d-nummer|"
               r"norwegian[ _-](?:national[ _-])?id",
               r"\d{6}[ ]?\d{5}", fodselsnummer, short="fnr", said="fnr", camel="Fodselsnummer|Fnr",
               stems=r"(?i:f[oø]dselsn|f\.[ _-]?nr|fnr|personnummer|d-nummer|norwegian)|F[OØ]DSELSN"),
    NationalId("belgium_national_number", r"rijksregister[ _-]?nummer|rijksregister|nationaal[ _-]nummer|"
               r"num[eé]ro[ _-](?:de[ _-]registre[ _-])?national|registre[ _-]national|nationalregisternummer|"
               r"belgian[ _-]national[ _-]number|national[ _-]number|insz|niss",
               r"\d{2}\.?\d{2}\.?\d{2}[-. ]?\d{3}\.?\d{2}", belgium_national_number, short="rrn|nrn",
               camel="Rijksregisternummer|Insz|INSZ|Niss|NISS",
               bare=r"\d{2}\.\d{2}\.\d{2}-\d{3}\.\d{2}", bare_trigger=r"\d{2}\.\d{2}\.\d{2}-\d{3}\.\d{2}",
               stems=r"(?i:rijksregister|nationalregister|nationaal[ _-]nummer|num[eé]ro[ _-]national|"
               r"registre[ _-]national|nationaal|national[ _-]number|insz|niss)|\bRRN\b"),
    NationalId("rut", r"rol[ _-][uú]nico[ _-](?:tributario|nacional)|chilean[ _-](?:rut|id)",
               r"\d{1,2}\.?\d{3}\.?\d{3}-?[\dkK]", rut, short="rut|run", camel="Rut|RUT",
               stems=r"(?i:rol[ _-][uú]nico|chilean)|\bRUT\b|\bRUN\b|Rut|(?i:rut|run)[\"']?[ \t]*[:=]"),
    NationalId("curp", r"curp|clave[ _-][uú]nica[ _-]de[ _-]registro",
               r"[A-Za-z]{4}\d{6}[HMXhmx][A-Za-z]{5}[0-9A-Za-z]\d", curp, camel="Curp|CURP",
               bare=r"[A-Z][AEIOUX][A-Z]{2}\d{6}[HMX][A-Z]{2}[B-DF-HJ-NP-TV-Z]{3}[0-9A-Z]\d",
               bare_trigger=r"[A-Z]{4}\d{6}[HMX][A-Z]{5}[0-9A-Z]\d", stems=r"(?i:curp|clave[ _-][uú]nica)"),
    NationalId("korea_rrn", r"주민등록번호|주민번호|resident[ _-]registration[ _-](?:number|no)",
               r"\d{6}[ ]?-?[ ]?[0-9]\d{6}", korea_rrn, short="rrn", camel="Jumin|JuminNo|Rrn|RRN",
               stems=r"주민|(?i:resident[ _-]registration|rrn[\"']?[ \t]*[:=])|\bRRN\b|Rrn|Jumin"),
    NationalId("taiwan_id", r"身[分份]證(?:字號|統一編號|號碼?)?|國民身[分份]證|統一證號|"
               r"taiwan(?:ese)?[ _-](?:national[ _-])?id(?:[ _-](?:number|no))?",
               r"[A-Za-z][1289]\d{8}", taiwan_id, camel="TaiwanId|TwId",
               stems=r"身[分份]證|統一證號|(?i:taiwan(?:ese)?[ _-](?:national[ _-])?id)|TaiwanId|TwId"),
    NationalId("my_number", r"マイナンバー|個人番号|個人番號|my_?number", r"\d{4}[ -]?\d{4}[ -]?\d{4}", my_number,
               camel="MyNumber", stems=r"マイナンバー|個人番|(?i:my_?number)"),
    NationalId("hkid", r"香港身[份分]證(?:號碼)?|身[份分]證(?:號碼|字號)?|hkid|hong[ _-]kong[ _-]id(?:entity)?"
               r"(?:[ _-]card)?(?:[ _-](?:number|no))?",
               r"[A-Za-z]{1,2}\d{6}[ ]?(?:\([0-9Aa]\)|[0-9Aa])", hkid, camel="Hkid|HKID",
               stems=r"身[份分]證|(?i:hkid|hong[ _-]kong[ _-]id)|Hkid"),
    NationalId("nric", r"nric(?:[ _/-]?fin)?(?:[ _-]?(?:no|number))?|singapore[ _-](?:ic|nric|identity[ _-]card)|"
               r"身份证(?:号码?)?",
               r"[STFGMstfgm]\d{7}[A-Za-z]", nric, short="fin", camel="Nric|NRIC",
               stems=r"(?i:nric|singapore[ _-]i)|\bFIN\b|(?i:fin)[\"']?[ \t]*[:=]|身份证"),
    NationalId("de_kvnr", r"kranken[ _-]?versicherten[ _-]?(?:nummer|nr\.?)|versicherten[ _-]?(?:nummer|nr\.?)|"
               r"kranken[ _-]?versicherungs[ _-]?nummer|kvnr|kvid(?:[ _-]?10)?|german[ _-]health[ _-]insurance[ _-]"
               r"(?:number|id)",
               r"[A-Z]\d{9}", kvnr, camel="Kvnr|KVNR|Kvid|KVID|Versichertennummer|VersichertenNr",
               stems=r"(?i:versicherten|versicherungsnummer|kvnr|kvid|german[ _-]health)"),
    NationalId("au_medicare", r"medicare[ _-]?(?:card[ _-]?)?(?:number|num|no|nr|#)|medicare[ _-]card|"
               r"australian[ _-]medicare",
               r"[2-6]\d{3}[ -]?\d{5}[ -]?\d(?:[ /-]?[1-9])?", au_medicare,
               camel="MedicareNumber|MedicareNo|MedicareCardNumber|MedicareCardNo",
               stems=r"(?i:medicare[ _-]?(?:card|number|num|no|nr|#)|australian[ _-]medicare)"),
    NationalId("il_teudat_zehut", r"teudat[ _-]?zehut|israeli[ _-]id(?:[ _-](?:number|no))?|ת(?:\\?\"|״|\.)ז\.?|"
               r"תעודת[ _-]זהות", r"\d{8}-\d|\d{9}", il_teudat_zehut, camel="TeudatZehut",
               stems=r"(?i:teudat[ _-]?zehut|israeli[ _-]id)|ת(?:\\?\"|\"\"|״|\.)ז|תעודת.זהות"),
    NationalId("emirates_id", r"emirates[ _-]?id(?:[ _-](?:number|no))?|(?:رقم[ _-])?الهوية[ _-]الإماراتية|"
               r"ایمرٹس[ _-]آئی[ _-]ڈی",
               r"784[ -]?\d{4}[ -]?\d{7}[ -]?\d", emirates_id, short="eid", camel="EmiratesId|EmiratesID",
               stems=r"(?i:emirates[ _-]?id)|الهوية.الإماراتية|ایمرٹس.آئی.ڈی|\bEID\b"),
    NationalId("saudi_id", r"saudi[ _-](?:national[ _-])?id|iqama|(?:رقم[ _-])?(?:الهوية[ _-]الوطنية|الإقامة)",
               r"[12]\d{9}", saudi_id, camel="Iqama|SaudiId",
               stems=r"(?i:saudi[ _-](?:national[ _-])?id|iqama)|الهوية.الوطنية|الإقامة"),
    NationalId("iran_melli_code", r"کد[ _-]?ملی|شماره[ _-]ملی|(?:national|melli)[ _-]code|code[ _-]melli",
               r"\d{3}-?\d{6}-?\d", iran_melli_code, camel="MelliCode|NationalCode",
               stems=r"کد ?ملی|شماره.ملی|(?i:national[ _-]code|melli[ _-]code|code[ _-]melli)"),
    NationalId("us_mbi", r"medicare[ _-]beneficiary[ _-]identifier|medicare[ _-]?(?:id|number|num|no|nr|#)|"
               r"us[ _-]mbi|mbi[ _-]?(?:number|num|no|nr|#)",
               r"[1-9][A-Z][0-9A-Z]\d-?[A-Z][0-9A-Z]\d-?[A-Z]{2}\d{2}", us_mbi, short="mbi",
               camel="Mbi|MBI|MedicareId|MedicareID|MedicareNumber",
               stems=r"(?i:medicare[ _-]?(?:id|number|num|no|nr|#|beneficiary)|us[ _-]mbi|mbi[\"']?[ \t]*[:=])|"
               r"\bMBI\b|Mbi"),
    NationalId("mx_rfc", r"registro[ _-]federal[ _-]de[ _-]contribuyentes",
               r"[A-Za-zÑñ&]{4}[ -]?\d{6}[ -]?[0-9A-Za-z]{3}", mx_rfc, short="rfc", camel="Rfc|RFC",
               stems=r"(?i:registro[ _-]federal)|\bRFC\b|Rfc|(?i:rfc)[\"']?[ \t]*[:=]"),
    NationalId("ar_cuit", r"cuit|cuil|clave[ _-][uú]nica[ _-]de[ _-]identificaci[oó]n[ _-](?:tributaria|laboral)",
               r"2[0347][ .-]?\d{8}[ .-]?\d", ar_cuit, camel="Cuit|CUIT|Cuil|CUIL",
               stems=r"(?i:cuit|cuil|clave[ _-][uú]nica[ _-]de[ _-]identificaci)"),
    NationalId("th_id", r"เลข(?:ประจำตัว|บัตร)ประชาชน|บัตรประชาชน|thai[ _-](?:national[ _-]|citizen[ _-])?id"
               r"(?:[ _-]?(?:card|number|no))?",
               r"[0-8][ -]?\d{4}[ -]?\d{5}[ -]?\d{2}[ -]?\d", th_id, camel="ThaiId|ThaiID",
               stems=r"ประชาชน|(?i:thai[ _-](?:national[ _-]|citizen[ _-])?id)|ThaiI[dD]"),
    NationalId("my_mykad", r"mykad|kad[ _-]pengenalan|no\.?[ ]?k/p|k/p[ _-]?no|ic[ _-]?(?:no|number)|"
               r"身份证(?:号码?)?",
               r"\d{6}-?\d{2}-?\d{4}", my_mykad, camel="MyKad|Mykad|IcNo|ICNo",
               stems=r"(?i:mykad|kad[ _-]pengenalan|k/p|\bic[ _-]?n)|身份证|IcNo|ICNo"),
    NationalId("id_nik", r"nomor[ _-]induk[ _-]kependudukan|(?:no|nomor)\.?[ ]?ktp|nik[ _-]ktp", r"\d{16}", id_nik,
               short="nik|ktp", camel="Nik|NIK|NoKtp",
               stems=r"(?i:induk[ _-]kependudukan|ktp|nik[\"']?[ \t]*[:=])|\bNIK\b|Nik"),
    NationalId("id_npwp", r"npwp|nomor[ _-]pokok[ _-]wajib[ _-]pajak",
               r"\d{2}\.?\d{3}\.?\d{3}\.?\d[-.]?\d{3}\.?\d{3}", id_npwp, camel="Npwp|NPWP",
               stems=r"(?i:npwp|pokok[ _-]wajib[ _-]pajak)"),
    NationalId("vn_cccd", r"cccd|c[aă]n[ _-]c[uư][oớ]c(?:[ _-]c[oô]ng[ _-]d[aâ]n)?|s[oố][ _-]cccd",
               r"\d{12}", vn_cccd, camel="Cccd|CCCD",
               stems=r"(?i:cccd|c[aă]n[ _-]c[uư][oớ]c)|C[AĂ]N[ _-]C[UƯ][OỚ]C"),
    NationalId("vn_mst", r"m[aã][ _-]s[oố][ _-]thu[eế](?:[ _-]c[aá][ _-]nh[aâ]n)?",
               r"\d{10}", vn_mst, short="mst", camel="Mst|MST|MaSoThue",
               stems=r"(?i:m[aã][ _-]s[oố][ _-]thu[eế]|mst[\"']?[ \t]*[:=])|M[AÃ][ _-]S[OỐ][ _-]THU|\bMST\b|Mst"),
    NationalId("nz_ird", r"ird[ _-]?(?:number|num|no|#)|inland[ _-]revenue[ _-](?:department[ _-])?number",
               r"\d{2,3}[ -]?\d{3}[ -]?\d{3}", nz_ird, short="ird", camel="Ird|IRD|IrdNumber|IRDNumber", generic=False,
               stems=r"(?i:ird[ _-]?(?:number|num|no|#)|inland[ _-]revenue|ird[\"']?[ \t]*[:=])|\bIRD\b|Ird"),
    NationalId("do_cedula", _CEDULA, r"\d{3}-?\d{7}-?\d", do_cedula, generic=False, stems=_CEDULA_STEMS),
    NationalId("ec_cedula", _CEDULA, r"\d{9}-?\d", ec_cedula, generic=False, stems=_CEDULA_STEMS),
    NationalId("cr_cedula", _CEDULA, r"[1-9]-?\d{4}-?\d{4}", cr_cedula, generic=False, stems=_CEDULA_STEMS),
    NationalId("ec_ruc", _RUC, r"\d{13}", ec_ruc, short="ruc", said="ruc", generic=False, stems=_RUC_STEMS),
    NationalId("pe_ruc", _RUC, r"1[057]\d{9}", pe_ruc, short="ruc", said="ruc", generic=False, stems=_RUC_STEMS),
    NationalId("pe_dni", r"documento[ _-]nacional[ _-]de[ _-]identidad|d\.[ ]?n\.[ ]?i\.?",
               r"\d{8}(?:-[0-9A-Ka-k])?", pe_dni, short="dni", generic=False,
               stems=r"(?i:documento[ _-]nacional[ _-]de[ _-]identidad|d\.[ ]?n\.[ ]?i|dni[\"']?[ \t]*[:=])|\bDNI\b"),
    NationalId("co_nit", _NIT, r"\d{1,3}(?:\.\d{3}){2,4}-\d|\d{6,15}-\d", co_nit, short="nit", generic=False,
               stems=_NIT_STEMS),
    NationalId("gt_nit", _NIT, r"\d{4,12}-[0-9Kk]", gt_nit, short="nit", generic=False, stems=_NIT_STEMS),
    NationalId("gt_cui", r"c[oó]digo[ _-][uú]nico[ _-]de[ _-]identificaci[oó]n", r"\d{4} ?\d{5} ?\d{4}", gt_cui,
               short="cui|dpi", said="cui",
               stems=r"(?i:c[oó]digo[ _-][uú]nico[ _-]de[ _-]identificaci|cui[\"']?[ \t]*[:=]|dpi[\"']?[ \t]*[:=])|"
               r"\bCUI\b|\bDPI\b"),
)

_GENERIC_NAMES = (r"national[ _-]?id(?:entity)?(?:[ _-]?(?:number|no|nr|card))?|iqama|kimlik[ _-]?no|"
                  r"identity[ _-]?(?:card[ _-]?)?(?:number|no)|document[ _-]?(?:number|no|nr|num)|"
                  r"identification[ _-]?(?:number|no)|"
                  r"personal[ _-]?(?:id|identity|identification)[ _-]?(?:number|no|code)?")
_ID_NUMBER = r"id[ _-]?(?:number|no|nr|num)"
GENERIC_TRANSLATED = words.alternation(words.ID_NUMBER)
_GENERIC_CAMEL = r"(?<=[a-z0-9])National(?:Id(?:entity)?|ID)(?:Number|No|Nr|Card)?(?![a-z0-9])"
GENERIC_WORDS = (rf"(?:(?<![A-Za-z0-9])(?i:{_GENERIC_NAMES})|(?<![A-Za-z0-9_])(?<![A-Za-z] )(?i:{_ID_NUMBER})|"
                 rf"{_GENERIC_CAMEL}|{GENERIC_TRANSLATED})")
"""Labels that name an identity number without its country (`id_number`, `document number`, a KYC form's
`national_id`, a camelCase hump after a lower-case letter as HR schemas name it: `employeeNationalId`): their value
is read by every id's check. `id number` alone, not another thing's (`order id no`)."""
GENERIC_STEMS = rf"(?i:{_GENERIC_NAMES}|{_ID_NUMBER})"
"""The English ones, as RE2's prefilter reads them (no lookbehind); the translated ones are the rule's `translated`."""
GENERIC_VALUE = (r"(?:\d{8} ?\d ?[A-Z]{2}\d(?![A-Za-z0-9])|\d[\d .+-]{4,22}[A-Za-z]?[\d .+-]{0,8}[0-9A-Za-z]|"
                 r"[XYZ]-?\d{7}-?[A-Z]|[A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D])")
"""Digits in groups apart by spaces, dots, dashes or `+`, a letter perhaps inside (HETU's century sign) and a
check letter perhaps last (HETU's, a DNI's); or a Spanish NIE (`X5672272N`), a UK NINO (`QQ 12 34 56 C`) or a
Portuguese Cartão de Cidadão's document number (`12345678 9 ZZ4`, first: its digits alone are a BSN's shape)."""
_SHORT_NAMES = "|".join(dict.fromkeys(name for n in IDS for name in (n.short, n.said) if name))
SHORT_PARTS = rf"(?i:(?:^|_)(?:{_SHORT_NAMES})(?:_|$))"
"""The short names as parts of an identifier (`fr_nir`, `se_pnr`, `user_cf`): a label structure ties to its value."""
SAID_NAMES = "|".join(n.said for n in IDS if n.said)
SAID_HEADER = rf"^(?i:{SAID_NAMES})$"
"""A column headed by a short name people write in lower case (`| pnr |`, `hetu,`): its cells are read after it."""
SHORT_TRIGGER = rf"(?i:_(?:{_SHORT_NAMES})\b)"
"""The same in text, for RE2's prefilter (`"type": "se_pnr"`)."""


def any_id(value: str) -> bool:
    """Whether the value passes some id's check (and validators.national_id's: NINO, DNI/NIE, SIN). Random digits
    pass at 9 digits 24% (BSN, Portugal's NIF, ...), 10 10%, 11 4.7%, 12 8.2%, 13 1.5% (20,000 drawn each): after a
    label that says an identity number, the check only keeps figures of another kind out."""
    return any(n.check(value) for n in IDS if n.generic) or national_id(value)

