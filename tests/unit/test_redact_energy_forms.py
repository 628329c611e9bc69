"""Values as an energy utility's operations and a commodity desk write them (the forty-seventh corpus's causes):
Databento API keys, DLMS/COSEM keys on a Gurux client's command line, FIX Logon passwords with `^A` between the
fields, connection-string passwords that start with a dash, OAuth client secrets with `~`, recovery codes after
their label and whose they are, a short secret under a JSON key in text. Values written for these tests; the near
misses beside each form must stay."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


DATABENTO = "db-Hr4Tq9XwL2mZ7vKc3NpB8sJd5Fy0G"


@pytest.mark.parametrize("text", [
    f'client = db.Historical("{DATABENTO}")',
    f'live = db.Live(key="{DATABENTO}")',
    f"DATABENTO_API_KEY={DATABENTO}",
    f"[feed]\nnote = {DATABENTO}",
])
def test_a_databento_key_anywhere(text: str) -> None:
    assert DATABENTO in _values(text)
    assert DATABENTO in _values(json.dumps({"debug": text}))


@pytest.mark.parametrize("text", [
    "ssh ops@db-primaryreplicawesteuropeaz1 uptime",  # a host's name of words
    "docker run --name db-Qz8Rm2Xw9Lk4Tb8Vn1Hs6Jd3P postgres",  # not 29 after the prefix
    "git checkout mongodb-Hr4Tq9XwL2mZ7vKc3NpB8sJd5Fy0G",  # another word's tail
    "db-createOrderWithCustomerAddress",  # camelCase
])
def test_what_starts_with_db_but_is_no_databento_key(text: str) -> None:
    assert not any(v.startswith("db-") for v in _values(text)), text
