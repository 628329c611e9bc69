"""`kind: label`: replay a production judgement recorded in the store (a human label, an eval's score)."""

from __future__ import annotations

from typing import Any

from tracegym.errors import ConfigError
from tracegym.evals.scorers.base import Scorer, ScorerContext, StoreReader
from tracegym.evals.scorers.config import EvalsFile, LabelEval
from tracegym.evals.scorers.trajectory import ScoreResult, Trajectory


class LabelScorer(Scorer):
    def __init__(self, spec: LabelEval, store: StoreReader) -> None:
        super().__init__(spec.name, spec.timeout_s)
        self.spec = spec
        self.store = store

    def _score(self, traj: Trajectory) -> ScoreResult:
        if not traj.trace_id:
            raise ValueError("the trajectory names no source trace to look its label up by")
        sql = "SELECT value, label, kind FROM scores WHERE trace_id = ? AND name = ?"
        params: list[Any] = [traj.trace_id, self.spec.score]
        if self.spec.score_kind:
            sql += " AND kind = ?"
            params.append(self.spec.score_kind)
        rows = self.store.query(sql, params)
        if not rows:
            raise LookupError(f"no score {self.spec.score!r} is recorded for trace {traj.trace_id}")
        if len(rows) > 1:
            raise LookupError(f"{len(rows)} scores named {self.spec.score!r} for trace {traj.trace_id}; "
                              "set score_kind: to pick one")
        return self._reward(rows[0])

    def _reward(self, row: dict[str, Any]) -> ScoreResult:
        details = {"recorded_value": row["value"], "recorded_label": row["label"], "recorded_kind": row["kind"]}
        if self.spec.labels is not None:
            key = row["label"] if row["label"] is not None else _label_of(row["value"])
            if key not in self.spec.labels:
                raise LookupError(f"recorded label {key!r} is not in labels: ({', '.join(self.spec.labels)})")
            return ScoreResult(self.spec.labels[key], details)
        if row["value"] is None:
            raise ValueError(f"score {self.spec.score!r} has a label ({row['label']!r}) but no value; "
                             "map it with labels:")
        low, high = self.spec.value_range
        return ScoreResult((float(row["value"]) - low) / (high - low), details)


def _label_of(value: float | None) -> str:
    """Numeric values as label keys: 1.0 -> '1', 0.5 -> '0.5'."""
    return "" if value is None else (str(int(value)) if float(value).is_integer() else str(value))


def build(spec: LabelEval, ctx: ScorerContext, evals: EvalsFile | None) -> LabelScorer:
    if ctx.store is None:
        where = evals.where(spec.name) if evals else spec.name
        raise ConfigError(f"{where}: label eval {spec.name!r} reads recorded scores from the store, "
                          "but no store is open here. Fix: pass --store, or use another eval kind.")
    return LabelScorer(spec, ctx.store)
