"""benchmarks/redact_fortyninth.py, the forty-ninth blind corpus (mobile money, remittance and micro-lending), is
well-formed: every kind has its cases, each value is in its text once, JSON carriers parse, and the checked formats
check (also when written in Devanagari, Bengali or Eastern Arabic digits). Its recall is the benchmark's business,
not this test's."""

from __future__ import annotations

import base64
import json
import re
import unicodedata
from collections import Counter

from benchmarks import redact_fortyninth as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}
CASES = list(corpus.generate())


def ascii_digits(text: str) -> str:
    """The decimal digits of `text`, whatever script they are written in, as ASCII."""
    return "".join(str(unicodedata.digit(ch)) for ch in text if ch.isdigit())


def test_every_kind_has_per_kind_cases_and_enough_more_kinds() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert corpus.OUTSIDE_TARGET <= set(counts) and len(corpus.OUTSIDE_TARGET) >= 6
    assert len(set(counts) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8


def test_each_secret_is_in_its_text_once_and_json_carriers_parse() -> None:
    for case in CASES:
        assert corpus.occurrences(case.carried, case.secret) == 1, case.form
        if case.is_json:
            json.loads(case.carried)


def test_issue_kinds_come_in_many_carriers_and_a_third_is_json() -> None:
    for kind in ISSUE_KINDS:
        carriers = {case.form.split("/")[0] for case in CASES if case.kind == kind}
        assert len(carriers) >= 15, kind
    share = sum(case.is_json for case in CASES) / len(CASES)
    assert 0.25 <= share <= 0.4


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in CASES:
        if case.kind == "card":
            assert luhn_ok(ascii_digits(case.secret)), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in CASES:
        if case.kind == "ssn":
            compact = ascii_digits(case.secret)
            area, group, serial = compact[:3], compact[3:5], compact[5:]
            assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def test_national_ids_carry_their_check_digits() -> None:
    for case in CASES:
        d = ascii_digits(case.secret)
        if case.kind == "in_aadhaar":
            assert len(d) == 12 and d[0] not in "01" and corpus.verhoeff_ok(d), case.secret
        elif case.kind == "tr_tckn":
            n = [int(c) for c in d]
            assert n[9] == (sum(n[0:9:2]) * 7 - sum(n[1:8:2])) % 10 and n[10] == sum(n[:10]) % 10
        elif case.kind in ("za_id", "il_id", "ae_eid", "sa_nid"):
            assert len(d) == {"za_id": 13, "il_id": 9, "ae_eid": 15, "sa_nid": 10}[case.kind] and luhn_ok(d)
        elif case.kind == "ir_melli":
            r = sum(int(c) * (10 - k) for k, c in enumerate(d[:9])) % 11
            assert int(d[9]) == (r if r < 2 else 11 - r)


def test_phones_and_ids_come_partly_in_their_users_digits() -> None:
    scripts = {script: 0 for script in corpus.SCRIPT_DIGITS}
    for case in CASES:
        for script, table in corpus.SCRIPT_DIGITS.items():
            scripts[script] += any(ch in table for ch in case.secret)
    assert min(scripts.values()) >= 10
    native = sum(not case.secret.isascii() for case in CASES if case.kind in ("phone_in", "phone_pk", "phone_bd"))
    assert 0 < native < 150


def test_provider_formats_follow_their_docs() -> None:
    patterns = {"paystack_key": r"sk_(live|test)_[0-9a-f]{40}", "flutterwave_key": r"FLWSECK(_TEST)?-[0-9a-f]{32}-X",
                "stripe_whsec": r"whsec_[A-Za-z0-9]{32,64}", "aws_secret": r"[A-Za-z0-9+/]{40}",
                "telegram_bot_token": r"AA[A-Za-z0-9_-]{33}", "razorpay_secret": r"[A-Za-z0-9]{24}"}
    for case in CASES:
        if case.kind in patterns:
            assert re.fullmatch(patterns[case.kind], case.secret), case.secret
        if case.form.endswith("/stk_password"):
            decoded = base64.b64decode(case.secret).decode()
            assert re.fullmatch(r"\d{6}[0-9a-f]{64}\d{14}", decoded)


def test_the_labels_span_twenty_five_languages() -> None:
    assert len({lang for _label, lang in corpus.PW_LABELS}) >= 25


def test_near_misses_are_sixteen_sorts_of_twenty_or_more() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _text in negatives)
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    for sort, text in negatives:
        if sort == "luhn_invalid":
            assert not luhn_ok(re.findall(r"(?<!\d)\d{16}(?!\d)", text)[0])
        if sort == "upi_rrn":
            assert not corpus.verhoeff_ok(re.findall(r"(?<!\d)\d{12}(?!\d)", text)[0])


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == CASES[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
