"""benchmarks/redact_ninth.py is well formed: every kind has its cases, each secret is written in its text and
carried, JSON carriers parse, cards pass Luhn and IBANs MOD 97, and the near misses cover their sorts. Not a recall
assertion: recall is measured by benchmarks/redact.py."""

from __future__ import annotations

import json
import re
from collections import Counter

from benchmarks import redact_ninth
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}

CASES = list(redact_ninth.generate())


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_all_there() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(counts.values()) == {redact_ninth.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert len(counts) >= len(ISSUE_KINDS) + 30
    assert redact_ninth.OUTSIDE_TARGET <= set(counts)
    assert not redact_ninth.OUTSIDE_TARGET & ISSUE_KINDS


def test_each_secret_is_in_its_text_and_carried_as_written_or_json_escaped() -> None:
    for case in CASES:
        assert len(case.secret) >= 8, case
        assert case.secret in case.text, case
        if case.is_json:
            json.loads(case.carried)
            assert case.secret in case.carried or json.dumps(case.secret)[1:-1] in case.carried, case
        else:
            assert case.carried == case.text, case
        assert "/" in case.form, case


def test_about_a_third_is_carried_as_json() -> None:
    share = sum(case.is_json for case in CASES) / len(CASES)
    assert 0.28 < share < 0.4


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in CASES:
        if case.kind == "card":
            assert luhn_ok(re.sub(r"\D", "", case.secret)), case.secret
        elif case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_generation_is_deterministic() -> None:
    assert list(redact_ninth.generate())[::97] == CASES[::97]


def test_near_misses_cover_sixteen_sorts_of_twenty_and_break_their_checks() -> None:
    negatives = list(redact_ninth.generate_negatives())
    per_sort = Counter(sort for sort, _ in negatives)
    assert len(per_sort) >= 16 and set(per_sort.values()) == {20}
    for sort, text in negatives:
        if sort == "card_luhn_fail":
            assert not luhn_ok(re.sub(r"\D", "", text.rsplit(":", 1)[1]))
        elif sort == "iban_mod97_fail":
            assert not iban_ok(text.rsplit(":", 1)[1])
