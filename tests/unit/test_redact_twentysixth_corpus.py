"""benchmarks/redact_twentysixth.py, the twenty-sixth blind corpus (coding agents' changes and CI), is well-formed:
every kind has its cases, each value is in its text, JSON carriers parse, the checked formats check and the agent's
messages come in the users' languages. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_twentysixth as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}
CASES = list(corpus.generate())


def test_every_kind_has_per_kind_cases_and_eight_more_than_the_issue_kinds() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert len(set(counts) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8
    assert corpus.OUTSIDE_TARGET <= set(counts) and len(corpus.OUTSIDE_TARGET) >= 6


def test_each_secret_is_in_its_text_and_json_carriers_parse() -> None:
    for case in CASES:
        escaped = json.dumps(case.secret, ensure_ascii=False)[1:-1]
        assert case.secret and (case.secret in case.carried or escaped in case.carried), case.form
        if case.is_json:
            json.loads(case.carried)


def test_issue_kinds_come_in_many_carriers_and_a_third_is_json() -> None:
    for kind in ISSUE_KINDS:
        carriers = {case.form.split("/")[0] for case in CASES if case.kind == kind}
        assert len(carriers) >= 15, kind
    share = sum(case.is_json for case in CASES) / len(CASES)
    assert 0.25 <= share <= 0.4


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in CASES:
        if case.kind == "card":
            assert luhn_ok("".join(ch for ch in case.secret if ch.isdigit())), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in CASES:
        if case.kind == "ssn":
            compact = "".join(ch for ch in case.secret if ch.isdigit())
            area, group, serial = compact[:3], compact[3:5], compact[5:]
            assert len(compact) == 9
            assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def test_crc_tokens_carry_their_checksum() -> None:
    for case in CASES:
        if case.kind in ("github_token", "npm_token") and not case.secret.startswith("github_pat_"):
            assert crc_ok(case.secret), case.secret


def test_agent_messages_speak_at_least_25_languages() -> None:
    langs = {case.form.split("/")[1].split("-")[1] for case in CASES if case.form.split("/")[1].startswith("said-")}
    assert len(langs) >= 25


def test_near_misses_are_sixteen_sorts_of_twenty_or_more() -> None:
    sorts = Counter(sort for sort, _text in corpus.generate_negatives())
    assert len(sorts) >= 16 and min(sorts.values()) >= 20


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == CASES[:50]
    assert list(corpus.generate_negatives())[:50] == list(corpus.generate_negatives())[:50]
