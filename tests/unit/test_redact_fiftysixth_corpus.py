"""benchmarks/redact_fiftysixth.py, the fifty-sixth blind corpus (tourism, transport and hospitality in Southern
Europe and the Alps), is well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and
the checked formats check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter

from benchmarks import redact_fiftysixth as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}
REGION_PHONES = {"phone_it", "phone_es", "phone_pt", "phone_gr", "phone_mt", "phone_cy", "phone_hr", "phone_si",
                 "phone_ch", "phone_at", "phone_li"}
CASES = list(corpus.generate())
NEGATIVES = list(corpus.generate_negatives())


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def _weighted(number: str, weights: tuple[int, ...]) -> int:
    return sum(int(d) * w for d, w in zip(number, weights, strict=False))


def _mod11_10(number: str) -> bool:
    product = 10
    for ch in number[:-1]:
        product = ((int(ch) + product) % 10 or 10) * 2 % 11
    return (11 - product) % 10 == int(number[-1])


def _cc_luhn(document: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(document)):
        x = int(ch, 36)
        if i % 2:
            x = x * 2 - 9 if x * 2 > 9 else x * 2
        total += x
    return total % 10 == 0


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert REGION_PHONES <= set(counts)
    assert corpus.OUTSIDE_TARGET <= set(counts)


def test_each_secret_is_in_its_text_and_json_carriers_parse() -> None:
    for case in CASES:
        escaped = json.dumps(case.secret, ensure_ascii=False)[1:-1]
        assert case.secret in case.carried or escaped in case.carried, case.form
        if case.is_json:
            json.loads(case.carried)


def test_personal_kinds_come_in_many_carriers_and_about_a_third_is_json() -> None:
    for kind in {"email", "card", "iban", "ssn"} | REGION_PHONES | {k for k in ISSUE_KINDS if k.startswith("phone")}:
        carriers = {case.form.split("/")[0] for case in CASES if case.kind == kind}
        assert len(carriers) >= 14, kind
    share = sum(case.is_json for case in CASES) / len(CASES)
    assert 0.25 <= share <= 0.4


def test_context_words_come_in_fifteen_languages() -> None:
    assert set(corpus.LANGS) <= set(corpus.PHONE_WORDS) | set(corpus.PW_LABELS)
    assert len(corpus.LANGS) >= 15


def test_no_phone_number_is_bare() -> None:
    assert not any(case.form.startswith("bare") for case in CASES)


def test_cards_pass_luhn_ibans_mod_97_and_github_tokens_their_crc() -> None:
    for case in CASES:
        if case.kind == "card":
            assert luhn_ok(_digits(case.secret)), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret
        for token in re.findall(r"ghp_[A-Za-z0-9]{36}", case.secret):
            assert crc_ok(token), token


def test_ssns_follow_the_ssa_rules() -> None:
    for case in CASES:
        if case.kind == "ssn":
            compact = _digits(case.secret)
            area, group, serial = compact[:3], compact[3:5], compact[5:]
            assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def test_national_ids_carry_their_check_digits() -> None:
    dni_letters = "TRWAGMYFPDXBNJZSQVHLCKE"
    for case in CASES:
        n = _digits(case.secret)
        compact = re.sub(r"[^0-9A-Z]", "", case.secret.upper())
        if case.kind == "ahv":
            assert n.startswith("756") and (10 - _weighted(n, (1, 3) * 6) % 10) % 10 == int(n[12]), case.secret
        elif case.kind == "amka":
            assert len(n) == 11 and luhn_ok(n) and 1 <= int(n[2:4]) <= 12, case.secret
        elif case.kind == "oib":
            assert len(n) == 11 and _mod11_10(n), case.secret
        elif case.kind == "svnr_at":
            assert _weighted(n[:3] + n[4:], (3, 7, 9, 5, 8, 4, 2, 1, 6)) % 11 == int(n[3]), case.secret
        elif case.kind == "cc_pt":
            r = 11 - _weighted(compact[:8], tuple(range(9, 1, -1))) % 11
            assert compact[8] == ("0" if r >= 10 else str(r)) and _cc_luhn(compact), case.secret
        elif case.kind == "nif_pt":
            r = 11 - _weighted(n, tuple(range(9, 1, -1))) % 11
            assert n[8] == ("0" if r >= 10 else str(r)), case.secret
        elif case.kind == "dni_nie":
            body = str("XYZ".index(compact[0])) + compact[1:8] if compact[0] in "XYZ" else compact[:8]
            assert dni_letters[int(body) % 23] == compact[8], case.secret
        elif case.kind == "emso":
            m = 11 - _weighted(n, (7, 6, 5, 4, 3, 2, 7, 6, 5, 4, 3, 2)) % 11
            assert m != 10 and n[12] == ("0" if m == 11 else str(m)), case.secret


def test_near_misses_are_twenty_six_sorts_of_thirty() -> None:
    sorts = Counter(sort for sort, _text in NEGATIVES)
    assert len(sorts) >= 26 and set(sorts.values()) == {30}


def test_luhn_invalid_near_misses_fail_luhn() -> None:
    for sort, text in NEGATIVES:
        if sort == "luhn_invalid":
            number = max(re.findall(r"\d{15,19}", text), key=len)
            assert not luhn_ok(number), text


def test_the_corpus_is_deterministic() -> None:
    assert list(itertools.islice(corpus.generate(), 50)) == CASES[:50]
    assert list(corpus.generate_negatives()) == NEGATIVES
