"""Learning on CPU: does GRPO on a team's mined failures fix those failures, per cluster, against the base model?

    python benchmarks/learn_clusters.py --workdir DIR [--seeds 0 1 2] [--samples 4] [--sampling uniform]
                                        [--config examples/train-learn.yaml] [--set KEY=YAML ...]

1. Traces: the public mini-swe-agent and τ-bench traces (../shared/data/traces), less a kept-out part that no run
   of this benchmark sees (the sympy instances of mini-swe-agent, τ-bench scenarios 40-49; written to
   WORKDIR/kept-out for `tracegym eval` on other traces, see the README), ingested into WORKDIR/store.duckdb
   and mined.
2. Failure families a 135M model can learn to fix, as a team's evals define the fix (examples/evals-learn.yaml):
   mini-swe-agent's format errors ("Please always provide EXACTLY ONE action in triple backticks", rewarded by the
   check mini-swe-agent applies) and τ-bench's tool errors ("Error: ...", rewarded for answering the error
   without retrying the failed call unchanged or inventing the tool's answer). The task set comes from
   `tracegym tasks generate --cluster ID... --evals EVALS GENERATE_ARGS`: tasks at the agent's turn after each
   failure, a share of the source tasks (instances, scenarios) held out.
3. Per seed: `tracegym train CONFIG` (GRPO from the base model, no warm start), then
   `tracegym eval RUN --tasks SET EVAL_ARGS`: the base model and the final checkpoint on the held-out tasks, the
   same episode seeds for both, overall and per cluster, each change paired by task with a 95% bootstrap
   interval over tasks and a sign-flip permutation test. The base model's samples are stored once and reused
   by every seed's evaluation (same settings, same seeds).
4. WORKDIR/curves.png: each cluster's training reward per GRPO step (read from the rollouts each step sampled)
   and the held-out rewards of base and checkpoint per cluster.

A cluster is fixed when the checkpoint beats the base beyond noise on it: p < 0.05 and an interval that excludes
0. The last line is one JSON object: {"seeds", "per_seed": [{"seed", "minutes", "checkpoint", "evals_file",
"generate_args", "eval_args", "overall", "clusters": [{"cluster_id", "signature", "source_format", "n_tasks",
"base", "trained", "delta", "ci", "p"}], "fixed", "regressed", "target_met"}], "all_seeds_met", "sampling"}.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO.parent / "shared" / "data" / "traces"
EVALS = REPO / "examples" / "evals-learn.yaml"
CONFIG = REPO / "examples" / "train-learn.yaml"
GENERATE_ARGS = ["--cuts", "recovery", "--context", "last-exchange", "--heldout", "0.3", "--seed", "0"]
KEPT_OUT_REPO = "sympy__"
KEPT_OUT_SCENARIOS = range(40, 50)


def cli(*args: str) -> str:
    """Run a tracegym command in this process; its stdout, or exit with its error."""
    from tracegym.cli import app

    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    if result.exit_code != 0:
        raise SystemExit(f"tracegym {' '.join(args)} failed ({result.exit_code}): {result.stderr or result.output}")
    return result.stdout


def split_traces(workdir: Path) -> tuple[Path, Path]:
    """WORKDIR/traces (what the benchmark ingests) and WORKDIR/kept-out (what it never sees), copied from TRACES."""
    used, kept = workdir / "traces", workdir / "kept-out"
    if (used / "done").is_file():
        return used, kept
    for side in (used, kept):
        shutil.rmtree(side, ignore_errors=True)
        (side / "mini-swe-agent" / "trajs").mkdir(parents=True)
        (side / "mini-swe-agent" / "reports").mkdir()
        (side / "tau-bench").mkdir()
    mini = TRACES / "mini-swe-agent"
    for traj in sorted((mini / "trajs").glob("*.traj.json")):
        instance = traj.name.removesuffix(".traj.json")
        side = kept if instance.startswith(KEPT_OUT_REPO) else used
        shutil.copy(traj, side / "mini-swe-agent" / "trajs" / traj.name)
        report = mini / "reports" / f"{instance}.report.json"
        if report.is_file():
            shutil.copy(report, side / "mini-swe-agent" / "reports" / report.name)
    runs = json.loads((TRACES / "tau-bench" / "gpt-4o-airline.json").read_text())
    for side, keep in ((used, False), (kept, True)):
        chosen = [r for r in runs if (r["task_id"] in KEPT_OUT_SCENARIOS) == keep]
        (side / "tau-bench" / "gpt-4o-airline.json").write_text(json.dumps(chosen))
    (used / "done").write_text("")
    return used, kept


def learnable_clusters(store: Path) -> list[dict[str, Any]]:
    """mini-swe-agent's format-error cluster and τ-bench's tool-error clusters, in rank order (as the quickstart
    picks them)."""
    from tracegym.commands.quickstart import learnable_clusters as pick
    from tracegym.store import open_store

    with open_store(store, read_only=True) as st:
        return pick(st)


def prepare(workdir: Path) -> tuple[Path, Path, list[dict[str, Any]], list[str]]:
    """The store, the task set, its clusters and the generate arguments (ingesting and mining on first use)."""
    store, task_set = workdir / "store.duckdb", workdir / "tasks" / "learn"
    used, _ = split_traces(workdir)
    if not store.exists():
        cli("ingest", str(used), "--store", str(store))
        cli("mine", "failures", "--store", str(store))
    clusters = learnable_clusters(store)
    generate_args = [a for c in clusters for a in ("--cluster", c["cluster_id"])] + GENERATE_ARGS
    if not (task_set / "manifest.yaml").is_file():
        cli("tasks", "generate", "--evals", str(EVALS), "--out", str(task_set), "--store", str(store),
            "--name", "learn", *generate_args)
    return store, task_set, clusters, generate_args


def seed_config(base: Path, overrides: list[str], workdir: Path, task_set: Path, seed: int, sampling: str) -> Path:
    """The config with `--set KEY=YAML` overrides, this seed, the task set and a run folder of its own."""
    data = yaml.safe_load(base.read_text())
    for item in [*overrides, f"seed={seed}", f"tasks.sampling={sampling}"]:
        key, _, value = item.partition("=")
        *parents, leaf = key.split(".")
        node = data
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = yaml.safe_load(value)
    data["tasks"]["task_set"], data["run_dir"] = str(task_set), str(workdir / "run")
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "config.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def cluster_rows(table: dict[str, Any], clusters: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per cluster of the evaluation: base, trained, their difference with its interval and p-value."""
    rows = []
    for group in table["groups"]:
        if group["cluster_id"] is None:
            continue
        base, trained = group["rows"][0], group["rows"][1]
        change = trained["change"]["reward"]
        info = clusters.get(group["cluster_id"], {})
        rows.append({"cluster_id": group["cluster_id"], "signature": group.get("signature", info.get("signature")),
                     "source_format": info.get("source_format"), "n_tasks": group["tasks"],
                     "base": base["reward"]["value"], "trained": trained["reward"]["value"],
                     "delta": change["diff"], "ci": [change["low"], change["high"]], "p": change["p_value"]})
    return rows


