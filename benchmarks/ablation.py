"""The sampler/trainer-mismatch ablation at small scale: five arms, same seeds, same steps.

Arms (every arm samples with temperature 1 and top-p 0.95; they differ in staleness, sampler precision
and the loss's corrections):

    on_policy          synchronous (max_staleness 0), fp32 sampler, plain GRPO loss
    async_bf16         asynchronous, staleness up to 4, bf16 sampler processes, fp32 trainer, no corrections
    async_bf16+mis     + masked importance sampling (band [0.5, 5])
    async_bf16+mis+sc  + score centering over the recorded support
    async_bf16+all     + top-p 0.95 mask replay (all three corrections)

Task: short chat prompts scored by a regex (the reply starts with a capital letter), which a tiny
random Llama (SmolLM2 tokenizer) earns about one time in four at the start, so GRPO has something to
learn within a few dozen steps. `--model` takes any model folder (or smollm2-135m) instead.

Mismatch is measured the same way in every arm, before each step: on every sampled token, the k3
estimate E_mu[r - 1 - log r] of KL(mu || pi) with r = pi^S(a) / mu(a), where pi^S is the trainer's
current fp32 distribution renormalised over the token's recorded top-p support S (so the truncation
itself is not counted, only staleness and precision). The loss's own `mismatch/k3_kl` (whose pi
depends on the arm's corrections) is kept in the table as well.

    python benchmarks/ablation.py                       # defaults: 40 steps, seed 0
    python benchmarks/ablation.py --steps 60 --seeds 0 1 --lr 3e-3

Writes benchmarks/out/ablation_{reward,mismatch,grad_norm}.png, ablation.md and the per-step metrics
(ablation_runs.json, which `--from-json` turns into plots and table again); the last line is one
JSON object with, per arm, final reward (mean of the last 5 steps), mean reward, mean mismatch KL and
max grad norm (averaged over seeds).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

import rl_setup
import torch

NO_CORRECTIONS = {"mis": None, "score_centering": False, "top_p_replay": False}
ARMS: dict[str, dict[str, Any]] = {
    "on_policy": {"max_staleness": 0, "precision": "fp32", "loss": NO_CORRECTIONS},
    "async_bf16": {"max_staleness": 4, "precision": "bf16", "loss": NO_CORRECTIONS},
    "async_bf16+mis": {"max_staleness": 4, "precision": "bf16", "loss": {**NO_CORRECTIONS, "mis": [0.5, 5.0]}},
    "async_bf16+mis+sc": {"max_staleness": 4, "precision": "bf16",
                          "loss": {"mis": [0.5, 5.0], "score_centering": True, "top_p_replay": False}},
    "async_bf16+all": {"max_staleness": 4, "precision": "bf16",
                       "loss": {"mis": [0.5, 5.0], "score_centering": True, "top_p_replay": True}},
    # Not in the default run: one fp32 and one bf16 sampler process side by side (`sampler.pools`), all three
    # corrections; the trainer keeps each pool's mismatch apart (mismatch/fp32/k3_kl, mismatch/bf16/k3_kl).
    "mixed_pools+all": {"max_staleness": 4, "precision": "fp32", "pools": ["fp32", "bf16"],
                        "loss": {"mis": [0.5, 5.0], "score_centering": True, "top_p_replay": True}},
    # Not in the default run either: the on-policy loop with two optimizer steps per rollout batch
    # (`grpo.optimizer_steps: 2`); the second step is off policy by the first, so MIS is on.
    "on_policy_2steps": {"max_staleness": 0, "precision": "fp32", "optimizer_steps": 2,
                         "loss": {**NO_CORRECTIONS, "mis": [0.5, 5.0]}},
}
DEFAULT_ARMS = [name for name in ARMS if "pools" not in ARMS[name] and "optimizer_steps" not in ARMS[name]]
FINAL_STEPS = 5


def mismatch_kl(model: Any, batch: Any, temperature: float = 1.0) -> dict[str, float]:
    """k3 KL(mu || pi^S) over the batch's sampled tokens, under the weights about to be trained."""
    from tracegym.models.logprobs import batch_logprobs_of

    prompts, completions, supports, sampled = [], [], [], []
    for episode in batch.episodes:
        if episode.tokens is None or episode.tokens.n_trainable == 0:
            continue
        for prompt, completion, support in episode.tokens.turn_inputs(episode.turns):
            prompts.append(prompt)
            completions.append(completion)
            supports.append(support)
        sampled.append(episode.tokens.sampler_logprobs[episode.tokens.loss_mask])
    if not prompts:
        return {}
    with torch.no_grad():
        log_pi = torch.cat(batch_logprobs_of(model, prompts, completions, temperature, supports))
    log_r = log_pi - torch.cat(sampled)
    return {"diag/mismatch_kl": float((log_r.exp() - 1 - log_r).mean()),
            "diag/log_ratio_abs": float(log_r.abs().mean())}


