"""The trainer's GRPO step with logits on the replayed support only, against logits over the whole vocabulary.

Under top-p mask replay the loss reads each position's logits on its support alone, so the trainer computes
only those (`tracegym.training.grpo.batching.support_logits`); before, it ran the output layer over all 49,152
tokens of SmolLM2's vocabulary. This replays stored GRPO batches of a `benchmarks/studies/train_tau.py` run (the
episodes, rewards, sampler log-probs and supports its store keeps) through both trainers, built as
`examples/train-tau.yaml` builds its trainer (SmolLM2-135M, fp32, the last 10 blocks trained, embeddings frozen,
micro-batches of 2,048 tokens, every correction on), and times forward + backward (`Trainer.accumulate`),
interleaved, --repeats rounds over --steps stored steps that had a group with a signal, spread over the run. Both
trainers' losses are compared step by step.

    python benchmarks/studies/train_tau.py --workdir DIR --samples 6 --set steps=40  # any run: its store counts
    python benchmarks/support_logits.py --store DIR/store.duckdb

The last line is one JSON object: {"steps", "trained_tokens", "vocabulary_s", "support_s", "speedup",
"max_loss_diff"} (times: forward + backward of all the steps, median over rounds).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path

import torch

from tracegym.episodes.rollout_table import read_rollouts
from tracegym.models.load import load_model
from tracegym.samplers.rollouts import RolloutGroup
from tracegym.store import open_store
from tracegym.training.config import GRPOSection, LossSection, OptimSection
from tracegym.training.grpo.batching import MicroBatch, SupportLogits
from tracegym.training.grpo.trainer import Trainer, set_trainable


class VocabularyTrainer(Trainer):
    """The trainer as it was: logits over the whole vocabulary even under replay."""

    def _support_logits(self, mb: MicroBatch) -> SupportLogits | None:
        return None


def stored_batches(store_path: Path, steps: int) -> list[list[RolloutGroup]]:
    """`steps` GRPO batches of the store's latest run, evenly spaced among its steps that had a group with a signal."""
    with open_store(store_path) as store:
        [(run_id,)] = store.con.sql("SELECT run_id FROM rollouts WHERE train_step IS NOT NULL "
                                    "ORDER BY created_at DESC LIMIT 1").fetchall()
        episodes = [e for e in read_rollouts(store, run_id=run_id) if e.train_step is not None and e.tokens]
    by_step: dict[int, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for e in episodes:
        by_step[e.train_step][e.task_id].append(e)
    batches = []
    for step in sorted(by_step):
        groups = [RolloutGroup(task, eps) for task, eps in by_step[step].items()]
        if any(g.has_signal for g in groups):
            batches.append(groups)
    chosen = sorted({round(i * (len(batches) - 1) / max(steps - 1, 1)) for i in range(min(steps, len(batches)))})
    return [batches[i] for i in chosen]  # spread over the run: later steps train more groups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    batches = stored_batches(args.store, args.steps)
    optim = OptimSection(lr=3e-5, betas=(0.9, 0.98), weight_decay=0.1, micro_batch_tokens=2048, train_layers=10,
                         freeze_embeddings=True)
    trainers = {}
    for kind, cls in (("vocabulary", VocabularyTrainer), ("support", Trainer)):
        model = load_model("smollm2-135m").train()
        set_trainable(model, optim)
        trainers[kind] = cls(model, optim, GRPOSection(group_size=8, batch_groups=4), LossSection(), temperature=1.0)
    times: dict[str, list[float]] = {"vocabulary": [], "support": []}
    losses: dict[str, list[float]] = {"vocabulary": [], "support": []}
    tokens = 0
    for repeat in range(args.repeats + 1):  # round 0 warms up
        for groups in batches:
            for kind, trainer in trainers.items():
                start = time.perf_counter()
                metrics = trainer.accumulate(groups)
                elapsed = time.perf_counter() - start
                trainer.optimizer.zero_grad(set_to_none=True)
                if repeat:
                    times[kind].append(elapsed)
                else:
                    losses[kind].append(metrics["train/loss"])
                    tokens += int(metrics["train/tokens"]) if kind == "support" else 0
    # Steps differ several-fold in size, so the figure is the time of all of them: a round's total, median over rounds.
    rounds = {kind: statistics.median(sum(t[i:i + len(batches)]) for i in range(0, len(t), len(batches)))
              for kind, t in times.items()}
    for kind in times:
        each = ", ".join(f"{t:.2f}" for t in times[kind])
        print(f"{kind:10s} {rounds[kind]:.2f} s for {len(batches)} steps (each: {each})")
    print(json.dumps({
        "steps": len(batches), "trained_tokens": tokens, "vocabulary_s": round(rounds["vocabulary"], 3),
        "support_s": round(rounds["support"], 3), "speedup": round(rounds["vocabulary"] / rounds["support"], 3),
        "max_loss_diff": max(abs(a - b) for a, b in zip(losses["vocabulary"], losses["support"], strict=True)),
    }))


if __name__ == "__main__":
    main()
