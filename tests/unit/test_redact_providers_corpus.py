"""The provider-format benchmark's corpus (benchmarks/redact_providers.py): each value is what its format says."""

from __future__ import annotations

import re

from benchmarks import redact_providers as rp
from benchmarks.corpus_formats import crc_ok


def test_every_value_fits_its_format() -> None:
    by_name = {(f.provider, f.name): f for f in rp.FORMATS}
    for case in rp.generate():
        fmt = by_name[(case.provider, case.format)]
        assert re.fullmatch(fmt.shape, case.value), (fmt.provider, fmt.name, case.value)
        assert case.value in case.text


def test_checksums_hold() -> None:
    for case in rp.generate():
        if case.provider in ("github", "npm") and not case.value.startswith("github_pat_"):
            assert crc_ok(case.value)


def test_age_identity_is_bech32() -> None:
    value = rp.age_identity(rp.random.Random(1)).lower()
    hrp, data = value[:15], [rp.BECH32.index(c) for c in value[16:]]
    assert rp._bech32_checksum(hrp, data[:-6]) == data[-6:]


def test_three_values_three_carriers_deterministic() -> None:
    cases = rp.generate()
    assert len(cases) == 9 * len(rp.FORMATS)
    assert {c.carrier for c in cases} == {"log", "json", "shell"}
    assert [c.text for c in cases] == [c.text for c in rp.generate()]
    assert len({c.value for c in cases}) == 3 * len(rp.FORMATS)


def test_leaked_reads_uncovered_runs() -> None:
    text = "x abcdefghijkl y"
    assert rp.leaked("abcdefghijkl", text, [])
    assert not rp.leaked("abcdefghijkl", text, [(2, 14)])
    assert rp.leaked("abcdefghijkl", text, [(2, 4)])
