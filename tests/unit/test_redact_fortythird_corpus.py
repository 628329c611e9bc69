"""benchmarks/redact_fortythird.py, the forty-third blind corpus (automotive, fleet, EV charging and mobility), is
well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and the checked formats
check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_fortythird as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in corpus.generate())
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert corpus.OUTSIDE_TARGET <= set(counts)
    assert len(set(counts) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8


def test_each_secret_is_in_its_text_and_json_carriers_parse() -> None:
    for case in corpus.generate():
        escaped = json.dumps(case.secret, ensure_ascii=False)[1:-1]
        assert case.secret in case.carried or escaped in case.carried, case.form
        if case.is_json:
            json.loads(case.carried)


def test_issue_kinds_come_in_many_carriers_and_a_third_is_json() -> None:
    cases = list(corpus.generate())
    for kind in ISSUE_KINDS:
        carriers = {case.form.split("/")[0] for case in cases if case.kind == kind}
        assert len(carriers) >= 15, kind
    share = sum(case.is_json for case in cases) / len(cases)
    assert 0.25 <= share <= 0.4


def test_cards_and_fuel_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in corpus.generate():
        if case.kind in ("card", "fuel_card"):
            assert luhn_ok(_digits(case.secret)), case.secret
        if case.kind == "fuel_card":
            assert _digits(case.secret)[0] == "7", case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in corpus.generate():
        if case.kind == "ssn":
            compact = _digits(case.secret)
            area, group, serial = compact[:3], compact[3:5], compact[5:]
            assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def test_github_tokens_carry_their_checksum_and_vins_their_check_digit() -> None:
    for case in corpus.generate():
        if case.kind == "github_token":
            assert crc_ok(case.secret), case.secret
        if case.kind == "vin":
            total = sum(corpus.VIN_VALUE[c] * w for c, w in zip(case.secret, corpus.VIN_WEIGHTS, strict=True))
            assert case.secret[8] == ("X" if total % 11 == 10 else str(total % 11)), case.secret


def test_national_ids_pass_their_checks() -> None:
    for case in corpus.generate():
        if case.kind == "fr_nir":
            n = _digits(case.secret)
            assert 97 - int(n[:13]) % 97 == int(n[13:]), case.secret
        if case.kind == "se_personnummer":
            assert luhn_ok(_digits(case.secret)), case.secret
        if case.kind == "cn_ric":
            weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
            total = sum(int(c) * w for c, w in zip(case.secret[:17], weights, strict=True))
            assert "10X98765432"[total % 11] == case.secret[17], case.secret


def test_near_misses_are_sixteen_sorts_of_twenty_or_more() -> None:
    sorts = Counter(sort for sort, _text in corpus.generate_negatives())
    assert len(sorts) >= 16 and min(sorts.values()) >= 20


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == list(corpus.generate())[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