def run_arm(name: str, seed: int, args: argparse.Namespace, model_dir: Path, task_set: Any, work: Path) -> list[dict]:
    from tracegym.models.load import load_model, load_tokenizer, stop_token_ids
    from tracegym.samplers.config import SamplerPool
    from tracegym.samplers.inprocess import SyncRollouts
    from tracegym.samplers.orchestrator import AsyncRollouts
    from tracegym.training.config import TrainConfig
    from tracegym.training.grpo.trainer import Trainer

    arm = ARMS[name]
    config = TrainConfig.model_validate({
        "run_dir": str(work / f"{name}-{seed}"), "seed": seed, "model": {"ref": str(model_dir)},
        "tasks": {"task_set": str(task_set.path)}, "harness": {"kind": "chat", "limits": {"max_turns": 1}},
        "sampler": {"temperature": 1.0, "top_p": 0.95, "max_new_tokens": args.new_tokens,
                    "precision": arm["precision"], "concurrency": args.group_size * 2},
        "grpo": {"group_size": args.group_size, "batch_groups": args.batch_groups,
                 "optimizer_steps": arm.get("optimizer_steps", 1)},
        "loss": arm["loss"], "optim": {"lr": args.lr, "micro_batch_tokens": 8192},
        "async": {"max_staleness": arm["max_staleness"]},
    })
    torch.manual_seed(seed)
    model, tokenizer = load_model(str(model_dir)), load_tokenizer(str(model_dir))
    eos = stop_token_ids(model, tokenizer)
    trainer = Trainer(model.train(), config.optim, config.grpo, config.loss, 1.0, int(tokenizer.eos_token_id))
    if arm["max_staleness"] == 0:
        sampler = load_model(str(model_dir), arm["precision"])
        source: Any = SyncRollouts(config.rollout_plan(), task_set, task_set.tasks, sampler, tokenizer, eos, 0)
    else:
        source = AsyncRollouts(config.rollout_plan(), task_set.tasks, task_set=task_set, tokenizer=tokenizer,
                               eos_token_ids=eos,
                               state_dict=model.state_dict(), policy_version=0,
                               pools=[SamplerPool(precision=p) for p in arm["pools"]] if "pools" in arm
                               else [SamplerPool(precision=arm["precision"], processes=args.samplers)])
    source.start()
    try:
        log = rl_setup.run_steps(trainer, source, args.steps, args.batch_groups, before_step=mismatch_kl)
    finally:
        source.close()
    return log.metrics


def summarize(runs: dict[str, list[list[dict]]]) -> dict[str, dict[str, float]]:
    """Per arm, figures averaged over seeds."""
    out = {}
    for name, seeds in runs.items():
        per_seed = []
        for metrics in seeds:
            rewards = [m.get("reward/mean", math.nan) for m in metrics]
            per_seed.append({
                "final_reward": statistics.fmean(rewards[-FINAL_STEPS:]),
                "mean_reward": statistics.fmean(rewards),
                "mean_mismatch_kl": _mean(metrics, "diag/mismatch_kl"),
                "max_grad_norm": max((m.get("train/grad_norm", 0.0) for m in metrics), default=math.nan),
                "loss_k3_kl": _mean(metrics, "mismatch/k3_kl"),
                "mis_masked_frac": _mean(metrics, "mis/masked_frac"),
                "staleness_mean": _mean(metrics, "staleness/mean"),
                "dropped_stale": sum(m.get("dropped_stale", 0.0) for m in metrics),
            })
        out[name] = {k: statistics.fmean(s[k] for s in per_seed) for k in per_seed[0]}
        pools = {key.split("/")[1] for metrics in seeds for step in metrics for key in step
                 if key.startswith("mismatch/") and key.count("/") == 2}
        for pool in sorted(pools):
            out[name][f"loss_k3_kl@{pool}"] = statistics.fmean(_mean(m, f"mismatch/{pool}/k3_kl") for m in seeds)
        out[name]["mean_reward_min"] = min(s["mean_reward"] for s in per_seed)
        out[name]["mean_reward_max"] = max(s["mean_reward"] for s in per_seed)
    return out


def _mean(metrics: list[dict], key: str) -> float:
    values = [m[key] for m in metrics if key in m and math.isfinite(m[key])]
    return statistics.fmean(values) if values else math.nan


