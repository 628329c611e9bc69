"""The GRPO trainer step: fp32 master weights, AdamW, micro-batched backward, gradient clipping.

One call to `Trainer.step` is one optimizer step over one rollout batch:

1. Episodes that cannot be trained on are left out and counted: no token record (an API client), a
   harness or scorer failure (no reward), no sampled tokens.
2. GRPO advantages within each group (`tracegym.training.grpo.advantages`), of the whole reward or, with
   `grpo.advantages: per_component`, of a weighted eval's parts (GDPO); groups whose rewards (or parts) are all
   equal carry no signal and are skipped and counted.
3. The remaining episodes are packed into micro-batches (`tracegym.training.grpo.batching`); each is run
   forward at the sampler's temperature (in fp32, or under bf16 autocast with `optim.autocast`), scored
   by `token_loss` with the configured corrections (plus `loss.kl_beta` times the k3 KL to a frozen
   reference model, when one is given), reduced by `aggregate` with the denominator of the whole step
   (the token count, or the number of sequences) so the accumulated gradient equals that of one big
   batch, and backpropagated.
4. The global gradient norm is clipped and AdamW steps. A batch with nothing to train on takes no
   optimizer step (momentum and weight decay stay put).

With `grpo.optimizer_steps` N > 1, steps 3 and 4 run N times, on N mini-batches of whole groups (advantages
are still computed per group, so the split changes none of them).

What differs when several processes train the one model (FSDP2 ranks, tracegym/training/parallel/sharded.py) is a
`StepShare`: which samples this process trains on, how its forward pass runs, the idle passes that keep the
processes' collectives aligned, and the loss figures summed over them. `OneProcess` is the trainer's own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

import torch
from torch import Tensor
from torch.distributed.tensor import DTensor

from tracegym.errors import ModelError
from tracegym.models.allocator import keep_freed_memory
from tracegym.samplers.rollouts import trainable
from tracegym.training.grpo.advantages import RewardParts, decoupled_advantages, group_advantages
from tracegym.training.grpo.batching import (
    MicroBatch,
    SupportLogits,
    TrainSample,
    check_plain_lm_head,
    completion_logits,
    pack,
    samples_from_record,
    support_logits,
)
from tracegym.training.grpo.loss import aggregate, reference_kl, token_logprobs, token_loss
from tracegym.training.schedule import set_learning_rate

if TYPE_CHECKING:
    from transformers import PreTrainedModel

    from tracegym.episodes.record import Episode
    from tracegym.samplers.rollouts import RolloutGroup
    from tracegym.training.config import GRPOSection, LossSection, OptimSection


@dataclass
class Prepared:
    """A batch's trainable samples and what was left out."""

    samples: list[TrainSample]
    groups: int = 0
    skipped_groups: int = 0
    failed_episodes: int = 0
    """Episodes without a reward: harness, policy or scorer failures."""
    untrainable_episodes: int = 0
    """Episodes with no token record or no sampled token."""
    rewards: list[float] = field(default_factory=list)
    advantages: list[float] = field(default_factory=list)
    group_of: list[int] = field(default_factory=list)
    """The batch index of each sample's group."""

    def mini_batches(self, n: int) -> list[list[TrainSample]]:
        """The samples split into at most `n` parts of whole groups, as even in groups as they divide."""
        groups = sorted(set(self.group_of))
        parts = min(n, len(groups))
        part_of = {g: i * parts // len(groups) for i, g in enumerate(groups)}
        out: list[list[TrainSample]] = [[] for _ in range(parts)]
        for sample, group in zip(self.samples, self.group_of, strict=True):
            out[part_of[group]].append(sample)
        return out


def prepare(groups: Sequence[RolloutGroup], std_normalization: bool,
            advantages: Literal["whole", "per_component"] = "whole") -> Prepared:
    """GRPO advantages per group (`grpo.advantages`: of the whole reward, or part by part) and the samples of the
    groups that carry signal."""
    kept, ids, rewards = [], [], []
    out = Prepared(samples=[], groups=len(groups))
    for index, group in enumerate(groups):
        for episode in group.episodes:
            if episode.reward is None or episode.harness_error is not None:
                out.failed_episodes += 1
            elif not trainable(episode):
                out.untrainable_episodes += 1
            else:
                kept.append(episode)
                ids.append(index)
                rewards.append(float(episode.reward))
    if advantages == "per_component":
        result = decoupled_advantages(rewards, [reward_parts(e) for e in kept], ids,
                                      std_normalization=std_normalization)
    else:
        result = group_advantages(rewards, ids, std_normalization=std_normalization)
    # A group that lost members to failures still counts once; one that lost all is skipped too.
    out.skipped_groups = result.skipped_groups + (len(groups) - result.num_groups)
    out.rewards = rewards
    for sequence, (episode, index, advantage, has_signal) in enumerate(
            zip(kept, ids, result.advantages, result.trainable, strict=True)):
        if has_signal:
            # An episode split into segments (an agent that rewrote its history) gives one sample per segment,
            # each with the episode's advantage.
            assert episode.tokens is not None  # kept: trainable
            samples = samples_from_record(episode.tokens, advantage, pool_of(episode.sampler_id), sequence)
            out.samples += samples
            out.advantages.append(advantage)
            out.group_of += [index] * len(samples)
    return out


def reward_parts(episode: Episode) -> RewardParts:
    """The episode's reward parts with their weights (a weighted eval's); none when its reward is not a weighted mean
    of the components it recorded."""
    weights = episode.component_weights
    if not weights or set(weights) != set(episode.components):
        return {}
    return {name: (episode.components[name], weight) for name, weight in weights.items()}


Logits = tuple[Tensor, SupportLogits | None]
"""A micro-batch's float32 logits: [T, K] over each position's replayed support (and that support), or [T, V]."""


class StepShare(Protocol):
    """The parts of a step that differ when several processes train the one model."""

    share_prefixes: bool
    """Whether micro-batches may share prompt prefixes (packing them changes each one's number of passes)."""

    def mine(self, samples: Sequence[TrainSample]) -> list[TrainSample]:
        """This process's share of a step's samples."""

    def forward(self, mb: MicroBatch, logits: Callable[[MicroBatch], Logits]) -> Logits:
        """The logits of `mb` as `logits` computes them, run as the model's forward pass."""

    def idle_rounds(self, micro_batches: int) -> int:
        """How many idle passes this process runs after its `micro_batches` (to match the process with most)."""

    def idle_pass(self) -> None:
        """One forward and backward pass that changes no gradient."""

    def combined(self, losses: PoolLosses) -> PoolLosses:
        """The step's loss figures over every process that trained a share of it."""


class OneProcess:
    """The whole step in this process."""

    share_prefixes = True

    def mine(self, samples: Sequence[TrainSample]) -> list[TrainSample]:
        return list(samples)

    def forward(self, mb: MicroBatch, logits: Callable[[MicroBatch], Logits]) -> Logits:
        return logits(mb)

    def idle_rounds(self, micro_batches: int) -> int:
        return 0

    def idle_pass(self) -> None:
        raise AssertionError("one process runs no idle pass")

    def combined(self, losses: PoolLosses) -> PoolLosses:
        return losses


class PolicyTrainer(Protocol):
    """What the training loop needs of a trainer: one process's (`Trainer`), or one sharded over ranks
    (tracegym/training/parallel/sharded.py)."""

    def step(self, groups: Sequence[RolloutGroup], lr: float | None = None) -> dict[str, float]:
        """Train on one rollout batch; its metrics."""

    def optimizer_state(self) -> dict[str, Any]:
        """The optimizer state a checkpoint keeps."""

    def gathered_weights(self) -> dict[str, Tensor] | None:
        """The whole weights gathered from the processes that hold shards of them; None where the model holds
        them whole."""


class Trainer:
    """Owns the fp32 policy and its optimizer; `step` trains on one rollout batch."""

    def __init__(
        self,
        model: PreTrainedModel,
        optim: OptimSection,
        grpo: GRPOSection,
        loss: LossSection,
        temperature: float = 1.0,
        pad_id: int = 0,
        reference: PreTrainedModel | None = None,
        share: StepShare | None = None,
    ) -> None:
        check_plain_lm_head(model)
        if loss.kl_beta > 0 and reference is None:
            raise ModelError("loss.kl_beta > 0 needs a reference model; pass `reference` or set kl_beta: 0")
        self.model = model.float().train()
        self.reference = (reference.float().eval().requires_grad_(False)
                          if reference is not None and loss.kl_beta > 0 else None)
        self.optim, self.grpo, self.loss = optim, grpo, loss
        self.temperature = temperature
        self.pad_id = pad_id
        self.share: StepShare = share if share is not None else OneProcess()
        self.optimizer = make_optimizer(self.model, optim.lr, optim)

    def step(self, groups: Sequence[RolloutGroup], lr: float | None = None) -> dict[str, float]:
        """Train on one rollout batch: `grpo.optimizer_steps` optimizer steps (one by default) at rate `lr`
        (None keeps the optimizer's); returns flat, slash-named metrics. `train/grad_norm` is the largest
        norm before clipping of the batch's steps, `train/loss` their mean loss."""
        if lr is not None:
            set_learning_rate(self.optimizer, lr)
        prepared = prepare(groups, self.grpo.std_normalization, self.grpo.advantages)
        metrics = _batch_metrics(prepared)
        parts = prepared.mini_batches(self.grpo.optimizer_steps)
        losses = PoolLosses({s.pool for s in prepared.samples})
        norms = []
        for part in parts:
            self.optimizer.zero_grad(set_to_none=True)
            self._backward(part, losses)
            norms.append(clip_and_step(self.model, self.optimizer, self.optim.grad_clip))
        metrics.update(self.share.combined(losses).result(len(parts)))
        metrics["train/sequences"] = float(len(prepared.samples))
        metrics["train/optimizer_steps"] = float(len(parts))
        if norms:
            metrics["train/grad_norm"] = max(norms)
        return metrics

    def accumulate(self, groups: Sequence[RolloutGroup]) -> dict[str, float]:
        """Zero the gradients, then backpropagate the loss of the whole batch into them, as one optimizer step
        over all of `groups` would (no step is taken)."""
        self.optimizer.zero_grad(set_to_none=True)
        prepared = prepare(groups, self.grpo.std_normalization, self.grpo.advantages)
        metrics = _batch_metrics(prepared)
        losses = PoolLosses({s.pool for s in prepared.samples})
        if prepared.samples:
            self._backward(prepared.samples, losses)
        metrics.update(self.share.combined(losses).result(1))
        metrics["train/sequences"] = float(len(prepared.samples))
        return metrics

    def optimizer_state(self) -> dict[str, Any]:
        return self.optimizer.state_dict()

    def gathered_weights(self) -> dict[str, Tensor] | None:
        return None

    def _backward(self, samples: list[TrainSample], losses: PoolLosses) -> None:
        """Backpropagate the loss of `samples`, aggregated over them alone, into the gradients (this process's
        share of them, each micro-batch's loss divided by the denominator of them all)."""
        denominator = step_denominator(samples, self.grpo.aggregation)
        micro = pack_by_pool(self.share.mine(samples), self.optim.micro_batch_tokens, self.pad_id,
                             share_prefixes=self.share.share_prefixes)
        idle = self.share.idle_rounds(len(micro))
        for pool, mb in micro:
            loss, loss_metrics = self._micro_loss(mb, denominator)
            loss.backward()
            losses.add(pool, float(loss.detach()), loss_metrics, mb.num_tokens)
        for _ in range(idle):
            self.share.idle_pass()
        losses.micro_batches += len(micro)

    def _micro_loss(self, mb: MicroBatch, denominator: float) -> tuple[Tensor, dict[str, Tensor]]:
        device_type = next(self.model.parameters()).device.type
        with torch.autocast(device_type, dtype=torch.bfloat16, enabled=self.optim.autocast == "bf16"):
            logits, on_support = self._forward(mb)
        support = on_support.support if on_support else mb.support
        tokens = on_support.tokens if on_support else mb.tokens
        per_token, loss_metrics = token_loss(
            logits, tokens.to(logits.device), mb.advantages.to(logits.device),
            mb.sampler_logprobs.to(logits.device),
            support.ids if support is not None else None,
            support.offsets if support is not None else None,
            support.logprobs if support is not None else None,
            mis=self.loss.mis, score_centering=self.loss.score_centering, top_p_replay=self.loss.top_p_replay,
            tis_clip=self.loss.tis_clip, support_kind=support.kind if support is not None else "exact",
        )
        if self.reference is not None:
            with torch.no_grad():  # the reference's [T, V] logits are freed once its token log-probs are out
                ref_logprobs = token_logprobs(completion_logits(self.reference, mb, self.temperature), mb.tokens)
            kl, kl_metrics = reference_kl(logits, mb.tokens, ref_logprobs)
            per_token = per_token + self.loss.kl_beta * kl
            loss_metrics.update(kl_metrics)
        loss = aggregate(per_token, mb.seq_ids.to(logits.device), mode=self.grpo.aggregation,
                         denominator=denominator, seq_lengths=mb.seq_lengths.to(logits.device))
        return loss, loss_metrics

    def _forward(self, mb: MicroBatch) -> Logits:
        return self.share.forward(mb, self._logits)

    def _logits(self, mb: MicroBatch) -> Logits:
        """float32 logits [T, K] over each position's replayed support (and that support), or [T, V] and None."""
        on_support = self._support_logits(mb)
        return (on_support.logits, on_support) if on_support else (completion_logits(self.model, mb,
                                                                                     self.temperature), None)

    def _support_logits(self, mb: MicroBatch) -> SupportLogits | None:
        """Logits on the replayed support alone, where the loss reads nothing else: top-p replay of an exact support,
        and no reference KL (which compares whole distributions)."""
        replayed = self.loss.top_p_replay and mb.support is not None and mb.support.kind == "exact"
        return support_logits(self.model, mb, self.temperature) if replayed and self.reference is None else None


def step_denominator(samples: Sequence[TrainSample], aggregation: str) -> float:
    """What `aggregate` divides a step's summed loss by: its trained tokens, or its sequences (an episode's
    segments are one sequence)."""
    if aggregation == "token":
        return float(sum(s.targets.numel() for s in samples))
    return float(len({s.sequence for s in samples}))


def pack_by_pool(samples: Sequence[TrainSample], micro_batch_tokens: int, pad_id: int,
                 share_prefixes: bool = True) -> list[tuple[str | None, MicroBatch]]:
    """The samples' micro-batches, packed pool by pool so that each micro-batch's loss metrics belong to one sampler
    pool (gradients do not depend on the packing)."""
    by_pool: dict[str | None, list[TrainSample]] = {}
    for sample in samples:
        by_pool.setdefault(sample.pool, []).append(sample)
    return [(pool, mb) for pool, part in by_pool.items()
            for mb in pack(part, micro_batch_tokens, pad_id, share_prefixes=share_prefixes)]


def set_trainable(model: PreTrainedModel, optim: OptimSection) -> int:
    """Freeze what `optim` says (embeddings, blocks below the last `train_layers`); returns trainable params."""
    frozen: list[torch.nn.Module] = []
    if optim.freeze_embeddings:
        frozen += [model.get_input_embeddings(), model.get_output_embeddings()]
    if optim.train_layers is not None:
        blocks = getattr(model.base_model, "layers", None)
        if not isinstance(blocks, torch.nn.ModuleList):
            raise ModelError(f"optim.train_layers: {type(model).__name__} has no `layers` list of blocks; "
                             "set train_layers: null to train the whole model")
        frozen += list(blocks[: max(len(blocks) - optim.train_layers, 0)])
    for param in model.parameters():
        param.requires_grad_(True)
    for module in frozen:
        for param in module.parameters():
            param.requires_grad_(False)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def make_optimizer(model: torch.nn.Module, lr: float, optim: OptimSection) -> torch.optim.AdamW:
    """AdamW over the trainable parameters, fused (one kernel over all of them rather than one per parameter, and
    as deterministic). With `optim.keep_freed_memory` the process's allocator
    is first set to keep the training steps' buffers (see tracegym/models/allocator.py)."""
    if optim.keep_freed_memory:
        keep_freed_memory()
    params = [p for p in model.parameters() if p.requires_grad]
    return torch.optim.AdamW(params, lr=lr, betas=optim.betas, eps=optim.eps, weight_decay=optim.weight_decay,
                             fused=True)


def clip_and_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, grad_clip: float | None) -> float:
    """Clip the global gradient norm (when set), step, and return the norm before clipping."""
    params = [p for p in model.parameters() if p.grad is not None]
    norm = torch.nn.utils.clip_grad_norm_(params, grad_clip if grad_clip is not None else math.inf)
    if isinstance(norm, DTensor):  # sharded parameters (FSDP2): the norm over every rank's shards
        norm = norm.full_tensor()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return float(norm)


