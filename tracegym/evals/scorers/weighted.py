"""Several scorers combined by weight: the reward is their weighted mean.

If any part fails, the combination fails too (with every part's result in the
details): dropping the failed part would silently change what is measured.
Each part's reward is kept as a component of the result, by the part's name, with its weight.
"""

from __future__ import annotations

from tracegym.evals.scorers.base import Scorer
from tracegym.evals.scorers.trajectory import ScoreResult, Trajectory


class WeightedScorer(Scorer):
    def __init__(self, name: str, parts: list[tuple[Scorer, float]]) -> None:
        super().__init__(name, timeout_s=sum(s.timeout_s for s, _ in parts))
        if not parts or any(w <= 0 for _, w in parts):
            raise ValueError("a weighted scorer needs at least one part, each with a weight > 0")
        self.parts = parts

    def _score(self, traj: Trajectory) -> ScoreResult:
        results = [(scorer, weight, scorer.score(traj)) for scorer, weight in self.parts]
        details = {scorer.name: {"weight": weight, **r.to_dict()} for scorer, weight, r in results}
        failed = [f"{r.error}" for _, _, r in results if not r.ok]
        if failed:
            return ScoreResult.failed("; ".join(failed), details)
        total = sum(w for _, w, _ in results)
        reward = sum(w * float(r.reward or 0.0) for _, w, r in results) / total
        components = {scorer.name: float(r.reward or 0.0) for scorer, _, r in results}
        weights = {scorer.name: float(weight) for scorer, weight, _ in results}
        return ScoreResult(min(1.0, max(0.0, reward)), details, components=components, weights=weights)
