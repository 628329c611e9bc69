"""benchmarks/redact_fresh.py, the instrument itself: the same corpus for the same seed, and every value valid
for its format, so a miss it reports is the rules' and not the corpus's."""

import re
from collections import Counter

from benchmarks import redact_fresh as fresh
from benchmarks.corpus_formats import crc_b62, iban_ok, luhn_ok


def test_the_same_seed_gives_the_same_corpus_and_another_seed_another() -> None:
    first = fresh.generate(per_kind=5, seed=3)
    assert first == fresh.generate(per_kind=5, seed=3)
    other = fresh.generate(per_kind=5, seed=4)
    assert [c.secret for c in first] != [c.secret for c in other]
    assert fresh.generate_negatives(seed=3) == fresh.generate_negatives(seed=3)


def test_every_value_is_valid_for_its_format_and_lies_in_its_carrier() -> None:
    cases = fresh.generate(per_kind=25, seed=1)
    assert Counter(c.kind for c in cases) == {kind: 25 for kind in fresh.KINDS}
    seen: Counter[str] = Counter()
    for case in cases:
        assert case.secret in case.text
        assert case.is_json == (case.carried != case.text)
        if case.kind == "card":
            number = re.sub(r"\D", "", case.secret)
            assert 12 <= len(number) <= 19 and luhn_ok(number), case.secret
        elif case.kind == "iban":
            assert iban_ok(case.secret), case.secret
        elif case.kind in ("github_token", "npm_token") and "github_pat_" not in case.secret:
            body = case.secret.split("_", 1)[1]
            assert crc_b62(body[:30]) == body[30:], case.secret
        else:
            continue
        seen[case.kind] += 1
    assert set(seen) == {"card", "iban", "github_token", "npm_token"}


def test_near_misses_are_invalid_where_they_have_a_check() -> None:
    negatives = fresh.generate_negatives(seed=2)
    assert len(negatives) >= 300
    for sort, text in negatives:
        if sort == "bad_luhn_card":
            number = re.sub(r"\D", "", re.search(r"[\d -]{12,}\d", text).group())
            assert not luhn_ok(number), text
        if sort == "bad_iban":
            iban = re.search(r"[A-Z]{2}\d\d[\dA-Z ]{10,}", text).group().strip()
            assert not iban_ok(iban), text
