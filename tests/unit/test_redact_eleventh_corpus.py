"""benchmarks/redact_eleventh.py is well formed: every kind has its cases, each value is in its text and its
carried form, JSON carriers parse, cards, IBANs and national ids pass their checks, near misses are many. Not a
recall test: the corpus judges the rules, it is not tuned to them."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_eleventh as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok
from benchmarks.redact import EIGHTH_ISSUE_KINDS

CASES = list(corpus.generate())


def digits_of(value: str) -> str:
    return "".join(c for c in value if c.isdigit())


def strings_in(doc: object) -> list[str]:
    """Every string value of a parsed JSON document."""
    if isinstance(doc, str):
        return [doc]
    items = doc.values() if isinstance(doc, dict) else doc if isinstance(doc, list) else ()
    return [s for item in items for s in strings_in(item)]


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert set(EIGHTH_ISSUE_KINDS) <= set(counts)
    assert len(counts) >= 45 and corpus.OUTSIDE_TARGET <= set(counts)


def test_each_secret_is_in_its_text_and_its_carried_form() -> None:
    for case in CASES:
        assert case.secret and case.secret in case.text, case
        escaped = json.dumps(case.secret)[1:-1]
        assert case.secret in case.carried or escaped in case.carried, case
        assert "/" in case.form, case


def test_json_carriers_parse_and_hold_their_text() -> None:
    json_cases = [case for case in CASES if case.is_json]
    assert 0.25 <= len(json_cases) / len(CASES) <= 0.45
    for case in json_cases:
        assert case.text in strings_in(json.loads(case.carried)), case


def test_cards_ibans_and_national_ids_pass_their_checks() -> None:
    for case in CASES:
        if case.kind in ("card", "za_id"):
            assert luhn_ok(digits_of(case.secret)), case.secret
        elif case.kind == "iban":
            assert iban_ok(case.secret), case.secret
        elif case.kind == "aadhaar":
            assert corpus.verhoeff_ok(digits_of(case.secret)), case.secret


def test_check_digit_helpers_agree_with_published_examples() -> None:
    """Verhoeff's worked example (236 -> 3) and GB 11643's sample number 11010519491231002X."""
    assert corpus.verhoeff_digit("236") == "3" and corpus.verhoeff_ok("2363") and not corpus.verhoeff_ok("2364")
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    sample = "11010519491231002X"
    assert "10X98765432"[sum(int(c) * w for c, w in zip(sample, weights, strict=False)) % 11] == sample[-1]


def test_the_corpus_is_the_same_on_every_run() -> None:
    assert list(corpus.generate()) == CASES
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())


def test_near_misses_are_at_least_16_sorts_of_20_and_fail_their_checks() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _ in negatives)
    assert len(sorts) >= 16 and set(sorts.values()) == {20}
    for sort, text in negatives:
        value = text.split(": ", 1)[-1]
        if sort == "luhn_fail_card":
            assert not luhn_ok(digits_of(value)), text
        elif sort == "mod97_fail_iban":
            assert not iban_ok(value), text
        elif sort == "invalid_ssn":
            area, group, serial = value.split("-")
            assert area in ("000", "666") or area[0] == "9" or group == "00" or serial == "0000", text
