"""benchmarks/redact_eighteenth.py, the voice and messaging corpus, is well formed: every kind has its cases,
every secret is in its record, JSON carriers parse, cards pass Luhn, IBANs MOD 97, national ids their check
digits, and its near misses are many sorts. Nothing here asserts recall."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_eighteenth as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

CASES = list(corpus.generate())


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(counts) == set(corpus.VALUES)
    assert set(corpus.ISSUE_KINDS) <= set(counts)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert corpus.OUTSIDE_TARGET <= set(counts) - set(corpus.ISSUE_KINDS)


def test_every_secret_is_in_its_record_as_written_or_json_escaped() -> None:
    for case in CASES:
        assert case.secret and case.carried == case.text
        escaped = json.dumps(case.secret, ensure_ascii=False)[1:-1]
        assert case.secret in case.text or (case.is_json and escaped in case.text), (case.kind, case.form)


def test_json_carriers_parse_and_are_about_a_third() -> None:
    carried = [case for case in CASES if case.is_json]
    for case in carried:
        json.loads(case.carried)
    assert 0.25 < len(carried) / len(CASES) < 0.45


def test_the_issue_kinds_come_in_at_least_fifteen_carriers() -> None:
    carriers: dict[str, set[str]] = {}
    for case in CASES:
        carriers.setdefault(case.kind, set()).add(case.form.split("/")[0])
    assert all(len(carriers[kind]) >= 15 for kind in corpus.ISSUE_KINDS), carriers


def test_cards_pass_luhn_and_are_not_published_test_numbers() -> None:
    for case in CASES:
        if case.kind == "card":
            number = "".join(ch for ch in case.secret if ch.isdigit())
            assert 13 <= len(number) <= 19 and luhn_ok(number), case.secret
            assert number not in corpus.TEST_CARDS


def test_ibans_pass_mod_97_and_ssns_follow_the_ssa_rules() -> None:
    for case in CASES:
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret
        if case.kind == "ssn":
            digits = "".join(ch for ch in case.secret if ch.isdigit())
            area, group, serial = digits[:3], digits[3:5], digits[5:]
            assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def test_national_ids_carry_their_check_digits() -> None:
    """Aadhaar's Verhoeff digit against UIDAI's published example, then each id's rule on every case."""
    assert corpus.verhoeff_digit("23412341234") == "6"
    for case in CASES:
        n = "".join(ch for ch in case.secret if ch.isdigit())
        if case.kind == "aadhaar":
            assert corpus.verhoeff_digit(n[:-1]) == n[-1]
        if case.kind == "pesel_pl":
            assert sum(int(d) * w for d, w in zip(n, (1, 3, 7, 9, 1, 3, 7, 9, 1, 3, 1), strict=True)) % 10 == 0
        if case.kind == "tckn_tr":
            assert int(n[9]) == (sum(map(int, n[0:9:2])) * 7 - sum(map(int, n[1:8:2]))) % 10
            assert int(n[10]) == sum(map(int, n[:10])) % 10


def test_near_misses_are_at_least_sixteen_sorts_of_twenty() -> None:
    sorts = Counter(sort for sort, _text in corpus.generate_negatives())
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    for sort, text in corpus.generate_negatives():
        if sort == "test_card":
            assert any(number in text.replace(" ", "") for number in corpus.TEST_CARDS)
        if sort == "luhn_invalid":
            number = "".join(ch for ch in text.split("card number ")[1].split(" declined")[0] if ch.isdigit())
            assert not luhn_ok(number)


def test_the_corpus_is_deterministic() -> None:
    again = list(corpus.generate())
    assert [(c.kind, c.form, c.secret) for c in again] == [(c.kind, c.form, c.secret) for c in CASES]
