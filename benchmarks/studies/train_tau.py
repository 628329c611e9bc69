"""Learning on CPU, measured: base vs warm start vs warm start + GRPO on held-out τ-bench failure tasks.

    python benchmarks/studies/train_tau.py --workdir /tmp/train-tau [--config examples/train-tau.yaml] [--samples 4]

1. Ingests the public τ-bench traces into a fresh store, mines failures, and generates the task set bound to
   the reward --eval names in examples/evals-train.yaml (`gold_tool`, as examples/train-tau.yaml's header says,
   unless told otherwise).
2. Evaluates the base model on the held-out split (the config's detectors and context policy applied, as
   in training): --samples episodes per task, sampled as in training, the same episode seeds for every model.
3. Trains with the config (warm start, then GRPO) through `tracegym.training.loop.train`.
4. Evaluates the warm-start checkpoint and the final one the same way.
5. Saves the curve (warm-start loss, GRPO training reward, held-out rewards with 95% CIs) as a PNG (WORKDIR/curve.png,
   or --plot; benchmarks/studies/train-tau-curve.png is the example config's, made with --plot), and
   removes the run's checkpoints unless --keep-checkpoints (the store keeps every episode and metric).

Confidence intervals are percentile bootstraps over tasks (10,000 resamples) of the mean of per-task mean
rewards; GRPO's gain is the paired per-task difference against the warm start, with its own interval, and again
with an interval that resamples whole source tasks (`grpo_minus_warm_start_by_source`): tasks cut from one
scenario's failures are alike, and a few scenarios can hold most held-out tasks. A third interval counts sampling
noise alone (`grpo_minus_warm_start_over_samples`: the held-out tasks fixed, each task's samples resampled, paired
by seed), as the issue words it ("confidence intervals over several samples per task").
`benchmarks/studies/heldout_intervals.py --store WORKDIR/store.duckdb` recomputes all three from a finished run's store.
The last line is one JSON object: {"base", "warm_start", "grpo", "grpo_minus_warm_start",
"warm_start_minus_base", "grpo_minus_warm_start_by_source", "grpo_minus_warm_start_over_samples", "heldout_tasks",
"samples_per_task", "train_steps", "run_id", "per_task", "replies", "minutes", "threads"}; "replies" says, per
model on the held-out tasks and for GRPO's own training rollouts, which tool the replies called first and the
reward on tasks that expect no call vs one.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

import torch
import yaml
from typer.testing import CliRunner

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO.parent / "shared" / "data" / "traces" / "tau-bench"


def prepare(workdir: Path, context: str, heldout: float, split_seed: int, reward: str) -> tuple[Path, Path]:
    """Fresh store and task set under `workdir` (reused when already there), cut with the config's context,
    `heldout` of the τ-bench tasks held out (drawn with `split_seed`), bound to the eval named `reward`."""
    from tracegym.cli import app

    store, task_set = workdir / "store.duckdb", workdir / "tasks" / "tau"
    if (task_set / "manifest.yaml").is_file():
        return store, task_set
    runner = CliRunner()
    for args in (["ingest", str(TRACES)], ["mine", "failures"],
                 ["tasks", "generate", "--out", str(task_set), "--evals", str(REPO / "examples" / "evals-train.yaml"),
                  "--eval", reward, "--top", "12", "--context", context, "--heldout", str(heldout),
                  "--seed", str(split_seed), "--allow-unredacted"]):  # public traces: nothing to redact
        result = runner.invoke(app, [*args, "--store", str(store)], catch_exceptions=False)
        if result.exit_code != 0:
            raise SystemExit(f"{' '.join(args)} failed: {result.stderr}")
    return store, task_set


def prepared_config(path: Path, overrides: list[str], workdir: Path, heldout: float, split_seed: int,
                    reward: str) -> tuple[Any, Any, Path]:
    """The config at `path` with `--set KEY=YAML` overrides, pointed at a task set prepared under `workdir`
    (see `prepare`) and a run folder there; returns the config, the loaded task set and the store's path."""
    from tracegym.tasks.taskset import load_task_set
    from tracegym.training.config import parse_train_config

    workdir.mkdir(parents=True, exist_ok=True)
    data = yaml.safe_load(path.read_text())
    for item in overrides:
        key, _, value = item.partition("=")
        *parents, leaf = key.split(".")
        node = data
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = yaml.safe_load(value)
    store, task_set_dir = prepare(workdir, data.get("prompt", {}).get("context", "last-user"), heldout, split_seed,
                                  reward)
    data["tasks"]["task_set"], data["run_dir"] = str(task_set_dir), str(workdir / "run")
    return parse_train_config(data, path), load_task_set(task_set_dir), store


