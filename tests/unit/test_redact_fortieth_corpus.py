"""benchmarks/redact_fortieth.py, the fortieth blind corpus (healthcare providers, labs and pharmacies), is
well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and the checked formats
check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_fortieth as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def _cases(kind: str) -> list[corpus.Case]:
    return [case for case in corpus.generate() if case.kind == kind]


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in corpus.generate())
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert len(set(counts) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8
    assert corpus.OUTSIDE_TARGET <= set(counts)


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


def test_the_agent_speaks_at_least_twenty_five_languages() -> None:
    styles = {case.form.split("/")[1].split("+")[-1] for case in corpus.generate()}
    assert len({style for style in styles if style.startswith("agent_")}) >= 25


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in corpus.generate():
        if case.kind == "card":
            assert luhn_ok(_digits(case.secret)), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in _cases("ssn"):
        compact = _digits(case.secret)
        area, group, serial = compact[:3], compact[3:5], compact[5:]
        assert len(compact) == 9 and area not in ("000", "666") and area[0] != "9" and group != "00"
        assert serial != "0000"


def test_github_tokens_carry_their_checksum() -> None:
    for case in _cases("github_token"):
        if case.secret.startswith("ghp_"):
            assert crc_ok(case.secret), case.secret


def test_national_ids_pass_their_check_algorithms() -> None:
    for case in _cases("uk_nhs"):
        num = _digits(case.secret)
        assert (11 - sum(int(d) * (10 - k) for k, d in enumerate(num[:9])) % 11) % 11 == int(num[9])
    for case in _cases("fr_nir"):
        num = _digits(case.secret)
        assert 97 - int(num[:13]) % 97 == int(num[13:])
    for case in _cases("nl_bsn"):
        num = _digits(case.secret)
        assert (sum(int(d) * (9 - k) for k, d in enumerate(num[:8])) - int(num[8])) % 11 == 0
    for case in _cases("ca_sin"):
        assert luhn_ok(_digits(case.secret))
    for case in _cases("au_medicare"):
        num = _digits(case.secret)
        assert sum(int(d) * w for d, w in zip(num, (1, 3, 7, 9, 1, 3, 7, 9), strict=False)) % 10 == int(num[8])
    for case in _cases("in_aadhaar"):
        num = _digits(case.secret)
        assert corpus.verhoeff_digit(num[:11]) == num[11] and num[0] not in "01"


def test_verhoeff_matches_the_published_example() -> None:
    assert corpus.verhoeff_digit("236") == "3"


def test_kvnr_matches_its_check_digit_rule() -> None:
    for case in _cases("de_kvnr"):
        letter, body = case.secret[0], case.secret[1:]
        weighted = [int(d) * (1 + k % 2) for k, d in enumerate(f"{ord(letter) - 64:02d}" + body[:8])]
        assert sum(p - 9 if p > 9 else p for p in weighted) % 10 == int(body[8])


def test_near_misses_are_sixteen_sorts_of_twenty_or_more() -> None:
    sorts = Counter(sort for sort, _text in corpus.generate_negatives())
    assert len(sorts) >= 16 and min(sorts.values()) >= 20


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == list(corpus.generate())[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
