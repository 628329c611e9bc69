"""benchmarks/redact_thirtysecond.py, the thirty-second blind corpus (people-process agents: recruiting, education,
legal and public services), is well-formed: every kind has its cases, each value is in its text, JSON carriers
parse, and the checked formats check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_thirtysecond as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}
CASES = list(corpus.generate())


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert len(set(counts) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8
    assert corpus.OUTSIDE_TARGET <= set(counts) and len(corpus.OUTSIDE_TARGET) >= 6


def test_each_secret_is_in_its_text_and_json_carriers_parse() -> None:
    for case in CASES:
        escaped = json.dumps(case.secret, ensure_ascii=False)[1:-1]
        assert case.secret in case.carried or escaped in case.carried, case.form
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
            assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def test_national_ids_and_tokens_carry_their_check_digits() -> None:
    for case in CASES:
        compact = "".join(ch for ch in case.secret if ch.isalnum())
        if case.kind in ("ca_sin", "se_personnummer"):
            assert luhn_ok(compact[-10:] if case.kind == "se_personnummer" else compact), case.secret
        if case.kind == "fr_nir":
            assert 97 - int(compact[:13]) % 97 == int(compact[13:]), case.secret
        if case.kind == "es_dni":
            number = int(str("XYZ".find(compact[0])) + compact[1:8] if compact[0] in "XYZ" else compact[:8])
            assert "TRWAGMYFPDXBNJZSQVHLCKE"[number % 23] == compact[-1], case.secret
        if case.kind == "github_token" and not case.secret.startswith("github_pat_"):
            assert crc_ok(case.secret), case.secret


def test_recovery_codes_and_disguises_are_what_they_say() -> None:
    for case in CASES:
        style = case.form.split("/")[1]
        if style == "bitlocker":
            assert all(int(g) % 11 == 0 and int(g) < 720896 for g in case.secret.split("-"))
        if style == "zero_width":
            assert any(ch in case.secret for ch in corpus.INVISIBLE)
        if style == "fullwidth":
            assert all("\uff01" <= ch <= "\uff5e" for ch in case.secret)


def test_near_misses_are_sixteen_sorts_of_twenty_or_more_and_json_parses() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _text in negatives)
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    for _sort, text in negatives:
        if text.startswith("{"):
            json.loads(text)


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == CASES[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
