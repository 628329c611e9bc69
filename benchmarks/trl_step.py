"""tracegym's GRPO step against TRL's GRPOTrainer, and the asynchronous loop against the synchronous one.

Part 1, step time, side by side in one run: SmolLM2-135M-Instruct (the converted default model, no
download), 4 prompts x 4 generations x 32 new tokens, the same learning rate, reward (an even number of
words: about half the replies earn it, so every group trains) and token-level loss aggregation with
group-std advantages, fp32 (`--sampler-precision bf16` samples tracegym's completions in bf16 instead;
`--trainer-autocast bf16` runs its forward and backward in mixed precision, fp32 master weights;
`--trl-bf16` gives TRL its own mixed precision, bf16=True), `--threads` CPU threads. TRL runs `GRPOTrainer`
(use_vllm=False, bf16=False, use_cpu=True, otherwise its defaults, which include gradient checkpointing);
after each TRL step a callback has a second process run one tracegym step (SyncRollouts generation +
Trainer.step + publish, as `tracegym train` with max_staleness 0 runs it), so both see the same machine load
and each runs with its own process settings (`--trl-keep-freed-memory` gives TRL's process the malloc setting
tracegym's trainer makes). The first step of each is a warm-up and is left out of the medians.

Part 2, throughput: rollout groups per second of tracegym's synchronous loop (max_staleness 0, in-process
sampling, `--threads` threads) and of the asynchronous one (AsyncRollouts: `--samplers` sampler processes of
`--sampler-threads` threads with `--async-concurrency` episodes in flight each, the trainer on
`--async-trainer-threads`), over the same batches (4 groups of 4), on agent-like episodes: a tiny Llama
warm-started to call get_weather once for each of three cities, then answer; each call takes 200 ms. The
same again with an instant tool is the pure-compute figure. A loop's rate counts the groups trained from the
end of its first step to the end of its last (process start-up left out); the figures are medians over
`--repeats` rounds, each running the loops in alternating order.

    pip install trl            # TRL is a benchmark-only dependency; it must not replace torch
    python benchmarks/trl_step.py                    # defaults: 3 steps each; 2 rounds of 10 loop steps
    python benchmarks/trl_step.py --steps 4 --loop-steps 20 --repeats 3 --samplers 2
    python benchmarks/trl_step.py --parts loops       # part 2 only (no TRL needed)

The last line is one JSON object: trl_step_s, sync_step_s, ratio, async_groups_per_s, sync_groups_per_s,
async_speedup.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import bench_env
import rl_setup
import torch

WEATHER_TASKS = 24


def _train_config(run_dir: Path, task_set: Path, model: Path, **sections: Any) -> Any:
    from tracegym.training.config import TrainConfig

    config: dict[str, Any] = {
        "run_dir": str(run_dir), "seed": 0, "model": {"ref": str(model)}, "tasks": {"task_set": str(task_set)},
        "harness": {"kind": "chat", "limits": {"max_turns": 1}},
        "sampler": {"temperature": 1.0, "top_p": 1.0, "max_new_tokens": 32, "concurrency": 16},
        "grpo": {"group_size": 4, "batch_groups": 4, "std_normalization": True},
        "loss": {"score_centering": False, "top_p_replay": False},
        "optim": {"lr": 1e-6, "betas": [0.9, 0.999], "weight_decay": 0.0, "micro_batch_tokens": 8192},
        "async": {"max_staleness": 0},
    }
    for key, value in sections.items():
        config[key] = {**config[key], **value} if isinstance(config.get(key), dict) else value
    return TrainConfig.model_validate(config)


def _sync_parts(config: Any, task_set: Any, model_dir: Path) -> tuple[Any, Any]:
    """A Trainer and a SyncRollouts over fresh copies of the model, as `tracegym train` builds them."""
    from tracegym.models.load import load_model, load_tokenizer, stop_token_ids
    from tracegym.samplers.inprocess import SyncRollouts
    from tracegym.training.grpo.trainer import Trainer

    model, tokenizer = load_model(str(model_dir)), load_tokenizer(str(model_dir))
    eos = stop_token_ids(model, tokenizer)
    pad = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id)
    trainer = Trainer(model.train(), config.optim, config.grpo, config.loss, config.sampler.temperature, pad)
    source = SyncRollouts.with_copy_of(model, config.rollout_plan(), task_set, task_set.tasks, tokenizer, eos, 0,
                                       base_dir=rl_setup.BENCH_DIR)
    return trainer, source


# -- part 1: one step, TRL against tracegym ---------------------------------------------------------------

def step_times(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from datasets import Dataset
    from transformers import AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from tracegym.models.allocator import keep_freed_memory
    from tracegym.models.load import resolve_model_ref

    model_dir = resolve_model_ref(args.model)
    tasks = rl_setup.story_tasks(args.prompts)
    spawn = multiprocessing.get_context("spawn")
    ours, ours_end = spawn.Pipe()
    child = spawn.Process(target=_tracegym_steps, args=(ours_end, args, work, model_dir))
    child.start()
    ours.recv()  # built and sampling
    steps: list[dict[str, float]] = []
    if args.trl_keep_freed_memory:
        keep_freed_memory()

    class Interleave(TrainerCallback):
        """Times each TRL step, then has the tracegym process run one step before TRL's next."""

        def __init__(self) -> None:
            self.trl: list[float] = []
            self.started = 0.0

        def on_step_begin(self, *_: Any, **__: Any) -> None:
            self.started = time.perf_counter()

        def on_step_end(self, *_: Any, **__: Any) -> None:
            self.trl.append(time.perf_counter() - self.started)
            ours.send(True)
            steps.append(ours.recv())

    def even_words(completions: list[Any], **_: Any) -> list[float]:
        return [bench_env.even_words(c[0]["content"]) for c in completions]

    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": t.prompt.messages[0].content}]}
                                 for t in tasks])
    trl_config = GRPOConfig(
        output_dir=str(work / "trl"), use_cpu=True, bf16=args.trl_bf16, use_vllm=False, learning_rate=1e-6,
        per_device_train_batch_size=args.prompts * args.generations, num_generations=args.generations,
        max_completion_length=args.new_tokens, max_steps=args.steps, logging_steps=1, save_strategy="no",
        report_to="none", disable_tqdm=True, seed=0,
        **({} if args.trl_gradient_checkpointing == "default" else {"gradient_checkpointing": False}),
    )
    timer = Interleave()
    trl = GRPOTrainer(model=str(model_dir), reward_funcs=even_words, args=trl_config, train_dataset=dataset,
                      processing_class=AutoTokenizer.from_pretrained(model_dir, local_files_only=True),
                      callbacks=[timer])
    torch.set_num_threads(args.threads)  # in case the trainer's setup changed it
    try:
        trl.train()
    finally:
        ours.send(False)
        child.join()
    history = [h for h in trl.state.log_history if "completions/mean_length" in h]
    return {"trl": timer.trl, "tracegym": [s["step_s"] for s in steps],
            "tracegym_mean_completion": statistics.fmean(s["completion_tokens"] for s in steps),
            "tracegym_trained_sequences": [s["train/sequences"] for s in steps],
            "trl_zero_std_groups": [h.get("frac_reward_zero_std") for h in history],
            "trl_mean_completion": statistics.fmean(h["completions/mean_length"] for h in history) if history
            else float("nan"), "trl_gradient_checkpointing": trl_config.gradient_checkpointing}


