"""Learning on CPU: does GRPO on a team's mined failures fix those failures, per cluster, against the base model?

    python benchmarks/learn_clusters.py --workdir DIR [--seeds 0 1 2] [--samples 8] [--sampling uniform]
                                        [--evals format|content] [--config examples/train-learn.yaml]
                                        [--set KEY=YAML ...] [--arm NAME] [--prepare-only]

1. Traces: the public mini-swe-agent and τ-bench traces (../shared/data/traces), less a kept-out part that no run
   of this benchmark sees (the sympy instances of mini-swe-agent, τ-bench scenarios 40-49; written to
   WORKDIR/kept-out for `tracegym eval` on other traces, see the README), ingested into WORKDIR/store.duckdb
   and mined.
2. Failure families a 135M model can learn to fix, as a team's evals define the fix (examples/evals-learn.yaml):
   mini-swe-agent's format errors ("Please always provide EXACTLY ONE action in triple backticks", rewarded by the
   check mini-swe-agent applies) and τ-bench's tool errors ("Error: ...", rewarded for answering the error
   without retrying the failed call unchanged or inventing the tool's answer). With `--evals content` each of
   these is combined with `follows_success`, the step that succeeded from the same point (same call, command or
   facts): `--eval one_bash_action_and_content --eval handles_tool_error_and_content`, what `tracegym quickstart`
   trains on. The task set comes from `tracegym tasks generate --cluster ID... --evals EVALS GENERATE_ARGS`
   (WORKDIR/tasks/learn, or learn-content): tasks at the agent's turn after each failure, a share of the source
   tasks (instances, scenarios) held out. `--prepare-only` stops there: it prints the task set's counts and
   writes each seed's config, as training would read it, to WORKDIR/SEED-FOLDER/config.prepared.yaml (validated).
3. Per seed: `tracegym train CONFIG` (GRPO from the base model, no warm start), then
   `tracegym eval RUN --tasks SET EVAL_ARGS`: the base model and the final checkpoint on the held-out tasks, the
   same episode seeds for both, overall and per cluster, each change paired by task with a 95% bootstrap
   interval over tasks and a sign-flip permutation test. The base model's samples are stored once and reused
   by every seed's evaluation (same settings, same seeds).
4. WORKDIR/curves.png (curves-uniform.png with --sampling uniform): each cluster's training reward per GRPO step
   (`cluster/<id>/reward`, as the run stored it) and the held-out rewards of base and checkpoint per cluster.

Each seed runs in WORKDIR/seed-N (seed-N-uniform, seed-N-content; with `--arm NAME`, seed-N-...-NAME, so that an
arm with other `--set` overrides keeps its own runs beside the others) and leaves its result in result.json there;
a later call with the same config reports that result instead of training again (see `run_seed`). The arm of the
per-component advantages (docs/training-math.md, "Per-component advantages"):
`--evals content --set grpo.advantages=per_component --arm per-component`.

A cluster is fixed when the checkpoint beats the base beyond noise on it: p < 0.05 and an interval that excludes
0. The last line is one JSON object: {"seeds", "per_seed": [{"seed", "minutes", "checkpoint", "evals_file",
"generate_args", "eval_args", "overall", "clusters": [{"cluster_id", "signature", "source_format", "n_tasks",
"base", "trained", "delta", "ci", "p", "content_free_base", "content_free_trained"}], "fixed", "regressed",
"target_met"}], "all_seeds_met", "sampling"}. The content-free share is the share of hollow replies (the hollow-reply
detectors of `tracegym eval`).

With `--evals content` the benchmark first probes the base model alone on the held-out tasks (`probe`: per cluster
its reward, its `follows_success` part and its content-free share; `no_content_signal` names the clusters where the
base never earns that part, so GRPO has nothing of substance to reinforce there), and the evaluations show
`follows_success` as a component: each cluster row gains "content_base", "content_trained", "content_ci",
"content_p"; each seed "content_learned" (clusters where the part rose beyond noise) and "content_met" (one such
cluster and a lower content-free share overall than the base's); the summary "probe" and "content_seeds_met" (how
many seeds met it; the target is 2 of 3).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO.parent / "shared" / "data" / "traces"
EVALS = REPO / "examples" / "evals-learn.yaml"
CONFIG = REPO / "examples" / "train-learn.yaml"
GENERATE_ARGS = ["--cuts", "recovery", "--context", "last-exchange", "--heldout", "0.3", "--seed", "0"]
EVAL_ARGS = {"format": [], "content": ["--eval", "one_bash_action_and_content", "--eval",
                                       "handles_tool_error_and_content"]}
"""Per --evals: the evals bound to the tasks. format: each eval of EVALS whose applies_to matches (the form checks);
content: the form checks combined with follows_success."""
CONTENT = "follows_success"
"""The substance part of the content evals: the step that succeeded from the same point, scored alone."""
KEPT_OUT_REPO = "sympy__"
KEPT_OUT_SCENARIOS = range(40, 50)


def cli(*args: str) -> str:
    """Run a tracegym command as a user would (its progress on this stderr); its stdout, or exit with its error."""
    result = subprocess.run([sys.executable, "-m", "tracegym.cli", *args], stdout=subprocess.PIPE, text=True,
                            check=False)
    if result.returncode != 0:
        raise SystemExit(f"tracegym {' '.join(args)} failed ({result.returncode}); its error is above")
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


def task_set_name(evals: str) -> str:
    return "learn" if evals == "format" else f"learn-{evals}"


def prepare(workdir: Path, evals: str) -> tuple[Path, Path, list[dict[str, Any]]]:
    """The store, the task set of `evals` (a key of EVAL_ARGS) and its clusters (ingesting, mining and generating
    on first use)."""
    name = task_set_name(evals)
    store, task_set = workdir / "store.duckdb", workdir / "tasks" / name
    used, _ = split_traces(workdir)
    if not store.exists():
        cli("ingest", str(used), "--store", str(store))
        cli("mine", "failures", "--store", str(store))
    clusters = learnable_clusters(store)
    if not (task_set / "manifest.yaml").is_file():
        # The public traces hold no customer data; redacting them would change the tasks the figures came from.
        cli("tasks", "generate", *(a for c in clusters for a in ("--cluster", c["cluster_id"])), "--evals", str(EVALS),
            "--out", str(task_set), "--store", str(store), "--name", name, "--allow-unredacted", *GENERATE_ARGS,
            *EVAL_ARGS[evals])
    return store, task_set, clusters


def seed_config(base: Path, overrides: list[str], workdir: Path, task_set: Path, seed: int, sampling: str,
                name: str = "config.yaml") -> Path:
    """The config with `--set KEY=YAML` overrides, this seed, the task set and a run folder of its own, written to
    WORKDIR/NAME."""
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
    path = workdir / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def cluster_rows(table: dict[str, Any], clusters: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per cluster of the evaluation: base, trained, their difference with its interval and p-value; the
    content-free (hollow) share of each; with a component, its value for each and its change."""
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
                     "delta": change["diff"], "ci": [change["low"], change["high"]], "p": change["p_value"],
                     **content_figures(base, trained)})
    return rows


