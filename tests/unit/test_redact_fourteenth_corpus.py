"""benchmarks/redact_fourteenth.py is well formed: deterministic, PER_KIND values of every kind (the issue's 16 in
>= 15 carriers each), every secret findable in its text as carried, carried JSON that parses, and every value valid
by its format's check (Luhn, MOD 97-10, SSA rules, numbering plans, NPI/NHS/DEA/ABA checks). No recall assertion."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict

import pytest

from benchmarks import redact_fourteenth as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = ("password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban")


@pytest.fixture(scope="module")
def cases() -> list[corpus.Case]:
    return list(corpus.generate())


def by_kind(cases: list[corpus.Case], kind: str) -> list[corpus.Case]:
    found = [c for c in cases if c.kind == kind]
    assert found, kind
    return found


def test_the_corpus_is_the_same_every_time(cases: list[corpus.Case]) -> None:
    assert list(corpus.generate()) == cases
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())


def test_every_kind_has_per_kind_values_and_the_issue_kinds_15_carriers(cases: list[corpus.Case]) -> None:
    counts = Counter(c.kind for c in cases)
    carriers: dict[str, set[str]] = defaultdict(set)
    for c in cases:
        carriers[c.kind].add(c.form.rsplit("/", 1)[0])
    assert set(counts.values()) == {corpus.PER_KIND}
    assert set(ISSUE_KINDS) <= set(counts) and corpus.OUTSIDE_TARGET <= set(counts)
    assert len(counts) >= 45
    assert all(len(carriers[k]) >= 15 for k in ISSUE_KINDS), {k: len(carriers[k]) for k in ISSUE_KINDS}
    assert len([k for k in counts if k.startswith("phone_")]) >= 15


def test_every_secret_is_in_its_text_as_carried(cases: list[corpus.Case]) -> None:
    for c in cases:
        forms = (c.secret, json.dumps(c.secret)[1:-1], json.dumps(c.secret, ensure_ascii=False)[1:-1])
        assert any(f in c.text for f in forms), (c.kind, c.form)
        assert any(f in c.carried for f in forms), (c.kind, c.form)
        assert len(c.secret) >= 8, (c.kind, c.secret)
        if c.is_json:
            json.loads(c.carried)
    assert 0.25 < sum(c.is_json for c in cases) / len(cases) < 0.5


def test_cards_pass_luhn_and_ibans_mod_97(cases: list[corpus.Case]) -> None:
    for c in by_kind(cases, "card"):
        number = re.sub(r"\D", "", c.secret)
        assert luhn_ok(number) and 14 <= len(number) <= 19, c.secret
    countries = set()
    for c in by_kind(cases, "iban"):
        assert iban_ok(c.secret), c.secret
        countries.add(c.secret[:2].upper())
    assert len(countries) >= 20


def test_ssns_follow_the_ssa_rules(cases: list[corpus.Case]) -> None:
    for c in by_kind(cases, "ssn"):
        area, group, serial = re.fullmatch(r"(\d{3})[- ]?(\d{2})[- ]?(\d{4})", c.secret).groups()
        assert area not in ("000", "666") and area < "900" and group != "00" and serial != "0000"


def test_phone_numbers_have_their_plans_lengths(cases: list[corpus.Case]) -> None:
    for country, (cc, trunk, patterns) in corpus.PLANS.items():
        lengths = {sum(sizes) for _pattern, sizes in patterns}
        for c in by_kind(cases, f"phone_{country}"):
            number = re.sub(r"\D", "", c.secret)
            if c.secret.startswith(("+", "00")) or c.form.endswith("/msisdn"):
                number = number.removeprefix("00").removeprefix(cc)
                number = number.removeprefix(trunk) if "(0)" in c.secret else number
            else:
                assert number.startswith(trunk), c.secret
                number = number[len(trunk):]
            assert len(number) in lengths, (country, c.secret)


def test_national_ids_pass_their_checks(cases: list[corpus.Case]) -> None:
    for c in by_kind(cases, "npi_us"):
        assert luhn_ok("80840" + c.secret) and c.secret[0] in "12"
    for c in by_kind(cases, "nhs_number"):
        d = c.secret.replace(" ", "")
        assert (11 - sum(int(x) * w for x, w in zip(d[:9], range(10, 1, -1), strict=True)) % 11) % 11 == int(d[9])
    for c in by_kind(cases, "dea_number"):
        d = c.secret[2:]
        assert (int(d[0]) + int(d[2]) + int(d[4]) + 2 * (int(d[1]) + int(d[3]) + int(d[5]))) % 10 == int(d[6])
    for c in by_kind(cases, "aba_routing"):
        assert sum(int(x) * w for x, w in zip(c.secret, (3, 7, 1) * 3, strict=True)) % 10 == 0
    for c in by_kind(cases, "medicare_mbi"):
        assert re.fullmatch(r"[1-9][AC-HJKMNP-RT-Y][AC-HJKMNP-RT-Y\d]\d-?[AC-HJKMNP-RT-Y][AC-HJKMNP-RT-Y\d]\d-?"
                            r"[AC-HJKMNP-RT-Y]{2}\d\d", c.secret), c.secret


def test_disguised_values_hold_a_disguise(cases: list[corpus.Case]) -> None:
    marks = set(corpus.ZERO_WIDTH + corpus.BIDI + "\u00ad\u00a0")
    for c in by_kind(cases, "disguised"):
        assert marks & set(c.secret) or any("\uff01" <= ch <= "\uff5e" for ch in c.secret), c.secret


def test_near_misses_are_what_they_claim() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _ in negatives)
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    for sort, text in negatives:
        if sort == "bad_luhn":
            assert not luhn_ok(re.sub(r"\D", "", text.split("PAN")[1]))
        elif sort == "bad_iban":
            assert not iban_ok(re.search(r"<IBAN>(\w+)</IBAN>", text).group(1))
        elif sort == "bad_ssn":
            area, group, serial = re.search(r"(\d{3})-(\d{2})-(\d{4})", text).groups()
            assert area in ("000", "666") or area >= "900" or group == "00" or serial == "0000"
        elif sort == "imei":
            number = re.search(r"=(\d+)", text).group(1)
            assert luhn_ok(number) and len(number) == 15 and number[:2] not in ("34", "37")
