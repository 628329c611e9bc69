"""`kind: tool_calls`: did the agent make the expected calls (τ-bench's gold actions, say)?

Calls are matched one-to-one: in any order by maximum bipartite matching, or
in order by longest common subsequence. Numbers compare by value (250 == 250.0).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from tracegym.evals.scorers.base import Scorer
from tracegym.evals.scorers.config import ToolCallsEval
from tracegym.evals.scorers.trajectory import ScoreResult, Trajectory, resolve_path

Call = tuple[str, Any]
_ERROR = re.compile(r"\s*error\b", re.IGNORECASE)


class ToolCallsScorer(Scorer):
    def __init__(self, spec: ToolCallsEval) -> None:
        super().__init__(spec.name, spec.timeout_s)
        self.spec = spec

    def _score(self, traj: Trajectory) -> ScoreResult:
        expected = [c for c in self._expected(traj) if self._considered(c[0])]
        # Precision is about what this attempt did: calls its prompt shows were made by someone else.
        own_only = self.spec.expected_remaining or self.spec.credit == "precision"
        made = traj.agent_calls() if own_only else traj.tool_calls()
        actual = [(c.name, c.arguments) for c in made
                  if self._considered(c.name) and not (self.spec.skip_failed_calls and _failed(c.result))]
        match = self._matches
        done = 0
        if self.spec.expected_remaining:
            before = [(c.name, c.arguments) for c in traj.prior_calls]
            made_before = {i for i, _ in any_order_matching(expected, before, match)}
            expected, done = [c for i, c in enumerate(expected) if i not in made_before], len(made_before)
        pairs = ordered_matching(expected, actual, match) if self.spec.order == "strict" else any_order_matching(
            expected, actual, match)
        matched_gold, matched_actual = {i for i, _ in pairs}, {j for _, j in pairs}
        extra = [c for j, c in enumerate(actual) if j not in matched_actual]
        missing = [c for i, c in enumerate(expected) if i not in matched_gold]
        if self.spec.credit == "precision":
            fraction = len(pairs) / len(actual) if actual else float(not expected)
        else:
            total = len(expected) + (len(extra) if self.spec.extra_calls == "fail" else 0)
            fraction = len(pairs) / total if total else 1.0
        reward = fraction if self.spec.partial_credit else float(fraction == 1.0)
        details = {"expected": len(expected), "matched": len(pairs), "missing": _brief(missing), "extra": _brief(extra)}
        if self.spec.expected_remaining:
            details["done_before"] = done
        return ScoreResult(reward, details)

    def _expected(self, traj: Trajectory) -> list[Call]:
        if self.spec.expected is not None:
            return [(c.name, c.arguments) for c in self.spec.expected]
        raw = resolve_path(traj, str(self.spec.expected_from))
        if not isinstance(raw, list):
            raise ValueError(f"{self.spec.expected_from} is a {type(raw).__name__}, not a list of calls")
        return [_gold_call(item, i, str(self.spec.expected_from)) for i, item in enumerate(raw)]

    def _considered(self, name: str) -> bool:
        if name in self.spec.ignore_tools:
            return False
        return self.spec.only_tools is None or name in self.spec.only_tools

    def _matches(self, gold: Call, got: Call) -> bool:
        if gold[0] != got[0]:
            return False
        if self.spec.match_arguments == "ignore":
            return True
        want, have = canonical(gold[1]), canonical(got[1])
        if isinstance(gold[1], ListedArguments):  # τ²-bench: only the arguments the action lists, on both sides
            return isinstance(have, dict) and _only(want, gold[1].names) == _only(have, gold[1].names)
        if self.spec.match_arguments == "exact":
            return want == have
        if not (isinstance(want, dict) and isinstance(have, dict)):
            return False
        if self.spec.match_arguments == "passed":
            return all(k in want and want[k] == v for k, v in have.items())
        return all(k in have and have[k] == v for k, v in want.items())


class ListedArguments(dict):
    """A gold call's arguments with τ²-bench's `compare_args`: only `names` are compared."""

    def __init__(self, arguments: dict[str, Any], names: list[str]) -> None:
        super().__init__(arguments)
        self.names = tuple(names)


def _only(arguments: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in arguments.items() if k in names}


def _failed(result: str | None) -> bool:
    return bool(result and _ERROR.match(result))


def _gold_call(item: Any, i: int, where: str) -> Call:
    """{name, arguments} or τ-bench's {name, kwargs}; a τ²-bench action that lists `compare_args` is compared on
    those arguments only."""
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        raise ValueError(f"{where}[{i}] is not a call with a name: {str(item)[:120]}")
    args = item.get("arguments", item.get("kwargs", {}))
    args = json.loads(args) if isinstance(args, str) else args
    names = item.get("compare_args")
    if isinstance(names, list) and isinstance(args, dict):
        return item["name"], ListedArguments(args, [str(n) for n in names])
    return item["name"], args


def canonical(value: Any) -> Any:
    """Integral floats become ints so that 250 and 250.0 compare equal; containers recurse."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value


def any_order_matching(expected: list[Call], actual: list[Call],
                       match: Callable[[Call, Call], bool]) -> list[tuple[int, int]]:
    """A maximum one-to-one matching (Kuhn's augmenting paths); pairs (expected index, actual index)."""
    edges = [[j for j, got in enumerate(actual) if match(gold, got)] for gold in expected]
    owner: dict[int, int] = {}  # actual index -> expected index

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(expected)):
        augment(i, set())
    return sorted((i, j) for j, i in owner.items())


def ordered_matching(expected: list[Call], actual: list[Call],
                     match: Callable[[Call, Call], bool]) -> list[tuple[int, int]]:
    """The longest in-order matching (longest common subsequence under `match`)."""
    n, m = len(expected), len(actual)
    best = [[0] * (m + 1) for _ in range(n + 1)]  # best[i][j]: LCS of expected[i:] and actual[j:]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            hit = best[i + 1][j + 1] + 1 if match(expected[i], actual[j]) else 0
            best[i][j] = max(hit, best[i + 1][j], best[i][j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if match(expected[i], actual[j]) and best[i][j] == best[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _brief(calls: list[Call]) -> list[str]:
    return [f"{name}({json.dumps(args, sort_keys=True, default=str)[:160]})" for name, args in calls[:10]]