def content_figures(base: dict[str, Any], trained: dict[str, Any]) -> dict[str, Any]:
    """The substance figures of one group: the content component alone (base, trained, the change's interval
    and p-value) when the evaluation showed one, and the share of hollow replies of each."""
    figures: dict[str, Any] = {"content_free_base": base["hollow"]["value"],
                               "content_free_trained": trained["hollow"]["value"]}
    if "component" in trained:
        change = trained["component"]["change"]
        figures |= {"content_base": base["component"]["value"], "content_trained": trained["component"]["value"],
                    "content_ci": [change["low"], change["high"]], "content_p": change["p_value"]}
    return figures


def content_learned(row: dict[str, Any]) -> bool:
    """The content component rose beyond noise: p < 0.05 and an interval above 0."""
    return "content_p" in row and row["content_p"] < 0.05 and row["content_ci"][0] > 0


def beyond_noise(row: dict[str, Any], sign: int) -> bool:
    """p < 0.05 and an interval on the side `sign` of 0."""
    return row["p"] < 0.05 and (row["ci"][0] > 0 if sign > 0 else row["ci"][1] < 0)


def overall_row(table: dict[str, Any]) -> dict[str, Any]:
    group = table["groups"][0]
    change = group["rows"][1]["change"]["reward"]
    return {"n_tasks": group["tasks"], "base": group["rows"][0]["reward"]["value"],
            "trained": group["rows"][1]["reward"]["value"], "delta": change["diff"],
            "ci": [change["low"], change["high"]], "p": change["p_value"],
            **content_figures(group["rows"][0], group["rows"][1])}


