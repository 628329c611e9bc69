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

Rank 0 is the `tracegym train` process: it samples, records and checkpoints; the other ranks `serve` it, running
what it announces. Weights leave the ranks gathered (`full_state_dict`): checkpoints are whole Hugging Face folders
and the samplers get whole weights (or deltas of them) as from one process; the optimizer state is saved gathered
too (`full_optimizer_state`) and scattered back onto the ranks on resume.
"""

from __future__ import annotations

import atexit
import gc
import os
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist
from torch import Tensor
from torch.distributed.distributed_c10d import _set_pg_timeout

from tracegym.training.config import STEP_TIMEOUT_S
from tracegym.training.grpo.batching import MicroBatch, SupportLogits, TrainSample, completion_logits
from tracegym.training.grpo.trainer import Trainer, _PoolLosses, pack_by_pool, step_denominator

if TYPE_CHECKING:
    from transformers import PreTrainedModel

    from tracegym.samplers.rollouts import RolloutGroup
    from tracegym.training.config import GRPOSection, LossSection, OptimSection

_TIMEOUT = timedelta(hours=6)
"""How long a rank waits to join the group and for rank 0's announcements: the other ranks wait there while rank 0
warms up, samples a batch or evaluates. A step's collectives wait `step_timeout` (ShardedTrainer)."""


@dataclass(frozen=True)
class Rendezvous:
    """Where the ranks meet: this machine's loopback, unless torchrun said otherwise or the ranks are Ray actors."""

    address: str
    port: int
    world_size: int


