"""benchmarks/redact_tenth.py is well formed: every kind has its cases, every value is in its text and its carried
form, check digits hold, phone numbers carry a context word, and the near misses are what they claim. Recall is the
benchmark's business, not this test's."""

from __future__ import annotations

import json
import re
from collections import Counter

from benchmarks import redact_tenth as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}
CASES = list(corpus.generate())


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert len(counts) >= 46
    assert corpus.OUTSIDE_TARGET <= set(counts) and not corpus.OUTSIDE_TARGET & ISSUE_KINDS


def test_every_secret_is_in_its_text_and_carried_as_stored() -> None:
    for case in CASES:
        assert len(case.secret) >= 8 and case.secret in case.text, case
        assert "/" in case.form, case.form
        if case.is_json:
            json.loads(case.carried)
            escaped = {json.dumps(case.secret)[1:-1], json.dumps(case.secret, ensure_ascii=False)[1:-1]}
            assert any(form in case.carried for form in escaped), case
        else:
            assert case.carried == case.text


def test_about_a_third_of_the_cases_are_json_documents() -> None:
    share = sum(case.is_json for case in CASES) / len(CASES)
    assert 0.25 <= share <= 0.4


def test_cards_pass_luhn_in_a_network_range_and_ibans_pass_mod97() -> None:
    for case in CASES:
        if case.kind == "card":
            number = re.sub(r"\D", "", case.secret)
            assert luhn_ok(number) and 14 <= len(number) <= 19, case.secret
            assert number[0] in "23456", case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in (c for c in CASES if c.kind == "ssn"):
        digits = re.sub(r"\D", "", case.secret)
        area, group, serial = int(digits[:3]), int(digits[3:5]), int(digits[5:])
        assert len(digits) == 9 and 0 < area < 900 and area != 666 and group and serial, case.secret


def test_phone_numbers_have_a_context_word_on_their_line() -> None:
    words = {w.rstrip(":：. ") for ws in corpus.PHONE_WORDS.values() for w in ws}
    for case in (c for c in CASES if c.kind.startswith("phone_")):
        line = next(ln for ln in case.text.splitlines() if case.secret in ln)
        assert any(w in line for w in words), line


def test_national_ids_carry_their_check_digits() -> None:
    for case in CASES:
        d = [int(c) for c in re.sub(r"\D", "", case.secret)]
        if case.kind == "br_cpf":
            assert all(sum(x * (n + 1 - i) for i, x in enumerate(d[:n])) * 10 % 11 % 10 == d[n] for n in (9, 10))
        if case.kind == "nl_bsn":
            assert (sum(x * (9 - i) for i, x in enumerate(d[:8])) - d[8]) % 11 == 0
        if case.kind == "pl_pesel":
            assert sum(x * w for x, w in zip(d, (1, 3, 7, 9, 1, 3, 7, 9, 1, 3, 1), strict=True)) % 10 == 0
        if case.kind == "se_personnummer":
            assert luhn_ok("".join(map(str, d[-10:])))
        if case.kind == "is_kennitala":
            assert sum(x * w for x, w in zip(d, (3, 2, 7, 6, 5, 4, 3, 2, 1), strict=False)) % 11 == 0


def test_disguised_keys_hold_an_invisible_or_full_width_character() -> None:
    for case in (c for c in CASES if c.kind == "disguised"):
        assert any(ord(ch) > 0x7F for ch in case.secret), case.secret


def test_near_misses_are_twenty_of_at_least_sixteen_sorts_and_fail_their_checks() -> None:
    negatives = list(corpus.generate_negatives())
    per_sort = Counter(sort for sort, _ in negatives)
    assert len(per_sort) >= 16 and set(per_sort.values()) == {20}
    for sort, text in negatives:
        if sort == "card_luhn_fail":
            assert not luhn_ok(re.sub(r"\D", "", text)), text
        if sort == "iban_mod97_fail":
            assert not iban_ok(text.split(": ", 1)[1]), text
        if sort == "ssn_invalid":
            area, group, serial = text.rsplit(" ", 1)[1].split("-")
            assert area in ("000", "666") or area[0] == "9" or group == "00" or serial == "0000", text


def test_the_corpus_is_the_same_on_every_run() -> None:
    assert list(corpus.generate()) == CASES
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
