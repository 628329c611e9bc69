"""The fifteenth redaction corpus is well-formed: every kind has its cases, every secret is in its text, JSON
carriers parse, cards and IBANs pass their checks, near misses are many sorts and fail the checks they mimic.
Not a recall test: recall is what benchmarks/redact.py measures."""

from __future__ import annotations

import json
import re
from collections import Counter

from benchmarks import redact_fifteenth as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = ("password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban")
CASES = list(corpus.generate())


def plain(secret: str) -> str:
    """A value's letters and digits, the words ASR writes between groups taken out."""
    return "".join(ch for ch in re.sub(r"\b(dash|dot|plus)\b", "", secret) if ch.isalnum())


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_all_there() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(ISSUE_KINDS) <= set(counts)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert corpus.OUTSIDE_TARGET <= set(counts)
    assert len(counts) - len(ISSUE_KINDS) - len(corpus.OUTSIDE_TARGET) >= 15


def test_the_issue_kinds_come_in_at_least_15_carriers() -> None:
    for kind in ISSUE_KINDS:
        carriers = {case.form.split("/")[0] for case in CASES if case.kind == kind}
        assert len(carriers) >= 15, kind


def test_every_secret_occurs_in_its_text() -> None:
    for case in CASES:
        assert case.secret, case.form
        assert case.secret in case.text or json.dumps(case.secret, ensure_ascii=False)[1:-1] in case.text, case.form
        assert case.carried == case.text


def test_json_carried_cases_parse_and_are_about_a_third() -> None:
    carried = [case for case in CASES if case.is_json]
    for case in carried:
        json.loads(case.text)
    assert 0.28 <= len(carried) / len(CASES) <= 0.4


def test_cards_pass_luhn_and_ibans_pass_mod_97() -> None:
    for case in CASES:
        if case.kind == "card":
            assert luhn_ok(plain(case.secret)), case.secret
        if case.kind == "iban":
            assert iban_ok(plain(case.secret)), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in (c for c in CASES if c.kind == "ssn"):
        number = plain(case.secret)
        assert len(number) == 9 and number[:3] not in ("000", "666") and number[0] != "9", case.secret
        assert number[3:5] != "00" and number[5:] != "0000", case.secret


def test_near_misses_are_at_least_16_sorts_of_20_and_fail_the_checks_they_mimic() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _ in negatives)
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    for sort, text in negatives:
        if sort == "order_number":
            assert not any(luhn_ok(n) for n in re.findall(r"\d{16}", text)), text
        if sort == "iban_bad_check":
            assert not iban_ok(text.split("|")[2].strip()), text


def test_the_corpus_is_the_same_on_every_call() -> None:
    assert list(corpus.generate()) == CASES
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
