"""benchmarks/redact_fiftyseventh.py, the fifty-seventh blind corpus (agriculture and health programmes in
Sub-Saharan Africa), is well-formed: every kind has its cases, each value is in its text, JSON carriers parse,
phone numbers fit their plans, and the checked formats check. Its recall is the benchmark's business, not this
test's."""

from __future__ import annotations

import json
import re
from collections import Counter

from benchmarks import redact_fiftyseventh as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}
CASES = list(corpus.generate())
NEGATIVES = list(corpus.generate_negatives())


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert corpus.OUTSIDE_TARGET <= set(counts)
    assert len(set(counts) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8


def test_each_secret_is_in_its_text_and_json_carriers_parse() -> None:
    for case in CASES:
        escaped = json.dumps(case.secret, ensure_ascii=False)[1:-1]
        ascii_escaped = json.dumps(case.secret)[1:-1]
        held = case.secret in case.carried or escaped in case.carried or ascii_escaped in case.carried
        if case.is_json:
            doc = json.loads(case.carried)
            held = held or case.secret in json.dumps(doc, ensure_ascii=False)
        assert held, case.form


def test_phones_come_in_every_carrier_and_a_third_is_json() -> None:
    for kind in [k for k in corpus.PLANS] + ["phone_us_ca"]:
        carriers = {case.form.split("/")[0] for case in CASES if case.kind == kind}
        assert len(carriers) >= 15, kind
    for kind in ISSUE_KINDS:
        assert len({case.form.split("/")[0] for case in CASES if case.kind == kind}) >= 5, kind
    share = sum(case.is_json for case in CASES) / len(CASES)
    assert 0.25 <= share <= 0.4


def test_phone_numbers_fit_their_plans() -> None:
    for case in CASES:
        plan = corpus.PLANS.get(case.kind)
        if plan is None:
            continue
        number = _digits(case.secret)
        if case.secret.startswith("+") or case.form.endswith("/msisdn"):
            assert number.startswith(plan.cc), case.secret
            nsn = number[len(plan.cc):]
        else:
            assert number.startswith(plan.trunk), case.secret
            nsn = number[len(plan.trunk):]
        assert nsn.startswith(plan.prefixes), case.secret
        assert len(nsn) == plan.length or case.kind == "phone_de" and len(nsn) == 11, case.secret


def test_context_words_come_in_many_languages() -> None:
    assert len(corpus.PHONE_WORDS) >= 15
    assert len(corpus.PW_LABELS) >= 12
    assert len(corpus.KEY_WORDS_LANG) >= 8


def test_cards_pass_luhn_ibans_mod_97_and_github_tokens_their_crc() -> None:
    for case in CASES:
        if case.kind == "card":
            assert luhn_ok(_digits(case.secret)), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret.replace(" ", "").upper()), case.secret
        if case.kind == "github_token" and case.secret.startswith("ghp_"):
            assert crc_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in CASES:
        if case.kind == "ssn":
            compact = _digits(case.secret)
            area, group, serial = compact[:3], compact[3:5], compact[5:]
            assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def test_national_ids_have_their_published_shapes_and_checks() -> None:
    for case in CASES:
        n = _digits(case.secret)
        if case.kind == "za_id":
            assert len(n) == 13 and luhn_ok(n) and 1 <= int(n[2:4]) <= 12 and n[10] in "01", case.secret
        elif case.kind == "kra_pin":
            assert re.fullmatch(r"A\d{9}[A-Z]", case.secret), case.secret
        elif case.kind == "ng_nin":
            assert re.fullmatch(r"[1-9]\d{10}", case.secret), case.secret
        elif case.kind == "gh_card":
            assert re.fullmatch(r"GHA-[1-9]\d{8}-\d", case.secret), case.secret
        elif case.kind == "rw_nid":
            assert len(n) == 16 and n[0] == "1" and 1950 <= int(n[1:5]) <= 2006 and n[5] in "78", case.secret


def test_near_misses_are_twenty_seven_sorts_of_twenty_six() -> None:
    sorts = Counter(sort for sort, _text in NEGATIVES)
    assert len(sorts) == 27 and set(sorts.values()) == {26}


def test_near_misses_fail_or_pass_their_checks_as_their_sort_says() -> None:
    for sort, text in NEGATIVES:
        if sort == "card_like_invalid":
            assert not luhn_ok(re.search(r"(?<!\d)[45]\d{14,15}(?!\d)", text).group()), text
        elif sort == "invalid_iban":
            assert not iban_ok(re.search(r"(?<![A-Z])[A-Z]{2}\d{2}[A-Z0-9]{11,30}", text).group()), text
        elif sort == "gs1_code":
            gtin = re.search(r"(?<!\d)6\d{12}(?!\d)", text).group()
            total = sum(int(c) * (3 if i % 2 == 0 else 1) for i, c in enumerate(reversed(gtin[:-1])))
            assert (10 - total % 10) % 10 == int(gtin[-1]), text
        elif sort == "company_siren":
            assert luhn_ok(re.search(r"(?<!\d)\d{9}(?!\d)", text).group()), text


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == CASES[:50]
    assert list(corpus.generate_negatives()) == NEGATIVES
