"""benchmarks/redact_fiftysecond.py, the fifty-second blind corpus (trust & safety, moderation and dating/social
apps), is well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and the checked
formats check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_fiftysecond as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in corpus.generate())
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert corpus.OUTSIDE_TARGET <= set(counts)
    assert len(set(counts) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8
    assert len(corpus.OUTSIDE_TARGET) >= 6


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


def test_the_agent_writes_in_at_least_25_languages() -> None:
    assert len({code for code, _hello, _bye in corpus.AGENT_LANGS}) >= 25


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


def _cpf_ok(cpf: str) -> bool:
    d = [int(c) for c in cpf if c.isdigit()]
    return all(sum(x * w for x, w in zip(d[:n - 1], range(n, 1, -1), strict=True)) * 10 % 11 % 10 == d[n - 1]
               for n in (10, 11))


def _dni_ok(dni: str) -> bool:
    number = dni[:-1].replace("X", "0").replace("Y", "1").replace("Z", "2")
    return "TRWAGMYFPDXBNJZSQVHLCKE"[int(number) % 23] == dni[-1]


def test_national_ids_carry_their_check_digits() -> None:
    for case in corpus.generate():
        if case.kind == "es_dni":
            assert _dni_ok(case.secret), case.secret
        if case.kind == "br_cpf":
            assert _cpf_ok(case.secret), case.secret
        if case.kind == "se_pnr":
            assert luhn_ok(case.secret.replace("-", "")), case.secret
        if case.kind == "passport" and case.form.endswith("/mrz"):
            line = case.carried.split(case.secret, 1)[1][:35]
            assert corpus.mrz_digit(case.secret) == line[0]


def test_near_misses_are_sixteen_sorts_of_twenty_or_more() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _text in negatives)
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    for _sort, text in negatives:
        if text.startswith("{"):
            json.loads(text)


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == list(corpus.generate())[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
