"""benchmarks/redact_fortyeighth.py, the forty-eighth blind corpus (legal practice, e-discovery and real-estate
closings), is well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and the checked
formats check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
import re
from collections import Counter

from benchmarks import redact_fortyeighth as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in corpus.generate())
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert corpus.OUTSIDE_TARGET <= set(counts) and len(corpus.OUTSIDE_TARGET) >= 6
    assert len(set(counts) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8


def test_each_secret_is_in_its_text_and_json_carriers_parse() -> None:
    for case in corpus.generate():
        escaped = json.dumps(case.secret, ensure_ascii=False)[1:-1]
        assert case.secret in case.carried or escaped in case.carried, case.form
        if case.is_json:
            json.loads(case.carried)


def test_issue_kinds_come_in_many_carriers_and_a_third_is_json() -> None:
    cases = list(corpus.generate())
    for kind in ISSUE_KINDS:
        carriers = {case.form.split("/")[0] for case in cases if case.kind == kind}
        assert len(carriers) >= 15, kind
    share = sum(case.is_json for case in cases) / len(cases)
    assert 0.25 <= share <= 0.4


def test_client_messages_come_in_twenty_five_languages_or_more() -> None:
    langs = {case.form.rsplit("_", 1)[1] for case in corpus.generate()
             if case.kind in ("password", "email", "card", "iban") and "_" in case.form.split("/")[1]}
    assert len(langs & set(corpus.LANGS)) >= 25


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in corpus.generate():
        if case.kind == "card":
            assert luhn_ok("".join(ch for ch in case.secret if ch.isdigit())), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in corpus.generate():
        if case.kind == "ssn":
            compact = "".join(ch for ch in case.secret if ch.isdigit())
            area, group, serial = compact[:3], compact[3:5], compact[5:]
            assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def test_bank_accounts_stand_beside_a_checked_routing_number() -> None:
    for case in corpus.generate():
        if case.kind == "bank_account":
            nines = [m for m in re.findall(r"(?<!\d)\d{9}(?!\d)", case.text) if m != case.secret]
            assert any(sum(int(d) * w for d, w in zip(m, (3, 7, 1) * 3, strict=True)) % 10 == 0 for m in nines)


def test_national_ids_carry_their_check_digits() -> None:
    for case in corpus.generate():
        compact = re.sub(r"[^0-9A-Z]", "", case.secret)
        if case.kind in ("ca_sin", "se_pnr"):
            assert luhn_ok(compact[-10:] if case.kind == "se_pnr" else compact), case.secret
        if case.kind == "fr_nir":
            assert 97 - int(compact[:13]) % 97 == int(compact[13:]), case.secret
        if case.kind == "fi_hetu":
            assert "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(case.secret[:6] + case.secret[7:10]) % 31] == case.secret[10]


def test_near_misses_are_sixteen_sorts_of_twenty_or_more_and_luhn_invalid_ones_fail() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _text in negatives)
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    for sort, text in negatives:
        if sort == "luhn_invalid":
            assert not luhn_ok(re.findall(r"\d{16}", text)[0]), text


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == list(corpus.generate())[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
