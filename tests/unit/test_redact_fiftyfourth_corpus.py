"""benchmarks/redact_fiftyfourth.py, the fifty-fourth blind corpus (real estate in the Gulf, Turkey and North
Africa), is well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and the checked
formats check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter

from benchmarks import redact_fiftyfourth as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

REGION_PHONES = {kind for kind, _cc in corpus.REGION_PHONES}
ISSUE_PHONES = {kind for kind, _cc in corpus.ISSUE_PHONES}
CASES = list(corpus.generate())
NEGATIVES = list(corpus.generate_negatives())


def _digits(text: str) -> str:
    """The ASCII digits of a value, other scripts' digits (Arabic-Indic, Persian) read as theirs."""
    return "".join(str(unicodedata.decimal(ch)) for ch in text if unicodedata.decimal(ch, None) is not None)


def _strings(doc: object) -> list[str]:
    if isinstance(doc, str):
        return [doc]
    if isinstance(doc, dict):
        return [s for k, v in doc.items() for s in [k, *_strings(v)]]
    if isinstance(doc, list):
        return [s for v in doc for s in _strings(v)]
    return []


def test_every_kind_has_per_kind_cases_and_the_phone_kinds_are_there() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert REGION_PHONES | ISSUE_PHONES | corpus.OUTSIDE_TARGET <= set(counts)
    assert len(set(counts) - corpus.OUTSIDE_TARGET) == 40


def test_each_secret_is_in_its_text_and_json_carriers_parse() -> None:
    for case in CASES:
        if case.is_json:
            assert any(case.secret in s for s in _strings(json.loads(case.carried))), case.form
        else:
            assert case.secret in case.carried, case.form


def test_kinds_come_in_many_carriers_and_a_third_is_json() -> None:
    for kind in REGION_PHONES | ISSUE_PHONES:
        carriers = {case.form.split("/")[0] for case in CASES if case.kind == kind}
        assert len(carriers) >= 10, kind
    share = sum(case.is_json for case in CASES) / len(CASES)
    assert 0.25 <= share <= 0.4


def test_bare_phone_forms_are_one_in_twenty() -> None:
    bare = Counter(case.kind for case in CASES if case.form.startswith("bare/"))
    assert set(bare) == REGION_PHONES | ISSUE_PHONES and set(bare.values()) == {5}


def test_region_phones_fit_their_plans() -> None:
    """The national significant number after the country code: the lengths and leading digits of each plan."""
    plans = {"phone_ae": ("971", (8, 9), "2345679"), "phone_sa": ("966", (9, 9), "15"),
             "phone_qa": ("974", (8, 8), "34567"), "phone_kw": ("965", (8, 8), "2569"),
             "phone_bh": ("973", (8, 8), "13"), "phone_om": ("968", (8, 8), "279"),
             "phone_tr": ("90", (10, 10), "2345"), "phone_eg": ("20", (9, 10), "12"),
             "phone_ma": ("212", (9, 9), "567"), "phone_tn": ("216", (8, 8), "24579"),
             "phone_dz": ("213", (8, 9), "2567")}
    for case in CASES:
        if case.kind not in plans:
            continue
        code, (low, high), leading = plans[case.kind]
        written, number = case.secret.strip(), _digits(case.secret)
        if written.startswith("+") or number.startswith("00"):
            number = number[2:] if number.startswith("00") else number
            assert number.startswith(code), case.secret
            nsn = number[len(code):]
        else:
            nsn = number[1:] if number.startswith("0") else number
        assert low <= len(nsn) <= high and nsn[0] in leading, (case.kind, case.secret)


def test_cards_pass_luhn_ibans_mod_97_and_github_tokens_their_crc() -> None:
    for case in CASES:
        if case.kind == "card":
            assert luhn_ok(_digits(case.secret)), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret.replace(" ", "")), case.secret
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
        d = [int(c) for c in n]
        if case.kind == "tr_kimlik":
            assert len(d) == 11 and d[0] != 0, case.secret
            assert (7 * sum(d[0:9:2]) - sum(d[1:8:2])) % 10 == d[9] and sum(d[:10]) % 10 == d[10], case.secret
        elif case.kind == "sa_national_id":
            assert len(d) == 10 and d[0] in (1, 2) and luhn_ok(n), case.secret
        elif case.kind == "emirates_id":
            assert len(d) == 15 and n.startswith("784") and 1900 <= int(n[3:7]) <= 2099 and luhn_ok(n), case.secret
        elif case.kind == "il_teudat_zehut":
            total = sum(sum(divmod(x * (1 + i % 2), 10)) for i, x in enumerate(d))
            assert len(d) == 9 and total % 10 == 0, case.secret


def test_near_misses_are_twenty_five_sorts_of_twenty_eight() -> None:
    sorts = Counter(sort for sort, _text in NEGATIVES)
    assert len(sorts) == 25 and set(sorts.values()) == {28}


def test_luhn_invalid_near_misses_fail_luhn_and_company_tax_numbers_pass_their_checks() -> None:
    for sort, text in NEGATIVES:
        if sort == "luhn_invalid":
            runs = [_digits(m) for m in re.findall(r"(?<![\w-])\d[\d -]{11,22}\d(?!\w)", text)]
            cards = [n for n in runs if 13 <= len(n) <= 19]
            assert cards and not any(luhn_ok(n) for n in cards), text
        if sort == "company_tax_id":
            for number in re.findall(r"(?<!\d)\d{9,10}(?!\d)", text.split("tax_id")[-1].split("Vergi")[-1]):
                if len(number) == 9:
                    assert luhn_ok(number), text  # SIREN (INSEE): Luhn over nine digits
                else:
                    assert _vkn_ok(number), text


def _vkn_ok(number: str) -> bool:
    """The Turkish tax number's check (GİB): each of the first nine digits shifted, weighted by a power of two
    mod 9; the tenth makes the sum a multiple of 10."""
    total = 0
    for i, ch in enumerate(number[:9]):
        tmp = (int(ch) + 9 - i) % 10
        v = (tmp * 2 ** (9 - i)) % 9
        total += 9 if tmp and v == 0 else v
    return (10 - total % 10) % 10 == int(number[9])


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == CASES[:50]
    assert list(corpus.generate_negatives()) == NEGATIVES
