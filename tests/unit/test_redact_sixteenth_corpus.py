"""benchmarks/redact_sixteenth.py is well formed: deterministic, PER_KIND values of every kind in enough carriers,
every value in its text as carried, carried JSON parses, values valid by their formats' checks, and the near misses
at least 16 sorts x 20. Not a recall test."""

from __future__ import annotations

import base64
import json
import re
from collections import Counter, defaultdict

import pytest

from benchmarks import redact_sixteenth as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok
from benchmarks.redact import EIGHTH_ISSUE_KINDS


@pytest.fixture(scope="module")
def cases() -> list[corpus.Case]:
    return list(corpus.generate())


def of(cases: list[corpus.Case], kind: str) -> list[corpus.Case]:
    found = [c for c in cases if c.kind == kind]
    assert found, kind
    return found


def test_the_corpus_is_the_same_every_time(cases: list[corpus.Case]) -> None:
    assert list(corpus.generate()) == cases
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())


def test_every_kind_has_per_kind_values_and_the_issue_kinds_15_carriers(cases: list[corpus.Case]) -> None:
    counts = Counter(c.kind for c in cases)
    carriers: dict[str, set[str]] = defaultdict(set)
    for c in cases:
        carriers[c.kind].add(c.form.split("/")[0])
    assert set(EIGHTH_ISSUE_KINDS) <= set(counts)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert all(len(carriers[k]) >= 15 for k in EIGHTH_ISSUE_KINDS), {k: len(carriers[k]) for k in EIGHTH_ISSUE_KINDS}
    assert len(counts) - len(EIGHTH_ISSUE_KINDS) - len(corpus.OUTSIDE_TARGET) >= 15
    assert len([k for k in counts if k.startswith("phone_")]) >= 5 + 10
    assert corpus.OUTSIDE_TARGET <= set(counts)


def test_every_value_is_in_its_text_as_carried_and_json_parses(cases: list[corpus.Case]) -> None:
    for c in cases:
        forms = (c.secret, json.dumps(c.secret)[1:-1])
        assert any(f in c.text for f in forms), (c.kind, c.form)
        assert any(f in c.carried for f in forms), (c.kind, c.form)
        assert len(c.secret) >= 8, (c.kind, c.secret)
        if c.is_json:
            json.loads(c.carried)
    assert 0.25 < sum(c.is_json for c in cases) / len(cases) < 0.45


def test_cards_pass_luhn_and_ibans_mod_97(cases: list[corpus.Case]) -> None:
    for c in of(cases, "card"):
        number = re.sub(r"\D", "", c.secret)
        assert luhn_ok(number) and 13 <= len(number) <= 19, c.secret
    countries = set()
    for c in of(cases, "iban"):
        assert iban_ok(c.secret), c.secret
        countries.add(c.secret[:2].upper())
    assert len(countries) >= 20


def test_values_follow_their_formats(cases: list[corpus.Case]) -> None:
    for c in of(cases, "ssn"):
        area, group, serial = re.fullmatch(r"(\d{3})[- ]?(\d{2})[- ]?(\d{4})", c.secret).groups()
        assert area not in ("000", "666") and area < "900" and group != "00" and serial != "0000", c.secret
    for c in of(cases, "aws_secret"):
        assert re.fullmatch(r"[A-Za-z0-9+/]{40}", c.secret) and re.search(r"(AKIA|ASIA)[A-Z2-7]{16}", c.text)
    for c in of(cases, "stripe_whsec"):
        assert re.fullmatch(r"whsec_[A-Za-z0-9]{32}", c.secret)
    for c in of(cases, "esphome_api_key"):
        assert len(base64.b64decode(c.secret, validate=True)) == 32
    for c in of(cases, "home_assistant_token") + of(cases, "jwt"):
        head = json.loads(base64.urlsafe_b64decode(c.secret.split(".")[0] + "=="))
        assert head["alg"] in ("HS256", "RS256") and c.secret.count(".") == 2
    for c in of(cases, "cisco_type7"):
        assert re.fullmatch(r"(0\d|1[0-5])([0-9A-F]{2})+", c.secret)
    for c in of(cases, "disguised"):
        assert not c.secret.isascii(), c.secret
    tokens = [c.secret for c in of(cases, "disguised") if c.form.endswith("zero_width")]
    stripped = ["".join(ch for ch in t if ch not in corpus.INVISIBLE) for t in tokens]
    assert all(crc_ok(t) for t in stripped if t.startswith("ghp_"))


def test_near_misses_are_at_least_16_sorts_of_20(cases: list[corpus.Case]) -> None:
    sorts = Counter(sort for sort, _ in corpus.generate_negatives())
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    secrets = {c.secret for c in cases}
    assert not any(s in text for _, text in corpus.generate_negatives() for s in secrets if len(s) > 12)
