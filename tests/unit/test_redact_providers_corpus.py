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


_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _bech32_valid(value: str) -> bool:
    """BIP 173's verification (not the encoder's checksum): the polymod of the expanded hrp and data is 1."""
    hrp, _, rest = value.lower().rpartition("1")
    gen = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
    chk = 1
    for v in [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp] + [_BECH32.index(c) for c in rest]:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if top >> i & 1 else 0
    return chk == 1


def test_age_identity_is_bech32() -> None:
    assert _bech32_valid("A12UEL5L") and not _bech32_valid("A12UEL5M")  # BIP 173's test vector, and one altered
    value = rp.age_identity(rp.random.Random(1))
    assert value.startswith("AGE-SECRET-KEY-1") and len(value) == 74 and _bech32_valid(value)


def test_three_values_three_carriers_deterministic() -> None:
    cases = rp.generate()
    assert len(cases) == 9 * len(rp.FORMATS)
    assert {c.carrier for c in cases} == {"log", "json", "shell"}
    assert [c.text for c in cases] == [c.text for c in rp.generate()]
    assert len({c.value for c in cases}) == 3 * len(rp.FORMATS)
