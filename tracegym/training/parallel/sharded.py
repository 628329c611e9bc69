"""The GRPO trainer as FSDP2 ranks on torch.distributed: `parallel: {kind: fsdp, world_size: N}`.

Every rank holds 1/N of each parameter, of its gradient and of AdamW's state (FSDP2's `fully_shard`, one unit per
transformer block plus a root unit for the embeddings, final norm and output layer, which SmolLM2 ties). A step:

    rank 0 announces ("step", groups, lr); every rank runs Trainer.step on the same groups
    prepare: the same advantages and samples on every rank; each rank takes its share of the samples
    backward: each rank packs its share into micro-batches; the loss of each is reduced with the denominator of
      the whole step, so that the sum over ranks of their gradients is the single-process gradient; FSDP2
      reduce-scatters (sums) each micro-batch's gradients into the shards
    clip: the global norm over every rank's shards; AdamW steps each rank's shards

Every rank must run as many forward and backward passes as the others (each one all-gathers and reduce-scatters
every unit), so a rank with fewer micro-batches runs idle passes of one token and zero loss, and micro-batches do
not share prompt prefixes (that runs the blocks twice for some micro-batches and once for others). The loss
(tracegym/training/grpo/loss.py) is unchanged: each rank calls it on its micro-batches as the single process does.

`ShardedTrainer` holds the rank's `Trainer`, which runs the step through a `RankShare` (the parts of a step that
differ from one process's). Rank 0 is the `tracegym train` process: it samples, records and checkpoints; the other
ranks `serve` it, running what it announces. Weights leave the ranks gathered (`gathered_weights`): checkpoints are
whole Hugging Face folders and the samplers get whole weights (or deltas of them) as from one process; the optimizer
state is saved gathered too (`optimizer_state`) and scattered back onto the ranks on resume.
"""

from __future__ import annotations

import atexit
import gc
import ipaddress
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist
from torch import Tensor
from torch.distributed.distributed_c10d import _set_pg_timeout

from tracegym.training.config import STEP_TIMEOUT_S
from tracegym.training.grpo.batching import MicroBatch, TrainSample
from tracegym.training.grpo.trainer import Logits, PoolLosses, Trainer

if TYPE_CHECKING:
    from transformers import PreTrainedModel

    from tracegym.samplers.rollouts import RolloutGroup
    from tracegym.training.config import GRPOSection, LossSection, OptimSection

_TIMEOUT = timedelta(hours=6)
"""How long a rank waits to join the group and for rank 0's announcements: the other ranks wait there while rank 0
warms up, samples a batch or evaluates. A step's collectives wait `step_timeout` (ShardedTrainer)."""


LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class Rendezvous:
    """Where the ranks meet: a FileStore in a private folder (spawned ranks: no listener at all), else a TCP store at
    `address`:`port` (torchrun's agent; rank 0's, on a socket it bound, for Ray actors)."""

    world_size: int
    store_file: str | None = None
    """The FileStore's path, in a 0700 folder of the run's: only this user's processes can read or write it."""
    address: str = LOOPBACK
    port: int = 0
    served: bool = False
    """Rank 0 serves the TCP store at address:port on a socket it bound (Ray ranks); else torchrun's store (env://)."""

    @property
    def loopback(self) -> bool:
        """Whether every rank is on this machine and talks over loopback only."""
        return self.store_file is not None or is_loopback(self.address)


def is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return address == "localhost"


def listen(address: str) -> socket.socket:
    """A TCP socket bound to `address` on a port the kernel picks, and listening: rank 0's store serves on this very
    socket (`join`'s `listener`), so no other process can take the port between a probe and a bind."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    try:
        s.bind((address, 0))
        s.listen(128)
    except OSError:
        s.close()
        raise
    return s


_PINNED: dict[str, str | None] = {}
"""The environment variables `join` set to keep the group on loopback, with the values they had; `leave` restores
them."""


def _pin_to_loopback() -> None:
    """Make gloo (and nccl's bootstrap) listen on the loopback interface, not on the address the host name resolves
    to: every ProcessGroupGloo, the default group's and each `new_group`'s, reads GLOO_SOCKET_IFNAME when made."""
    interface = next((name for _, name in socket.if_nameindex() if name.startswith("lo")), "lo")
    for name in ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"):
        _PINNED.setdefault(name, os.environ.get(name))
        os.environ[name] = interface


def _unpin() -> None:
    for name, value in _PINNED.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    _PINNED.clear()


def join(rendezvous: Rendezvous, rank: int, listener: socket.socket | None = None) -> None:
    """Join the process group: gloo on CPUs (the only backend here), nccl where every rank has a GPU. The ranks meet
    through the rendezvous's FileStore; or rank 0 serves the TCP store on `listener` (a socket `listen` bound, which
    the store takes over) and the others connect to it (`served`); or (torchrun) through torchrun's store (env://).
    Every rank takes the same one of these paths: init_process_group prefixes the keys of env://'s store only."""
    if rendezvous.loopback:
        _pin_to_loopback()
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    size = rendezvous.world_size
    if rendezvous.store_file is not None:
        store: dist.Store | None = dist.FileStore(rendezvous.store_file, size)
    elif rendezvous.served and rank == 0:
        if listener is None:
            raise ValueError("rank 0 serves the rendezvous's TCP store on the socket it bound: pass it as listener")
        store = dist.TCPStore(rendezvous.address, rendezvous.port, size, is_master=True, timeout=_TIMEOUT,
                              wait_for_workers=False, master_listen_fd=listener.detach())
    elif rendezvous.served:
        store = dist.TCPStore(rendezvous.address, rendezvous.port, size, is_master=False, timeout=_TIMEOUT)
    else:
        store = None
        os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = rendezvous.address, str(rendezvous.port)
    dist.init_process_group(backend, store=store, rank=rank, world_size=size, timeout=_TIMEOUT)
    # FSDP2's state holds the group's backend in reference cycles that outlive the trainer's frame; left to the
    # interpreter's shutdown, gloo's backend is freed half torn down and aborts the rank ("terminate called without
    # an active exception", SIGABRT, after a run that succeeded). Collect them at exit while the interpreter is whole.
    atexit.unregister(gc.collect)
    atexit.register(gc.collect)


