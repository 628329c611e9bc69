"""benchmarks/redact_fiftythird.py, the fifty-third blind corpus (field service, construction and facilities in
Southeast Asia and Oceania), is well-formed: every kind has its cases, each value is in its text, JSON carriers
parse, and the checked formats check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_fiftythird as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}
CASES = list(corpus.generate())


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def _weighted(number: str, weights: tuple[int, ...]) -> int:
    return sum(int(d) * w for d, w in zip(number, weights, strict=False))


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert corpus.OUTSIDE_TARGET <= set(counts)
    assert len(set(counts) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8


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


def test_context_words_come_in_twenty_five_languages() -> None:
    used = set(corpus.PHONE_CTX) | {lang for _label, lang in corpus.PW_LABELS}
    assert set(corpus.LANGUAGES) <= used
    assert len(corpus.LANGUAGES) >= 25


def test_cards_pass_luhn_ibans_mod_97_and_github_tokens_their_crc() -> None:
    for case in CASES:
        if case.kind == "card":
            assert luhn_ok(_digits(case.secret)), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret
        if case.kind == "github_token" and case.secret.startswith("ghp_"):
            assert crc_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in CASES:
        if case.kind == "ssn":
            compact = _digits(case.secret)
            area, group, serial = compact[:3], compact[3:5], compact[5:]
            assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def test_national_ids_carry_their_check_digits() -> None:
    for case in CASES:
        n = _digits(case.secret)
        if case.kind == "th_id":
            assert (11 - _weighted(n, tuple(range(13, 1, -1))) % 11) % 10 == int(n[12]), case.secret
        elif case.kind == "sg_nric":
            total = _weighted(n, (2, 7, 6, 5, 4, 3, 2)) + (4 if case.secret[0] in "TG" else 0)
            table = "JZIHGFEDCBA" if case.secret[0] in "ST" else "XWUTRQPNMLK"
            assert table[total % 11] == case.secret[-1], case.secret
        elif case.kind == "id_npwp":
            assert luhn_ok(n[:9]), case.secret
        elif case.kind == "vn_mst":
            assert 10 - _weighted(n, (31, 29, 23, 19, 17, 13, 7, 5, 3)) % 11 == int(n[9]), case.secret
        elif case.kind == "au_tfn":
            assert _weighted(n, (1, 4, 3, 7, 5, 8, 6, 9, 10)) % 11 == 0, case.secret
        elif case.kind == "au_medicare":
            assert _weighted(n, (1, 3, 7, 9, 1, 3, 7, 9)) % 10 == int(n[8]), case.secret
        elif case.kind == "nz_ird":
            assert 10_000_000 < int(n) < 150_000_000, case.secret


def test_near_misses_are_sixteen_sorts_of_twenty_or_more() -> None:
    sorts = Counter(sort for sort, _text in corpus.generate_negatives())
    assert len(sorts) >= 16 and min(sorts.values()) >= 20


def test_luhn_invalid_near_misses_fail_luhn() -> None:
    for sort, text in corpus.generate_negatives():
        if sort == "luhn_invalid":
            number = text.split("ref ", 1)[1].split('"', 1)[0]
            assert not luhn_ok(_digits(number)), text


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == CASES[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
