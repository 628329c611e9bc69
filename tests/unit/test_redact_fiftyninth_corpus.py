"""benchmarks/redact_fiftyninth.py, the fifty-ninth blind corpus (ports, shipping, fisheries and disaster relief in
the Pacific Islands and South Asia), is well-formed: every kind has its cases, each value is in its text, JSON
carriers parse, and the checked formats check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_fiftyninth as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}
REGION_PHONES = {"phone_fj", "phone_pg", "phone_ws", "phone_to", "phone_vu", "phone_sb", "phone_tl", "phone_lk",
                 "phone_np", "phone_bt", "phone_mv", "phone_mu"}
CASES = list(corpus.generate())


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS | REGION_PHONES <= set(counts)
    assert corpus.OUTSIDE_TARGET <= set(counts)


def test_each_secret_is_in_its_text_and_json_carriers_parse() -> None:
    for case in CASES:
        escaped = json.dumps(case.secret, ensure_ascii=False)[1:-1]
        assert case.secret in case.carried or escaped in case.carried, case.form
        if case.is_json:
            json.loads(case.carried)


def test_issue_kinds_come_in_many_carriers_and_a_third_is_json() -> None:
    for kind in ISSUE_KINDS:
        carriers = {case.form.split("/")[0] for case in CASES if case.kind == kind}
        assert len(carriers) >= 12, kind
    share = sum(case.is_json for case in CASES) / len(CASES)
    assert 0.25 <= share <= 0.4


def test_region_phones_are_written_nationally_and_with_their_country_code() -> None:
    codes = {"phone_fj": "679", "phone_pg": "675", "phone_ws": "685", "phone_to": "676", "phone_vu": "678",
             "phone_sb": "677", "phone_tl": "670", "phone_lk": "94", "phone_np": "977", "phone_bt": "975",
             "phone_mv": "960", "phone_mu": "230"}
    for kind, code in codes.items():
        numbers = [case.secret for case in CASES if case.kind == kind]
        assert any(n.startswith(f"+{code}") for n in numbers), kind
        assert any(not n.startswith("+") for n in numbers), kind


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


def test_sri_lanka_nics_carry_the_check_digit_the_corpus_computes() -> None:
    for case in CASES:
        if case.kind == "nic_lk":
            nic = case.secret
            assert len(nic) in (10, 12), nic
            eight = nic[:8] if len(nic) == 10 else nic[2:7] + nic[8:11]
            assert corpus._lk_check(eight) == nic[8 if len(nic) == 10 else 11], nic


def test_near_misses_are_twenty_five_sorts_of_thirty() -> None:
    sorts = Counter(sort for sort, _text in corpus.generate_negatives())
    assert len(sorts) >= 25 and set(sorts.values()) == {30}


def test_luhn_invalid_near_misses_fail_luhn() -> None:
    for sort, text in corpus.generate_negatives():
        if sort == "luhn_invalid_card":
            number = text.split("ref ", 1)[1].split(" rejected", 1)[0]
            assert not luhn_ok(_digits(number)), text


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == CASES[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