def _tracegym_steps(conn: Any, args: argparse.Namespace, work: Path, model_dir: Path) -> None:
    """The tracegym side of part 1, in a process of its own: one synchronous step each time it is asked.

    Each framework then runs with its own process settings (tracegym's trainer keeps freed memory, see
    tracegym/models/allocator.py; its sampler's OpenMP team is its own), as each would for its users."""
    torch.set_num_threads(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    task_set = rl_setup.write_task_set(work / "stories", "bench-stories", rl_setup.story_tasks(args.prompts))
    config = _train_config(work / "run-sync", task_set.path, model_dir,
                           grpo={"group_size": args.generations, "batch_groups": args.prompts},
                           sampler={"max_new_tokens": args.new_tokens, "precision": args.sampler_precision},
                           optim={"autocast": args.trainer_autocast})
    trainer, source = _sync_parts(config, task_set, model_dir)
    source.start()
    conn.send("ready")
    version = 0
    try:
        while conn.recv():
            log = rl_setup.run_steps(trainer, source, 1, args.prompts, first_version=version,
                                     before_step=lambda _, batch: {"completion_tokens": statistics.fmean(
                                         e.tokens_out or 0 for e in batch.episodes)})
            version += 1
            conn.send({"step_s": log.step_s[0], **log.metrics[0]})
    finally:
        source.close()


# -- part 2: groups per second, asynchronous against synchronous ------------------------------------------

def groups_per_s(args: argparse.Namespace, work: Path, tool: str, asynchronous: bool) -> dict[str, float]:
    from tracegym.models.load import load_model, load_tokenizer, stop_token_ids
    from tracegym.samplers.config import SamplerPool
    from tracegym.samplers.orchestrator import AsyncRollouts
    from tracegym.training.grpo.trainer import Trainer

    model_dir = rl_setup.tool_calling_model(rl_setup.OUT / "tool-model-3calls", WEATHER_TASKS, steps=args.warm_steps)
    task_set = rl_setup.write_task_set(work / "weather", "bench-weather", rl_setup.weather_tasks(WEATHER_TASKS))
    name = f"{'async' if asynchronous else 'sync'}-{tool}"
    config = _train_config(
        work / name, task_set.path, model_dir,
        harness={"kind": "tools", "tools": rl_setup.weather_tools(tool), "limits": {"max_turns": 5}},
        sampler={"top_p": 0.95, "max_new_tokens": 32, "n_samplers": args.samplers,
                 "concurrency": args.async_concurrency if asynchronous else 16},
        loss={"score_centering": True, "top_p_replay": True}, optim={"lr": 1e-4},
        **{"async": {"max_staleness": args.max_staleness if asynchronous else 0}},
    )
    if not asynchronous:
        trainer, source = _sync_parts(config, task_set, model_dir)
    else:
        model, tokenizer = load_model(str(model_dir)), load_tokenizer(str(model_dir))
        trainer = Trainer(model.train(), config.optim, config.grpo, config.loss, config.sampler.temperature,
                          int(tokenizer.eos_token_id))
        source = AsyncRollouts(config.rollout_plan(), task_set.tasks, task_set=task_set, tokenizer=tokenizer,
                               eos_token_ids=stop_token_ids(model, tokenizer), state_dict=model.state_dict(),
                               policy_version=0, base_dir=rl_setup.BENCH_DIR,
                               pools=[SamplerPool(processes=args.samplers, threads=args.sampler_threads)])
    source.start()
    torch.set_num_threads(args.async_trainer_threads if asynchronous else args.threads)
    try:
        log = rl_setup.run_steps(trainer, source, args.loop_steps, config.grpo.batch_groups,
                                 before_step=_episode_figures)
        totals = source.totals()
    finally:
        source.close()
        torch.set_num_threads(args.threads)
    rate = sum(log.groups[1:]) / (log.ended_at[-1] - log.ended_at[0])
    return {"groups_per_s": rate, "step_s": statistics.median(log.step_s[1:]),
            "reward": _mean(log.metrics, "reward/mean"), "tool_calls_per_episode": _mean(log.metrics, "env/tool_calls"),
            "episode_s": _mean(log.metrics, "env/episode_s"), "dropped_stale": totals.get("source/dropped_stale", 0.0),
            "staleness_mean": _mean(log.metrics, "staleness/mean"), "wait_s": _mean(log.metrics[1:], "time/wait_s"),
            "train_s": _mean(log.metrics[1:], "time/train_s"), "publish_s": _mean(log.metrics[1:], "time/publish_s")}


def _episode_figures(_model: Any, batch: Any) -> dict[str, float]:
    """Tool calls and wall seconds per episode: how much of an episode is spent waiting on the tool."""
    episodes = batch.episodes
    return {"env/tool_calls": statistics.fmean(e.counts.tool_calls for e in episodes),
            "env/episode_s": statistics.fmean(e.latency_s for e in episodes)}


def _mean(metrics: list[dict[str, float]], key: str) -> float:
    values = [m[key] for m in metrics if key in m]
    return statistics.fmean(values) if values else float("nan")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (the trainer's, in part 2)")
    parser.add_argument("--model", default="smollm2-135m", help="part 1: the model (a folder or smollm2-135m)")
    parser.add_argument("--steps", type=int, default=3, help="part 1: steps of each trainer (the first is warm-up)")
    parser.add_argument("--prompts", type=int, default=4, help="part 1: prompts per step")
    parser.add_argument("--generations", type=int, default=4, help="part 1: generations per prompt")
    parser.add_argument("--new-tokens", type=int, default=32, help="part 1: new tokens per generation")
    parser.add_argument("--sampler-precision", choices=["fp32", "bf16"], default="fp32",
                        help="part 1: precision of tracegym's sampler (TRL's runs bf16=False)")
    parser.add_argument("--trainer-autocast", choices=["off", "bf16"], default="off",
                        help="part 1: tracegym's optim.autocast (bf16: mixed-precision forward and backward)")
    parser.add_argument("--trl-bf16", action="store_true",
                        help="part 1: run TRL with bf16=True (its mixed precision) instead of the issue's bf16=False")
    parser.add_argument("--trl-keep-freed-memory", action="store_true",
                        help="part 1: give TRL's process the malloc setting tracegym's trainer uses")
    parser.add_argument("--trl-gradient-checkpointing", choices=["default", "off"], default="default",
                        help="part 1: keep TRL's default (on) or turn it off")
    parser.add_argument("--loop-steps", type=int, default=10, help="part 2: steps of each loop")
    parser.add_argument("--repeats", type=int, default=2, help="part 2: rounds of the four loop runs (medians)")
    parser.add_argument("--samplers", type=int, default=2, help="part 2: sampler processes of the async loop")
    parser.add_argument("--sampler-threads", type=int, default=1, help="part 2: torch threads per sampler process")
    parser.add_argument("--async-trainer-threads", type=int, default=1,
                        help="part 2: torch threads of the async loop's trainer (the samplers use the others)")
    parser.add_argument("--async-concurrency", type=int, default=32,
                        help="part 2: episodes in flight in each sampler process of the async loop (the sync loop "
                             "runs its whole batch, 16, at once)")
    parser.add_argument("--max-staleness", type=int, default=4,
                        help="part 2: the async loop's max_staleness (4, as the ablation's asynchronous arms; "
                             "at 2 the buffer is too short to hide the tool waits)")
    parser.add_argument("--warm-steps", type=int, default=120, help="part 2: warm-start steps of the tool model")
    parser.add_argument("--parts", nargs="+", choices=["step", "loops"], default=["step", "loops"],
                        help="which parts to run (step needs TRL)")
    args = parser.parse_args(argv)
    if args.steps < 2 or args.loop_steps < 2:
        parser.error("--steps and --loop-steps must be at least 2: the first step is a warm-up left out")
    return args


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    rl_setup.OUT.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="trl-step-") as tmp:
        work = Path(tmp)
        if "step" in args.parts:
            times = step_times(args, work)
            trl_s, ours_s = statistics.median(times["trl"][1:]), statistics.median(times["tracegym"][1:])
            print(f"part 1: TRL step {trl_s:.2f} s, tracegym synchronous step {ours_s:.2f} s "
                  f"(per step: TRL {_fmt(times['trl'])}, tracegym {_fmt(times['tracegym'])}; mean completion "
                  f"tokens TRL {times['trl_mean_completion']:.1f}, tracegym {times['tracegym_mean_completion']:.1f}; "
                  f"TRL gradient checkpointing {times['trl_gradient_checkpointing']}; sequences tracegym trained "
                  f"per step {times['tracegym_trained_sequences']} (the others' groups had equal rewards); TRL's "
                  f"share of equal-reward groups per step {times['trl_zero_std_groups']})", flush=True)
            out.update({"trl_step_s": trl_s, "sync_step_s": ours_s, "ratio": ours_s / trl_s})
        if "loops" in args.parts:
            out.update(loop_rates(args, work))
    print(json.dumps(out), flush=True)


TOOLS = ("get_weather_200ms", "get_weather_instant")


def loop_rates(args: argparse.Namespace, work: Path) -> dict[str, float]:
    """Medians over `--repeats` rounds; each round runs both loops per tool, in alternating order, so a
    change in the machine's load hits both alike."""
    runs: dict[tuple[str, bool], list[dict[str, float]]] = {(t, a): [] for t in TOOLS for a in (False, True)}
    for round_ in range(args.repeats):
        for tool in TOOLS:
            for asynchronous in ((False, True) if round_ % 2 == 0 else (True, False)):
                figures = groups_per_s(args, work, tool, asynchronous)
                runs[tool, asynchronous].append(figures)
                print(f"part 2, round {round_}: {tool} {'async' if asynchronous else 'sync'}: "
                      f"{json.dumps({k: round(v, 4) for k, v in figures.items()})}", flush=True)

    def rate(tool: str, asynchronous: bool) -> float:
        return statistics.median(f["groups_per_s"] for f in runs[tool, asynchronous])

    print(f"pure compute (instant tool): async {rate(TOOLS[1], True):.3f} groups/s, sync {rate(TOOLS[1], False):.3f} "
          f"groups/s, speedup {rate(TOOLS[1], True) / rate(TOOLS[1], False):.2f}x; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    return {"async_groups_per_s": rate(TOOLS[0], True), "sync_groups_per_s": rate(TOOLS[0], False),
            "async_speedup": rate(TOOLS[0], True) / rate(TOOLS[0], False)}


def _fmt(values: list[float]) -> str:
    return "[" + ", ".join(f"{v:.1f}" for v in values) + "]"


if __name__ == "__main__":
    main()