def leave() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()
    _unpin()


def exit_with_parent() -> None:
    """End this process when the process that started it is gone (a SIGKILLed rank 0 sends no word; the other
    ranks would otherwise wait in their next collective for hours)."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="exit-with-parent").start()


class _Forward(torch.nn.Module):
    """The root FSDP unit: the trainer's forward pass as one module call, so that FSDP2 gathers the root's
    parameters (embeddings, final norm, output layer) around it; the batching code reads the output layer's weight
    directly, never through the model's own forward."""

    def __init__(self, model: PreTrainedModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, mb: MicroBatch | None, logits: Callable[[MicroBatch], Logits] | None = None) -> Logits:
        if mb is None or logits is None:  # an idle pass: every unit gathered and reduced, with a zero gradient
            ids = torch.zeros(1, 1, dtype=torch.long, device=next(self.model.parameters()).device)
            hidden = self.model.base_model(input_ids=ids).last_hidden_state[0]
            return self.model.get_output_embeddings()(hidden).float(), None
        return logits(mb)


def shard(model: PreTrainedModel, root: torch.nn.Module) -> None:
    """`fully_shard` each transformer block, then `root` (which holds `model`) for what is left; gradients are summed
    over the ranks, not averaged: each rank's loss already carries the step's whole denominator."""
    from torch.distributed.fsdp import FSDPModule, fully_shard

    for block in getattr(model.base_model, "layers", []):
        fully_shard(block)
    fully_shard(root)
    for module in root.modules():
        if isinstance(module, FSDPModule):
            module.set_gradient_divide_factor(1.0)
            module.set_force_sum_reduction_for_comms(True)  # gloo has no pre-multiplied sum


def share(samples: Sequence[TrainSample], rank: int, world_size: int) -> list[TrainSample]:
    """Rank `rank`'s part of the samples: longest first, each to the rank with the fewest tokens so far (the lowest
    rank on a tie), then in their original order. The same on every rank."""
    load = [0] * world_size
    owner = [0] * len(samples)
    for i in sorted(range(len(samples)), key=lambda i: (-samples[i].input_ids.numel(), i)):
        owner[i] = min(range(world_size), key=lambda r: (load[r], r))
        load[owner[i]] += samples[i].input_ids.numel()
    return [s for s, r in zip(samples, owner, strict=True) if r == rank]


class RankShare:
    """A step shared among the process group's ranks (the module doc): this rank's share of the samples, forward
    passes through the root FSDP unit, idle passes up to the rank with most micro-batches, loss figures gathered."""

    share_prefixes = False

    def __init__(self, root: _Forward) -> None:
        self.root = root
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()

    def mine(self, samples: Sequence[TrainSample]) -> list[TrainSample]:
        return share(samples, self.rank, self.world_size)

    def forward(self, mb: MicroBatch, logits: Callable[[MicroBatch], Logits]) -> Logits:
        out: Logits = self.root(mb, logits)
        return out

    def idle_rounds(self, micro_batches: int) -> int:
        rounds = torch.tensor([micro_batches])
        dist.all_reduce(rounds, op=dist.ReduceOp.MAX)
        return int(rounds) - micro_batches

    def idle_pass(self) -> None:
        logits, _ = self.root(None)
        (logits.sum() * 0.0).backward()

    def combined(self, losses: PoolLosses) -> PoolLosses:
        parts: list[PoolLosses | None] = [None] * self.world_size
        dist.all_gather_object(parts, losses)
        out, *others = (part for part in parts if part is not None)
        for other in others:
            out.merge(other)
        return out


