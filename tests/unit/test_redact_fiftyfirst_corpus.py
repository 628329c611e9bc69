"""benchmarks/redact_fiftyfirst.py, the fifty-first blind corpus (nonprofits, unions, clubs, churches and event
ticketing in Central and Eastern Europe and Central Asia), is well-formed: every kind has its cases, each value is
in its text, JSON carriers parse, and the checked formats check. Its recall is the benchmark's business, not this
test's."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_fiftyfirst as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}


def _cases() -> list[corpus.Case]:
    return list(corpus.generate())


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in corpus.generate())
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert len(set(counts) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8
    assert corpus.OUTSIDE_TARGET <= set(counts) and len(corpus.OUTSIDE_TARGET) >= 6


def test_each_secret_is_in_its_text_and_json_carriers_parse() -> None:
    for case in corpus.generate():
        escaped = json.dumps(case.secret, ensure_ascii=False)[1:-1]
        assert case.secret in case.carried or escaped in case.carried, case.form
        if case.is_json:
            json.loads(case.carried)


def test_issue_kinds_come_in_many_carriers_and_a_third_is_json() -> None:
    cases = _cases()
    for kind in ISSUE_KINDS:
        carriers = {case.form.split("/")[0] for case in cases if case.kind == kind}
        assert len(carriers) >= 15, kind
    share = sum(case.is_json for case in cases) / len(cases)
    assert 0.25 <= share <= 0.4


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in corpus.generate():
        if case.kind == "card":
            assert luhn_ok("".join(ch for ch in case.secret if ch.isdigit())), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in corpus.generate():
        if case.kind == "ssn":
            compact = "".join(ch for ch in case.secret if ch.isdigit())
            area, group, serial = compact[:3], compact[3:5], compact[5:]
            assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def _weighted(number: str, weights: list[int]) -> int:
    return sum(int(d) * w for d, w in zip(number, weights, strict=False))


def test_national_ids_pass_their_checks() -> None:
    """Checked here independently of the corpus's own makers, from each id's published rule."""
    checks = {
        "pl_pesel": lambda v: _weighted(v, [1, 3, 7, 9, 1, 3, 7, 9, 1, 3, 1]) % 10 == 0,
        "cz_rodne_cislo": lambda v: int(v.replace("/", "")) % 11 == 0,
        "bg_egn": lambda v: _weighted(v, [2, 4, 8, 5, 10, 9, 7, 3, 6]) % 11 % 10 == int(v[9]),
        "ro_cnp": lambda v: (lambda r: 1 if r == 10 else r)(_weighted(v, [2, 7, 9, 1, 4, 6, 3, 5, 8, 2, 7, 9]) % 11)
        == int(v[12]),
        "ua_rnokpp": lambda v: _weighted(v, [-1, 5, 7, 9, 4, 6, 10, 5, 7]) % 11 % 10 == int(v[9]),
    }
    for case in corpus.generate():
        if case.kind in checks:
            assert checks[case.kind](case.secret), (case.kind, case.secret)
        if case.kind == "rs_jmbg":
            k = 11 - _weighted(case.secret, [7, 6, 5, 4, 3, 2, 7, 6, 5, 4, 3, 2]) % 11
            assert (0 if k > 9 else k) == int(case.secret[12]), case.secret


def test_provider_tokens_carry_their_documented_shapes() -> None:
    for case in corpus.generate():
        if case.kind == "github_token" and case.secret.startswith("ghp_"):
            assert crc_ok(case.secret), case.secret
        if case.kind == "stripe_whsec":
            assert case.secret.startswith("whsec_")
        if case.kind == "aws_secret":
            assert len(case.secret) == 40


def test_near_misses_are_sixteen_sorts_of_twenty_or_more() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _text in negatives)
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    for _sort, text in negatives:
        if text.startswith("{\""):
            json.loads(text)


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == list(corpus.generate())[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
