"""benchmarks/redact_thirtyfifth.py, the thirty-fifth blind corpus (logistics, travel and hospitality), is
well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and the checked formats
check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_thirtyfifth as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}
CASES = list(corpus.generate())


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def _of(kind: str) -> list[corpus.Case]:
    return [case for case in CASES if case.kind == kind]


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert corpus.OUTSIDE_TARGET <= set(counts)
    assert len(set(counts) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8
    assert len(corpus.OUTSIDE_TARGET) >= 6


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


def test_agent_messages_come_in_twenty_five_languages_or_more() -> None:
    assert len(corpus.LANGS) >= 25
    langs = {case.carried.split("(", 1)[1].split(")", 1)[0] for case in CASES if case.form.startswith("agent_message")}
    assert len(langs) >= 25


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in _of("card"):
        assert luhn_ok(_digits(case.secret)), case.secret
    for case in _of("iban"):
        assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in _of("ssn"):
        compact = _digits(case.secret)
        area, group, serial = compact[:3], compact[3:5], compact[5:]
        assert len(compact) == 9 and area not in ("000", "666") and area[0] != "9"
        assert group != "00" and serial != "0000"


def test_prefixed_tokens_keep_their_documented_shapes() -> None:
    for case in _of("github_token"):
        assert case.secret.startswith("github_pat_") or crc_ok(case.secret), case.secret
    for case in _of("aws_secret"):
        assert len(case.secret) == 40
    for case in _of("stripe_whsec"):
        assert case.secret.startswith("whsec_")
    for case in _of("google_api_key"):
        assert case.secret.startswith("AIza") and len(case.secret) == 39
    for case in _of("square_token"):
        assert case.secret.startswith("EAAA") and len(case.secret) == 64


def test_national_ids_carry_their_check_digits() -> None:
    for case in _of("es_dni"):
        num = case.secret[:-1].replace("X", "0").replace("Y", "1").replace("Z", "2")
        assert "TRWAGMYFPDXBNJZSQVHLCKE"[int(num) % 23] == case.secret[-1]
    for case in _of("nl_bsn"):
        d = [int(c) for c in case.secret]
        assert (sum(x * w for x, w in zip(d[:8], range(9, 1, -1), strict=True)) - d[8]) % 11 == 0
    for case in _of("in_aadhaar"):
        compact = _digits(case.secret)
        assert corpus.verhoeff_digit(compact[:-1]) == compact[-1]
    for case in _of("fr_nir"):
        compact = _digits(case.secret)
        assert 97 - int(compact[:13]) % 97 == int(compact[13:])
    for case in _of("se_personnummer"):
        assert luhn_ok(_digits(case.secret)[-10:])
    for case in _of("passport_mrz"):
        line = case.secret
        assert len(line) == 44 and corpus.mrz_digit(line[:9]) == line[9]
        assert corpus.mrz_digit(line[:10] + line[13:20] + line[21:43]) == line[43]


def test_verhoeff_matches_a_known_value() -> None:
    assert corpus.verhoeff_digit("236") == "3"


def test_near_misses_are_sixteen_sorts_of_twenty_or_more() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _text in negatives)
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    for _sort, text in negatives:
        if text.startswith("{"):
            json.loads(text)


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == CASES[:50]
    assert list(corpus.generate_negatives())[:50] == list(corpus.generate_negatives())[:50]
