"""The run's rollout source, chosen from the config: in-process (`async.max_staleness: 0`, exactly on-policy) or
sampler processes producing groups while the trainer trains. This module alone makes that choice; the loop holds
whichever it gets as a `RolloutSource` (tracegym/samplers/rollouts.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tracegym.errors import ConfigError

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

    from tracegym.models.precision import Precision
    from tracegym.samplers.rollouts import GroupOrder, RolloutSource
    from tracegym.tasks.spec import TaskSpec
    from tracegym.tasks.taskset import TaskSet
    from tracegym.training.config import TrainConfig
    from tracegym.training.trained_weights import TrainedWeights


def in_process(config: TrainConfig) -> bool:
    """Whether the trainer's own process samples (`async.max_staleness: 0`), rather than sampler pools."""
    return config.async_.max_staleness == 0


def sampler_precision(config: TrainConfig) -> str:
    """What the samplers sample in: sampler.precision, or each pool's, "auto" resolved for this machine."""
    if in_process(config):
        return config.sampler.precision_on("cpu")
    return ",".join(dict.fromkeys(pool.quantization or pool.resolved_precision for pool in config.sampler_pools()))


def publish_precision(config: TrainConfig) -> Precision:
    """The precision the samplers' weights travel in (the first pool's, with several)."""
    if in_process(config):
        return config.sampler.precision_on("cpu")
    return config.sampler_pools()[0].resolved_precision


def make_source(config: TrainConfig, weights: TrainedWeights, task_set: TaskSet, tasks: Sequence[TaskSpec],
                tokenizer: PreTrainedTokenizerBase, eos_token_ids: Sequence[int], version: int, start_index: int,
                order: GroupOrder[TaskSpec]) -> RolloutSource:
    """The source of `config`, starting at policy `version` and group `start_index` of `order`, sampling with a copy
    of `weights` taken now (before the trainer may shard them)."""
    plan = config.rollout_plan()
    if in_process(config):
        from tracegym.samplers.inprocess import SyncRollouts

        return SyncRollouts.with_copy_of(weights.sampler_model(), plan, task_set, tasks, tokenizer, eos_token_ids,
                                         version, start_index=start_index, order=order)
    try:
        from tracegym.samplers.orchestrator import AsyncRollouts
    except ImportError as e:
        raise ConfigError("async.max_staleness > 0 runs sampler processes (tracegym.samplers.orchestrator), which "
                          f"this installation cannot import ({e}). Fix: set async.max_staleness: 0.") from e
    published = weights.published()
    return AsyncRollouts(plan, tasks, task_set=task_set, tokenizer=tokenizer, eos_token_ids=list(eos_token_ids),
                         state_dict=published.state_dict, policy_version=version, start_index=start_index,
                         order=order, adapter=published.adapter)
