"""The built-in rule table as a whole: every pattern compiles (rules compile lazily, when a text first triggers
them), and every rule says what it finds and what triggers it."""

from __future__ import annotations

from tracegym.redact.rules import BUILTIN_RULES


def test_every_builtin_pattern_compiles_and_every_rule_is_described() -> None:
    for rule in BUILTIN_RULES:
        assert rule.regex.pattern == rule.pattern
        assert rule.reject_regex is None or rule.reject_regex.pattern == rule.reject
        assert rule.reject_label_regex is None or rule.reject_label_regex.pattern == rule.reject_label
        assert rule.description and (rule.trigger or rule.translated), rule.name