def pool_of(sampler_id: str | None) -> str | None:
    """The pool of a sampler id (`pool/index` for sampler processes; an in-process sampler is its own pool)."""
    return sampler_id.rsplit("/", 1)[0] if sampler_id else None


_PER_POOL = ("mismatch", "is_ratio", "mis", "tis")


def _pool_metrics(pool: str, result: dict[str, float]) -> dict[str, float]:
    """One pool's trainer/sampler mismatch figures, named `mismatch/POOL/k3_kl`, `is_ratio/POOL/mean`, ..."""
    out = {}
    for key, value in result.items():
        head, _, tail = key.partition("/")
        if head in _PER_POOL:
            out[f"{head}/{pool}/{tail}"] = value
    return out


def _batch_metrics(prepared: Prepared) -> dict[str, float]:
    metrics = {
        "grpo/groups": float(prepared.groups),
        "grpo/skipped_groups": float(prepared.skipped_groups),
        "grpo/failed_episodes": float(prepared.failed_episodes),
        "grpo/untrainable_episodes": float(prepared.untrainable_episodes),
    }
    metrics.update(_stats("reward", prepared.rewards))
    metrics.update(_stats("advantage", prepared.advantages))
    return metrics


def _stats(name: str, values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    mean = math.fsum(values) / len(values)
    var = math.fsum((v - mean) ** 2 for v in values) / len(values)
    return {f"{name}/mean": mean, f"{name}/std": math.sqrt(var), f"{name}/min": min(values),
            f"{name}/max": max(values)}


class _LossMetrics:
    """Combines per-micro-batch loss metrics: sums for the loss, token-weighted means, min of mins, max of maxes."""

    def __init__(self) -> None:
        self.loss = 0.0
        self.tokens = 0
        self.weighted: dict[str, float] = {}
        self.extremes: dict[str, float] = {}

    def add(self, loss: float, metrics: dict[str, Tensor], tokens: int) -> None:
        self.loss += loss
        self.tokens += tokens
        for key, value in metrics.items():
            v = float(value)
            if key.endswith("/min"):
                self.extremes[key] = min(self.extremes.get(key, v), v)
            elif key.endswith("/max"):
                self.extremes[key] = max(self.extremes.get(key, v), v)
            else:
                self.weighted[key] = self.weighted.get(key, 0.0) + v * tokens

    def merge(self, other: _LossMetrics) -> None:
        """Add what `other` saw (another rank's micro-batches of the same step)."""
        self.loss += other.loss
        self.tokens += other.tokens
        for key, value in other.weighted.items():
            self.weighted[key] = self.weighted.get(key, 0.0) + value
        for key, value in other.extremes.items():
            mine = self.extremes.get(key, value)
            self.extremes[key] = min(mine, value) if key.endswith("/min") else max(mine, value)

    def result(self, batches: int = 1) -> dict[str, float]:
        """The figures over everything added; the loss is the mean over `batches` separately reduced batches."""
        out = {"train/loss": self.loss / max(batches, 1)}
        out.update({k: v / max(self.tokens, 1) for k, v in self.weighted.items()})
        out.update(self.extremes)
        return out


class PoolLosses:
    """A step's loss metrics over all its micro-batches, and per sampler pool when there are several pools."""

    def __init__(self, pools: set[str | None]) -> None:
        self.all = _LossMetrics()
        self.per_pool = {pool: _LossMetrics() for pool in pools} if len(pools) > 1 else {}
        self.micro_batches = 0

    def add(self, pool: str | None, loss: float, metrics: dict[str, Tensor], tokens: int) -> None:
        self.all.add(loss, metrics, tokens)
        if pool in self.per_pool:
            self.per_pool[pool].add(loss, metrics, tokens)

    def merge(self, other: PoolLosses) -> None:
        """Add another rank's figures of the same step (the same pools: every rank prepares the same batch)."""
        self.all.merge(other.all)
        for pool, tracker in other.per_pool.items():
            self.per_pool[pool].merge(tracker)
        self.micro_batches += other.micro_batches

    def result(self, batches: int) -> dict[str, float]:
        """Empty when nothing was trained; else the loss figures, the token count and per-pool figures."""
        if not self.micro_batches:
            return {}
        out = self.all.result(batches)
        for pool, tracker in self.per_pool.items():
            out.update(_pool_metrics(str(pool), tracker.result(batches)))
        out.update({"train/tokens": float(self.all.tokens), "train/micro_batches": float(self.micro_batches)})
        return out