def evaluate(model_ref: Path | str, config: Any, task_set: Any, tasks: list[Any], samples: int, store: Path,
             label: str) -> tuple[list[list[float]], str]:
    """Per task, the rewards of its `samples` episodes in sample order (failed episodes count as 0), and the
    run id the episodes are stored under."""
    from tracegym.harnesses.config import HarnessFactory
    from tracegym.harnesses.policy import HFPolicy
    from tracegym.harnesses.runner import RunOptions
    from tracegym.harnesses.taskrun import run_task_set
    from tracegym.models import compute
    from tracegym.models.load import load_model, load_tokenizer, stop_token_ids
    from tracegym.models.sampling import SamplingEngine
    from tracegym.store.access import StoreAccess

    model, tokenizer = load_model(model_ref, config.sampler.precision_on("cpu")), load_tokenizer(model_ref)
    engine = SamplingEngine(model, eos_token_ids=stop_token_ids(model, tokenizer), sampler_id=f"eval-{label}",
                            max_batch_size=32, seed=config.seed)
    policy = HFPolicy(engine, tokenizer)
    options = RunOptions(samples=samples, concurrency=32, seed=config.seed + 1, sampling=config.sampler.params,
                         limits=config.harness.limits)
    harnesses = HarnessFactory(config.harness.harness_config())

    async def go() -> Any:
        try:
            return await run_task_set(StoreAccess(store), task_set, tasks, policy, options, harnesses, str(model_ref),
                                      run_id=f"eval-{label}-{int(time.time())}")
        finally:
            await policy.aclose()
            harnesses.close()

    result = compute.run(go())  # decoding on this thread, as in training
    by_task: dict[str, list[tuple[int, float]]] = {}
    for episode in result.episodes:
        by_task.setdefault(episode.task_id, []).append((episode.sample_idx, episode.reward or 0.0))
    return [[r for _, r in sorted(by_task[t.task_id])] for t in tasks], result.run_id


def replies(store: Path, run_id: str) -> dict[str, Any]:
    """What a run's replies did: the first tool each called ("text" for none), and the mean reward on tasks that
    expect no call and on those that expect one (as the tool_calls scorer's details say)."""
    from tracegym.episodes.rollout_table import read_rollouts
    from tracegym.evals.scorers.trajectory import Trajectory
    from tracegym.store import open_store

    with open_store(store, read_only=True) as st:
        episodes = read_rollouts(st, run_id=run_id)
    first: dict[str, int] = {}
    rewards: dict[str, list[float]] = {"no_action": [], "action": []}
    for episode in episodes:
        calls = Trajectory(episode.continuation).tool_calls()
        name = calls[0].name if calls else "text"
        first[name] = first.get(name, 0) + 1
        expected = episode.scorer_details.get("expected")
        if expected is not None:
            rewards["action" if expected else "no_action"].append(episode.reward or 0.0)
    top = dict(sorted(first.items(), key=lambda kv: -kv[1])[:8])
    return {"episodes": len(episodes), "first_call": top,
            **{f"reward_{k}": round(statistics.fmean(v), 3) if v else None for k, v in rewards.items()},
            **{f"episodes_{k}": len(v) for k, v in rewards.items()}}


def bootstrap(values: list[float], sources: list[str] | None = None, seed: int = 0,
              resamples: int = 10_000) -> dict[str, float]:
    """Mean and 95% percentile-bootstrap interval over tasks, or, with `sources`, over whole source tasks
    (τ-bench scenarios): the tasks cut from one scenario's failures are alike, so that interval is the honest
    one when a few scenarios hold many tasks."""
    rng = random.Random(seed)
    by_source: dict[str, list[float]] = {}
    for i, value in enumerate(values):
        by_source.setdefault(sources[i] if sources is not None else str(i), []).append(value)
    groups = list(by_source.values())
    means = sorted(statistics.fmean([v for g in rng.choices(groups, k=len(groups)) for v in g])
                   for _ in range(resamples))
    out = {"mean": statistics.fmean(values), "ci95_low": means[int(0.025 * resamples)],
           "ci95_high": means[int(0.975 * resamples) - 1]}
    return out | ({"sources": len(groups)} if sources is not None else {})


def bootstrap_over_samples(after: list[list[float]], before: list[list[float]], seed: int = 0,
                           resamples: int = 10_000) -> dict[str, float]:
    """Mean of the per-task difference `after - before` and its 95% interval from sampling noise alone: the
    held-out tasks stay fixed and each task's samples are resampled, paired by sample index (every model's
    episode k of a task has the same seed). The issue's "confidence intervals over several samples per task";
    `bootstrap` (over tasks, or scenarios) also counts which tasks happen to be held out."""
    rng = random.Random(seed)
    pairs = [list(zip(a, b, strict=True)) for a, b in zip(after, before, strict=True)]
    means = sorted(statistics.fmean(statistics.fmean(a - b for a, b in rng.choices(task, k=len(task)))
                                    for task in pairs) for _ in range(resamples))
    return {"mean": statistics.fmean(statistics.fmean(a - b for a, b in task) for task in pairs),
            "ci95_low": means[int(0.025 * resamples)], "ci95_high": means[int(0.975 * resamples) - 1]}


