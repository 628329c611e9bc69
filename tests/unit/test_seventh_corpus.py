"""benchmarks/redact_seventh.py: deterministic, >= 100 values and >= 8 carriers per kind, every value findable in
the text as carried, and every value valid by its format's check (Luhn, MOD 97-10, CRC32, numbering plan, JWS,
DER)."""

from __future__ import annotations

import base64
import json
import re
from collections import Counter, defaultdict

import pytest

from benchmarks import redact_seventh as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok


@pytest.fixture(scope="module")
def cases() -> list[corpus.Case]:
    return list(corpus.generate())


def by_kind(cases: list[corpus.Case], kind: str) -> list[corpus.Case]:
    found = [c for c in cases if c.kind == kind]
    assert found, kind
    return found


def test_the_corpus_is_the_same_every_time(cases: list[corpus.Case]) -> None:
    assert list(corpus.generate()) == cases
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())


def test_each_kind_has_enough_values_and_carriers(cases: list[corpus.Case]) -> None:
    counts = Counter(c.kind for c in cases)
    carriers: dict[str, set[str]] = defaultdict(set)
    for c in cases:
        carriers[c.kind].add(c.form.split("/")[0])
    assert len(counts) >= 80
    assert min(counts.values()) >= 100
    assert min(len(v) for v in carriers.values()) >= 8
    assert len([k for k in counts if k.startswith("phone_")]) >= 18


def test_every_value_is_in_its_text_as_carried(cases: list[corpus.Case]) -> None:
    for c in cases:
        forms = (c.secret, json.dumps(c.secret)[1:-1])
        assert any(f in c.text for f in forms), (c.kind, c.form)
        assert any(f in c.carried for f in forms), (c.kind, c.form)
        assert len(c.secret) >= 8, (c.kind, c.secret)
        if c.is_json:
            json.loads(c.carried)
    assert 0.2 < sum(c.is_json for c in cases) / len(cases) < 0.6


def test_cards_pass_luhn_and_ibans_mod_97(cases: list[corpus.Case]) -> None:
    for c in by_kind(cases, "card"):
        number = re.sub(r"\D", "", c.secret)
        assert luhn_ok(number) and 14 <= len(number) <= 19, c.secret
    countries = set()
    for c in by_kind(cases, "iban"):
        assert iban_ok(c.secret.replace("-", "")), c.secret
        countries.add(c.secret[:2].upper())
    assert len(countries) >= 20


def test_ssns_follow_the_ssa_rules(cases: list[corpus.Case]) -> None:
    for c in by_kind(cases, "ssn"):
        area, group, serial = re.fullmatch(r"(\d{3})[- ]?(\d{2})[- ]?(\d{4})", c.secret).groups()
        assert area not in ("000", "666") and area < "900" and group != "00" and serial != "0000"


def test_phone_numbers_have_their_plans_lengths(cases: list[corpus.Case]) -> None:
    for country, (cc, trunk, _gen, sizes) in corpus.PLANS.items():
        for c in by_kind(cases, f"phone_{country}"):
            number = re.sub(r"\D", "", c.secret)
            if c.secret.startswith("+") or c.secret.startswith("00"):
                number = number.removeprefix("00")
                assert number.startswith(cc) and len(number) == len(cc) + sum(sizes), c.secret
            else:
                assert number.startswith(trunk) and len(number) == len(trunk) + sum(sizes), c.secret


def test_tokens_carry_their_checks_and_shapes(cases: list[corpus.Case]) -> None:
    for c in by_kind(cases, "github") + by_kind(cases, "npm"):
        if not c.secret.startswith("github_pat_"):
            assert crc_ok(c.secret), c.secret
    for c in by_kind(cases, "jwt"):
        header, payload, _sig = c.secret.split(".")
        assert json.loads(base64.urlsafe_b64decode(header + "==")) == {"alg": "HS256", "typ": "JWT"}
        assert "exp" in json.loads(base64.urlsafe_b64decode(payload + "=="))
    for c in by_kind(cases, "pem"):
        der = base64.b64decode(c.secret.replace("\n", ""))
        assert der[:1] == b"\x30" or der.startswith(b"openssh-key-v1\x00")
    for c in by_kind(cases, "gcp_service_account"):
        assert base64.b64decode(c.secret.replace("\n", ""))[:1] == b"\x30"
    assert all(re.fullmatch(r"\d{8,10}:[A-Za-z0-9_-]{35}", c.secret) for c in by_kind(cases, "telegram"))
    assert all(re.fullmatch(r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", c.secret)
               for c in by_kind(cases, "age"))
    assert all(re.fullmatch(r"(AKIA|ASIA)[A-Z2-7]{16}", c.secret) for c in by_kind(cases, "aws_key_id"))
    elastic = [c for c in by_kind(cases, "elastic")] + [c for c in by_kind(cases, "http_auth")
                                                         if c.form.endswith("/apikey")]
    assert all(base64.b64decode(c.secret).count(b":") == 1 for c in elastic)


def test_disguised_values_hold_a_disguise(cases: list[corpus.Case]) -> None:
    marks = set(corpus.ZERO_WIDTH + corpus.BIDI + "\u00ad\u00a0")
    for c in by_kind(cases, "disguised"):
        assert marks & set(c.secret) or any("\uff01" <= ch <= "\uff5e" for ch in c.secret), c.secret


def test_near_misses_are_what_they_claim() -> None:
    negatives = list(corpus.generate_negatives())
    assert len(negatives) >= 300
    for sort, text in negatives:
        if sort == "bad_luhn":
            assert not luhn_ok(re.sub(r"\D", "", text))
        elif sort == "bad_iban":
            assert not iban_ok(re.search(r"<Ref>(\w+)</Ref>", text).group(1))
        elif sort in ("imei", "iccid"):
            number = re.search(r"=(\d+)", text).group(1)
            assert luhn_ok(number) and len(number) in ((15,) if sort == "imei" else (18, 19, 20))  # E.118: <= 20
            assert sort == "iccid" or number[:2] not in ("34", "37")
