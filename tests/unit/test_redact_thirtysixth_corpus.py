"""benchmarks/redact_thirtysixth.py, the thirty-sixth blind corpus (trading, crypto, lending and insurance agents),
is well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and the checked formats
check (the national ids against their own algorithms, written again here). Its recall is the benchmark's business,
not this test's."""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter

import pytest

from benchmarks import redact_thirtysixth as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}
CASES = list(corpus.generate())


def of_kind(kind: str) -> list[corpus.Case]:
    return [case for case in CASES if case.kind == kind]


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert corpus.OUTSIDE_TARGET <= set(counts) and len(corpus.OUTSIDE_TARGET) >= 6
    assert len(set(counts) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8


def test_each_secret_is_in_its_text_and_json_carriers_parse() -> None:
    for case in CASES:
        escaped = json.dumps(case.secret, ensure_ascii=False)[1:-1]
        assert case.secret in case.carried or escaped in case.carried, case.form
        if case.is_json:
            json.loads(case.carried)


def test_issue_kinds_come_in_many_carriers_and_a_third_is_json() -> None:
    for kind in ISSUE_KINDS:
        carriers = {case.form.split("/")[0] for case in of_kind(kind)}
        assert len(carriers) >= 15, kind
    share = sum(case.is_json for case in CASES) / len(CASES)
    assert 0.25 <= share <= 0.4


def test_the_agent_replies_come_in_at_least_25_languages() -> None:
    intros = {lang[0] for lang in corpus.LANGS if any(lang[1] in case.text for case in CASES)}
    assert len(intros) >= 25


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in of_kind("card"):
        assert luhn_ok("".join(ch for ch in case.secret if ch.isdigit())), case.secret
    for case in of_kind("iban"):
        assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in of_kind("ssn"):
        compact = "".join(ch for ch in case.secret if ch.isdigit())
        area, group, serial = compact[:3], compact[3:5], compact[5:]
        assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def _b58decode(text: str) -> bytes:
    alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    n = 0
    for ch in text:
        n = n * 58 + alphabet.index(ch)
    return n.to_bytes((n.bit_length() + 7) // 8, "big")


def test_wallet_keys_carry_their_base58check_and_pem_bodies_decode() -> None:
    for case in of_kind("wallet_key"):
        if case.form.endswith(("/wif", "/xprv")):
            raw = _b58decode(case.secret)
            assert hashlib.sha256(hashlib.sha256(raw[:-4]).digest()).digest()[:4] == raw[-4:]
        else:
            assert len(bytes.fromhex(case.secret)) == 32
    for case in of_kind("private_key"):
        assert base64.b64decode("".join(case.secret.split()))


def _mod11_weighted(ds: list[int], weights: tuple[int, ...]) -> int:
    return (11 - sum(a * b for a, b in zip(ds, weights, strict=True)) % 11) % 11


def _valid_id(kind: str, value: str) -> bool:
    ds = [int(c) for c in value if c.isdigit()]
    if kind == "es_dni":
        num = value[:-1].replace("X", "0").replace("Y", "1").replace("Z", "2")
        return "TRWAGMYFPDXBNJZSQVHLCKE"[int(num) % 23] == value[-1]
    if kind == "br_cpf":
        d1 = sum(d * w for d, w in zip(ds[:9], range(10, 1, -1), strict=True)) * 10 % 11 % 10
        d2 = sum(d * w for d, w in zip(ds[:10], range(11, 1, -1), strict=True)) * 10 % 11 % 10
        return ds[9:] == [d1, d2]
    if kind == "se_personnummer":
        return luhn_ok("".join(map(str, ds)))
    if kind == "fi_hetu":
        return "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(value[:6] + value[7:10]) % 31] == value[10]
    if kind == "no_fnr":
        k1 = _mod11_weighted(ds[:9], (3, 7, 6, 1, 8, 9, 4, 5, 2))
        return [k1, _mod11_weighted(ds[:9] + [k1], (5, 4, 3, 2, 7, 6, 5, 4, 3, 2))] == ds[9:]
    if kind == "cn_ric":
        weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
        return "10X98765432"[sum(int(c) * w for c, w in zip(value[:17], weights, strict=True)) % 11] == value[17]
    if kind == "in_aadhaar":
        check = 0
        for i, d in enumerate(reversed(ds)):
            check = corpus.VERHOEFF_D[check][corpus.VERHOEFF_P[i % 8][d]]
        return check == 0 and len(ds) == 12
    base = int("".join(map(str, ds[:9])))
    return 97 - base % 97 == int(value[-2:]) or 97 - (2_000_000_000 + base) % 97 == int(value[-2:])


@pytest.mark.parametrize("kind", sorted(corpus.OUTSIDE_TARGET))
def test_national_ids_pass_their_check_algorithms(kind: str) -> None:
    for case in of_kind(kind):
        assert _valid_id(kind, case.secret), case.secret


def test_near_misses_are_sixteen_sorts_of_twenty_or_more() -> None:
    sorts = Counter(sort for sort, _text in corpus.generate_negatives())
    assert len(sorts) >= 16 and min(sorts.values()) >= 20


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == CASES[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
