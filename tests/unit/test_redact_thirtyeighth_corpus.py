"""benchmarks/redact_thirtyeighth.py, the thirty-eighth blind corpus (media, gaming and creator platforms), is
well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and the checked formats
check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_thirtyeighth as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in corpus.generate())
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert len(set(counts) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8
    assert corpus.OUTSIDE_TARGET <= set(counts) and len(corpus.OUTSIDE_TARGET) >= 6


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


def test_the_agent_writes_to_users_in_at_least_25_languages() -> None:
    assert len(corpus.LANGS) >= 25
    styles = {case.form.split("/")[1] for case in corpus.generate() if case.form.split("/")[1].startswith("i18n_")}
    assert len(styles) >= 25


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in corpus.generate():
        if case.kind == "card":
            number = _digits(case.secret)
            assert luhn_ok(number) and number not in corpus.TEST_CARDS, case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in corpus.generate():
        if case.kind == "ssn":
            compact = _digits(case.secret)
            area, group, serial = compact[:3], compact[3:5], compact[5:]
            assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def test_github_tokens_carry_their_checksum() -> None:
    for case in corpus.generate():
        if case.kind == "github_token":
            assert crc_ok(case.secret), case.secret


def test_national_ids_carry_their_check_digits() -> None:
    for case in corpus.generate():
        n = _digits(case.secret)
        if case.kind == "br_cpf":
            for size in (9, 10):
                total = sum(int(c) * (size + 1 - j) for j, c in enumerate(n[:size]))
                assert total * 10 % 11 % 10 == int(n[size]), case.secret
        elif case.kind == "pl_pesel":
            total = sum(int(c) * w for c, w in zip(n, [1, 3, 7, 9, 1, 3, 7, 9, 1, 3, 1], strict=True))
            assert total % 10 == 0, case.secret
        elif case.kind == "nl_bsn":
            assert (sum(int(c) * (9 - j) for j, c in enumerate(n[:8])) - int(n[8])) % 11 == 0, case.secret
        elif case.kind == "tr_tckn":
            d = [int(c) for c in n]
            assert d[0] and d[9] == (sum(d[0:9:2]) * 7 - sum(d[1:8:2])) % 10 and d[10] == sum(d[:10]) % 10
        elif case.kind == "se_personnummer":
            assert luhn_ok(n), case.secret
        elif case.kind == "es_dni":
            compact = case.secret.replace(".", "").replace("-", "")
            number = str("XYZ".index(compact[0])) + compact[1:-1] if compact[0] in "XYZ" else compact[:-1]
            assert "TRWAGMYFPDXBNJZSQVHLCKE"[int(number) % 23] == compact[-1], case.secret


def test_near_misses_are_sixteen_sorts_of_twenty_or_more() -> None:
    sorts = Counter(sort for sort, _text in corpus.generate_negatives())
    assert len(sorts) >= 16 and min(sorts.values()) >= 20


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == list(corpus.generate())[:50]
    assert list(corpus.generate_negatives())[:50] == list(corpus.generate_negatives())[:50]
