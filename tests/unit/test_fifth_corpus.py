"""The fifth redaction corpus is deterministic, large enough per kind and carrier, and its values are valid for their
formats (checksums where the format has one); its near misses fail those checks or hold nothing to redact."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections import Counter, defaultdict
from functools import cache
from urllib.parse import unquote

from cryptography.hazmat.primitives import serialization

from benchmarks import redact_fifth as corpus
from benchmarks.corpus_formats import base62, iban_ok, luhn_ok


@cache
def generated() -> tuple[corpus.Case, ...]:
    return tuple(corpus.generate())


def test_the_corpus_is_the_same_on_every_call_and_covers_every_kind() -> None:
    cases = generated()
    assert list(cases) == list(corpus.generate())
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
    per_kind = Counter(case.kind for case in cases)
    assert len(per_kind) >= 50 and min(per_kind.values()) >= 100
    carriers: defaultdict[str, set[str]] = defaultdict(set)
    for case in cases:
        carriers[case.kind].add(case.form.split("/")[0].removesuffix(".json"))
        if case.is_json:
            json.loads(case.carried)
        # Some 8 characters of the value are in what redaction sees, so a miss can be seen.
        forms = (case.secret, json.dumps(case.secret)[1:-1])
        assert any(f[i:i + 8] in case.carried for f in forms for i in range(max(1, len(f) - 7))), case
    assert min(len(names) for names in carriers.values()) >= 8
    assert Counter(sort for sort, _ in corpus.generate_negatives()).most_common()[-1][1] >= 15
    assert sum(1 for _ in corpus.generate_negatives()) >= 300


def digits_of(text: str) -> str:
    return re.sub(r"\D", "", text)


def test_cards_ibans_and_ssns_are_valid_and_their_near_misses_are_not() -> None:
    cases = generated()
    for case in cases:
        value = unquote(case.secret)  # as an access log's query string holds it
        if case.kind == "card":
            assert luhn_ok(digits_of(value)), value
        elif case.kind == "iban":
            compact = re.sub(r"\s", "", value)
            assert compact[:2].upper() in corpus.IBAN_BBAN and iban_ok(compact), value
        elif case.kind == "ssn":
            area, group, serial = digits_of(value)[:3], digits_of(value)[3:5], digits_of(value)[5:]
            assert area not in ("000", "666") and area < "900" and group != "00" and serial != "0000"
    assert len({c.secret[:2].upper() for c in cases if c.kind == "iban"}) >= 20
    for sort, text in corpus.generate_negatives():
        if sort == "bad_luhn_card":
            assert not luhn_ok(digits_of(text))
        elif sort == "bad_mod97_iban":
            assert not iban_ok(text.split(": ")[1].split(" -")[0])


def test_tokens_with_a_checksum_or_a_structure_hold_it() -> None:
    by_kind: defaultdict[str, list[str]] = defaultdict(list)
    for case in generated():
        by_kind[case.kind].append(case.secret)
    crc = [t for t in by_kind["github"] + by_kind["npm"] if not t.startswith("github_pat_")]
    for token in crc:
        body = token.split("_", 1)[1]
        assert base62(binascii.crc32(body[:30].encode()), 6) == body[30:], token
    for token in by_kind["jwt"]:
        header = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
        assert header == {"alg": "HS256", "typ": "JWT"}
    for token in by_kind["pypi"]:
        assert base64.urlsafe_b64decode(token[5:] + "==").startswith(b"\x02\x01\x08pypi.org")
    for token in by_kind["aws_key_id"]:
        assert re.fullmatch(r"(AKIA|ASIA)[A-Z2-7]{16}", token)


def test_the_real_private_keys_load() -> None:
    rng = corpus.random.Random(0)
    loaded = Counter()
    while len(loaded) < 3:
        made = corpus.pem(rng)
        if made.style == "openssh":
            serialization.load_ssh_private_key(made.value.encode(), None)
        elif made.style in ("ec_sec1", "ed25519_pkcs8"):
            serialization.load_pem_private_key(made.value.encode(), None)
        else:
            continue
        loaded[made.style] += 1
    assert set(loaded) == {"openssh", "ec_sec1", "ed25519_pkcs8"}