class ShardedTrainer:
    """A `Trainer` whose parameters, gradients and AdamW state are FSDP2 shards over the process group's ranks.

    Rank 0's calls (`step`, `accumulate`, `gathered_weights`, `optimizer_state`, `stop`) are announced to the other
    ranks, which run them in `serve`; every rank must construct it with the same model and settings.
    """

    def __init__(self, model: PreTrainedModel, optim: OptimSection, grpo: GRPOSection, loss: LossSection,
                 temperature: float = 1.0, pad_id: int = 0,
                 optimizer_state: dict[str, Any] | None = None, reference: PreTrainedModel | None = None,
                 step_timeout: timedelta = timedelta(seconds=STEP_TIMEOUT_S)) -> None:
        if not dist.is_initialized():
            raise RuntimeError("ShardedTrainer needs torch.distributed initialised (parallel.sharded.join)")
        self.rank = dist.get_rank()
        # The other ranks wait for rank 0's announcements as long as it samples, on a group of their own; rank 0's
        # side of it (gloo's send waits for the receiver), and the default group that FSDP2 and the gathers use, wait
        # only as long as a step's slowest rank computes (torchtitan lowers its timeout the same way once training
        # starts). A timeout is each process's own. Every rank constructs the trainer, so every rank makes the group.
        self._announcer = dist.new_group(timeout=step_timeout if self.rank == 0 else _TIMEOUT)
        _set_pg_timeout(step_timeout)
        model = model.float()
        _same_adapter(model)
        root = _Forward(model)
        shard(model, root)  # before the optimizer: AdamW's state is then made of shards too
        # The reference of loss.kl_beta stays whole on every rank: frozen, it has no gradient or optimizer state to
        # shard (a quarter of what the policy's weights, gradients and AdamW moments take), and its forward passes
        # stay local, so they need no idle passes to keep collectives aligned.
        self.trainer = Trainer(model, optim, grpo, loss, temperature, pad_id, reference=reference,
                               share=RankShare(root))
        if optimizer_state:
            from torch.distributed.checkpoint.state_dict import StateDictOptions, set_optimizer_state_dict

            set_optimizer_state_dict(self.model, self.trainer.optimizer, optimizer_state,
                                     options=StateDictOptions(full_state_dict=True))

    @property
    def model(self) -> PreTrainedModel:
        """This rank's model, its parameters sharded."""
        return self.trainer.model

    def _announce(self, name: str, *args: object) -> None:
        if self.rank == 0:
            dist.broadcast_object_list([(name, args)], src=0, group=self._announcer)

    def serve(self) -> None:
        """Ranks > 0: run what rank 0 announces until it says stop."""
        while True:
            box: list[tuple[str, tuple[object, ...]] | None] = [None]
            dist.broadcast_object_list(box, src=0, group=self._announcer)
            assert box[0] is not None
            name, args = box[0]
            if name == "stop":
                return
            getattr(self, name)(*args)

    def stop(self) -> None:
        """Rank 0: release the other ranks from `serve`."""
        self._announce("stop")

    def step(self, groups: Sequence[RolloutGroup], lr: float | None = None) -> dict[str, float]:
        self._announce("step", groups, lr)
        return self.trainer.step(groups, lr)

    def accumulate(self, groups: Sequence[RolloutGroup]) -> dict[str, float]:
        self._announce("accumulate", groups)
        return self.trainer.accumulate(groups)

    def gathered_weights(self) -> dict[str, Tensor]:
        """The whole weights, gathered onto rank 0's CPU under the model's own names (empty on the other ranks);
        tied weights (an output layer sharing the embeddings) are one tensor again, as in the unsharded model."""
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

        self._announce("gathered_weights")
        state = get_model_state_dict(self.model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        weights = {name: value for name, value in state.items() if isinstance(value, Tensor)}
        if weights and getattr(self.model.config, "tie_word_embeddings", False):
            for name, tied in _tied_names(self.model).items():
                if name in weights and tied in weights:
                    weights[name] = weights[tied]
        return weights

    def optimizer_state(self) -> dict[str, Any]:
        """AdamW's state gathered onto rank 0 (empty on the other ranks), keyed by parameter name: what resume
        scatters back with `optimizer_state`, whatever the world size then."""
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_optimizer_state_dict

        self._announce("optimizer_state")
        state: dict[str, Any] = get_optimizer_state_dict(
            self.model, self.trainer.optimizer, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        return state


def _same_adapter(model: torch.nn.Module) -> None:
    """Give every rank rank 0's LoRA adapter (model.lora): a fresh adapter's A is drawn at random in each process,
    and each rank keeps its own shard of the weights it holds when sharded."""
    for name, param in model.named_parameters():
        if ".lora_" in name:
            with torch.no_grad():
                dist.broadcast(param.data, src=0)


def _tied_names(model: PreTrainedModel) -> dict[str, str]:
    """Output-layer parameter name -> the input-embedding parameter it shares (none when they are apart)."""
    head, embed = model.get_output_embeddings(), model.get_input_embeddings()
    if head is None or head.weight is not embed.weight:
        return {}
    name_of = {id(m): n for n, m in model.named_modules()}
    return {f"{name_of[id(head)]}.weight": f"{name_of[id(embed)]}.weight"}
