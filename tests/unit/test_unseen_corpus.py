"""benchmarks/redact_unseen.py: the same corpus on every call, every value valid for its format and carried where
benchmarks/redact.py looks for it, every near miss invalid where its format has a checksum."""

import base64
import json
import re
from collections import Counter

import pytest

from benchmarks import redact_unseen as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok


@pytest.fixture(scope="module")
def cases() -> list[corpus.Case]:
    return list(corpus.generate())


def test_the_corpus_is_the_same_on_every_call_and_holds_120_values_of_each_kind(cases: list[corpus.Case]) -> None:
    first = cases
    assert first == list(corpus.generate())
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
    counts = Counter(case.kind for case in first)
    assert len(counts) == 45 and set(counts.values()) == {120}
    carriers = {kind: {c.form.split("/")[0] for c in first if c.kind == kind} for kind in counts}
    assert min(len(names) for names in carriers.values()) >= 8
    assert len(list(corpus.generate_negatives())) >= 300


def test_every_secret_is_in_its_carried_text_and_json_carriers_parse(cases: list[corpus.Case]) -> None:
    for case in cases:
        assert corpus.holds(case.carried, case.secret), case
        if case.is_json:
            json.loads(case.carried)


def unspaced(value: str) -> str:
    return re.sub(r"[\s\-._]", "", value)


def test_checksummed_values_are_valid(cases: list[corpus.Case]) -> None:
    for case in cases:
        if case.kind == "card":
            assert luhn_ok(unspaced(case.secret)), case.secret
        elif case.kind == "iban":
            assert iban_ok(unspaced(case.secret)), case.secret
        elif case.kind == "github" and not case.secret.startswith("github_pat_") or case.kind == "npm":
            assert crc_ok(case.secret), case.secret
        elif case.kind == "ssn":
            area, group, serial = int(unspaced(case.secret)[:3]), unspaced(case.secret)[3:5], unspaced(case.secret)[5:]
            assert 0 < area < 900 and area != 666 and group != "00" and serial != "0000"
        elif case.kind == "jwt":
            header = json.loads(base64.urlsafe_b64decode(case.secret.split(".")[0] + "=="))
            sizes = {"HS256": 32, "RS256": 256, "ES256": 64}
            assert len(base64.urlsafe_b64decode(case.secret.split(".")[2] + "==")) == sizes[header["alg"]]
        elif case.kind == "aws_key_id":
            assert re.fullmatch(r"(AKIA|ASIA)[A-Z2-7]{16}", case.secret)


def test_checksummed_near_misses_are_invalid() -> None:
    for sort, text in corpus.generate_negatives():
        number = unspaced(text.split(":", 1)[-1].replace("card number", ""))
        if sort == "bad_luhn_card":
            assert not luhn_ok(number), text
        elif sort == "bad_iban":
            assert not iban_ok(number), text