def beyond_noise(row: dict[str, Any], sign: int) -> bool:
    """p < 0.05 and an interval on the side `sign` of 0."""
    return row["p"] < 0.05 and (row["ci"][0] > 0 if sign > 0 else row["ci"][1] < 0)


def overall_row(table: dict[str, Any]) -> dict[str, Any]:
    group = table["groups"][0]
    change = group["rows"][1]["change"]["reward"]
    return {"n_tasks": group["tasks"], "base": group["rows"][0]["reward"]["value"],
            "trained": group["rows"][1]["reward"]["value"], "delta": change["diff"],
            "ci": [change["low"], change["high"]], "p": change["p_value"]}


def training_curves(store: Path, run_id: str, task_clusters: dict[str, str]) -> dict[str, dict[int, float]]:
    """cluster -> GRPO step -> mean reward of the episodes that step sampled."""
    rows = json.loads(cli("sql", "--store", str(store), "--json",
                          f"SELECT task_id, train_step, avg(reward) AS reward, count(*) AS n FROM rollouts "
                          f"WHERE run_id = '{run_id}' AND reward IS NOT NULL GROUP BY ALL"))
    sums: dict[str, dict[int, list[float]]] = {}
    for r in rows:
        cluster = task_clusters.get(r["task_id"])
        if cluster is None:
            continue
        acc = sums.setdefault(cluster, {}).setdefault(r["train_step"], [0.0, 0.0])
        acc[0] += r["reward"] * r["n"]
        acc[1] += r["n"]
    return {c: {s: total / n for s, (total, n) in sorted(steps.items())} for c, steps in sums.items()}


