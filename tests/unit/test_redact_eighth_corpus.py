"""The eighth redaction corpus is well formed: counts, secrets in their texts, JSON that parses, check digits and
near misses. Recall is the benchmark's to report, not asserted here."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_eighth
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in redact_eighth.generate())
    assert ISSUE_KINDS <= set(counts)
    assert set(counts.values()) == {redact_eighth.PER_KIND}
    assert redact_eighth.OUTSIDE_TARGET <= set(counts)
    assert not ISSUE_KINDS & redact_eighth.OUTSIDE_TARGET


def test_each_secret_is_in_its_text_and_its_text_in_what_is_carried() -> None:
    for case in redact_eighth.generate():
        assert case.secret in case.text, case.form
        forms = {case.secret, json.dumps(case.secret, ensure_ascii=False)[1:-1]}
        assert any(form in case.carried for form in forms), case.form
        if case.is_json:
            json.loads(case.carried)
        else:
            assert case.carried == case.text
        assert "/" in case.form


def test_about_a_third_is_carried_as_json() -> None:
    cases = list(redact_eighth.generate())
    assert 0.3 <= sum(case.is_json for case in cases) / len(cases) <= 0.4


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in redact_eighth.generate():
        if case.kind == "card":
            assert luhn_ok("".join(c for c in case.secret if c.isdigit())), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_generation_is_deterministic() -> None:
    assert list(redact_eighth.generate()) == list(redact_eighth.generate())
    assert list(redact_eighth.generate_negatives()) == list(redact_eighth.generate_negatives())


def test_near_misses_are_16_or_more_sorts_of_20_and_fail_their_checks() -> None:
    negatives = list(redact_eighth.generate_negatives())
    sorts = Counter(sort for sort, _ in negatives)
    assert len(sorts) >= 16 and set(sorts.values()) == {20}
    for sort, text in negatives:
        if sort == "card_luhn_fail":
            number = "".join(c for c in text if c.isdigit())
            assert not luhn_ok(number), text
        if sort == "iban_mod97_fail":
            assert not iban_ok(text.split(": ", 1)[1].split(" (")[0]), text
        if sort == "ssn_invalid":
            area, group, serial = text.removeprefix("SSN: ").split("-")
            assert area in ("000", "666") or area[0] == "9" or group == "00" or serial == "0000", text
