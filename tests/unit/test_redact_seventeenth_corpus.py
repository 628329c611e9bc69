"""benchmarks/redact_seventeenth.py is well-formed: every kind has its cases, each secret is in its text, JSON
carriers parse, checksummed values pass their checks, and the near misses are enough. No recall is asserted."""

from __future__ import annotations

import json
import re
from collections import Counter

from cryptography.hazmat.primitives import serialization

from benchmarks import redact_seventeenth as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = ("password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban")
CASES = list(corpus.generate())


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_all_there() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert set(ISSUE_KINDS) <= set(counts)
    assert corpus.OUTSIDE_TARGET <= set(counts)


def test_the_issue_kinds_have_fifteen_carriers_each() -> None:
    for kind in ISSUE_KINDS:
        carriers = {case.form.split("/")[0].split("@")[0] for case in CASES if case.kind == kind}
        assert len(carriers) >= 15, (kind, carriers)


def test_every_secret_is_in_its_text_and_its_carried_form() -> None:
    for case in CASES:
        forms = (case.secret, json.dumps(case.secret, ensure_ascii=False)[1:-1])
        assert any(form in case.text for form in forms), (case.kind, case.form)
        assert any(form in case.carried or json.dumps(form)[1:-1] in case.carried for form in forms), case.form


def test_json_carriers_parse_and_about_a_third_is_json() -> None:
    for case in CASES:
        if case.is_json:
            json.loads(case.carried)
    share = sum(case.is_json for case in CASES) / len(CASES)
    assert 0.28 <= share <= 0.42


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in CASES:
        if case.kind == "card":
            assert luhn_ok(re.sub(r"[ ._-]", "", case.secret)), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in CASES:
        if case.kind == "ssn":
            area, group, serial = re.fullmatch(r"(\d{3})[- ]?(\d{2})[- ]?(\d{4})", case.secret).groups()
            assert area not in ("000", "666") and area < "900" and group != "00" and serial != "0000"


def test_ec_and_ed25519_keys_load_with_cryptography() -> None:
    """The RSA keys are of RSA's DER shape with drawn integers, so only the real EC and Ed25519 keys load."""
    for case in CASES:
        if case.kind == "private_key" and case.form.endswith(("/ec", "/ed25519_pkcs8")):
            serialization.load_pem_private_key(case.secret.encode(), password=None)


def test_near_misses_are_twenty_sorts_of_twenty_and_test_cards_are_among_them() -> None:
    sorts = Counter(sort for sort, _ in corpus.generate_negatives())
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    assert "test_card" in sorts


def test_the_corpus_is_the_same_on_every_call() -> None:
    assert list(corpus.generate()) == CASES
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
