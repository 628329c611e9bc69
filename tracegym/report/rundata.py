"""Everything the views of a run show, read from the store once: its row, metrics, checkpoints, evaluation."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracegym.errors import NotFoundError, did_you_mean

if TYPE_CHECKING:
    from tracegym.store import Store


@dataclass
class RunData:
    run: dict[str, Any]
    """The `runs` row; `config` parsed."""
    metrics: dict[str, dict[int, float | None]]
    """key -> {step: value}."""
    checkpoints: list[dict[str, Any]]
    comparison: dict[str, Any] | None = None
    """The newest evaluation of the run's checkpoints against their base (`training.comparison.compare`)."""
    eval_points: list[dict[str, Any]] = field(default_factory=list)
    """Overall held-out mean reward per evaluated model: step (0 for the base), label, value, low, high."""
    clusters: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The failure clusters of the run's task set, from the store's tasks: cluster key (`none` for tasks without
    one) -> detector, signature, formats (sorted list), rank (None when the store no longer ranks it)."""
    quarantines: list[dict[str, Any]] = field(default_factory=list)
    """The sampler pools the run quarantined (`pool_quarantines` rows): step, pool, cause, value, limit, window."""
    hack_warnings: list[dict[str, Any]] = field(default_factory=list)
    """Possible reward hacking the run warned of (`hack_warnings` rows): step, cluster, the two windows' reward and
    hollow share, p-value, detector, example rollout."""

    def cost(self) -> dict[str, Any] | None:
        """The run's rollout cost per pool at its last costed step (`training.cost.cost_summary`)."""
        from tracegym.training.pools.cost import cost_summary

        return cost_summary(self.metrics)

    @property
    def run_id(self) -> str:
        return str(self.run["run_id"])

    def last_step(self) -> int | None:
        steps = [s for values in self.metrics.values() for s in values]
        return max(steps) if steps else None

    def grpo_steps(self) -> tuple[list[int], list[int]]:
        """The GRPO steps the run recorded, and those of them that trained nothing (no optimizer step: every
        group's rewards were equal, so there was no advantage to learn from)."""
        from tracegym.training.display import trained_nothing

        warm = (self.run["config"].get("warmup") or {}).get("steps", 0)
        taken = {s: v for s, v in self.metrics.get("train/optimizer_steps", {}).items() if s > warm}
        idle = [s for s, v in taken.items() if v is not None and trained_nothing(s, warm, {"train/optimizer_steps": v})]
        return sorted(taken), sorted(idle)


