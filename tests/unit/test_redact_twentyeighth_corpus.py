"""benchmarks/redact_twentyeighth.py, the twenty-eighth blind corpus (support desks, CRM and messaging), is
well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and the checked formats
check (spoken numbers through their words). Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
import random
from collections import Counter

from benchmarks import redact_twentyeighth as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in corpus.generate())
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert len(set(counts) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8
    assert corpus.OUTSIDE_TARGET <= set(counts) and len(corpus.OUTSIDE_TARGET) >= 6


def test_each_secret_is_in_its_text_and_json_carriers_parse() -> None:
    for case in corpus.generate():
        escaped = json.dumps(case.secret, ensure_ascii=False)[1:-1]
        assert case.secret in case.carried or escaped in case.carried, case.form
        assert len(case.secret) >= 8, case.form
        if case.is_json:
            json.loads(case.carried)


def test_issue_kinds_come_in_many_carriers_and_a_third_is_json() -> None:
    cases = list(corpus.generate())
    for kind in ISSUE_KINDS:
        carriers = {case.form.split("/")[0] for case in cases if case.kind == kind}
        assert len(carriers) >= 15, kind
    share = sum(case.is_json for case in cases) / len(cases)
    assert 0.25 <= share <= 0.4


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in corpus.generate():
        if case.kind == "card":
            assert luhn_ok(corpus.digits_of(case.secret)), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in corpus.generate():
        if case.kind == "ssn":
            compact = corpus.digits_of(case.secret)
            area, group, serial = compact[:3], compact[3:5], compact[5:]
            assert len(compact) == 9, case.secret
            assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def test_national_ids_carry_their_check_digits() -> None:
    assert corpus.verhoeff_digit("236") == "3"  # the textbook example: 2363 is valid
    for case in corpus.generate():
        number = "".join(ch for ch in case.secret if ch.isdigit())
        if case.kind in ("ca_sin", "se_personnummer"):
            assert luhn_ok(number), case.secret
        if case.kind == "nl_bsn":
            assert sum(int(c) * (9 - k) for k, c in enumerate(number[:8])) % 11 == int(number[8]), case.secret
        if case.kind == "es_dni":
            assert "TRWAGMYFPDXBNJZSQVHLCKE"[int(number) % 23] == case.secret[-1], case.secret
        if case.kind == "in_aadhaar":
            assert corpus.verhoeff_digit(number[:-1]) == number[-1], case.secret
        if case.kind == "fr_nir":
            assert 97 - int(number[:13]) % 97 == int(number[13:]), case.secret


def test_phones_have_their_plans_lengths() -> None:
    lengths = {"phone_us_ca": 10, "phone_uk": 10, "phone_fr": 9, "phone_in": 10}
    for case in corpus.generate():
        if case.kind in lengths:
            number = corpus.digits_of(case.secret)
            national = number[-lengths[case.kind]:] if case.secret.startswith(("+", "1-")) else number.lstrip("0")
            assert len(national) == lengths[case.kind], case.secret


def test_spoken_numbers_read_back() -> None:
    rng = random.Random(0)
    assert corpus.digits_of(corpus.spoken("4111 0729", rng)) == "41110729"
    assert corpus.digits_of(corpus.spoken("07911", rng, oh=True)) == "07911"


def test_near_misses_are_sixteen_sorts_of_twenty_or_more_and_json_ones_parse() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _text in negatives)
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    for _sort, text in negatives:
        if text.startswith(('{"', '[{')):
            json.loads(text)


def test_luhn_invalid_near_misses_fail_luhn() -> None:
    for sort, text in corpus.generate_negatives():
        if sort == "luhn_invalid":
            number = "".join(ch for ch in text if ch.isdigit())
            assert len(number) >= 16 and not luhn_ok(number[-16:]), text


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == list(corpus.generate())[:50]
    assert list(corpus.generate_negatives())[:50] == list(corpus.generate_negatives())[:50]
