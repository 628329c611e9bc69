"""benchmarks/redact_fiftyeighth.py, the fifty-eighth blind corpus (remittances, microfinance and tourism in the
Caribbean, Central America and the Andes), is well-formed: every kind has its cases, each value is in its text, JSON
carriers parse, and the checked formats check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
import re
from collections import Counter

from benchmarks import redact_fiftyeighth as corpus
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


def test_issue_kinds_come_in_several_carriers_and_some_are_json() -> None:
    for kind in ISSUE_KINDS:
        carriers = {case.form.split("/")[0] for case in CASES if case.kind == kind}
        assert len(carriers) >= 5, kind
    share = sum(case.is_json for case in CASES) / len(CASES)
    assert 0.15 <= share <= 0.5


def test_the_regions_phone_kinds_have_context_words() -> None:
    regional = {"phone_ht", "phone_gt", "phone_hn", "phone_sv", "phone_ni", "phone_cr", "phone_pa", "phone_co",
                "phone_ec", "phone_pe", "phone_bo", "phone_jm", "phone_tt", "phone_do", "phone_pr"}
    assert regional <= set(corpus.PHONE_WORDS)
    assert all(len(words) >= 5 for words in corpus.PHONE_WORDS.values())


def test_cards_pass_luhn_ibans_mod_97_and_github_tokens_their_crc() -> None:
    for case in CASES:
        if case.kind == "card":
            assert luhn_ok(_digits(case.secret)), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret
        if case.secret.startswith(("ghp_", "gho_")):
            assert crc_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in CASES:
        if case.kind == "ssn":
            compact = _digits(case.secret)
            area, group, serial = compact[:3], compact[3:5], compact[5:]
            assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def test_nanp_numbers_have_n_area_codes_and_exchanges() -> None:
    for case in CASES:
        if case.kind in ("phone_us_ca", "phone_jm", "phone_tt", "phone_do", "phone_pr"):
            n = _digits(case.secret)
            n = n[1:] if len(n) == 11 else n
            assert len(n) == 10 and n[0] in "23456789" and n[3] in "23456789" and n[4:6] != "11", case.secret


def _ec_cedula_ok(n: str) -> bool:
    total = 0
    for i, ch in enumerate(n[:9]):
        p = int(ch) * (2 if i % 2 == 0 else 1)
        total += p - 9 if p > 9 else p
    return 1 <= int(n[:2]) <= 24 and int(n[2]) < 6 and (10 - total % 10) % 10 == int(n[9])


def test_national_ids_carry_their_check_digits() -> None:
    for case in CASES:
        n = _digits(case.secret)
        if case.kind == "id_do_cedula":
            assert len(n) == 11 and luhn_ok(n), case.secret
        elif case.kind == "id_ec_cedula":
            assert len(n) == 10 and _ec_cedula_ok(n), case.secret
        elif case.kind == "id_ec_ruc":
            assert len(n) == 13 and n.endswith("001") and _ec_cedula_ok(n[:10]), case.secret
        elif case.kind == "id_pe_dni":
            body = n[:8]
            key = 11 - _weighted(body, (3, 2, 7, 6, 5, 4, 3, 2)) % 11
            key = 0 if key == 11 else key
            assert "-" not in case.secret or case.secret[-1] in ("67890112345"[key], "KABCDEFGHIJ"[key]), case.secret
        elif case.kind == "id_pe_ruc":
            r = 11 - _weighted(n[:10], (5, 4, 3, 2, 7, 6, 5, 4, 3, 2)) % 11
            assert n.startswith("10") and len(n) == 11 and int(n[10]) == (0 if r == 10 else 1 if r == 11 else r)
        elif case.kind == "id_co_nit":
            body, check = n[:-1], int(n[-1])
            r = _weighted(body[::-1], (3, 7, 13, 17, 19, 23, 29, 37, 41, 43, 47, 53, 59, 67, 71)) % 11
            assert check == (r if r in (0, 1) else 11 - r), case.secret
        elif case.kind == "id_cr_cedula":
            assert len(n) == 9 and n[0] != "0", case.secret
        elif case.kind == "id_gt_cui":
            assert len(n) == 13 and sum(int(d) * (i + 2) for i, d in enumerate(n[:8])) % 11 == int(n[8])
            assert 1 <= int(n[9:11]) <= 22 and 1 <= int(n[11:]) <= corpus.GT_MUNICIPALITIES[int(n[9:11])]
        elif case.kind == "id_gt_nit":
            body, check = case.secret.split("-")
            r = (11 - sum(int(d) * (len(body) + 1 - i) for i, d in enumerate(body)) % 11) % 11
            assert check == ("K" if r == 10 else str(r)), case.secret


def test_near_misses_are_twenty_five_sorts_of_twenty_eight() -> None:
    sorts = Counter(sort for sort, _text in corpus.generate_negatives())
    assert len(sorts) == 25 and set(sorts.values()) == {28}


def test_luhn_invalid_near_misses_fail_luhn() -> None:
    for sort, text in corpus.generate_negatives():
        if sort == "luhn_invalid":
            number = re.search(r"4[\d -]{14,22}\d", text)
            assert number is not None and not luhn_ok(_digits(number.group())), text


def test_invalid_iban_near_misses_fail_mod_97() -> None:
    for sort, text in corpus.generate_negatives():
        if sort == "invalid_iban":
            value = re.search(r"[A-Z]{2}\d{2}(?: [A-Z0-9]{1,4})+", text)
            assert value is not None and not iban_ok(value.group()), text


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == CASES[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