def find_run(store: Store, ref: str) -> str:
    """The run id `ref` names: an id, a unique prefix, or a run folder; training runs and `tracegym run` runs."""
    folder = Path(ref)
    if (folder / "run.json").is_file():
        return str(json.loads((folder / "run.json").read_text(encoding="utf-8"))["run_id"])
    from tracegym.report.rollout_views import sampled_run_ids

    ids = sorted([r["run_id"] for r in store.query("SELECT run_id FROM runs")] + sampled_run_ids(store))
    if ref in ids:
        return ref
    matches = [i for i in ids if i.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise NotFoundError(f"Run prefix {ref!r} matches {', '.join(matches[:5])}. Fix: give more of the id.")
    raise NotFoundError(f"No run {ref!r} in the store.{did_you_mean(ref, ids)} Fix: see `tracegym runs list`, or "
                        "pass the run folder.")


def load_run(store: Store, ref: str) -> RunData:
    from tracegym.evals.checkpoints.comparison import latest_comparison
    from tracegym.training.metrics import read_hack_warnings, read_metrics, read_quarantines

    run_id = find_run(store, ref)
    rows = store.query("SELECT * FROM runs WHERE run_id = ?", [run_id])
    if not rows:
        raise NotFoundError(f"Run {run_id} (from {ref}) is not in this store. Fix: pass the --store it trained with.")
    run = rows[0]
    run["config"] = json.loads(run["config"]) if run["config"] else {}
    checkpoints = store.query("SELECT step, path, policy_version, created_at FROM checkpoints WHERE run_id = ? "
                              "ORDER BY step", [run_id])
    data = RunData(run, read_metrics(store, run_id), checkpoints, latest_comparison(store, run_id))
    data.eval_points = _eval_points(data.comparison)
    data.clusters = _cluster_info(store, run["task_set_id"])
    data.quarantines = read_quarantines(store, run_id)
    data.hack_warnings = read_hack_warnings(store, run_id)
    return data


def _cluster_info(store: Store, task_set_id: str | None) -> dict[str, dict[str, Any]]:
    """What the store knows of each failure cluster of a task set (see `RunData.clusters`)."""
    from tracegym.training.cluster_reward import NO_CLUSTER

    rows = store.query(
        """SELECT coalesce(t.cluster_id, ?) AS cluster_id, any_value(t.detector) AS detector,
                  any_value(json_extract_string(t.spec, '$.provenance.signature')) AS signature,
                  list(DISTINCT json_extract_string(t.spec, '$.provenance.format')) AS formats,
                  min(c.rank) AS rank
           FROM tasks t LEFT JOIN clusters c ON c.cluster_id = t.cluster_id
           WHERE t.task_set_id = ? GROUP BY 1""", [NO_CLUSTER, task_set_id])
    return {r["cluster_id"]: {"detector": r["detector"], "signature": r["signature"], "rank": r["rank"],
                              "formats": sorted(f for f in r["formats"] if f is not None)} for r in rows}


def _eval_points(comparison: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The overall row of each model, base first (at step 0), then checkpoints by step."""
    if comparison is None:
        return []
    base, *checkpoints = comparison["groups"][0]["rows"]
    points = [{"step": 0, "label": base["model"], **base["reward"]}]
    points += sorted(({"step": row["step"], "label": row["model"], **row["reward"]} for row in checkpoints),
                     key=lambda p: p["step"])
    return points


def list_runs(store: Store) -> list[dict[str, Any]]:
    """One line per run, newest first: training runs (status, progress, checkpoints, last training reward,
    evaluations), and `tracegym run` runs (episodes, mean reward)."""
    from tracegym.report.rollout_views import sampled_runs

    rows = _training_runs(store) + sampled_runs(store)
    keys = list(dict.fromkeys(k for row in rows for k in row))
    return sorted(({k: row.get(k) for k in keys} for row in rows), key=lambda r: str(r["started_at"] or ""),
                  reverse=True)


def _training_runs(store: Store) -> list[dict[str, Any]]:
    return store.query(
        """SELECT r.run_id, 'train' AS kind, r.status, r.base_model, r.task_set_id, r.started_at, r.updated_at,
                  (SELECT max(step) FROM metrics m WHERE m.run_id = r.run_id) AS step,
                  (SELECT count(*) FROM checkpoints c WHERE c.run_id = r.run_id) AS checkpoints,
                  (SELECT arg_max(value, step) FROM metrics m WHERE m.run_id = r.run_id AND m.key = 'reward/mean')
                      AS last_reward,
                  (SELECT count(DISTINCT eval_id) FROM eval_models e WHERE e.run_id = r.run_id) AS evaluations,
                  r.run_dir
           FROM runs r ORDER BY r.started_at DESC""")


def metric_summary(metrics: dict[str, dict[int, float | None]]) -> list[dict[str, Any]]:
    """Per metric key: how many steps recorded it, its value at the last of them, min, mean and max."""
    rows = []
    for key, values in sorted(metrics.items()):
        finite = [v for v in values.values() if v is not None]
        rows.append({"key": key, "steps": len(values), "last": values[max(values)],
                     "min": min(finite) if finite else None, "mean": sum(finite) / len(finite) if finite else None,
                     "max": max(finite) if finite else None})
    return rows
