"""Start, join and stop the trainer ranks of `parallel: {kind: fsdp, world_size: N}`.

Three ways to get N ranks:

- `tracegym train CONFIG` alone is rank 0 and spawns ranks 1..N-1 on this machine. They meet through a FileStore
  in a 0700 folder of the run's (no TCP store at all) and talk over loopback only (gloo pinned to the loopback
  interface), so no other user's process can join or write the rendezvous and nothing listens beyond 127.0.0.1;
- with `parallel.launcher: ray`, `tracegym train CONFIG` is rank 0 and starts ranks 1..N-1 as Ray actors on the
  cluster of `async.ray.address`, each asking for `parallel.ray`; they meet rank 0's TCP store at its node's address
  as Ray sees it, served on a socket rank 0 bound to that address alone (tracegym/training/parallel/ray_ranks.py);
- `torchrun --nproc_per_node N -m tracegym.cli train CONFIG` starts N processes; each takes its rank from torchrun's
  environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT). Rank 0 runs the whole `train` (store, run folder,
  display, sampling, checkpoints); the others only join the process group and train (`follow`).

Either way rank 0 joins the group when GRPO begins (a warm start runs on rank 0 alone, before it) and tells the
others what to load (`RankStart`: the checkpoint GRPO starts from, the reference model of `loss.kl_beta`); every
rank then builds the same ShardedTrainer and ranks 1..N-1 serve it until rank 0 says stop. A run with no GRPO step
left sends None instead, which releases them. A spawned rank whose parent is gone (rank 0 killed) ends itself, as
Ray ends the actors of a driver that is gone; under torchrun, the agent ends every rank when one fails. A rank that
dies mid-run (a spawned process, a Ray actor) fails rank 0's next collective, and the run with a RankError naming
the rank; one that stops answering with its connections open (a node gone silent) fails it after
`parallel.step_timeout_s`.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch.distributed as dist
import torch.multiprocessing as mp

from tracegym.errors import ConfigError, RankError
from tracegym.training.checkpoint import private_run_dir
from tracegym.training.parallel.sharded import Rendezvous, ShardedTrainer, exit_with_parent, join, leave

if TYPE_CHECKING:
    from transformers import PreTrainedModel

    from tracegym.training.config import TrainConfig
    from tracegym.training.parallel.ray_ranks import RayRanks

_STOP_WAIT_S = 60.0
_DEATH_NOTICE_S = 5.0
"""How long after rank 0's collective failed a rank's process may take to be seen ended (a closed socket can tell
rank 0 before the process is reaped)."""
TORCHRUN_ENV = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
"""What torchrun sets in each process it starts (LOCAL_RANK too, which one machine's CPUs do not need)."""


@dataclass(frozen=True)
class Launch:
    """This process's place among the ranks: where they meet, and its rank."""

    rendezvous: Rendezvous
    rank: int
    listener: socket.socket | None = field(default=None, compare=False)
    """Rank 0's bound socket that its TCP store serves on (Ray ranks); never pickled to another rank."""


@dataclass(frozen=True)
class RankStart:
    """What rank 0 tells the other ranks when GRPO begins; they load the same weights as it holds."""

    weights: str | None
    """The checkpoint GRPO starts from (a model folder, or an adapter folder under model.lora): the one resumed, or
    the warm start's; None: `model.ref` (with a fresh adapter under model.lora, whose values rank 0 sends)."""
    reference: str | None
    """The frozen reference model of `loss.kl_beta` (a model reference); None without one."""
    pad_id: int


def torchrun_launch(config: TrainConfig) -> Launch | None:
    """This process's rank when torchrun started it, else None; a torchrun world that the config's `parallel` section
    does not ask for is an error on every rank."""
    if not all(name in os.environ for name in TORCHRUN_ENV):
        return None
    world = int(os.environ["WORLD_SIZE"])
    wanted = config.parallel.world_size if config.parallel.kind == "fsdp" else 1
    if world != wanted:
        raise ConfigError(f"torchrun started {world} processes (WORLD_SIZE={world}), and the config asks for {wanted} "
                          f"(parallel: kind {config.parallel.kind}, world_size {config.parallel.world_size}). Fix: set "
                          f"parallel: {{kind: fsdp, world_size: {world}}}, or run torchrun with --nproc_per_node "
                          f"{wanted}.")
    if config.parallel.kind == "none":
        return None
    if config.parallel.launcher == "ray":
        raise ConfigError("torchrun started the ranks, and parallel.launcher: ray asks tracegym to start them as Ray "
                          "actors. Fix: set launcher: spawn (ignored under torchrun), or run `tracegym train CONFIG` "
                          "without torchrun.")
    return Launch(Rendezvous(world, address=os.environ["MASTER_ADDR"], port=int(os.environ["MASTER_PORT"])),
                  int(os.environ["RANK"]))


def _optimizer_state(weights: str | None) -> dict[str, Any] | None:
    """The gathered GRPO optimizer state a checkpoint holds (None at the start, or after the warm start)."""
    if weights is None:
        return None
    from tracegym.training.checkpoint import load_state

    state = load_state(Path(weights))
    return state.optimizer if state.optimizer_phase == "grpo" else None


def _build(model: PreTrainedModel, config: TrainConfig, start: RankStart,
           reference: PreTrainedModel | None) -> ShardedTrainer:
    return ShardedTrainer(model, config.optim, config.grpo, config.loss, config.sampler.temperature, start.pad_id,
                          optimizer_state=_optimizer_state(start.weights), reference=reference,
                          step_timeout=timedelta(seconds=config.parallel.step_timeout_s))


def load_policy(config: TrainConfig, weights: str | None) -> PreTrainedModel:
    """The model rank 0 trains, as another rank loads it: `weights` or the base, with the adapter under model.lora
    (the model peft injected it into); trainable as rank 0's."""
    from tracegym.training.trained_weights import TrainedWeights

    policy = TrainedWeights.load(config, Path(weights) if weights is not None else None)
    policy.set_trainable()
    return policy.model


def follow(config: TrainConfig, launch: Launch) -> None:
    """Ranks >= 1: join the group, wait for rank 0's RankStart, then train what it announces until it says stop."""
    from tracegym.models.load import load_model

    join(launch.rendezvous, launch.rank)
    try:
        box: list[RankStart | None] = [None]
        dist.broadcast_object_list(box, src=0)
        start = box[0]
        if start is None:  # rank 0 had no GRPO step left to take
            return
        model = load_policy(config, start.weights)
        reference = load_model(start.reference, "fp32") if start.reference is not None else None
        _build(model, config, start, reference).serve()
    finally:
        leave()


def _spawned(rank: int, rendezvous: Rendezvous, config: TrainConfig, threads: int) -> None:
    """A rank that `tracegym train` spawned."""
    import torch

    exit_with_parent()
    torch.set_num_threads(threads)
    follow(config, Launch(rendezvous, rank))


def dismiss(launch: Launch) -> None:
    """Rank 0 under torchrun with no GRPO step to take: release the other ranks, which wait for a RankStart."""
    join(launch.rendezvous, 0)
    try:
        dist.broadcast_object_list([None], src=0)
    finally:
        leave()


RENDEZVOUS_PREFIX = ".rendezvous-"
"""The folder in the run folder that holds the spawned ranks' FileStore while they run (mode 0700)."""


class SpawnedRanks:
    """Ranks 1..N-1 as processes this one spawns, meeting it through a FileStore in a private folder of the run's."""

    def __init__(self, config: TrainConfig) -> None:
        import torch

        world = config.parallel.world_size
        private_run_dir(Path(config.run_dir))  # the trainer may start before anything else made the run folder
        self.folder = Path(tempfile.mkdtemp(prefix=RENDEZVOUS_PREFIX, dir=config.run_dir))  # 0700, a fresh name
        self.launch = Launch(Rendezvous(world, store_file=str(self.folder / "store")), 0)
        threads = max(1, torch.get_num_threads() // world)
        context = mp.get_context("spawn")
        self.processes = [context.Process(target=_spawned, args=(rank, self.launch.rendezvous, config, threads),
                                          daemon=True, name=f"tracegym-rank-{rank}") for rank in range(1, world)]
        for process in self.processes:
            process.start()
        torch.set_num_threads(threads)

    def release(self, finished: bool) -> None:
        """After rank 0 said stop (`finished`), wait for the ranks to end; kill those still running."""
        for process in self.processes:
            if finished:
                process.join(_STOP_WAIT_S)
            if process.is_alive():  # mid-collective after an error or an interrupt: it cannot be told to stop
                process.kill()
                process.join()
        shutil.rmtree(self.folder, ignore_errors=True)

    def check(self, error: RuntimeError) -> None:
        """Raise a RankError from `error` (rank 0's failure) when a spawned rank's process has ended; a rank that
        raised has printed its own traceback on stderr before it."""
        deadline = time.monotonic() + _DEATH_NOTICE_S
        while not (ended := [p for p in self.processes if p.exitcode is not None]) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not ended:
            return
        process, code = ended[0], ended[0].exitcode or 0
        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        raise RankError(f"trainer rank {process.name.rsplit('-', 1)[1]} (process {process.pid}) ended, {how}. Rank 0 "
                        f"failed with it: {str(error).splitlines()[0]}. Continue the run from its latest checkpoint "
                        "with --resume.") from error


def _start_ranks(config: TrainConfig) -> SpawnedRanks | RayRanks:
    if config.parallel.launcher == "spawn":
        return SpawnedRanks(config)
    from tracegym.samplers.backends import ray_cluster  # noqa: F401 - without Ray installed, a ConfigError that says so
    from tracegym.training.parallel.ray_ranks import RayRanks

    return RayRanks(config)


@contextmanager
def sharded_trainer(model: PreTrainedModel, config: TrainConfig, start: RankStart, launch: Launch | None,
                    reference: PreTrainedModel | None = None) -> Iterator[ShardedTrainer]:
    """Rank 0's ShardedTrainer over `model`, with ranks 1..N-1 (torchrun's, or started here by the config's
    `parallel.launcher` when `launch` is None) training beside it until the block ends."""
    ranks: SpawnedRanks | RayRanks | None = None
    if launch is None:
        ranks = _start_ranks(config)
        launch = ranks.launch
    finished = False
    try:
        join(launch.rendezvous, 0, launch.listener)
        dist.broadcast_object_list([start], src=0)
        trainer = _build(model, config, start, reference)
        yield trainer
        trainer.stop()
        finished = True
    except RuntimeError as e:  # what a collective raises when a peer is gone (DistBackendError is one)
        if ranks is not None:
            ranks.check(e)
        if "Timed out" in str(e):  # gloo's words: no rank ended, one stopped answering
            raise RankError(f"a trainer rank did not answer within parallel.step_timeout_s "
                            f"({config.parallel.step_timeout_s:g} s): {str(e).splitlines()[0]}. Its node may be "
                            "gone or stalled. Continue the run from its latest checkpoint with --resume once every "
                            "rank's node is back, or raise step_timeout_s for ranks that are slow.") from e
        raise
    finally:
        if ranks is not None:
            ranks.release(finished)
        leave()
