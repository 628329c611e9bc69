"""The nineteenth redaction corpus is well formed: deterministic, PER_KIND cases of every kind, each secret in its
text, JSON carriers that parse, values valid for their formats, and enough near misses. Not a recall test."""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import cache

from benchmarks import redact_nineteenth as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = ("password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban")


@cache
def generated() -> tuple[corpus.Case, ...]:
    return tuple(corpus.generate())


def test_the_corpus_is_deterministic_and_every_kind_has_per_kind_cases() -> None:
    cases = generated()
    assert list(cases) == list(corpus.generate())
    per_kind = Counter(case.kind for case in cases)
    assert set(ISSUE_KINDS) <= set(per_kind)
    assert set(per_kind.values()) == {corpus.PER_KIND}
    assert corpus.OUTSIDE_TARGET <= set(per_kind) and not corpus.OUTSIDE_TARGET & set(ISSUE_KINDS)


def test_the_issue_kinds_are_written_in_at_least_15_carriers() -> None:
    carriers: dict[str, set[str]] = {}
    for case in generated():
        carriers.setdefault(case.kind, set()).add(case.form.split("/")[0])
    assert all(len(carriers[kind]) >= 15 for kind in ISSUE_KINDS), {k: len(carriers[k]) for k in ISSUE_KINDS}


def test_every_secret_occurs_in_its_text_and_json_carriers_parse() -> None:
    for case in generated():
        assert case.secret and case.carried == case.text
        assert case.secret in case.text or json.dumps(case.secret)[1:-1] in case.text or \
            corpus.jesc(case.secret) in case.text, case
        if case.is_json:
            json.loads(case.carried)
    share = sum(case.is_json for case in generated()) / len(generated())
    assert 0.25 < share < 0.45


def test_cards_pass_luhn_and_ibans_pass_mod_97() -> None:
    for case in generated():
        if case.kind == "card":
            number = re.sub(r"[ ._-]", "", case.secret)
            assert number.isdigit() and luhn_ok(number), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_phones_carry_a_context_word_of_their_language() -> None:
    for case in generated():
        if case.kind.startswith("phone_"):
            labels, sentences, _names = corpus.PHONE_LOCALE[case.kind]
            words = labels + tuple(max(s.split("{v}"), key=len).strip() for s in sentences)
            assert any(word in case.text for word in words), case.text


def test_there_are_at_least_16_sorts_of_20_near_misses() -> None:
    negatives = list(corpus.generate_negatives())
    assert negatives == list(corpus.generate_negatives())
    per_sort = Counter(sort for sort, _text in negatives)
    assert len(per_sort) >= 16 and min(per_sort.values()) >= 20
    secrets = {case.secret for case in generated()}
    assert not any(text in secrets for _sort, text in negatives)