def plot(metrics: dict[str, dict[int, float | None]], results: dict[str, dict[str, float]], warm_steps: int,
         path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(13, 3.6))
    loss = metrics.get("warmup/loss", {})
    left.plot(list(loss), list(loss.values()), marker="o", ms=3)
    left.set(title="warm start: target-token loss", xlabel="step", ylabel="cross-entropy")
    reward = {s: v for s, v in metrics.get("reward/mean", {}).items() if v is not None}
    middle.plot([s - warm_steps for s in reward], list(reward.values()), marker="o", ms=3, color="tab:green")
    middle.set(title="GRPO: mean reward of training groups", xlabel="GRPO step", ylabel="reward")
    labels = list(results)
    means = [results[k]["mean"] for k in labels]
    errors = [[results[k]["mean"] - results[k]["ci95_low"] for k in labels],
              [results[k]["ci95_high"] - results[k]["mean"] for k in labels]]
    right.bar(labels, means, yerr=errors, capsize=6, color=["tab:gray", "tab:blue", "tab:green"])
    right.set(title="held-out failure tasks (95% CI)", ylabel="mean reward")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--config", type=Path, default=REPO / "examples" / "train-tau.yaml")
    parser.add_argument("--samples", type=int, default=4, help="Episodes per held-out task and model.")
    parser.add_argument("--heldout", type=float, default=0.2,
                        help="Share of τ-bench tasks (scenarios) held out when generating the task set.")
    parser.add_argument("--split-seed", type=int, default=0, help="Seeds the held-out draw of the task set.")
    parser.add_argument("--eval", default="gold_tool", help="The eval of examples/evals-train.yaml that scores tasks.")
    parser.add_argument("--max-heldout", type=int, default=None, help="Evaluate only the first N held-out tasks.")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--set", action="append", default=[], metavar="KEY=YAML",
                        help="Override a config key, e.g. --set steps=4 --set warmup.steps=8 (repeatable).")
    parser.add_argument("--plot", type=Path, default=None,
                        help="The curve's PNG (default WORKDIR/curve.png; tau-bench.md beside this script shows one).")
    parser.add_argument("--keep-checkpoints", action="store_true",
                        help="Keep the run's checkpoints (~2.4 GB with the example config) after evaluating them.")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    clock: dict[str, float] = {}

    from tracegym.models.load import load_tokenizer
    from tracegym.store import open_store
    from tracegym.training.loop import select_tasks, train
    from tracegym.training.metrics import read_metrics

    config, task_set, store = prepared_config(args.config, args.set, args.workdir, args.heldout, args.split_seed,
                                              args.eval)
    heldout, _ = select_tasks(task_set, config, load_tokenizer(config.model.ref), split="heldout")
    heldout = heldout[: args.max_heldout]
    clock["setup"] = time.perf_counter() - started

    samples: dict[str, list[list[float]]] = {}
    run_ids: dict[str, str] = {}
    mark = time.perf_counter()
    samples["base"], run_ids["base"] = evaluate(config.model.ref, config, task_set, heldout, args.samples, store,
                                                 "base")
    clock["eval_base"] = time.perf_counter() - mark
    mark = time.perf_counter()
    result = train(config, store_path=store)
    clock["train"] = time.perf_counter() - mark
    for label, folder in (("warm_start", result.warm_start_checkpoint), ("grpo", result.checkpoint)):
        mark = time.perf_counter()
        samples[label], run_ids[label] = evaluate(folder, config, task_set, heldout, args.samples, store, label)
        clock[f"eval_{label}"] = time.perf_counter() - mark

    per_task = {label: [statistics.fmean(task) for task in rewards] for label, rewards in samples.items()}
    summary = {k: bootstrap(v) for k, v in per_task.items()}
    gains = {
        "grpo_minus_warm_start": bootstrap([g - w for g, w in zip(per_task["grpo"], per_task["warm_start"],
                                                                   strict=True)]),
        "warm_start_minus_base": bootstrap([w - b for w, b in zip(per_task["warm_start"], per_task["base"],
                                                                   strict=True)]),
    }
    sources = [t.provenance.source_task for t in heldout]
    gains["grpo_minus_warm_start_by_source"] = bootstrap(
        [g - w for g, w in zip(per_task["grpo"], per_task["warm_start"], strict=True)], sources)
    gains["grpo_minus_warm_start_over_samples"] = bootstrap_over_samples(samples["grpo"], samples["warm_start"])
    with open_store(store, read_only=True) as st:
        metrics = read_metrics(st, result.run_id)
    plot(metrics, summary, config.warmup.steps, args.plot or args.workdir / "curve.png")
    if not args.keep_checkpoints:  # the figures live in the store and the JSON; the weights are most of the disk
        shutil.rmtree(config.run_dir / "checkpoints", ignore_errors=True)
    clock["total"] = time.perf_counter() - started
    out = {**summary, **gains, "heldout_tasks": len(heldout), "samples_per_task": args.samples,
           "train_steps": {"warm_start": config.warmup.steps, "grpo": config.steps}, "run_id": result.run_id,
           "per_task": per_task, "replies": {label: replies(store, run_id) for label, run_id in
                                              {**run_ids, "grpo_training": result.run_id}.items()},
           "minutes": {k: round(v / 60, 2) for k, v in clock.items()},
           "threads": args.threads}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
