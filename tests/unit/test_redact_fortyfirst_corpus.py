"""benchmarks/redact_fortyfirst.py, the forty-first blind corpus (enterprise identity and IT administration), is
well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and the checked formats
check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import base64
import json
from collections import Counter

from benchmarks import redact_fortyfirst as corpus
from benchmarks.corpus_formats import crc_ok, iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}
CARD_PREFIXES = ("4", "5", "2", "34", "37", "6011", "64", "65", "35", "36", "30", "62")


def _cases(kind: str) -> list[corpus.Case]:
    return [case for case in corpus.generate() if case.kind == kind]


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def test_every_kind_has_per_kind_cases_and_the_issue_kinds_are_there() -> None:
    counts = Counter(case.kind for case in corpus.generate())
    assert set(counts.values()) == {corpus.PER_KIND}
    assert ISSUE_KINDS <= set(counts)
    assert len(corpus.OUTSIDE_TARGET) >= 6 and corpus.OUTSIDE_TARGET <= set(counts)
    assert len(set(counts) - ISSUE_KINDS - corpus.OUTSIDE_TARGET) >= 8


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


def test_the_agent_speaks_at_least_25_languages() -> None:
    texts = [case.text for case in corpus.generate()]
    spoken = {lang for lang, labels in corpus.LANGS.items()
              if any(labels[corpus.HELLO] in text for text in texts)}
    assert len(spoken) >= 25


def test_cards_pass_luhn_in_iin_ranges_and_ibans_mod_97() -> None:
    for case in corpus.generate():
        if case.kind == "card":
            number = _digits(case.secret)
            assert luhn_ok(number) and number.startswith(CARD_PREFIXES) and 14 <= len(number) <= 19, case.secret
        if case.kind == "iban":
            assert iban_ok(case.secret), case.secret


def test_ssns_follow_the_ssa_rules() -> None:
    for case in _cases("ssn"):
        compact = _digits(case.secret)
        area, group, serial = compact[:3], compact[3:5], compact[5:]
        assert area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def test_phones_avoid_the_ranges_kept_for_drama_and_toll_free() -> None:
    for case in _cases("phone_uk"):
        compact = _digits(case.secret).removeprefix("44").removeprefix("0")
        assert not compact.startswith(("7700900", "207946")), case.secret
    for case in _cases("phone_us_ca"):
        compact = _digits(case.secret).removeprefix("1")
        assert compact[:3] not in corpus.TOLL_FREE_NPA and compact[3:6] != "555", case.secret


def test_national_ids_carry_their_check_digits() -> None:
    for case in _cases("nl_bsn"):
        d = [int(c) for c in case.secret]
        assert (sum(x * w for x, w in zip(d[:8], range(9, 1, -1), strict=True)) - d[8]) % 11 == 0
    for case in _cases("tr_tckn"):
        d = [int(c) for c in case.secret]
        assert d[0] and d[9] == (7 * sum(d[0:9:2]) - sum(d[1:8:2])) % 10 and d[10] == sum(d[:10]) % 10
    for case in _cases("in_aadhaar"):
        assert corpus.verhoeff_ok(_digits(case.secret))
    for case in _cases("se_personnummer"):
        assert luhn_ok(_digits(case.secret))
    for case in _cases("fi_hetu"):
        body = case.secret[:6] + case.secret[7:10]
        assert "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(body) % 31] == case.secret[10]
    for case in _cases("es_dni"):
        number = case.secret[:-1].replace("X", "0").replace("Y", "1").replace("Z", "2")
        assert "TRWAGMYFPDXBNJZSQVHLCKE"[int(number) % 23] == case.secret[-1]


def test_domain_formats_check() -> None:
    for case in _cases("disk_recovery_key"):
        if case.form.endswith("/bitlocker"):
            blocks = [int(b) for b in case.secret.split("-")]
            assert len(blocks) == 8 and all(b % 11 == 0 and b < 720896 for b in blocks)
    for case in _cases("totp_seed"):
        seed = case.secret.replace(" ", "").upper()
        assert len(base64.b32decode(seed + "=" * (-len(seed) % 8))) in (10, 20)
    for case in _cases("jwt"):
        header, claims, _sig = case.secret.split(".")
        assert json.loads(base64.urlsafe_b64decode(header + "==="))["alg"] == "RS256"
        assert "exp" in json.loads(base64.urlsafe_b64decode(claims + "==="))
    for case in corpus.generate():
        if case.kind != "disguised" and case.secret.startswith(("ghp_", "gho_", "npm_")):
            assert crc_ok(case.secret), case.secret


def test_near_misses_are_sixteen_sorts_of_twenty_or_more() -> None:
    negatives = list(corpus.generate_negatives())
    sorts = Counter(sort for sort, _text in negatives)
    assert len(sorts) >= 16 and min(sorts.values()) >= 20
    for _sort, text in negatives:
        if text.startswith(("{", "[")):
            json.loads(text)


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == list(corpus.generate())[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
