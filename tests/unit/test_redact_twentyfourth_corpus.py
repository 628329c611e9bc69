"""benchmarks/redact_twentyfourth.py, the twenty-fourth blind corpus (agent runtimes and their sandboxes), is
well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and the checked formats
check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_twentyfourth as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in corpus.generate())
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert len(set(counts) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8
    assert corpus.OUTSIDE_TARGET <= set(counts) and len(corpus.OUTSIDE_TARGET) >= 6


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


def test_final_messages_come_in_twenty_five_languages() -> None:
    assert len(corpus.LANGS) >= 25
    replies = {case.text for case in corpus.generate() if case.form.endswith("/reply")}
    openings = {opening for opening, _sep, _labels in corpus.LANGS.values() if any(opening in t for t in replies)}
    assert len(openings) >= 25


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


def test_national_id_checks_agree_with_published_examples() -> None:
    assert corpus.fr_nir_key("1841276451089") == "46"
    assert corpus.it_cf_check("RSSMRA85T10A562") == "S"
    assert corpus.cn_id_check("11010519491231002") == "X"
    assert corpus.fi_hetu_check("131052", "308") == "T"
    assert corpus.verhoeff_digit("236") == "3"
    assert luhn_ok("8112189876")


def test_national_ids_carry_their_check_digits() -> None:
    for case in corpus.generate():
        compact = case.secret.replace(" ", "").replace("-", "")
        if case.kind == "se_personnummer":
            assert luhn_ok(compact)
        if case.kind == "in_aadhaar":
            assert corpus.verhoeff_digit(compact[:-1]) == compact[-1]
        if case.kind == "no_fodselsnummer":
            assert corpus.no_fnr_checks(compact[:9]) == compact[9:]
        if case.kind == "fr_nir":
            assert corpus.fr_nir_key(compact[:13]) == compact[13:]


def test_near_misses_are_sixteen_sorts_of_twenty_or_more() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _text in negatives)
    assert len(sorts) >= 16 and min(sorts.values()) >= 20


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == list(corpus.generate())[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
