"""benchmarks/redact_fiftyfifth.py, the fifty-fifth blind corpus (universities and research in the Nordics, Baltics
and Low Countries), is well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and
the checked formats check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
from collections import Counter
from datetime import date

from benchmarks import redact_fiftyfifth as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

PHONE_KINDS = {"phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "phone_fi", "phone_se", "phone_no",
               "phone_dk", "phone_is", "phone_ee", "phone_lv", "phone_lt", "phone_nl", "phone_be", "phone_lu"}
SECRET_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
                "jwt", "oauth_token", "session_cookie", "private_key", "totp_seed"}
CASES = list(corpus.generate())


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def _weighted(number: str, weights: tuple[int, ...]) -> int:
    return sum(int(d) * w for d, w in zip(number, weights, strict=False))


def test_every_kind_has_per_kind_cases_and_the_target_is_forty_one_kinds() -> None:
    counts = Counter(case.kind for case in CASES)
    assert set(counts.values()) == {corpus.PER_KIND}
    assert PHONE_KINDS | SECRET_KINDS <= set(counts)
    assert corpus.OUTSIDE_TARGET <= set(counts)
    assert len(set(counts) - corpus.OUTSIDE_TARGET) == 41


def test_each_secret_is_in_its_text_and_json_carriers_parse() -> None:
    for case in CASES:
        escaped = json.dumps(case.secret, ensure_ascii=False)[1:-1]
        assert case.secret in case.carried or escaped in case.carried or \
            json.dumps(case.secret)[1:-1] in case.carried, case.form
        if case.is_json:
            json.loads(case.carried)


def test_kinds_come_in_many_carriers_and_about_a_third_is_json() -> None:
    for kind in PHONE_KINDS | {"password", "labelled_key", "email", "iban", "card"}:
        carriers = {case.form.split("/")[0] for case in CASES if case.kind == kind}
        assert len(carriers) >= 10, kind
    share = sum(case.is_json for case in CASES) / len(CASES)
    assert 0.25 <= share <= 0.42


def test_context_words_come_in_the_fifteen_languages() -> None:
    assert len(corpus.LANGS) == 15
    for sort in ("phone", "password", "key"):
        assert set(corpus.LANGS) <= set(corpus.WORDS[sort]), sort


def test_cards_pass_luhn_ibans_mod_97_and_github_tokens_their_crc() -> None:
    for case in CASES:
        if case.kind == "card":
            assert luhn_ok(_digits(case.secret)), case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret
        if case.kind == "github_token" and case.secret.startswith(("ghp_", "ghs_", "ghu_", "gho_")):
            assert crc_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in CASES:
        if case.kind == "ssn":
            compact = _digits(case.secret)
            area, group, serial = compact[:3], compact[3:5], compact[5:]
            assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def _baltic(n: str) -> int:
    c = _weighted(n, (1, 2, 3, 4, 5, 6, 7, 8, 9, 1)) % 11
    if c == 10:
        c = _weighted(n, (3, 4, 5, 6, 7, 8, 9, 1, 2, 3)) % 11
        c = 0 if c == 10 else c
    return c


def _mod11(n: str, weights: tuple[int, ...]) -> int:
    c = 11 - _weighted(n, weights) % 11
    return 0 if c == 11 else c


def test_national_ids_carry_their_check_digits_and_real_dates() -> None:
    for case in CASES:
        s, n = case.secret, _digits(case.secret)
        if case.kind == "id_fi":
            assert "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(s[:6] + s[7:10]) % 31] == s[10], s
            century = {"-": 1900, "Y": 1900, "A": 2000, "B": 2000}[s[6]]
            date(century + int(s[4:6]), int(s[2:4]), int(s[:2]))
        elif case.kind == "id_se":
            assert luhn_ok(n[-10:]), s
        elif case.kind == "id_no":
            assert _mod11(n[:9], (3, 7, 6, 1, 8, 9, 4, 5, 2)) == int(n[9]), s
            assert _mod11(n[:10], (5, 4, 3, 2, 7, 6, 5, 4, 3, 2)) == int(n[10]), s
        elif case.kind == "id_dk":
            assert _weighted(n, (4, 3, 2, 7, 6, 5, 4, 3, 2, 1)) % 11 == 0, s
        elif case.kind == "id_is":
            assert (11 - _weighted(n[:8], (3, 2, 7, 6, 5, 4, 3, 2)) % 11) % 11 == int(n[8]), s
        elif case.kind in ("id_ee", "id_lt"):
            assert _baltic(n[:10]) == int(n[10]), s
            date((1800 + 100 * ((int(n[0]) - 1) // 2)) + int(n[1:3]), int(n[3:5]), int(n[5:7]))
        elif case.kind == "id_lv":
            assert (1101 - _weighted(n[:10], (1, 6, 3, 7, 9, 10, 5, 8, 4, 2))) % 11 == int(n[10]), s
        elif case.kind == "id_nl":
            assert (_weighted(n[:8], (9, 8, 7, 6, 5, 4, 3, 2)) - int(n[8])) % 11 == 0, s
        elif case.kind == "id_be":
            base = n[:9]
            assert int(n[9:]) in (97 - int(base) % 97, 97 - int("2" + base) % 97), s


def test_near_misses_are_twenty_three_sorts_of_thirty() -> None:
    sorts = Counter(sort for sort, _text in corpus.generate_negatives())
    assert len(sorts) == 23 and set(sorts.values()) == {30}


def test_invalid_near_misses_fail_their_checks() -> None:
    for sort, text in corpus.generate_negatives():
        if sort == "card_invalid":
            number = text.split("sample batch ", 1)[1].split(" (", 1)[0]
            assert not luhn_ok(_digits(number)), text
        if sort == "iban_invalid":
            iban = text.split("(checksum): ", 1)[1].split('"', 1)[0].split("'", 1)[0].strip()
            assert not iban_ok(iban), text


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == CASES[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
