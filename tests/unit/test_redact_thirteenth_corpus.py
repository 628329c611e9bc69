"""The thirteenth redaction corpus is well formed: every kind has its cases, every value is in the text that carries
it, JSON carriers parse, cards pass Luhn and IBANs MOD 97, and its near misses are many enough. No recall here."""

import json
import re
import urllib.parse
from collections import Counter

from benchmarks import redact_thirteenth as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = ("password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban")
CASES = list(corpus.generate())


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_all_there() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert set(ISSUE_KINDS) <= set(counts)
    assert len(counts) >= len(ISSUE_KINDS) + 20


def test_every_issue_kind_goes_through_at_least_fifteen_carriers() -> None:
    carriers: dict[str, set[str]] = {}
    for case in CASES:
        carriers.setdefault(case.kind, set()).add(case.form.split("/")[0])
    assert all(len(carriers[kind]) >= 15 for kind in ISSUE_KINDS), {k: len(carriers[k]) for k in ISSUE_KINDS}


def test_every_secret_is_in_its_text_as_written_or_json_escaped() -> None:
    for case in CASES:
        assert case.carried == case.text
        escaped = json.dumps(case.secret, ensure_ascii=False)[1:-1]
        assert case.secret in case.text or escaped in case.text, (case.kind, case.form)


def test_json_carriers_parse() -> None:
    share = sum(case.is_json for case in CASES) / len(CASES)
    for case in CASES:
        if case.is_json:
            json.loads(case.text)
    assert 0.25 <= share <= 0.5


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in CASES:
        plain = urllib.parse.unquote(case.secret)
        if case.kind == "card":
            assert luhn_ok(re.sub(r"\D", "", plain)), case.secret
        if case.kind == "iban":
            assert iban_ok(re.sub(r"[^0-9A-Za-z]", "", plain)), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in CASES:
        if case.kind == "ssn":
            number = re.sub(r"\D", "", case.secret)
            assert len(number) == 9 and number[:3] not in ("000", "666") and number[0] != "9"
            assert number[3:5] != "00" and number[5:] != "0000"


def test_negatives_are_at_least_sixteen_sorts_of_twenty_and_the_same_on_every_call() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _ in negatives)
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    assert negatives == list(corpus.generate_negatives())
    assert CASES == list(corpus.generate())
