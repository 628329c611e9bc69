"""benchmarks/redact_twentyninth.py, the twenty-ninth blind corpus (infrastructure and cloud operations), is
well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and the checked formats
check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import base64
import binascii
import json
from collections import Counter

from benchmarks import redact_twentyninth as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in corpus.generate())
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert corpus.OUTSIDE_TARGET <= set(counts)
    assert len(set(counts) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8
    assert len(corpus.OUTSIDE_TARGET) >= 6


def test_each_secret_is_in_its_text_and_json_carriers_parse() -> None:
    for case in corpus.generate():
        escaped = json.dumps(case.secret, ensure_ascii=False)[1:-1]
        assert case.secret in case.carried or escaped in case.carried, case.form
        if case.is_json:
            json.loads(case.carried)


def test_issue_kinds_come_in_many_carriers_and_a_third_is_json() -> None:
    cases = list(corpus.generate())
    for kind in ISSUE_KINDS:
        carriers = {case.form.split("/")[0] for case in cases if case.kind == kind}
        assert len(carriers) >= 15, kind
    share = sum(case.is_json for case in cases) / len(cases)
    assert 0.25 <= share <= 0.4


def test_agent_messages_come_in_twenty_five_languages() -> None:
    assert len(corpus.LANGS) >= 25
    texts = [case.text for case in corpus.generate() if case.form.startswith("agent_message/")]
    seen = {code for code, words in corpus.LANGS.items() if any(words[0] in text for text in texts)}
    assert len(seen) >= 25


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in corpus.generate():
        if case.kind == "card":
            assert luhn_ok(_digits(case.secret)), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in corpus.generate():
        if case.kind == "ssn":
            compact = _digits(case.secret)
            area, group, serial = compact[:3], compact[3:5], compact[5:]
            assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def test_checksummed_tokens_and_encodings_hold() -> None:
    for case in corpus.generate():
        if case.kind == "github_token" and case.secret.startswith("gh"):
            assert crc_ok(case.secret), case.secret
        if case.kind == "aws_secret":
            assert len(case.secret) == 40, case.secret
        if case.kind == "k8s_secret_b64":
            base64.b64decode(case.secret, validate=True)
        if case.kind == "vault_unseal_key":
            raw = bytes.fromhex(case.secret) if len(case.secret) == 66 else base64.b64decode(case.secret)
            assert len(raw) == 33
        if case.kind == "totp_seed":
            seed = case.secret.replace(" ", "").upper()
            base64.b32decode(seed + "=" * (-len(seed) % 8))
        if case.kind == "jwt":
            for part in case.secret.split(".")[:2]:
                json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def test_national_ids_carry_their_check_digits() -> None:
    for case in corpus.generate():
        n = _digits(case.secret)
        if case.kind == "nl_bsn":
            assert sum(int(c) * w for c, w in zip(n, range(9, 1, -1), strict=False)) % 11 == int(n[8]) % 11
        if case.kind == "in_aadhaar":
            assert corpus.verhoeff_digit(n[:11]) == n[11]
        if case.kind == "tr_tckn":
            assert int(n[10]) == sum(map(int, n[:10])) % 10
        if case.kind == "fr_nir":
            assert int(n[13:]) == 97 - int(n[:13]) % 97


def test_private_key_bodies_are_base64() -> None:
    for case in corpus.generate():
        if case.kind == "private_key":
            body = case.secret.replace("\\n", "").replace("\n", "").replace(" ", "")
            try:
                base64.b64decode(body, validate=True)
            except binascii.Error as err:
                raise AssertionError(case.form) from err


def test_near_misses_are_sixteen_sorts_of_twenty_or_more() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _text in negatives)
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    for _sort, text in negatives:
        if text.startswith(("{", "[")):
            json.loads(text)


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == list(corpus.generate())[:50]
    assert list(corpus.generate_negatives())[:50] == list(corpus.generate_negatives())[:50]
