"""benchmarks/redact_fiftieth.py, the fiftieth blind corpus (restaurants, delivery and gig platforms in Latin
America and Iberia), is well-formed: every kind has its cases, each value is in its text, JSON carriers parse, and
the checked formats check. Its recall is the benchmark's business, not this test's."""

from __future__ import annotations

import json
import re
from collections import Counter

from benchmarks import redact_fiftieth as corpus
from benchmarks.corpus_formats import iban_ok, luhn_ok

ISSUE_KINDS = {"password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban"}


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


def test_labels_come_in_twenty_five_languages() -> None:
    assert len(corpus.LANGUAGES) >= 25
    assert {"es", "pt", "ca", "gl", "eu", "gn", "qu", "en"} <= corpus.LANGUAGES


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


def _cpf_ok(cpf: str) -> bool:
    body = cpf[:9]
    for start in (10, 11):
        body += str(sum(int(d) * w for d, w in zip(body, range(start, 1, -1), strict=True)) * 10 % 11 % 10)
    return body == cpf


def _rut_ok(rut: str) -> bool:
    total = sum(int(d) * (2 + k % 6) for k, d in enumerate(reversed(rut[:-1])))
    return rut[-1] == {11: "0", 10: "K"}.get(11 - total % 11, str(11 - total % 11))


def _cuit_ok(cuit: str) -> bool:
    check = 11 - sum(int(d) * w for d, w in zip(cuit[:10], [5, 4, 3, 2, 7, 6, 5, 4, 3, 2], strict=True)) % 11
    return cuit[10] == str(0 if check == 11 else check)


def _nif_ok(nif: str) -> bool:
    rem = sum(int(d) * w for d, w in zip(nif[:8], range(9, 1, -1), strict=True)) % 11
    return nif[8] == ("0" if rem < 2 else str(11 - rem))


def _curp_ok(curp: str) -> bool:
    alphabet = "0123456789ABCDEFGHIJKLMN&OPQRSTUVWXYZ"
    total = sum(alphabet.index(c) * (18 - k) for k, c in enumerate(curp[:17]))
    return len(curp) == 18 and curp[17] == str((10 - total % 10) % 10)


def _clabe_ok(clabe: str) -> bool:
    total = sum(int(d) * w % 10 for d, w in zip(clabe[:17], ([3, 7, 1] * 6)[:17], strict=True))
    return len(clabe) == 18 and clabe[17] == str((10 - total % 10) % 10)


def _dni_ok(dni: str) -> bool:
    number = str("XYZ".index(dni[0])) + dni[1:8] if dni[0] in "XYZ" else dni[:8]
    return dni[8] == "TRWAGMYFPDXBNJZSQVHLCKE"[int(number) % 23]


CHECKS = {"clabe": _clabe_ok, "es_dni": _dni_ok, "br_cpf": _cpf_ok, "cl_rut": _rut_ok, "ar_cuit": _cuit_ok,
          "pt_nif": _nif_ok, "mx_curp": _curp_ok}


def test_clabes_and_national_ids_carry_their_check_digits() -> None:
    for case in corpus.generate():
        compact = re.sub(r"[\s.\-]", "", case.secret)
        if case.kind in CHECKS:
            assert CHECKS[case.kind](compact), case.secret
        if case.kind == "pix_key" and case.form.endswith("/cpf"):
            assert _cpf_ok(compact), case.secret


def test_near_misses_are_sixteen_sorts_of_twenty_or_more() -> None:
    sorts = Counter(sort for sort, _text in corpus.generate_negatives())
    assert len(sorts) >= 16 and min(sorts.values()) >= 20


def test_the_corpus_is_deterministic() -> None:
    assert list(corpus.generate())[:50] == list(corpus.generate())[:50]
    assert list(corpus.generate_negatives()) == list(corpus.generate_negatives())
