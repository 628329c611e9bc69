"""GRPO trainer steps of the default model: one process, two FSDP2 ranks (gloo), and a LoRA adapter, side by side.

    python benchmarks/trainer_scaling.py [--steps 3] [--lr 1e-5] [--groups 2] [--group-size 4] [--tokens 48]

SmolLM2-135M-Instruct samples one rollout batch (`--groups` groups of `--group-size`, `--tokens` new tokens, top-p
0.95; rewards: the share of even token ids, so groups have a signal), then each arm trains `--steps` GRPO steps on it
(the default loss: top-p replay, MIS, score centering), each arm in fresh processes:

- single: `Trainer` in one process on every CPU thread;
- fsdp2: `ShardedTrainer` on two gloo ranks of this machine, the CPU threads split between them;
- lora: `Trainer` over a peft adapter (r 16, alpha 32, every projection) in one process.

Per arm: the median step time after the first, the bytes of parameters, gradients and AdamW state held per rank (the
tensors' own sizes, shards for fsdp2: what sharding divides), and each process's peak resident memory (ru_maxrss,
which also counts the interpreter, torch and the activations). Per sync, at the same learning rate: the LoRA
adapter's bf16 bytes, and the bf16 `xor` delta bytes of full fine-tuning through `FilesystemBroadcast` (the mean
over steps 2.., since the first step's density depends on where the loaded masters sit in their bf16 cells; see
benchmarks/weight_sync.py). The last line is one JSON object: {"single_step_s", "fsdp2_step_s", "single_peak_mb",
"fsdp2_peak_mb_per_rank", "lora_step_s", "lora_sync_bytes", "full_delta_sync_bytes", ...}, where the *_peak_mb
figures are parameters + gradients + optimizer state per rank and the *_rss_mb figures whole processes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
import torch.multiprocessing as mp

MB = 2**20


def rollout_batch(groups: int, group_size: int, tokens: int) -> list[Any]:
    """One batch of real token records sampled from the default model."""
    import uuid

    from tracegym.episodes.record import Episode, TurnRecord, build_token_record
    from tracegym.models.load import load_model, load_tokenizer
    from tracegym.models.sampling import SamplingEngine, SamplingParams
    from tracegym.samplers.rollouts import RolloutGroup

    model, tokenizer = load_model("smollm2-135m"), load_tokenizer("smollm2-135m")
    engine = SamplingEngine(model, eos_token_ids=[int(tokenizer.eos_token_id)], seed=0)
    params = SamplingParams(temperature=1.0, top_p=0.95, max_new_tokens=tokens)
    questions = ["How do I reset my password?", "Cancel order 1234 and refund it.", "What is your return policy?",
                 "Change the shipping address of my last order."]
    out = []
    for g in range(groups):
        prompt = tokenizer.apply_chat_template([{"role": "user", "content": questions[g % len(questions)]}],
                                               add_generation_prompt=True, return_dict=True)["input_ids"]
        seqs = engine.generate([prompt] * group_size, params, seeds=[1000 * g + i for i in range(group_size)])
        episodes = []
        for k, seq in enumerate(seqs):
            ids = seq.prompt_ids + seq.completion_ids
            record = build_token_record(ids, [False] * len(seq.prompt_ids) + [True] * len(seq.completion_ids),
                                        [seq.logprobs], [seq.support])
            turn = TurnRecord(seq.finish_reason, seq.sampler_id, seq.policy_version, seq.seed, 0.0,
                              start=len(seq.prompt_ids), end=len(ids))
            reward = sum(t % 2 == 0 for t in seq.completion_ids) / max(len(seq.completion_ids), 1)
            episodes.append(Episode(rollout_id=uuid.uuid4().hex, task_id=f"t{g}", task_set_id=None, split="train",
                                    harness="chat", sample_idx=k, seed=seq.seed, model="smollm2", sampling={},
                                    messages=[], n_prompt_messages=0, tokens=record, turns=[turn],
                                    stop_reason="model_done", reward=reward))
        out.append(RolloutGroup(f"t{g}", episodes, g))
    return out


def _held_mb(trainer: Any) -> float:
    """Parameters, their gradients (as at the end of a backward pass: one per trainable parameter) and AdamW's state
    that this process holds, in MiB; the local shards of sharded (DTensor) tensors."""
    def local(t: torch.Tensor) -> int:
        t = t.to_local() if hasattr(t, "to_local") else t
        return t.numel() * t.element_size()

    params = {id(p): p for p in trainer.model.parameters()}.values()  # tied weights once
    total = sum(local(p) for p in params) + sum(local(p) for p in params if p.requires_grad)
    for state in trainer.optimizer.state.values():
        total += sum(local(v) for v in state.values() if torch.is_tensor(v))
    return total / MB


def _timed_steps(trainer: Any, batch: list[Any], steps: int) -> list[float]:
    times = []
    for _ in range(steps):
        started = time.perf_counter()
        metrics = trainer.step(batch)
        times.append(time.perf_counter() - started)
        assert metrics.get("train/optimizer_steps", 0) == 1, "the batch must carry a signal"
    return times


def _sections(lr: float) -> tuple[Any, Any, Any]:
    from tracegym.training.config import GRPOSection, LossSection, OptimSection

    return OptimSection(lr=lr, micro_batch_tokens=4096), GRPOSection(), LossSection()


def arm_single(_: int, out: Path, batch: list[Any], steps: int, lr: float, threads: int, lora: bool) -> None:
    from tracegym.models.load import load_model
    from tracegym.training.grpo.trainer import Trainer

    torch.set_num_threads(threads)
    model = load_model("smollm2-135m").train()
    publish: dict[str, float] = {}
    if lora:
        from tracegym.training import lora as lora_mod
        from tracegym.training.config import LoraSection

        model = lora_mod.with_adapter(model, LoraSection(), "smollm2-135m").get_base_model()
        publish["sync_bytes"] = float(lora_mod.adapter_bytes(model, "bf16"))
    trainer = Trainer(model, *_sections(lr))
    if not lora:
        from tracegym.samplers.weights.folder import FilesystemBroadcast

        with tempfile.TemporaryDirectory() as root:
            broadcast = FilesystemBroadcast(Path(root), ("bf16",), delta="xor", full_every=1000)
            broadcast.publish(model.state_dict(), 0)
            times, deltas = [], []
            for step in range(steps):
                times += _timed_steps(trainer, batch, 1)
                deltas.append(broadcast.publish(model.state_dict(), step + 1)["sync/bytes"])
            publish["sync_bytes"] = statistics.mean(deltas[1:] or deltas)
            publish["dense_bytes"] = float(sum(t.numel() * 2 for t in model.state_dict().values()))
    else:
        times = _timed_steps(trainer, batch, steps)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    name = "lora" if lora else "single"
    torch.save({"times": times, "held_mb": _held_mb(trainer), "rss_mb": rss, **publish}, out / f"{name}.pt")


def arm_fsdp(rank: int, out: Path, batch: list[Any], steps: int, lr: float, threads: int) -> None:
    from tracegym.models.load import load_model
    from tracegym.training.parallel.sharded import Rendezvous, ShardedTrainer, join, leave

    torch.set_num_threads(threads)
    join(Rendezvous(2, store_file=str(out / "store")), rank)
    try:
        trainer = ShardedTrainer(load_model("smollm2-135m").train(), *_sections(lr))
        if rank == 0:
            times = _timed_steps(trainer, batch, steps)
            trainer.stop()
        else:
            times = []
            trainer.serve()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        torch.save({"times": times, "held_mb": _held_mb(trainer.trainer), "rss_mb": rss}, out / f"fsdp-{rank}.pt")
    finally:
        leave()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--groups", type=int, default=2)
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}", flush=True)
    torch.set_num_threads(args.threads)
    batch = rollout_batch(args.groups, args.group_size, args.tokens)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        mp.spawn(arm_single, args=(out, batch, args.steps, args.lr, args.threads, False), nprocs=1)
        mp.spawn(arm_fsdp, args=(out, batch, args.steps, args.lr, max(1, args.threads // 2)), nprocs=2)
        mp.spawn(arm_single, args=(out, batch, args.steps, args.lr, args.threads, True), nprocs=1)
        single, lora = torch.load(out / "single.pt"), torch.load(out / "lora.pt")
        ranks = [torch.load(out / f"fsdp-{r}.pt") for r in range(2)]

    def step_s(times: list[float]) -> float:
        return statistics.median(times[1:] or times)

    result = {
        "single_step_s": round(step_s(single["times"]), 3),
        "fsdp2_step_s": round(step_s(ranks[0]["times"]), 3),
        "single_peak_mb": round(single["held_mb"], 1),
        "fsdp2_peak_mb_per_rank": round(max(r["held_mb"] for r in ranks), 1),
        "lora_step_s": round(step_s(lora["times"]), 3),
        "lora_sync_bytes": int(lora["sync_bytes"]),
        "full_delta_sync_bytes": int(single["sync_bytes"]),
        "full_dense_sync_bytes": int(single["dense_bytes"]),
        "lora_peak_mb": round(lora["held_mb"], 1),
        "single_rss_mb": round(single["rss_mb"]),
        "fsdp2_rss_mb_per_rank": round(max(r["rss_mb"] for r in ranks)),
        "lora_rss_mb": round(lora["rss_mb"]),
        "lr": args.lr,
        "trained_tokens": sum(len(e.tokens.input_ids) for g in batch for e in g.episodes),
    }
    result["fsdp2_over_single_memory"] = round(result["fsdp2_peak_mb_per_rank"] / result["single_peak_mb"], 3)
    result["fsdp2_over_single_step"] = round(result["fsdp2_step_s"] / result["single_step_s"], 3)
    result["lora_over_full_sync_bytes"] = round(result["lora_sync_bytes"] / result["full_delta_sync_bytes"], 4)
    print(f"load average after: {os.getloadavg()}", flush=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