def free_port(address: str = "127.0.0.1") -> int:
    """A TCP port free on `address` now (the ranks bind it moments later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((address, 0))
        return int(s.getsockname()[1])


def join(rendezvous: Rendezvous, rank: int) -> None:
    """Join the process group: gloo on CPUs (the only backend here), nccl where every rank has a GPU."""
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = rendezvous.address, str(rendezvous.port)
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend, rank=rank, world_size=rendezvous.world_size, timeout=_TIMEOUT)
    # FSDP2's state holds the group's backend in reference cycles that outlive the trainer's frame; left to the
    # interpreter's shutdown, gloo's backend is freed half torn down and aborts the rank ("terminate called without
    # an active exception", SIGABRT, after a run that succeeded). Collect them at exit while the interpreter is whole.
    atexit.unregister(gc.collect)
    atexit.register(gc.collect)


def leave() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()


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

    def __init__(self, model: PreTrainedModel, trainer: ShardedTrainer) -> None:
        super().__init__()
        self.model = model
        self._trainer = [trainer]  # a list: a Module attribute would register the trainer as a submodule

    def forward(self, mb: MicroBatch | None) -> tuple[Tensor, SupportLogits | None]:
        trainer = self._trainer[0]
        if mb is None:  # an idle pass: every unit gathered and reduced, with a zero gradient
            ids = torch.zeros(1, 1, dtype=torch.long, device=next(self.model.parameters()).device)
            hidden = self.model.base_model(input_ids=ids).last_hidden_state[0]
            return self.model.get_output_embeddings()(hidden).float(), None
        on_support = Trainer._support_logits(trainer, mb)
        return (on_support.logits, on_support) if on_support else (completion_logits(self.model, mb,
                                                                                     trainer.temperature), None)


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


class ShardedTrainer(Trainer):
    """A Trainer whose parameters, gradients and AdamW state are FSDP2 shards over the process group's ranks.

    Rank 0's public calls (`step`, `accumulate`, `full_state_dict`, `full_optimizer_state`, `stop`) are announced
    to the other ranks, which run them in `serve`; every rank must construct it with the same model and settings.
    """

    def __init__(self, model: PreTrainedModel, optim: OptimSection, grpo: GRPOSection, loss: LossSection,
                 temperature: float = 1.0, pad_id: int = 0,
                 optimizer_state: dict[str, Any] | None = None, reference: PreTrainedModel | None = None,
                 step_timeout: timedelta = timedelta(seconds=STEP_TIMEOUT_S)) -> None:
        if not dist.is_initialized():
            raise RuntimeError("ShardedTrainer needs torch.distributed initialised (parallel.sharded.join)")
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()
        # The other ranks wait for rank 0's announcements as long as it samples, on a group of their own; rank 0's
        # side of it (gloo's send waits for the receiver), and the default group that FSDP2 and the gathers use, wait
        # only as long as a step's slowest rank computes (torchtitan lowers its timeout the same way once training
        # starts). A timeout is each process's own. Every rank constructs the trainer, so every rank makes the group.
        self._announcer = dist.new_group(timeout=step_timeout if self.rank == 0 else _TIMEOUT)
        _set_pg_timeout(step_timeout)
        model = model.float()
        _same_adapter(model)
        self.forward_module = _Forward(model, self)
        shard(model, self.forward_module)  # before the optimizer: AdamW's state is then made of shards too
        # The reference of loss.kl_beta stays whole on every rank: frozen, it has no gradient or optimizer state to
        # shard (a quarter of what the policy's weights, gradients and AdamW moments take), and its forward passes
        # stay local, so they need no idle passes to keep collectives aligned.
        super().__init__(model, optim, grpo, loss, temperature, pad_id, reference=reference)
        if optimizer_state:
            from torch.distributed.checkpoint.state_dict import StateDictOptions, set_optimizer_state_dict

            set_optimizer_state_dict(self.model, self.optimizer, optimizer_state,
                                     options=StateDictOptions(full_state_dict=True))

    def _announce(self, name: str, *args: Any) -> None:
        if self.rank == 0:
            dist.broadcast_object_list([(name, args)], src=0, group=self._announcer)

    def serve(self) -> None:
        """Ranks > 0: run what rank 0 announces until it says stop."""
        while True:
            box: list[Any] = [None]
            dist.broadcast_object_list(box, src=0, group=self._announcer)
            name, args = box[0]
            if name == "stop":
                return
            getattr(self, name)(*args)

    def stop(self) -> None:
        """Rank 0: release the other ranks from `serve`."""
        self._announce("stop")

    def step(self, groups: Sequence[RolloutGroup], lr: float | None = None) -> dict[str, float]:
        self._announce("step", groups, lr)
        return super().step(groups, lr)

    def accumulate(self, groups: Sequence[RolloutGroup]) -> dict[str, float]:
        self._announce("accumulate", groups)
        return super().accumulate(groups)

    def full_state_dict(self) -> dict[str, Tensor]:
        """The whole weights, gathered onto rank 0's CPU under the model's own names (empty on the other ranks);
        tied weights (an output layer sharing the embeddings) are one tensor again, as in the unsharded model."""
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

        self._announce("full_state_dict")
        state = get_model_state_dict(self.model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        if state and getattr(self.model.config, "tie_word_embeddings", False):
            for name, tied in _tied_names(self.model).items():
                if name in state and tied in state:
                    state[name] = state[tied]
        return state

    def full_optimizer_state(self) -> dict[str, Any]:
        """AdamW's state gathered onto rank 0 (empty on the other ranks), keyed by parameter name: what resume
        scatters back with `optimizer_state`, whatever the world size then."""
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_optimizer_state_dict

        self._announce("full_optimizer_state")
        return get_optimizer_state_dict(self.model, self.optimizer,
                                        options=StateDictOptions(full_state_dict=True, cpu_offload=True))

    def _forward(self, mb: MicroBatch) -> tuple[Tensor, SupportLogits | None]:
        return self.forward_module(mb)

    def _backward(self, samples: list[TrainSample], losses: _PoolLosses) -> None:
        """This rank's share of the samples; the loss of each micro-batch divided by the whole step's denominator."""
        denominator = step_denominator(samples, self.grpo.aggregation)
        micro = pack_by_pool(share(samples, self.rank, self.world_size), self.optim.micro_batch_tokens, self.pad_id,
                             share_prefixes=False)
        rounds = torch.tensor([len(micro)])
        dist.all_reduce(rounds, op=dist.ReduceOp.MAX)
        for pool, mb in micro:
            loss, loss_metrics = self._micro_loss(mb, denominator)
            loss.backward()
            losses.add(pool, float(loss.detach()), loss_metrics, mb.num_tokens)
        for _ in range(int(rounds) - len(micro)):
            logits, _ = self.forward_module(None)
            (logits.sum() * 0.0).backward()
        losses.micro_batches += len(micro)

    def _combined(self, losses: _PoolLosses) -> _PoolLosses:
        parts: list[Any] = [None] * self.world_size
        dist.all_gather_object(parts, losses)
        out = parts[0]
        for other in parts[1:]:
            out.merge(other)
        return out


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
