"""benchmarks/redact_equivalence.py: a text counts as losing only where characters found before go unfound."""

from __future__ import annotations

from benchmarks.redact_equivalence import compare


def test_a_finding_split_in_two_loses_nothing_and_a_shorter_one_loses_its_rule() -> None:
    before = {"texts": 3, "findings": {"a": [("twilio", 0, 10)], "b": [("password", 5, 9)], "c": [("email", 0, 4)]}}
    after = {"texts": 3, "findings": {"a": [("twilio", 0, 4), ("twilio_sid", 4, 10)], "b": [("password", 5, 8)],
                                      "d": [("phone", 1, 3)]}}
    result = compare(before, after)
    assert result["texts_losing_coverage"] == 2  # "b" lost a character, "c" lost its finding
    assert result["lost_by_rule"] == {"password": 1, "email": 1}
    assert result["texts_gaining_coverage"] == 1
    assert result["gained_by_rule"] == {"phone": 1}
