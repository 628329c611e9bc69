"""benchmarks/redact_fortyfourth.py, the forty-fourth blind corpus (government, tax and public-benefits agents), is
well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and the checked formats
check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
import re
from collections import Counter

from benchmarks import redact_fortyfourth as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}
CASES = list(corpus.generate())


def _compact(value: str) -> str:
    return "".join(ch for ch in value if ch.isalnum())


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
        carriers = {case.form.split("/")[0] for case in CASES if case.kind == kind}
        assert len(carriers) >= 15, kind
    share = sum(case.is_json for case in CASES) / len(CASES)
    assert 0.25 <= share <= 0.4


def test_the_agent_writes_to_users_in_twenty_five_languages_or_more() -> None:
    langs = {m.group(1) for case in CASES if (m := re.search(r"/(?:\w+_)?msg_([a-z]+)", case.form))}
    assert len(langs) >= 25


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in CASES:
        if case.kind == "card":
            assert luhn_ok(_compact(case.secret)), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules_and_itins_the_irs_groups() -> None:
    itin_groups = set(range(50, 66)) | set(range(70, 89)) | {90, 91, 92} | set(range(94, 100))
    for case in CASES:
        compact = _compact(case.secret)
        if case.kind == "ssn":
            area, group, serial = compact[:3], compact[3:5], compact[5:]
            assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"
        if case.kind == "itin":
            assert compact[0] == "9" and int(compact[3:5]) in itin_groups, case.secret


def test_national_ids_carry_their_check_digits() -> None:
    for case in CASES:
        c = _compact(case.secret)
        if case.kind in ("ca_sin", "se_personnummer"):
            assert luhn_ok(c), case.secret
        if case.kind == "nl_bsn":
            assert (sum(int(d) * (9 - k) for k, d in enumerate(c[:8])) - int(c[8])) % 11 == 0, case.secret
        if case.kind == "fr_nir":
            body = c[:5] + c[5:7].replace("2A", "19").replace("2B", "18") + c[7:13]
            assert 97 - int(body) % 97 == int(c[13:]), case.secret
        if case.kind == "fi_hetu":
            s = case.secret
            assert "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(s[:6] + s[7:10]) % 31] == s[10], s


def test_near_misses_are_sixteen_sorts_of_twenty_or_more_and_bad_luhn_is_bad() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _text in negatives)
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    for sort, text in negatives:
        if sort == "luhn_invalid" and not text.startswith("{"):
            assert not luhn_ok(_compact(text.removeprefix("payment reference"))), text


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == CASES[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
