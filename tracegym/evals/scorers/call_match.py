"""Comparing a reply's tool calls with a successful reply's: the same tool, with the arguments that matter.

Arguments compare exactly after canonicalisation (numbers by value, text without case or surrounding space);
an argument written as sentences (a `think` tool's thought, a note) compares as prose, by the entities and
content words it shares. Each argument counts by its weight: one the successful attempts disagree on costs
less when it is missed than one they all agree on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tracegym.evals.scorers.prose import compare_prose
from tracegym.evals.scorers.trajectory import CallView, ReferenceCall

NAME_CREDIT = 0.5
"""The share of a call's credit earned by calling the same tool; its arguments earn the rest."""


def value_key(value: Any) -> Any:
    """A value as compared: numbers (and numeric text) by value, text stripped and case-folded, containers
    element by element (mappings by key)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return float(text.replace(",", "")) if text else text
        except ValueError:
            return text.casefold()
    if isinstance(value, dict):
        return tuple(sorted((str(k), value_key(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(value_key(v) for v in value)
    return json.dumps(value, sort_keys=True, default=str)


def _is_prose(value: Any) -> bool:
    return isinstance(value, str) and len(value.split()) >= 4


def argument_credit(got: Any, want: Any) -> float:
    """How far an argument's value matches the reference's: 1 or 0, or for prose the share of its content."""
    if _is_prose(want):
        return compare_prose(got, want, None).score if isinstance(got, str) else 0.0
    return float(value_key(got) == value_key(want))


@dataclass
class CallMatch:
    """A reply's calls against a reference's; `score` in [0, 1]."""

    score: float
    matched: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def call_credit(got: CallView, want: ReferenceCall) -> tuple[float, list[str]]:
    """The credit of one call against one reference call, and the reference arguments it missed."""
    if got.name != want.name:
        return 0.0, []
    if not isinstance(want.arguments, dict):
        same = value_key(got.arguments) == value_key(want.arguments)
        return (1.0 if same else NAME_CREDIT), ([] if same else ["arguments"])
    if not want.arguments:
        return 1.0, []
    have = got.arguments if isinstance(got.arguments, dict) else {}
    lost, missed = 0.0, []
    for key, value in want.arguments.items():
        credit = argument_credit(have[key], value) if key in have else 0.0
        lost += want.weights.get(key, 1.0) * (1.0 - credit)
        if credit < 1.0:
            missed.append(key)
    return NAME_CREDIT + (1.0 - NAME_CREDIT) * (1.0 - lost / len(want.arguments)), missed


def compare_calls(got: Sequence[CallView], want: Sequence[ReferenceCall]) -> CallMatch:
    """Each reference call paired with the reply's call that earns it the most credit (each used once); the sum
    over the longer of the two lists, so that missing and extra calls both cost."""
    free = list(range(len(got)))
    total, matched, missing = 0.0, [], []
    for ref in want:
        scored = [(call_credit(got[i], ref), i) for i in free]
        best = max(scored, key=lambda s: s[0][0], default=None)
        if best is None or best[0][0] == 0.0:
            missing.append(ref.name)
            continue
        (credit, missed), i = best
        free.remove(i)
        total += credit
        matched.append(ref.name if not missed else f"{ref.name} (not {', '.join(missed)})")
    longest = max(len(got), len(want))
    return CallMatch(total / longest if longest else 1.0, matched, missing)
