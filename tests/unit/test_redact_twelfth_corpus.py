"""benchmarks/redact_twelfth.py is well formed: every kind has its cases, each secret is in its text and its text in
what is stored, the JSON parses, the check digits hold, the near misses are many and sorted. Not a recall test."""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter, defaultdict

import pytest

from benchmarks import redact_twelfth as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = ("password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban")


@pytest.fixture(scope="module")
def cases() -> list[corpus.Case]:
    return list(corpus.generate())


def strings(doc: object) -> list[str]:
    """Every string value of a JSON document."""
    if isinstance(doc, str):
        return [doc]
    items = doc.values() if isinstance(doc, dict) else doc if isinstance(doc, list) else ()
    return [s for item in items for s in strings(item)]


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_many_carriers(cases: list[corpus.Case]) -> None:
    counts = Counter(case.kind for case in cases)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert set(ISSUE_KINDS) <= set(counts)
    assert corpus.OUTSIDE_TARGET <= set(counts)
    carriers = defaultdict(set)
    for case in cases:
        carriers[case.kind].add(case.form.split("/")[0])
    assert all(len(carriers[kind]) >= 12 for kind in ISSUE_KINDS), {k: len(carriers[k]) for k in ISSUE_KINDS}
    assert len([kind for kind in corpus.PLANS if kind not in ISSUE_KINDS]) >= 8


def test_each_secret_is_in_its_text_and_the_text_is_what_is_stored(cases: list[corpus.Case]) -> None:
    for case in cases:
        assert case.secret and case.secret in case.text, case
        assert "/" in case.form, case.form
        if case.is_json:
            assert case.text in strings(json.loads(case.carried)), case
        else:
            assert case.carried == case.text
    share = sum(case.is_json for case in cases) / len(cases)
    assert 0.25 <= share <= 0.5


def test_check_digits_and_number_rules_hold(cases: list[corpus.Case]) -> None:
    for case in cases:
        if case.kind == "card":
            assert luhn_ok(re.sub(r"[ ._-]", "", case.secret)), case.secret
        elif case.kind == "iban":
            assert iban_ok(case.secret), case.secret
        elif case.kind == "ssn":
            area, group, serial = re.fullmatch(r"(\d{3})[- ]?(\d{2})[- ]?(\d{4})", case.secret).groups()
            assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"
        elif case.kind == "se_personnummer":
            assert luhn_ok(case.secret.replace("-", "")[-10:])
        elif case.kind.startswith("phone_"):
            assert sum(c.isdigit() for c in case.secret) >= 8, case.secret


def test_generation_is_deterministic() -> None:
    first = list(itertools.islice(corpus.generate(), 300))
    assert first == list(itertools.islice(corpus.generate(), 300))
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())


def test_near_misses_are_many_sorts_and_fail_their_checks() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _ in negatives)
    assert len(sorts) >= 16 and set(sorts.values()) == {20}
    for sort, text in negatives:
        if sort == "luhn_failing_cards":
            assert not luhn_ok(re.sub(r"\D", "", text))
        elif sort == "mod97_failing_ibans":
            assert not iban_ok(text.removeprefix("IBAN: "))
