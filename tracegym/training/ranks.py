"""Start and stop the trainer ranks of `parallel: {kind: fsdp, world_size: N}` on this machine.

`tracegym train` is rank 0. It starts ranks 1..N-1 as spawned processes that meet it on the loopback address
(127.0.0.1, a free port), load the same weights (the base model, or the checkpoint being resumed, with its
gathered AdamW state), build the same ShardedTrainer and serve it until it says stop. A rank whose parent is
gone (rank 0 killed) ends itself; rank 0 ending by an error or an interrupt ends the others.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import torch.multiprocessing as mp

from tracegym.training.sharded import Rendezvous, ShardedTrainer, exit_with_parent, free_port, join, leave

if TYPE_CHECKING:
    from transformers import PreTrainedModel

    from tracegym.training.config import TrainConfig

_STOP_WAIT_S = 60.0


def _optimizer_state(checkpoint: Path | None) -> dict | None:
    """The gathered GRPO optimizer state a checkpoint holds (None at the start, or after the warm start)."""
    if checkpoint is None:
        return None
    from tracegym.training.checkpoint import load_state

    state = load_state(checkpoint)
    return state.optimizer if state.optimizer_phase == "grpo" else None


def _build(model: PreTrainedModel, config: TrainConfig, pad_id: int, checkpoint: Path | None) -> ShardedTrainer:
    return ShardedTrainer(model, config.optim, config.grpo, config.loss, config.sampler.temperature, pad_id,
                          optimizer_state=_optimizer_state(checkpoint))


def _follow(rank: int, rendezvous: Rendezvous, config: TrainConfig, checkpoint: Path | None, pad_id: int,
            threads: int) -> None:
    """Rank `rank` (>= 1): the same model and trainer as rank 0, serving it."""
    import torch

    from tracegym.models.load import load_model
    from tracegym.training.trainer import set_trainable

    exit_with_parent()
    torch.set_num_threads(threads)
    join(rendezvous, rank)
    try:
        model = load_model(checkpoint or config.model.ref, "fp32").train()
        set_trainable(model, config.optim)
        _build(model, config, pad_id, checkpoint).serve()
    finally:
        leave()


@contextmanager
def sharded_trainer(model: PreTrainedModel, config: TrainConfig, pad_id: int,
                    checkpoint: Path | None) -> Iterator[ShardedTrainer]:
    """Rank 0's ShardedTrainer over `model`, with ranks 1..N-1 running beside it until the block ends."""
    import torch

    world = config.parallel.world_size
    rendezvous = Rendezvous("127.0.0.1", free_port(), world)
    threads = max(1, torch.get_num_threads() // world)
    context = mp.get_context("spawn")
    followers = [context.Process(target=_follow, args=(rank, rendezvous, config, checkpoint, pad_id, threads),
                                 daemon=True, name=f"tracegym-rank-{rank}") for rank in range(1, world)]
    for process in followers:
        process.start()
    torch.set_num_threads(threads)
    finished = False
    try:
        join(rendezvous, 0)
        trainer = _build(model, config, pad_id, checkpoint)
        yield trainer
        trainer.stop()
        finished = True
    finally:
        for process in followers:
            if finished:
                process.join(_STOP_WAIT_S)
            if process.is_alive():  # mid-collective after an error or an interrupt: it cannot be told to stop
                process.kill()
                process.join()
        leave()