def plot(results: list[dict[str, Any]], curves: dict[int, dict[str, dict[int, float]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    clusters = [r["cluster_id"] for r in results[0]["clusters"]]
    labels = {r["cluster_id"]: f"{r['source_format']}: {r['signature'][:38]}" for r in results[0]["clusters"]}
    fig, (left, right) = plt.subplots(1, 2, figsize=(14, 5))
    colors = {c: f"C{i % 10}" for i, c in enumerate(clusters)}
    for seed, by_cluster in curves.items():
        for cluster, steps in by_cluster.items():
            xs = sorted(steps)
            window = [sum(steps[s] for s in xs[max(0, i - 4):i + 1]) / len(xs[max(0, i - 4):i + 1])
                      for i in range(len(xs))]
            left.plot(xs, window, color=colors.get(cluster, "grey"), alpha=0.8,
                      label=labels.get(cluster) if seed == min(curves) else None)
    left.set(xlabel="GRPO step", ylabel="training reward (mean of 5 steps)", title="training reward per cluster")
    left.legend(fontsize=7)
    width = 0.8 / (len(results) + 1)
    for i, cluster in enumerate(clusters):
        base = results[0]["clusters"][i]
        right.bar(i, base["base"], width, color="lightgrey", label="base" if i == 0 else None)
        for j, result in enumerate(results, start=1):
            row = next(r for r in result["clusters"] if r["cluster_id"] == cluster)
            err = [[row["delta"] - row["ci"][0]], [row["ci"][1] - row["delta"]]]
            right.bar(i + j * width, row["trained"], width, color=colors[cluster], alpha=0.5 + 0.5 * j / len(results),
                      yerr=err, capsize=2, label=f"seed {result['seed']}" if i == 0 else None)
    right.set_xticks([i + width * len(results) / 2 for i in range(len(clusters))],
                     [labels[c][:24] for c in clusters], rotation=30, ha="right", fontsize=7)
    right.set(ylabel="held-out reward", title="held out: base vs trained (bars: 95% interval of the change)")
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_seed(args: argparse.Namespace, store: Path, task_set: Path, clusters: dict[str, dict[str, Any]],
             generate_args: list[str], seed: int) -> tuple[dict[str, Any], dict[str, dict[int, float]]]:
    from tracegym.tasks.taskset import load_task_set

    started = time.perf_counter()
    folder = args.workdir / f"seed-{seed}"
    config = seed_config(args.config, args.set, folder, task_set, seed, args.sampling)
    cli("train", str(config), "--store", str(store))
    run_id = json.loads((folder / "run" / "run.json").read_text())["run_id"]
    checkpoint = sorted((folder / "run" / "checkpoints").glob("step-*"))[-1]
    eval_args = ["--config", str(config), "--samples", str(args.samples), "--precision", "auto"]
    table = json.loads(cli("eval", str(checkpoint), "--tasks", str(task_set), "--store", str(store), "--json",
                           *eval_args))
    rows = cluster_rows(table, clusters)
    task_clusters = {t.task_id: t.provenance.cluster_id for t in load_task_set(task_set).tasks}
    fixed = [r for r in rows if beyond_noise(r, +1)]
    regressed = [r for r in rows if beyond_noise(r, -1)]
    overall = overall_row(table)
    result = {
        "seed": seed, "minutes": round((time.perf_counter() - started) / 60, 1), "checkpoint": str(checkpoint),
        "evals_file": str(EVALS), "generate_args": generate_args, "eval_args": eval_args, "run_id": run_id,
        "eval_id": table["eval_id"], "overall": overall, "clusters": rows,
        "fixed": [r["cluster_id"] for r in fixed], "regressed": [r["cluster_id"] for r in regressed],
        "target_met": (len({r["source_format"] for r in fixed}) >= 2 and overall["delta"] > 0 and not regressed),
    }
    print(json.dumps({k: v for k, v in result.items() if k not in ("generate_args",)}), flush=True)
    return result, training_curves(store, run_id, task_clusters)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, required=True, help="Where the store, task set and runs go.")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="Training seeds, one run each.")
    parser.add_argument("--samples", type=int, default=4, help="Held-out episodes per task and model.")
    parser.add_argument("--config", type=Path, default=CONFIG, help="The training config.")
    parser.add_argument("--sampling", choices=["clusters", "uniform"], default="clusters",
                        help="tasks.sampling: a curriculum over failure clusters, or uniform over tasks.")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=YAML",
                        help="Override a config key, e.g. --set steps=20 (repeatable).")
    args = parser.parse_args()
    args.workdir = args.workdir.resolve()
    args.workdir.mkdir(parents=True, exist_ok=True)
    store, task_set, cluster_list, generate_args = prepare(args.workdir)
    clusters = {c["cluster_id"]: c for c in cluster_list}
    results, curves = [], {}
    for seed in args.seeds:
        result, curves[seed] = run_seed(args, store, task_set, clusters, generate_args, seed)
        results.append(result)
    plot(results, curves, args.workdir / "curves.png")
    print(json.dumps({"seeds": args.seeds, "sampling": args.sampling, "per_seed": results,
                      "all_seeds_met": all(r["target_met"] for r in results)}))


if __name__ == "__main__":
    main()