def plot(runs: dict[str, list[list[dict]]], key: str, ylabel: str, path: Path, linthresh: float | None = None) -> None:
    """One curve per arm (the mean over seeds); steps without the metric (no optimizer step) are gaps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, seeds in runs.items():
        steps = range(1, min(len(m) for m in seeds) + 1)
        curve = [statistics.fmean(m[i - 1].get(key, math.nan) for m in seeds) for i in steps]
        ax.plot(list(steps), curve, label=name, marker=".", markersize=5, linewidth=1.2)
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    if linthresh is not None:
        ax.set_yscale("symlog", linthresh=linthresh)  # the on-policy arm sits at ~0, the others decades above
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def report(runs: dict[str, list[list[dict]]]) -> dict[str, dict[str, float]]:
    """Plots, the table (printed and written to ablation.md) and the summary."""
    plot(runs, "reward/mean", "mean reward", rl_setup.OUT / "ablation_reward.png")
    plot(runs, "diag/mismatch_kl", "mismatch KL(mu || pi^S), k3", rl_setup.OUT / "ablation_mismatch.png",
         linthresh=1e-4)
    plot(runs, "train/grad_norm", "gradient norm (before clipping)", rl_setup.OUT / "ablation_grad_norm.png")
    summary = summarize(runs)
    text = table(summary)
    for name, figures in summary.items():
        by_pool = {k.split("@")[1]: v for k, v in figures.items() if k.startswith("loss_k3_kl@")}
        if by_pool:
            text += f"\n\n{name}: the loss's k3 mismatch per pool: " + ", ".join(
                f"{pool} {value:.4g}" for pool, value in by_pool.items())
    (rl_setup.OUT / "ablation.md").write_text(text + "\n")
    print(text, flush=True)
    return summary


def table(summary: dict[str, dict[str, float]]) -> str:
    """Means over seeds; `seeds` is the range of the per-seed mean rewards. The asynchronous arms' runs depend on
    timing (which version each group was sampled with), so one seed's runs of two arms are not paired."""
    columns = ["final_reward", "mean_reward", "mean_mismatch_kl", "max_grad_norm", "loss_k3_kl", "mis_masked_frac",
               "staleness_mean", "dropped_stale"]
    header = ["arm", "final_reward", "mean_reward", "seeds", *columns[2:]]
    lines = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    for name, f in summary.items():
        cells = [f"{f['final_reward']:.4g}", f"{f['mean_reward']:.4g}",
                 f"{f['mean_reward_min']:.3f}–{f['mean_reward_max']:.3f}", *(f"{f[c]:.4g}" for c in columns[2:])]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=40, help="optimizer steps per arm")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="run seeds (each arm runs every seed)")
    parser.add_argument("--arms", nargs="+", default=DEFAULT_ARMS, choices=list(ARMS),
                        help="which arms to run (mixed_pools+all only when named)")
    parser.add_argument("--model", default=None, help="a model folder or smollm2-135m (default: a tiny random Llama)")
    parser.add_argument("--tasks", type=int, default=8, help="distinct prompts")
    parser.add_argument("--group-size", type=int, default=8, help="episodes per group")
    parser.add_argument("--batch-groups", type=int, default=4, help="groups per step")
    parser.add_argument("--new-tokens", type=int, default=8, help="max new tokens per reply")
    parser.add_argument("--lr", type=float, default=1e-3, help="AdamW learning rate")
    parser.add_argument("--samplers", type=int, default=2, help="sampler processes of the async arms")
    parser.add_argument("--threads", type=int, default=2, help="torch threads of the trainer process")
    parser.add_argument("--from-json", default=None, help="redo the plots and table from a saved ablation_runs.json")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    if args.from_json is not None:
        _print_summary(report(json.loads(Path(args.from_json).read_text())))
        return
    torch.set_num_threads(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    rl_setup.OUT.mkdir(parents=True, exist_ok=True)
    model_dir = Path(args.model) if args.model else rl_setup.tiny_model_folder(rl_setup.OUT / "tiny-random")
    if args.model and not (model_dir / "config.json").is_file():
        from tracegym.models.load import resolve_model_ref

        model_dir = resolve_model_ref(args.model)
    runs: dict[str, list[list[dict]]] = {}
    with tempfile.TemporaryDirectory(prefix="ablation-") as tmp:
        work = Path(tmp)
        task_set = rl_setup.write_task_set(work / "cities", "bench-cities", rl_setup.city_tasks(args.tasks))
        for name in args.arms:
            for seed in args.seeds:
                metrics = run_arm(name, seed, args, model_dir, task_set, work)
                runs.setdefault(name, []).append(metrics)
                rewards = " ".join(f"{m.get('reward/mean', math.nan):.2f}" for m in metrics)
                print(f"{name} seed {seed}: rewards {rewards}", flush=True)
    (rl_setup.OUT / "ablation_runs.json").write_text(json.dumps(runs))
    _print_summary(report(runs))


def _print_summary(summary: dict[str, dict[str, float]]) -> None:
    keep = ("final_reward", "mean_reward", "mean_reward_min", "mean_reward_max", "mean_mismatch_kl", "max_grad_norm")
    print(json.dumps({name: {k: v for k, v in figures.items() if k in keep} for name, figures in summary.items()}),
          flush=True)


if __name__ == "__main__":
    main()
