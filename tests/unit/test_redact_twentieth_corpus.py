"""benchmarks/redact_twentieth.py, the twentieth blind redaction corpus, is well-formed: every kind has its cases,
every secret stands in its text, carried JSON parses, cards and IBANs pass their checks, the near misses are
enough. Not a recall assertion: the corpus judges the rules, it is not tuned to them."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_twentieth as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = ("password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban")
CASES = list(corpus.generate())


def strings(node: object) -> list[str]:
    """Every string a parsed JSON document holds."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        node = list(node.values())
    return [s for item in node for s in strings(item)] if isinstance(node, list) else []


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_all_there() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert set(ISSUE_KINDS) <= set(counts)
    assert corpus.OUTSIDE_TARGET <= set(counts)
    assert not set(ISSUE_KINDS) & corpus.OUTSIDE_TARGET


def test_the_issue_kinds_are_written_in_at_least_fifteen_carriers() -> None:
    for kind in ISSUE_KINDS:
        assert len({case.form.split("/")[0] for case in CASES if case.kind == kind}) >= 15, kind


def test_every_secret_occurs_in_its_text_and_the_text_in_what_is_carried() -> None:
    for case in CASES:
        assert case.secret and case.secret in case.text, case.form
        if case.is_json:
            assert case.text in strings(json.loads(case.carried)), case.form
        else:
            assert case.carried == case.text


def test_a_third_of_the_cases_travel_as_json() -> None:
    share = sum(case.is_json for case in CASES) / len(CASES)
    assert 0.3 <= share <= 0.4


def test_cards_pass_luhn_and_ibans_pass_mod_97() -> None:
    cards = [case.secret for case in CASES if case.kind == "card"]
    assert all(luhn_ok("".join(ch for ch in card if ch.isdigit())) for card in cards)
    assert {len(set(card) - set("0123456789")) for card in cards} == {0, 1}  # compact and one separator each
    assert all(iban_ok(case.secret) for case in CASES if case.kind == "iban")


def test_the_near_misses_are_at_least_sixteen_sorts_of_twenty() -> None:
    sorts = Counter(sort for sort, _text in corpus.generate_negatives())
    assert len(sorts) >= 16
    assert min(sorts.values()) >= 20


def test_near_misses_fail_the_checks_they_are_near() -> None:
    for sort, text in corpus.generate_negatives():
        number = text.split(": ", 1)[-1]
        if sort == "luhn_invalid":
            assert not luhn_ok(number.replace(" ", ""))
        if sort == "iban_invalid":
            assert not iban_ok(number)
        if sort == "ssn_invalid":
            area, group, serial = number.split("-")
            assert area in ("000", "666") or area >= "900" or group == "00" or serial == "0000"


def test_the_corpus_is_the_same_on_every_run() -> None:
    assert list(corpus.generate()) == CASES
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
