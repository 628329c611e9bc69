"""One scorer per eval kind, all with the same interface (`Scorer.score(trajectory) -> ScoreResult`)."""

from __future__ import annotations

from collections.abc import Sequence

from tracegym.evals.scorers.base import Scorer, ScorerContext, coerce_result
from tracegym.evals.scorers.config import (
    CommandEval,
    EvalsFile,
    EvalSpec,
    JudgeEval,
    LabelEval,
    MatchEval,
    PythonEval,
    ReferenceEval,
    ToolCallsEval,
    WeightedEval,
)
from tracegym.evals.scorers.weighted import WeightedScorer


def build_scorer(spec: EvalSpec, ctx: ScorerContext, evals: EvalsFile | None = None) -> Scorer:
    """The scorer for one eval definition; `ConfigError` if it cannot be built (a missing module, say)."""
    if isinstance(spec, PythonEval):
        from tracegym.evals.scorers import python

        return python.build(spec, ctx, evals)
    if isinstance(spec, CommandEval):
        from tracegym.evals.scorers.command import CommandScorer

        return CommandScorer(spec, ctx.evals_dir)
    if isinstance(spec, MatchEval):
        from tracegym.evals.scorers.match import MatchScorer

        return MatchScorer(spec)
    if isinstance(spec, ToolCallsEval):
        from tracegym.evals.scorers.tool_calls import ToolCallsScorer

        return ToolCallsScorer(spec)
    if isinstance(spec, JudgeEval):
        from tracegym.evals.scorers import judge

        return judge.build(spec, ctx, evals)
    if isinstance(spec, LabelEval):
        from tracegym.evals.scorers import label

        return label.build(spec, ctx, evals)
    if isinstance(spec, ReferenceEval):
        from tracegym.evals.scorers import reference

        return reference.build(spec, ctx, evals)
    if isinstance(spec, WeightedEval):
        if evals is None:
            raise ValueError("a weighted eval is built from an evals file that defines its parts")
        return WeightedScorer(spec.name, [(build_scorer(evals.get(n), ctx, evals), w) for n, w in spec.parts.items()])
    raise TypeError(f"no scorer for {type(spec).__name__}")


def scorer_for(evals: EvalsFile, names: Sequence[tuple[str, float]], ctx: ScorerContext) -> Scorer:
    """The scorer a task is bound to: one eval, or several combined by weight."""
    if len(names) == 1:
        return build_scorer(evals.get(names[0][0]), ctx, evals)
    parts = [(build_scorer(evals.get(n), ctx, evals), w) for n, w in names]
    return WeightedScorer("+".join(n for n, _ in names), parts)


__all__ = ["Scorer", "ScorerContext", "WeightedScorer", "build_scorer", "coerce_result", "scorer_for"]
