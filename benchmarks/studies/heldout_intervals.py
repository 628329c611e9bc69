"""GRPO's held-out gain over the warm start, from a finished `benchmarks/studies/train_tau.py` run's store, with three
95% intervals that count different noise:

- over samples: the held-out tasks fixed, each task's episodes resampled (paired by seed): sampling noise only,
  the issue's "confidence intervals over several samples per task";
- over tasks: which tasks happen to be held out, too;
- by scenario: whole τ-bench source tasks resampled, since the tasks cut from one scenario's failures are alike.

    python benchmarks/studies/heldout_intervals.py --store /tmp/train-tau/store.duckdb

Reads the newest `eval-base-*`, `eval-warm_start-*` and `eval-grpo-*` runs (failed episodes count as 0). The last
line is one JSON object: per comparison (grpo_minus_warm_start, warm_start_minus_base, grpo_minus_base), its
mean and the three intervals; and the per-model means.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from train_tau import bootstrap, bootstrap_over_samples

MODELS = ("base", "warm_start", "grpo")


def eval_rewards(store: Path) -> tuple[dict[str, dict[str, list[float]]], dict[str, str]]:
    """Per model, each held-out task's rewards in sample order, tasks in the task set's order (as `train_tau.py`
    holds them, so the bootstraps draw the same resamples); and each task's source task (scenario)."""
    from tracegym.store import open_store
    from tracegym.tasks.taskset import load_task_set

    rewards: dict[str, dict[str, list[float]]] = {}
    with open_store(store, read_only=True) as st:
        for model in MODELS:
            run_id = st.scalar("SELECT run_id FROM rollouts WHERE run_id LIKE ? ORDER BY created_at DESC LIMIT 1",
                               [f"eval-{model}-%"])
            if run_id is None:
                raise SystemExit(f"{store} holds no eval-{model}-* run: is it a benchmarks/studies/train_tau.py store?")
            rows = st.query("SELECT task_id, coalesce(reward, 0) AS reward FROM rollouts WHERE run_id = ? "
                            "ORDER BY task_id, sample_idx", [run_id])
            for row in rows:
                rewards.setdefault(model, {}).setdefault(row["task_id"], []).append(row["reward"])
        task_set = load_task_set(st.scalar("SELECT path FROM task_sets ORDER BY created_at DESC LIMIT 1"))
    order = [t.task_id for t in task_set.tasks]
    rewards = {model: {t: by_task[t] for t in order if t in by_task} for model, by_task in rewards.items()}
    return rewards, {t.task_id: t.provenance.source_task for t in task_set.tasks}


def compare(after: dict[str, list[float]], before: dict[str, list[float]], sources: dict[str, str]) -> dict:
    tasks = list(after)
    diffs = [statistics.fmean(after[t]) - statistics.fmean(before[t]) for t in tasks]
    over_samples = bootstrap_over_samples([after[t] for t in tasks], [before[t] for t in tasks])
    over_tasks = bootstrap(diffs)
    by_scenario = bootstrap(diffs, [sources[t] for t in tasks])
    return {"mean": round(over_tasks["mean"], 4), "tasks": len(tasks), "scenarios": by_scenario["sources"],
            **{f"{name}_ci95": [round(r["ci95_low"], 4), round(r["ci95_high"], 4)]
               for name, r in (("over_samples", over_samples), ("over_tasks", over_tasks),
                               ("by_scenario", by_scenario))}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    args = parser.parse_args()
    rewards, sources = eval_rewards(args.store)
    out = {f"{a}_minus_{b}": compare(rewards[a], rewards[b], sources)
           for a, b in (("grpo", "warm_start"), ("warm_start", "base"), ("grpo", "base"))}
    for name, figures in out.items():
        print(f"{name}: {figures['mean']:+.3f}; over samples {figures['over_samples_ci95']}, over "
              f"{figures['tasks']} tasks {figures['over_tasks_ci95']}, by {figures['scenarios']} scenarios "
              f"{figures['by_scenario_ci95']}")
    means = {m: round(statistics.fmean(statistics.fmean(v) for v in rewards[m].values()), 4) for m in MODELS}
    print(json.dumps({**out, "means": means}))


if __name__ == "__main__":
    main()