def training_curves(store: Path, run_id: str) -> dict[str, dict[int, float]]:
    """cluster -> GRPO step -> mean training reward, as the run stored it (`cluster/<id>/reward`)."""
    rows = json.loads(cli("sql", "--store", str(store), "--json",
                          f"SELECT step, key, value FROM metrics WHERE run_id = '{run_id}' "
                          "AND key LIKE 'cluster/%/reward' ORDER BY step"))
    curves: dict[str, dict[int, float]] = {}
    for r in rows:
        curves.setdefault(r["key"].split("/")[1], {})[r["step"]] = r["value"]
    return curves


def plot(results: list[dict[str, Any]], curves: dict[int, dict[str, dict[int, float]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    clusters = [r["cluster_id"] for r in results[0]["clusters"]]
    labels = {r["cluster_id"]: f"{r['source_format']}: {r['signature'][:38]}" for r in results[0]["clusters"]}
    ticks = [f"{r['source_format']}\n{r['signature'][:21]}" for r in results[0]["clusters"]]
    fig, (left, right) = plt.subplots(1, 2, figsize=(14, 6))
    colors = {c: f"C{i % 10}" for i, c in enumerate(clusters)}
    for seed, by_cluster in curves.items():
        for cluster, steps in by_cluster.items():
            xs = sorted(steps)
            window = [sum(steps[s] for s in xs[max(0, i - 4):i + 1]) / len(xs[max(0, i - 4):i + 1])
                      for i in range(len(xs))]
            first = seed == min(curves) and (cluster in labels or cluster == min(set(by_cluster) - set(labels)))
            left.plot(xs, window, color=colors.get(cluster, "grey"), alpha=0.8 if cluster in labels else 0.4,
                      label=labels.get(cluster, "clusters without held-out tasks") if first else None)
    left.set(xlabel="GRPO step", ylabel="training reward (mean of 5 steps)", ylim=(-0.02, 1.05),
             title="training reward per cluster, each seed")
    left.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)
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
                     ticks, fontsize=7)
    right.set(ylabel="held-out reward", title="held out: base vs trained (bars: 95% interval of the change)")
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def seed_folder(args: argparse.Namespace, seed: int) -> Path:
    """WORKDIR/seed-N, with the sampling, the evals and the arm when they are not the defaults."""
    parts = [f"seed-{seed}", *([args.sampling] if args.sampling != "clusters" else []),
             *([args.evals] if args.evals != "format" else []), *([args.arm] if args.arm else [])]
    return args.workdir / "-".join(parts)


def prepared_configs(args: argparse.Namespace, task_set: Path) -> list[str]:
    """Each seed's config as `run_seed` would write it, beside (not over) the config a finished seed was trained
    with, and loaded as `tracegym train` loads it: a bad `--set` stops here."""
    from tracegym.errors import TracegymError
    from tracegym.training.config import load_train_config

    paths = []
    for seed in args.seeds:
        path = seed_config(args.config, args.set, seed_folder(args, seed), task_set, seed, args.sampling,
                           name="config.prepared.yaml")
        try:
            load_train_config(path)
        except TracegymError as e:
            raise SystemExit(f"{path}: {e}") from None
        paths.append(str(path))
    return paths


def run_seed(args: argparse.Namespace, store: Path, task_set: Path, clusters: dict[str, dict[str, Any]],
             seed: int) -> tuple[dict[str, Any], dict[str, dict[int, float]]]:
    """Train and evaluate one seed. A seed whose result.json was written under the same config is not trained
    again: it is reported from there, or, under other evaluation settings (`--samples`), evaluated again, which
    runs only the samples not yet stored; its minutes then add that evaluation's to the earlier ones."""
    folder = seed_folder(args, seed)
    saved = folder / "result.json"
    before = (folder / "config.yaml").read_text() if saved.is_file() else None
    config = seed_config(args.config, args.set, folder, task_set, seed, args.sampling)
    previous = json.loads(saved.read_text()) if before == config.read_text() else None
    eval_args = ["--config", str(config), "--samples", str(args.samples), "--precision", "auto",
                 *(["--component", CONTENT] if args.evals == "content" else [])]
    started = time.perf_counter()
    if previous is not None and previous["eval_args"] == eval_args:
        result = previous
    else:
        if previous is None:
            shutil.rmtree(folder / "run", ignore_errors=True)
            # The evals of examples/evals-learn.yaml are hackable (docs/reward-gates.md, hollow probes): what this
            # benchmark measures is how far GRPO learns them, hollow replies included.
            cli("train", str(config), "--store", str(store), "--allow-unredacted", "--allow-hackable")
        result = evaluate(store, task_set, clusters, config.parent / "run", eval_args)
        spent = (previous["minutes"] if previous else 0) + (time.perf_counter() - started) / 60
        result = {"seed": seed, "minutes": round(spent, 1), "checkpoint": result.pop("checkpoint"),
                  "evals_file": str(EVALS), "generate_args": GENERATE_ARGS + EVAL_ARGS[args.evals],
                  "eval_args": eval_args, **result}
        saved.write_text(json.dumps(result))
    print(json.dumps({k: v for k, v in result.items() if k not in ("generate_args",)}), flush=True)
    return result, training_curves(store, result["run_id"])


def evaluate(store: Path, task_set: Path, clusters: dict[str, dict[str, Any]], run_dir: Path,
             eval_args: list[str]) -> dict[str, Any]:
    """The run's final checkpoint against the base model on the held-out tasks, overall and per cluster."""
    run_id = json.loads((run_dir / "run.json").read_text())["run_id"]
    checkpoint = sorted((run_dir / "checkpoints").glob("step-*"))[-1]
    table = json.loads(cli("eval", str(checkpoint), "--tasks", str(task_set), "--store", str(store), "--json",
                           *eval_args))
    rows = cluster_rows(table, clusters)
    fixed = [r for r in rows if beyond_noise(r, +1)]
    regressed = [r for r in rows if beyond_noise(r, -1)]
    overall = overall_row(table)
    result = {
        "checkpoint": str(checkpoint), "run_id": run_id, "eval_id": table["eval_id"], "overall": overall,
        "clusters": rows, "fixed": [r["cluster_id"] for r in fixed], "regressed": [r["cluster_id"] for r in regressed],
        "target_met": (len({r["source_format"] for r in fixed}) >= 2 and overall["delta"] > 0 and not regressed),
    }
    if table.get("component"):
        result["content_learned"] = [r["cluster_id"] for r in rows if content_learned(r)]
        result["content_met"] = (bool(result["content_learned"])
                                 and overall["content_free_trained"] < overall["content_free_base"])
    return result


def probe_base(args: argparse.Namespace, store: Path, task_set: Path,
               clusters: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Before training: the base model alone on the held-out tasks, with the content component per cluster. The
    seeds' evaluations reuse these samples (same settings and episode seeds); a cluster where the base never earns
    the content part gives GRPO no substance to learn from (every group's content advantage is 0)."""
    config = seed_config(args.config, args.set, args.workdir / f"probe-{args.evals}", task_set, 0, args.sampling)
    table = json.loads(cli("eval", "--tasks", str(task_set), "--store", str(store), "--json", "--config",
                           str(config), "--samples", str(args.samples), "--precision", "auto",
                           "--component", CONTENT))
    rows = {}
    for group in table["groups"]:
        base = group["rows"][0]
        info = clusters.get(group["cluster_id"] or "", {})
        rows[group["cluster_id"] or "overall"] = {
            "source_format": info.get("source_format"), "n_tasks": group["tasks"], "reward": base["reward"]["value"],
            "content": base["component"]["value"], "content_free": base["hollow"]["value"]}
    return {"eval_id": table["eval_id"], "by_cluster": rows,
            "no_content_signal": [c for c, r in rows.items() if c != "overall" and r["content"] == 0.0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, required=True, help="Where the store, task set and runs go.")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="Training seeds, one run each.")
    parser.add_argument("--samples", type=int, default=8, help="Held-out episodes per task and model.")
    parser.add_argument("--config", type=Path, default=CONFIG, help="The training config.")
    parser.add_argument("--sampling", choices=["clusters", "uniform"], default="clusters",
                        help="tasks.sampling: a curriculum over failure clusters, or uniform over tasks.")
    parser.add_argument("--evals", choices=list(EVAL_ARGS), default="format",
                        help="format: the form checks of examples/evals-learn.yaml; content: each combined with "
                             "follows_success, the step that succeeded from the same point (as the quickstart).")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=YAML",
                        help="Override a config key, e.g. --set steps=20 (repeatable).")
    parser.add_argument("--arm", help="A name for this arm's seed folders and curves (seed-N-...-NAME), so that "
                                      "runs with other --set overrides keep their own results.")
    parser.add_argument("--prepare-only", action="store_true",
                        help="Ingest, mine and write the task set, print its counts, write and check each seed's "
                             "config (config.prepared.yaml), and stop before training.")
    args = parser.parse_args()
    args.workdir = args.workdir.resolve()
    args.workdir.mkdir(parents=True, exist_ok=True)
    store, task_set, cluster_list = prepare(args.workdir, args.evals)
    if args.prepare_only:
        manifest = yaml.safe_load((task_set / "manifest.yaml").read_text())
        print(json.dumps({"task_set": str(task_set), "evals": args.evals, "counts": manifest["counts"],
                          "clusters": [c["cluster_id"] for c in cluster_list],
                          "configs": prepared_configs(args, task_set)}))
        return
    clusters = {c["cluster_id"]: c for c in cluster_list}
    probe = probe_base(args, store, task_set, clusters) if args.evals == "content" else None
    if probe is not None:
        print(json.dumps({"probe": probe}), flush=True)
    results, curves = [], {}
    for seed in args.seeds:
        result, curves[seed] = run_seed(args, store, task_set, clusters, seed)
        results.append(result)
    name = "-".join(["curves", *([args.sampling] if args.sampling != "clusters" else []),
                     *([args.evals] if args.evals != "format" else []), *([args.arm] if args.arm else [])]) + ".png"
    plot(results, curves, args.workdir / name)
    summary: dict[str, Any] = {"seeds": args.seeds, "sampling": args.sampling, "evals": args.evals, "arm": args.arm,
                               "per_seed": results, "all_seeds_met": all(r["target_met"] for r in results)}
    if probe is not None:
        summary |= {"probe": probe, "content_seeds_met": sum(bool(r["content_met"]) for r in results)}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
