"""`evals check`: how well a scorer agrees with production outcomes, before any GPU time is spent.

Positive class = success. A trajectory whose scorer failed is counted and
listed, and left out of the agreement figures (never scored as zero).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tracegym.evals.scorers.base import Scorer
from tracegym.evals.scorers.recorded import RecordedTrace
from tracegym.evals.scorers.trajectory import ScoreResult

_EPS = 1e-9


@dataclass(frozen=True, slots=True)
class Scored:
    trace_id: str
    task_key: str
    label: bool  # the production outcome: success
    result: ScoreResult


def score_traces(scorer: Scorer, traces: Iterable[RecordedTrace],
                 on_each: Callable[[], None] | None = None) -> list[Scored]:
    """Score every trace that carries an outcome."""
    scored = []
    for trace in traces:
        if trace.outcome not in ("success", "failure"):
            continue
        result = scorer.score(trace.trajectory())
        scored.append(Scored(trace.trace_id, trace.task_key(), trace.outcome == "success", result))
        if on_each:
            on_each()
    return scored


def check_report(scored: Sequence[Scored], threshold: float, max_errors: int = 10,
                 max_disagreements: int = 10) -> dict[str, Any]:
    """Agreement, the traces where scorer and label disagree, reward distribution, and how many tasks give GRPO
    no signal."""
    ok = [s for s in scored if s.result.ok]
    failed = [s for s in scored if not s.result.ok]
    predicted = [float(s.result.reward or 0.0) >= threshold - _EPS for s in ok]
    disagree = sorted((s for s, p in zip(ok, predicted, strict=True) if s.label != p), key=lambda s: s.trace_id)
    return {
        "traces": len(scored),
        "scored": len(ok),
        "scorer_errors": len(failed),
        "errors": [{"trace_id": s.trace_id, "error": s.result.error} for s in failed[:max_errors]],
        "threshold": threshold,
        "agreement": agreement([s.label for s in ok], predicted),
        "disagreements": len(disagree),
        "disagreement_examples": [disagreement(s, threshold) for s in disagree[:max_disagreements]],
        "reward": distribution([float(s.result.reward or 0.0) for s in ok]),
        "no_signal": no_signal(ok),
    }


def disagreement(s: Scored, threshold: float) -> dict[str, Any]:
    """One trace where the scorer's verdict is not the production label, with the scorer's details."""
    reward = float(s.result.reward or 0.0)
    return {"trace_id": s.trace_id, "label": "success" if s.label else "failure",
            "scorer": "success" if reward >= threshold - _EPS else "failure", "reward": reward,
            "details": s.result.details}


def agreement(labels: Sequence[bool], predicted: Sequence[bool]) -> dict[str, Any]:
    """Accuracy, precision, recall, F1 and Cohen's kappa of `predicted` against `labels` (True = success)."""
    pairs = list(zip(labels, predicted, strict=True))
    tp = sum(1 for y, p in pairs if y and p)
    fp = sum(1 for y, p in pairs if not y and p)
    fn = sum(1 for y, p in pairs if y and not p)
    tn = sum(1 for y, p in pairs if not y and not p)
    n = len(pairs)
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    f1 = None if precision is None or recall is None or precision + recall == 0 else (
        2 * precision * recall / (precision + recall))
    return {
        "n": n,
        "accuracy": _ratio(tp + tn, n),
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "cohen_kappa": cohen_kappa(tp, fp, fn, tn),
        "confusion": {"true_positive": tp, "false_positive": fp, "false_negative": fn, "true_negative": tn},
    }


def cohen_kappa(tp: int, fp: int, fn: int, tn: int) -> float | None:
    """(p_o - p_e) / (1 - p_e); None when chance agreement is already perfect (one class everywhere)."""
    n = tp + fp + fn + tn
    if n == 0:
        return None
    p_o = (tp + tn) / n
    p_e = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
    return None if math.isclose(p_e, 1.0) else (p_o - p_e) / (1 - p_e)


def distribution(rewards: Sequence[float], bins: int = 10) -> dict[str, Any]:
    """Mean, spread, quantiles and a histogram over [0, 1] of the rewards."""
    if not rewards:
        return {"n": 0}
    ordered = sorted(rewards)
    hist = [0] * bins
    for r in rewards:
        hist[min(int(r * bins), bins - 1)] += 1
    distinct = sorted(set(round(r, 6) for r in rewards))
    return {
        "n": len(rewards),
        "mean": statistics.fmean(rewards),
        "std": statistics.pstdev(rewards),
        "min": ordered[0],
        "p25": _quantile(ordered, 0.25),
        "median": _quantile(ordered, 0.5),
        "p75": _quantile(ordered, 0.75),
        "max": ordered[-1],
        "histogram": {f"{i / bins:.1f}-{(i + 1) / bins:.1f}": c for i, c in enumerate(hist)},
        "distinct_values": len(distinct),
    }


def no_signal(scored: Sequence[Scored]) -> dict[str, Any]:
    """Among tasks with two or more attempts, the share where every attempt got the same reward.

    GRPO learns from reward differences within a group of attempts at one
    task; where they are all equal the advantage is zero. The same share for
    the production labels is given for comparison.
    """
    groups: dict[str, list[Scored]] = defaultdict(list)
    for s in scored:
        groups[s.task_key].append(s)
    multi = [g for g in groups.values() if len(g) >= 2]
    same_reward = sum(1 for g in multi if max(_r(s) for s in g) - min(_r(s) for s in g) <= _EPS)
    same_label = sum(1 for g in multi if len({s.label for s in g}) == 1)
    return {
        "tasks": len(groups),
        "tasks_with_2plus_attempts": len(multi),
        "all_attempts_same_reward": same_reward,
        "fraction_no_signal": _ratio(same_reward, len(multi)),
        "fraction_no_signal_production": _ratio(same_label, len(multi)),
    }


def _r(s: Scored) -> float:
    return float(s.result.reward or 0.0)


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks."""
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
