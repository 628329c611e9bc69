"""benchmarks/redact_fortyfifth.py, the forty-fifth blind corpus (insurance claims and underwriting agents), is
well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and the checked formats
check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_fortyfifth as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}


def _cases(kind: str) -> list[corpus.Case]:
    return [case for case in corpus.generate() if case.kind == kind]


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


def test_agent_messages_come_in_twenty_five_languages_or_more() -> None:
    langs = {case.form.split("/agent_")[1] for case in corpus.generate() if "/agent_" in case.form}
    assert len(langs) >= 25


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in corpus.generate():
        if case.kind == "card":
            assert luhn_ok("".join(ch for ch in case.secret if ch.isdigit())), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in _cases("ssn"):
        compact = "".join(ch for ch in case.secret if ch.isdigit())
        area, group, serial = compact[:3], compact[3:5], compact[5:]
        assert len(compact) == 9
        assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def test_github_classic_tokens_carry_their_checksum() -> None:
    for case in _cases("github_token"):
        if not case.secret.startswith("github_pat_"):
            assert crc_ok(case.secret), case.secret


def test_national_ids_check() -> None:
    for case in _cases("fr_nir"):
        compact = case.secret.replace(" ", "")
        assert 97 - int(compact[:13]) % 97 == int(compact[13:])
    for case in _cases("se_pnr"):
        assert luhn_ok(case.secret.replace("-", ""))
    for case in _cases("br_cpf"):
        nums = [int(ch) for ch in case.secret if ch.isdigit()]
        for n in (9, 10):
            assert sum(d * w for d, w in zip(nums[:n], range(n + 1, 1, -1), strict=True)) * 10 % 11 % 10 == nums[n]
    for case in _cases("fi_hetu"):
        assert "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(case.secret[:6] + case.secret[7:10]) % 31] == case.secret[10]


def test_near_misses_are_sixteen_sorts_of_twenty_or_more() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _text in negatives)
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    for _sort, text in negatives:
        if text.startswith("{"):
            json.loads(text)


def test_luhn_invalid_near_misses_fail_luhn() -> None:
    for sort, text in corpus.generate_negatives():
        if sort == "luhn_invalid":
            run = "".join(ch for ch in text.rsplit(" ", 1)[-1] if ch.isdigit())
            number = run if len(run) == 16 else "".join(ch for ch in text if ch.isdigit())[-16:]
            assert not luhn_ok(number), text


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == list(corpus.generate())[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
