"""benchmarks/redact_twentyseventh.py, the twenty-seventh blind corpus (databases and data pipelines), is
well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and the checked formats
check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import redact_twentyseventh as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in corpus.generate())
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert corpus.OUTSIDE_TARGET <= set(counts)


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


def test_cards_pass_luhn_and_ibans_mod_97() -> None:
    for case in corpus.generate():
        if case.kind == "card":
            assert luhn_ok("".join(ch for ch in case.secret if ch.isdigit())), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in corpus.generate():
        if case.kind == "ssn":
            compact = "".join(ch for ch in case.secret if ch.isdigit())
            area, group, serial = compact[:3], compact[3:5], compact[5:]
            assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def test_near_misses_are_sixteen_sorts_of_twenty_or_more() -> None:
    sorts = Counter(sort for sort, _text in corpus.generate_negatives())
    assert len(sorts) >= 16 and min(sorts.values()) >= 20


def test_eight_kinds_beyond_the_issue_and_six_national_ids() -> None:
    assert len(set(corpus.KINDS) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8
    assert len(corpus.OUTSIDE_TARGET) >= 6 and corpus.OUTSIDE_TARGET <= set(corpus.KINDS)


def _digits(text: str) -> list[int]:
    return [int(ch) for ch in text if ch.isdigit()]


def _mod11(body: list[int], weights: list[int]) -> int:
    """Norway's control digit: 11 - weighted sum mod 11, 11 read as 0."""
    return (11 - sum(w * d for w, d in zip(weights, body, strict=True)) % 11) % 11


def _national_id_checks(kind: str, value: str) -> bool:
    d, compact = _digits(value), "".join(ch for ch in value if ch.isalnum())
    if kind == "fr_nir":
        return int(compact[13:]) == 97 - int(compact[:13]) % 97
    if kind == "br_cpf":
        return all(sum(w * x for w, x in zip(range(n + 1, 1, -1), d[:n], strict=True)) * 10 % 11 % 10 == d[n]
                   for n in (9, 10))
    if kind == "se_personnummer":
        return luhn_ok("".join(map(str, d[-10:])))
    if kind == "fi_hetu":
        return "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(value[:6] + value[7:10]) % 31] == value[10]
    if kind == "no_fodselsnummer":
        return (_mod11(d[:9], [3, 7, 6, 1, 8, 9, 4, 5, 2]) == d[9]
                and _mod11(d[:10], [5, 4, 3, 2, 7, 6, 5, 4, 3, 2]) == d[10])
    if kind == "cn_resident_id":
        weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
        return "10X98765432"[sum(w * x for w, x in zip(weights, d[:17], strict=True)) % 11] == compact[17]
    return len(compact) == 16 and compact[15] == chr(ord("A") + sum(
        corpus.CF_ODD[c] if j % 2 == 0 else int(c) if c.isdigit() else ord(c) - ord("A")
        for j, c in enumerate(compact[:15])) % 26)


def test_national_ids_carry_their_check_digits() -> None:
    for case in corpus.generate():
        if case.kind in corpus.OUTSIDE_TARGET:
            assert _national_id_checks(case.kind, case.secret), (case.kind, case.secret)


def test_github_tokens_carry_their_checksum() -> None:
    for case in corpus.generate():
        if case.kind == "github_token" and case.secret.startswith("ghp_"):
            assert crc_ok(case.secret), case.secret


def test_the_agent_speaks_twenty_five_languages() -> None:
    assert len(corpus.LANGS) >= 25
    intros = {case.carried.split(" (`")[0] for case in corpus.generate() if case.form.startswith("agent_message/")}
    assert len(intros & {lang[0] for lang in corpus.LANGS.values()}) >= 20


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate()) == list(corpus.generate())
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
