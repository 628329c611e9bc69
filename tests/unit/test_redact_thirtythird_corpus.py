"""benchmarks/redact_thirtythird.py, the thirty-third blind corpus (ML research and data-science agents), is
well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and the checked formats
check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_thirtythird as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}


def _cases() -> list[corpus.Case]:
    return list(corpus.generate())


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
    cases = _cases()
    for kind in ISSUE_KINDS:
        carriers = {case.form.split("/")[0] for case in cases if case.kind == kind}
        assert len(carriers) >= 15, kind
    share = sum(case.is_json for case in cases) / len(cases)
    assert 0.25 <= share <= 0.4


def test_agent_messages_and_password_labels_cover_twenty_five_languages() -> None:
    assert len(corpus.AGENT_LEADS) >= 25 and len(corpus.PASSWORD_LABELS) >= 25
    styles = {case.form.split("/")[1] for case in corpus.generate() if case.kind == "password"}
    assert len({style for style in styles if style.startswith("label_")}) >= 25


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


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def test_national_ids_carry_their_check_digits() -> None:
    for case in corpus.generate():
        s, d = case.secret, _digits(case.secret)
        if case.kind == "se_pnr":
            assert luhn_ok(d), s
        elif case.kind == "fi_hetu":
            assert "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(s[:6] + s[7:10]) % 31] == s[10], s
        elif case.kind in ("be_nrn", "fr_nir"):
            assert int(d[:-2]) % 97 + int(d[-2:]) == 97, s
        elif case.kind == "cn_ric":
            weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
            assert "10X98765432"[sum(int(c) * w for c, w in zip(s[:17], weights, strict=True)) % 11] == s[17], s
        elif case.kind == "br_cpf":
            for n in (9, 10):
                total = sum(int(c) * w for c, w in zip(d[:n], range(n + 1, 1, -1), strict=True))
                assert (0 if total % 11 < 2 else 11 - total % 11) == int(d[n]), s


def test_near_misses_are_sixteen_sorts_of_twenty_or_more_and_json_ones_parse() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _text in negatives)
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    assert sum(text.startswith("{") for _sort, text in negatives) >= len(negatives) // 4


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == list(corpus.generate())[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
