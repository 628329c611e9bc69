"""benchmarks/redact_twentyfifth.py, the twenty-fifth blind corpus (LLM gateways, proxies and their HTTP traffic),
is well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and the checked formats
check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_twentyfifth as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}
CASES = list(corpus.generate())


def _of(kind: str) -> list[corpus.Case]:
    return [case for case in CASES if case.kind == kind]


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
        carriers = {case.form.split("/")[0] for case in _of(kind)}
        assert len(carriers) >= 15, kind
    share = sum(case.is_json for case in CASES) / len(CASES)
    assert 0.25 <= share <= 0.4


def test_the_agent_speaks_at_least_twenty_five_languages() -> None:
    assert len(corpus.LANGS) >= 25
    assert all("{status}" in labels[5] and "{detail}" in labels[5] for labels in corpus.LANGS.values())


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in _of("card"):
        assert luhn_ok("".join(ch for ch in case.secret if ch.isdigit())), case.secret
    for case in _of("iban"):
        assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in _of("ssn"):
        compact = "".join(ch for ch in case.secret if ch.isdigit())
        area, group, serial = compact[:3], compact[3:5], compact[5:]
        assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def test_national_ids_carry_their_check_digits() -> None:
    for case in _of("se_pnr"):
        assert luhn_ok(case.secret.replace("-", "")), case.secret
    for case in _of("fr_nir"):
        compact = case.secret.replace(" ", "")
        assert 97 - int(compact[:13]) % 97 == int(compact[13:]), case.secret
    for case in _of("br_cpf"):
        nums = [int(ch) for ch in case.secret if ch.isdigit()]
        for n in (9, 10):
            assert sum(w * c for w, c in zip(range(n + 1, 1, -1), nums[:n], strict=True)) * 10 % 11 % 10 == nums[n]


def test_disguised_secrets_are_disguised() -> None:
    for case in _of("disguised"):
        s = case.secret
        assert (any(ch in s for ch in corpus.ZERO_WIDTH) or any("\uff01" <= ch <= "\uff5e" for ch in s)
                or "%" in s or "\\u" in s), case.form


def test_near_misses_are_sixteen_sorts_of_twenty_or_more() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _text in negatives)
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    for _sort, text in negatives:
        if text.startswith("{"):
            json.loads(text)


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == CASES[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
