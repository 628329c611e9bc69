"""benchmarks/redact_thirtyninth.py, the thirty-ninth blind corpus (security operations, incident response and
penetration testing), is well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and
the checked formats check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_thirtyninth as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

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


def test_aws_secrets_and_github_tokens_keep_their_shapes() -> None:
    for case in _of("aws_secret"):
        assert len(case.secret) == 40 and ("AKIA" in case.text or "ASIA" in case.text or "secret" in case.text.lower())
    for case in _of("github_token"):
        assert case.secret.startswith("github_pat_") or crc_ok(case.secret), case.secret


def test_national_ids_carry_their_check_digits() -> None:
    for case in _of("se_personnummer"):
        assert luhn_ok(case.secret.replace("-", ""))
    for case in _of("pl_pesel"):
        total = sum(int(c) * w for c, w in zip(case.secret, [1, 3, 7, 9, 1, 3, 7, 9, 1, 3, 1], strict=True))
        assert total % 10 == 0, case.secret
    for case in _of("be_nrn"):
        compact = "".join(ch for ch in case.secret if ch.isdigit())
        assert 97 - int(compact[:9]) % 97 == int(compact[9:]) or 97 - int("2" + compact[:9]) % 97 == int(compact[9:])
    for case in _of("in_aadhaar"):
        compact = case.secret.replace(" ", "")
        assert corpus.verhoeff_digit(compact[:-1]) == compact[-1] and compact[0] not in "01"


def test_the_verhoeff_digit_matches_a_published_example() -> None:
    assert corpus.verhoeff_digit("236") == "3"


def test_near_misses_are_sixteen_sorts_of_twenty_or_more() -> None:
    sorts = Counter(sort for sort, _text in corpus.generate_negatives())
    assert len(sorts) >= 16 and min(sorts.values()) >= 20


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate()) == CASES
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
