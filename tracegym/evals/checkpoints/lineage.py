"""A failure cluster's lineage: its tasks, the runs that trained on them, and their checkpoints' eval results.

All of it comes from one query of the `lineage` view (store migration m070_rollout_train_use); this module
only groups its rows for people: one row per (cluster, task, run, checkpoint, evaluation). A run's rollouts count
as trained on when the loss learned from their group; `sampled_rollouts` counts every one it stored.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from tracegym.errors import NotFoundError

if TYPE_CHECKING:
    from tracegym.store import Store


def find_cluster(store: Store, ref: str) -> str:
    """The cluster id `ref` names (an id or a unique prefix)."""
    rows = store.query("SELECT DISTINCT cluster_id FROM tasks WHERE starts_with(cluster_id, ?) "
                       "UNION SELECT cluster_id FROM clusters WHERE starts_with(cluster_id, ?) ORDER BY 1 LIMIT 6",
                       [ref, ref])
    ids = [r["cluster_id"] for r in rows]
    if len(ids) == 1:
        return ids[0]
    if ids:
        raise NotFoundError(f"Cluster prefix {ref!r} matches {', '.join(ids)}. Fix: give more of the id.")
    raise NotFoundError(f"No cluster {ref!r} in the store. Fix: see `tracegym mine failures` for cluster ids.")


def lineage_rows(store: Store, cluster_id: str) -> list[dict[str, Any]]:
    """The view's rows for one cluster."""
    return store.query("SELECT * FROM lineage WHERE cluster_id = ? ORDER BY task_set_id, task_id, run_id, "
                       "checkpoint_step, eval_id", [cluster_id])


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize_lineage(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Cluster, tasks, runs (with what they trained on) and per-checkpoint eval figures on the cluster's tasks."""
    if not rows:
        return {"cluster": None, "tasks": [], "runs": [], "checkpoints": []}
    first = rows[0]
    cluster = {k: first[k] for k in ("cluster_id", "detector", "signature", "cluster_rank")}
    tasks = {(r["task_set_id"], r["task_id"]): r["split"] for r in rows}
    trained: dict[str, dict[tuple[str, str], tuple[int, float | None, int]]] = defaultdict(dict)
    evals: dict[tuple[Any, ...], dict[str, dict[str, Any]]] = defaultdict(dict)
    for r in rows:
        if r["run_id"] is not None:
            trained[r["run_id"]][(r["task_set_id"], r["task_id"])] = (
                r["train_rollouts"], r["train_reward"], r["sampled_rollouts"])
        if r["eval_samples"] is not None:
            key = (r["run_id"], r["checkpoint_step"], r["checkpoint"], r["eval_id"])
            evals[key][r["task_id"]] = r
    runs = []
    for run_id, per_task in trained.items():
        used = {k: v for k, v in per_task.items() if v[0] > 0}
        runs.append({"run_id": run_id, "tasks_trained_on": len(used),
                     "rollouts": sum(n for n, _, _ in used.values()),
                     "train_reward": _mean([reward for _, reward, _ in used.values() if reward is not None]),
                     "sampled_rollouts": sum(n for _, _, n in per_task.values())})
    checkpoints = []
    for (run_id, step, label, eval_id), rows_by_task in evals.items():
        values = list(rows_by_task.values())
        checkpoints.append({
            "run_id": run_id, "step": step, "checkpoint": label, "eval_id": eval_id, "tasks": len(values),
            "eval_reward": _mean([v["eval_reward"] for v in values]),
            "base_eval_reward": _mean([v["base_eval_reward"] for v in values if v["base_eval_reward"] is not None]),
            "eval_pass_rate": _mean([v["eval_pass_rate"] for v in values]),
            "base_eval_pass_rate": _mean([v["base_eval_pass_rate"] for v in values
                                          if v["base_eval_pass_rate"] is not None]),
        })
    task_list = [{"task_set_id": ts, "task_id": t, "split": split} for (ts, t), split in tasks.items()]
    return {"cluster": cluster, "tasks": task_list, "runs": runs, "checkpoints": checkpoints}
