"""The comparison table of an evaluation: each model against the base, overall and per failure cluster.

Per task, a model's figures are its mean reward over the task's k samples (an unscored sample, whose
harness, policy or scorer failed, counts as reward 0 and a failure, and is counted under `errors`), its
pass rate (pass@1) and pass@k. A group's figure is the mean over its tasks, with a bootstrap interval
over tasks; a model's change against the base is paired by task and called beyond noise by a sign-flip
permutation test (`tracegym.evals.checkpoints.stats`). A regression is a task the base passes (at least half of
its samples) and the model fails (fewer than half).

Beside the reward, each row holds the model's share of hollow replies (`hollow`): per task, the share of its samples
whose episode a hollow-reply detector flags (tracegym/evals/scorers/hollow.py, judged against the task's recorded
tool results too), as a mean over tasks with its interval, and its paired change against the base. A checkpoint
whose reward rose with its hollow share may have learned to game the eval rather than the task.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tracegym.errors import NotFoundError
from tracegym.evals.checkpoints.stats import Interval, PairedChange, bootstrap_mean, paired_change, pass_at_k
from tracegym.evals.scorers.hollow import episode_findings, recorded_keys

if TYPE_CHECKING:
    from tracegym.store import Store

METRICS = ("reward", "pass@1", "pass@k")
HOLLOW = "hollow"


@dataclass(frozen=True)
class ModelRef:
    """A model as the comparison sees it."""

    label: str
    checkpoint_id: str
    run_id: str | None = None
    step: int | None = None


@dataclass
class TaskFigures:
    """One model on one task."""

    cluster_id: str | None
    samples: int
    errors: int
    reward: float
    pass_rate: float
    pass_at_k: float
    component: float | None = None
    """The mean of one reward component over the samples (a sample without it counts 0), when one was asked for."""
    hollow: float = 0.0
    """The share of the samples whose episode a hollow-reply detector flags."""


@dataclass(frozen=True)
class Scores:
    """Which rewards a comparison reads: those stored with the samples, or a score version of `tracegym
    rescore` (each sample's latest score up to that version), and which component beside the scalar."""

    version: int | None = None
    threshold: float = 1.0
    """A sample passes at this reward (with a version; the stored pass is used otherwise)."""
    component: str | None = None


_AS_OF = """LEFT JOIN (SELECT rollout_id, reward, components FROM rollout_score_versions WHERE version <= ?
                       QUALIFY row_number() OVER (PARTITION BY rollout_id ORDER BY version DESC) = 1) v
            ON v.rollout_id = e.rollout_id"""


def read_task_figures(store: Store, eval_id: str, checkpoint_id: str, samples: int,
                      task_ids: Sequence[str] | None = None, scores: Scores = Scores()) -> dict[str, TaskFigures]:
    """task_id -> figures over sample indices < `samples` (tasks with fewer samples stored are left out)."""
    stored = scores.version is None
    source, passed = ("e", "e.pass") if stored else ("v", "coalesce(v.reward >= ?, false)")
    params: list[str | float | None] = [] if stored else [scores.threshold, scores.version]  # in ? order below
    part = "TRY_CAST(json_extract_string(components, ?) AS DOUBLE)" if scores.component else "NULL"
    if scores.component:
        params.insert(0, f'$."{scores.component}"')
    rows = store.query(
        f"SELECT task_id, any_value(cluster_id) AS cluster_id, count(*) AS n, "
        "count(*) FILTER (reward IS NULL) AS errors, sum(coalesce(reward, 0)) AS reward_sum, "
        f"count(*) FILTER (pass) AS passed, sum(coalesce({part}, 0)) AS component_sum "
        f"FROM (SELECT e.task_id, e.cluster_id, {source}.reward AS reward, {passed} AS pass, "
        f"{source}.components AS components FROM eval_results e {'' if stored else _AS_OF} "
        "WHERE e.eval_id = ? AND e.checkpoint_id = ? AND e.sample_idx < ?) GROUP BY task_id",
        [*params, eval_id, checkpoint_id, samples])
    wanted = set(task_ids) if task_ids is not None else None
    hollow = _hollow_samples(store, eval_id, checkpoint_id, samples)
    out = {}
    for r in rows:
        if r["n"] < samples or (wanted is not None and r["task_id"] not in wanted):
            continue
        component = r["component_sum"] / r["n"] if scores.component else None
        out[r["task_id"]] = TaskFigures(r["cluster_id"], r["n"], r["errors"], r["reward_sum"] / r["n"],
                                        r["passed"] / r["n"], pass_at_k(r["n"], r["passed"], r["n"]), component,
                                        hollow.get(r["task_id"], 0) / r["n"])
    return out


def _hollow_samples(store: Store, eval_id: str, checkpoint_id: str, samples: int) -> dict[str, int]:
    """task_id -> how many of a model's samples (indices < `samples`) a hollow-reply detector flags."""
    rows = store.query(
        "SELECT e.task_id, r.messages, r.n_prompt_messages, t.spec->'$.replay' AS replay FROM eval_results e "
        "JOIN rollouts r ON r.rollout_id = e.rollout_id LEFT JOIN tasks t ON t.task_set_id = e.task_set_id "
        "AND t.task_id = e.task_id WHERE e.eval_id = ? AND e.checkpoint_id = ? AND e.sample_idx < ?",
        [eval_id, checkpoint_id, samples])
    keys: dict[str, frozenset[str]] = {}
    out: dict[str, int] = defaultdict(int)
    for r in rows:
        if r["task_id"] not in keys:
            keys[r["task_id"]] = recorded_keys(c.get("result") for c in json.loads(r["replay"] or "[]"))
        if episode_findings(json.loads(r["messages"] or "[]"), r["n_prompt_messages"] or 0, keys[r["task_id"]]):
            out[r["task_id"]] += 1
    return out


def _values(figures: dict[str, TaskFigures], tasks: Sequence[str], metric: str) -> list[float]:
    attr = {"reward": "reward", "pass@1": "pass_rate", "pass@k": "pass_at_k", HOLLOW: "hollow"}[metric]
    return [getattr(figures[t], attr) for t in tasks]


def _interval(i: Interval) -> dict[str, float]:
    return {"value": i.value, "low": i.low, "high": i.high}


def _change(c: PairedChange) -> dict[str, Any]:
    return {"diff": c.diff.value, "low": c.diff.low, "high": c.diff.high, "p_value": c.p_value,
            "beyond_noise": c.beyond_noise}


def _row(model: ModelRef, figures: dict[str, TaskFigures], base: dict[str, TaskFigures] | None,
         tasks: Sequence[str], seed: int, component: str | None = None) -> dict[str, Any]:
    row: dict[str, Any] = {"model": model.label, "checkpoint_id": model.checkpoint_id, "run_id": model.run_id,
                           "step": model.step, "tasks": len(tasks),
                           "samples": sum(figures[t].samples for t in tasks),
                           "errors": sum(figures[t].errors for t in tasks)}
    for metric in (*METRICS, HOLLOW):
        row[metric] = _interval(bootstrap_mean(_values(figures, tasks, metric), seed=seed))
    row["change"] = None if base is None else {
        m: _change(paired_change(_values(figures, tasks, m), _values(base, tasks, m), seed=seed))
        for m in (*METRICS, HOLLOW)}
    if component is not None:
        values = _component_values(figures, tasks)
        row["component"] = {"name": component, **_interval(bootstrap_mean(values, seed=seed)), "change": None
                            if base is None else _change(paired_change(values, _component_values(base, tasks),
                                                                       seed=seed))}
    return row


def _component_values(figures: dict[str, TaskFigures], tasks: Sequence[str]) -> list[float]:
    return [float(figures[t].component or 0.0) for t in tasks]


def _groups(tasks: Sequence[str], figures: dict[str, TaskFigures]) -> list[tuple[str | None, list[str]]]:
    """('overall' as None, every task), then each cluster's tasks."""
    by_cluster: dict[str | None, list[str]] = defaultdict(list)
    for t in tasks:
        by_cluster[figures[t].cluster_id].append(t)
    return [(None, list(tasks)), *((c, ts) for c, ts in by_cluster.items())]


def compare(store: Store, eval_id: str, base: ModelRef, models: Sequence[ModelRef], samples: int,
            task_ids: Sequence[str] | None = None, seed: int = 0, scores: Scores = Scores()) -> dict[str, Any]:
    """The comparison of `models` against `base` in one evaluation, as JSON-ready data."""
    figures = {m.checkpoint_id: read_task_figures(store, eval_id, m.checkpoint_id, samples, task_ids, scores)
               for m in [base, *models]}
    common = [t for t in (task_ids or sorted(figures[base.checkpoint_id]))
              if all(t in f for f in figures.values())]
    if not common:
        raise NotFoundError(f"Evaluation {eval_id} has no task with {samples} samples from every model compared. "
                            "Fix: run `tracegym eval` to completion first.")
    clusters = _cluster_info(store, {figures[base.checkpoint_id][t].cluster_id for t in common})
    groups = []
    ordered = sorted(_groups(common, figures[base.checkpoint_id]),
                     key=lambda g: (g[0] is not None, clusters.get(g[0], {}).get("rank") or 1 << 30, g[0] or ""))
    for cluster_id, tasks in ordered:
        rows = [_row(base, figures[base.checkpoint_id], None, tasks, seed, scores.component)]
        rows += [_row(m, figures[m.checkpoint_id], figures[base.checkpoint_id], tasks, seed, scores.component)
                 for m in models]
        groups.append({"cluster_id": cluster_id, **clusters.get(cluster_id, {}), "tasks": len(tasks), "rows": rows})
    return {"eval_id": eval_id, "score_version": scores.version, "component": scores.component,
            "samples": samples, "tasks": len(common), "base": base.label,
            "models": [m.label for m in models], "groups": groups,
            "regressions": _regressions(figures, base, models, common),
            "fixed": {m.label: _fixed(figures, base, m, common) for m in models}}


def _passes(f: TaskFigures) -> bool:
    return f.pass_rate >= 0.5


def _regressions(figures: dict[str, dict[str, TaskFigures]], base: ModelRef, models: Sequence[ModelRef],
                 tasks: Sequence[str]) -> list[dict[str, Any]]:
    out = []
    b = figures[base.checkpoint_id]
    for m in models:
        f = figures[m.checkpoint_id]
        out += [{"model": m.label, "task_id": t, "cluster_id": b[t].cluster_id, "base_pass_rate": b[t].pass_rate,
                 "pass_rate": f[t].pass_rate, "base_reward": b[t].reward, "reward": f[t].reward}
                for t in tasks if _passes(b[t]) and not _passes(f[t])]
    return out


def _fixed(figures: dict[str, dict[str, TaskFigures]], base: ModelRef, model: ModelRef, tasks: Sequence[str]) -> int:
    b, f = figures[base.checkpoint_id], figures[model.checkpoint_id]
    return sum(1 for t in tasks if not _passes(b[t]) and _passes(f[t]))


def _cluster_info(store: Store, cluster_ids: set[str | None]) -> dict[str | None, dict[str, Any]]:
    ids = [c for c in cluster_ids if c is not None]
    rows = store.query("SELECT cluster_id, detector, signature, rank FROM clusters WHERE cluster_id IN "
                       "(SELECT unnest(?))", [ids]) if ids else []
    return {r["cluster_id"]: {"detector": r["detector"], "signature": r["signature"], "rank": r["rank"]}
            for r in rows}


def latest_comparison(store: Store, run_id: str) -> dict[str, Any] | None:
    """The newest evaluation of a run's checkpoints, compared against the base it was evaluated with."""
    rows = store.query(
        "SELECT m.eval_id, m.checkpoint_id, m.checkpoint, m.step, m.base_checkpoint_id FROM eval_models m "
        "JOIN evaluations e USING (eval_id) WHERE m.run_id = ? AND m.base_checkpoint_id IS NOT NULL "
        "ORDER BY e.updated_at DESC, m.step", [run_id])
    if not rows:
        return None
    eval_id, base_id = rows[0]["eval_id"], rows[0]["base_checkpoint_id"]
    chosen = [r for r in rows if r["eval_id"] == eval_id and r["base_checkpoint_id"] == base_id]
    base_label = store.scalar("SELECT checkpoint FROM eval_models WHERE eval_id = ? AND checkpoint_id = ? "
                              "ORDER BY base_checkpoint_id NULLS FIRST LIMIT 1", [eval_id, base_id])
    models = [ModelRef(r["checkpoint"], r["checkpoint_id"], run_id, r["step"]) for r in chosen]
    samples = store.scalar(
        "SELECT min(n) FROM (SELECT count(*) AS n FROM eval_results WHERE eval_id = ? AND checkpoint_id IN "
        "(SELECT unnest(?)) GROUP BY checkpoint_id, task_id)", [eval_id, [base_id, *(m.checkpoint_id for m in models)]])
    if not samples:
        return None
    return compare(store, eval_id, ModelRef(base_label or "base", base_id), models, int(samples))
