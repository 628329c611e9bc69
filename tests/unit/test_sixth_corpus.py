"""The sixth redaction corpus (benchmarks/redact_sixth.py) is deterministic, its values are valid in their formats
(Luhn, MOD 97-10, SSA rules, CRC32 of GitHub and npm tokens) and each kind has 100+ values in 8+ carriers."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict

from benchmarks import redact_sixth as sixth
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

CASES = sixth.generate()


def of(kind: str) -> list[sixth.Case]:
    return [c for c in CASES if c.kind == kind]


def test_the_corpus_is_the_same_for_the_same_seed_and_differs_for_another() -> None:
    again = sixth.generate()
    assert [(c.kind, c.secret, c.carried, c.form) for c in again] == [(c.kind, c.secret, c.carried, c.form)
                                                                       for c in CASES]
    assert list(sixth.generate_negatives()) == list(sixth.generate_negatives())
    assert [c.secret for c in sixth.generate(per_kind=3, seed=1)] != [c.secret for c in sixth.generate(per_kind=3)]


def test_every_kind_has_100_values_in_8_carriers_each_written_where_it_says() -> None:
    count = Counter(c.kind for c in CASES)
    carriers: dict[str, set[str]] = defaultdict(set)
    for c in CASES:
        carriers[c.kind].add(c.form.split("/")[0])
        assert c.secret in c.carried or json.dumps(c.secret, ensure_ascii=False)[1:-1] in c.carried, c.form
        if c.is_json:
            json.loads(c.carried)
    assert set(count) == set(sixth.KINDS)
    assert min(count.values()) >= 100
    assert {k: len(v) for k, v in carriers.items() if len(v) < 8} == {}
    assert len([k for k in sixth.KINDS if k.startswith("phone_")]) >= 18


def test_cards_pass_luhn_ibans_mod_97_and_ssns_the_ssa_rules() -> None:
    for c in of("card"):
        assert luhn_ok(re.sub(r"\D", "", c.secret)), c.secret
    countries = set()
    for c in of("iban"):
        assert iban_ok(c.secret), c.secret
        countries.add(c.secret[:2].upper())
    assert len(countries) >= 20
    for c in of("ssn"):
        area, group, serial = re.fullmatch(r"(\d{3})\D*(\d{2})\D*(\d{4})", c.secret).groups()
        assert area not in ("000", "666") and area < "900" and group != "00" and serial != "0000"


def test_github_and_npm_tokens_carry_their_crc32() -> None:
    tokens = [c.secret for c in of("github") + of("npm") if not c.secret.startswith("github_pat_")]
    assert len(tokens) > 100
    assert all(crc_ok(t) for t in tokens)


def test_near_misses_are_300_and_their_checksums_fail() -> None:
    negatives = list(sixth.generate_negatives())
    assert len(negatives) >= 300
    for sort, text in negatives:
        if sort == "bad_luhn_card":
            assert not luhn_ok(re.sub(r"\D", "", text.split(":")[1].split("(")[0]))
        if sort == "bad_iban":
            assert not iban_ok(text.split(";")[1].strip('"'))
