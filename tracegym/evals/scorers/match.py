"""`kind: match`: exact, regex, contains, JSON-schema and numeric checks of an answer.

A missing or malformed answer is the agent's failure and scores 0; a missing
expected value is the scorer's and is recorded as an error.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tracegym.evals.scorers.base import Scorer
from tracegym.evals.scorers.config import MatchEval
from tracegym.evals.scorers.trajectory import ScoreResult, Trajectory, resolve_path

_NUMBER = re.compile(r"[-+]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class MatchScorer(Scorer):
    def __init__(self, spec: MatchEval) -> None:
        super().__init__(spec.name, spec.timeout_s)
        self.spec = spec

    def _score(self, traj: Trajectory) -> ScoreResult:
        target = resolve_path(traj, self.spec.target)
        if target is None or (isinstance(target, str) and not target.strip()):
            return ScoreResult(0.0, {"reason": f"{self.spec.target} is empty"})
        text = target if isinstance(target, str) else json.dumps(target)
        if self.spec.mode == "json_schema":
            return _json_schema(text, self.spec.json_schema or {})
        source = self.spec.expected_from
        expected = self.spec.expected if source is None else resolve_path(traj, source)
        if expected is None:
            raise ValueError(f"the expected value ({self.spec.expected_from}) is null")
        if self.spec.mode == "numeric":
            return _numeric(text, expected, self.spec.tolerance, self.spec.rel_tolerance)
        if self.spec.mode == "contains":
            return self._contains(text, expected)
        if self.spec.mode == "regex":
            flags = 0 if self.spec.case_sensitive else re.IGNORECASE
            found = re.search(str(expected), text, flags)
            return ScoreResult(float(found is not None), {"match": found.group(0) if found else None})
        options = expected if isinstance(expected, list) else [expected]
        hit = any(self._norm(text) == self._norm(str(o)) for o in options)
        return ScoreResult(float(hit), {"expected": options[:10]})

    def _norm(self, text: str) -> str:
        text = " ".join(text.split())
        return text if self.spec.case_sensitive else text.casefold()

    def _contains(self, text: str, expected: Any) -> ScoreResult:
        wanted = [str(x) for x in expected] if isinstance(expected, list) else [str(expected)]
        haystack = self._norm(text)
        found = [w for w in wanted if self._norm(w) in haystack]
        missing = [w for w in wanted if w not in found]
        if not wanted:
            return ScoreResult(1.0, {"found": [], "missing": []})
        fraction = len(found) / len(wanted)
        reward = fraction if self.spec.partial_credit else float(fraction == 1.0)
        return ScoreResult(reward, {"found": found, "missing": missing})


def _numeric(text: str, expected: Any, tol: float, rel_tol: float) -> ScoreResult:
    try:
        want = float(str(expected).replace(",", ""))
    except ValueError:
        raise ValueError(f"the expected value {expected!r} is not a number") from None
    numbers = _NUMBER.findall(text)
    if not numbers:
        return ScoreResult(0.0, {"reason": "no number in the answer", "expected": want})
    got = float(numbers[-1].replace(",", ""))  # the last number is usually the final answer
    ok = abs(got - want) <= max(tol, rel_tol * abs(want))
    return ScoreResult(float(ok), {"answer": got, "expected": want})


def _json_schema(text: str, schema: dict[str, Any]) -> ScoreResult:
    import jsonschema

    value, reason = _parse_json(text)
    if reason:
        return ScoreResult(0.0, {"reason": reason})
    errors = sorted(jsonschema.validators.validator_for(schema)(schema).iter_errors(value), key=lambda e: e.path)
    return ScoreResult(float(not errors), {"errors": [e.message for e in errors[:5]]})


def _parse_json(text: str) -> tuple[Any, str | None]:
    """The answer as JSON: the whole text, else the first fenced block."""
    candidates = [text.strip(), *(m.strip() for m in _FENCE.findall(text))]
    for candidate in candidates:
        try:
            return json.loads(candidate), None
        except ValueError:
            continue
    return None, "the answer is not JSON (nor has a ```json block)"
