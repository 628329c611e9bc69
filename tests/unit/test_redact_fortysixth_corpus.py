"""benchmarks/redact_fortysixth.py, the forty-sixth blind corpus (education and e-learning, East Asian users
foremost), is well-formed: every kind has its cases, each value is in its text, JSON carriers parse, most cases are
CJK, and the checked formats check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter

from benchmarks import redact_fortysixth as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}
CJK_CHAR = re.compile("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _digits(text: str) -> str:
    """The ASCII digits of `text`, full-width ones folded (NFKC)."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text) if ch.isdigit())


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in corpus.generate())
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert corpus.OUTSIDE_TARGET <= set(counts)
    assert len(set(counts) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8
    assert len({kind for kind in corpus.OUTSIDE_TARGET if not kind.startswith("phone_")}) >= 6


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


def test_at_least_half_of_the_cases_are_cjk_and_eighteen_other_languages_frame_the_rest() -> None:
    cases = list(corpus.generate())
    assert sum(bool(CJK_CHAR.search(case.text)) for case in cases) / len(cases) >= 0.5
    assert sum(corpus.lang_of(i) in corpus.CJK for i in range(corpus.PER_KIND)) >= corpus.PER_KIND // 2
    assert len({corpus.lang_of(i) for i in range(corpus.PER_KIND)} - set(corpus.CJK)) >= 15


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in corpus.generate():
        if case.kind == "card":
            assert luhn_ok(_digits(case.secret)), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in corpus.generate():
        if case.kind == "ssn":
            compact = _digits(case.secret)
            area, group, serial = compact[:3], compact[3:5], compact[5:]
            assert len(compact) == 9 and area not in ("000", "666") and area[0] != "9"
            assert group != "00" and serial != "0000"


def test_east_asian_ids_carry_their_check_digits() -> None:
    weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    for case in corpus.generate():
        value = case.secret
        if case.kind == "cn_resident_id":
            total = sum(int(d) * w for d, w in zip(value[:17], weights, strict=True))
            assert "10X98765432"[total % 11] == value[17], value
        if case.kind == "kr_rrn":
            d = value.replace("-", "")
            total = sum(int(c) * w for c, w in zip(d[:12], [2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5], strict=True))
            assert (11 - total % 11) % 10 == int(d[12]), value
        if case.kind == "jp_my_number":
            d = value.replace(" ", "")
            total = sum(int(p) * (n + 1 if n <= 6 else n - 5) for n, p in enumerate(reversed(d[:11]), start=1))
            assert int(d[11]) == (0 if total % 11 <= 1 else 11 - total % 11), value


def test_near_misses_are_sixteen_sorts_of_twenty_or_more_and_hold_no_valid_card() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _text in negatives)
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    for sort, text in negatives:
        if text.startswith("{"):
            json.loads(text)
        elif sort == "luhn_invalid":
            assert not luhn_ok(_digits(text)), text


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == list(corpus.generate())[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
