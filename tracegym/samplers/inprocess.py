"""In-process rollouts with the trainer's current weights: `async.max_staleness: 0`, exactly on-policy.

A `RolloutSource` (tracegym/samplers/rollouts.py) without processes: each
`next_batch` runs the next groups of the task order through the episode runner (one `run_many` per
group, all groups concurrently so the sampler batches their turns together), with an engine that holds
its own copy of the weights in the sampler precision; `publish` copies the trainer's new weights in.
Every episode's seed is fixed by the run seed and its group's index in the task order, so a resumed
run samples exactly what the uninterrupted one would have.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from tracegym.harnesses.config import HarnessFactory
from tracegym.harnesses.policy import HFPolicy
from tracegym.harnesses.runner import RunOptions, derive_seed, run_many
from tracegym.harnesses.taskrun import TaskScorers
from tracegym.models.compute import Runner
from tracegym.models.sampling import SamplingEngine
from tracegym.samplers.rollouts import PoolFigures, RolloutBatch, RolloutGroup, TaskOrder, set_aside_stats

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from tracegym.episodes.record import Episode
    from tracegym.samplers.config import RolloutPlan
    from tracegym.samplers.rollouts import GroupOrder
    from tracegym.samplers.weights.lora_adapters import AdapterWeights
    from tracegym.tasks.spec import TaskSpec
    from tracegym.tasks.taskset import TaskSet


class SyncRollouts:
    """Samples each batch on demand with the latest published weights."""

    def __init__(
        self,
        plan: RolloutPlan,
        task_set: TaskSet,
        tasks: Sequence[TaskSpec],
        sampler_model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        eos_token_ids: Sequence[int],
        policy_version: int,
        start_index: int = 0,
        base_dir: Path | None = None,
        order: GroupOrder[TaskSpec] | None = None,
    ) -> None:
        self.plan = plan
        self.task_set = task_set
        # The loop passes its order over `tasks` when it has one to update between steps (a curriculum).
        self.order = order if order is not None else TaskOrder(list(tasks), plan.seed)
        self.next_index = start_index
        engine = SamplingEngine(sampler_model, eos_token_ids=eos_token_ids, sampler_id="sync-0",
                                policy_version=policy_version, max_batch_size=plan.sampler.concurrency,
                                seed=plan.seed)
        self.policy = HFPolicy(engine, tokenizer)
        self.harnesses = HarnessFactory(plan.harness, base_dir or Path.cwd())
        self.scorers = TaskScorers(task_set)
        self.params = plan.params
        self._runner = Runner("tracegym-sync-rollouts")  # decoding stays on the trainer's thread

    @classmethod
    def with_copy_of(cls, model: PreTrainedModel, plan: RolloutPlan, task_set: TaskSet, tasks: Sequence[TaskSpec],
                     tokenizer: PreTrainedTokenizerBase, eos_token_ids: Sequence[int], policy_version: int,
                     start_index: int = 0, base_dir: Path | None = None,
                     order: GroupOrder[TaskSpec] | None = None) -> SyncRollouts:
        """A source sampling from its own copy of the trainer's `model`, cast to the sampler precision."""
        from tracegym.models.load import DTYPES

        device = next(model.parameters()).device.type
        # transformers' stubs type PreTrainedModel.to's argument as a model; it takes a dtype as torch's does
        sampler_model = copy.deepcopy(model).to(DTYPES[plan.sampler.precision_on(device)]).eval()  # type: ignore[arg-type]
        return cls(plan, task_set, tasks, sampler_model, tokenizer, eos_token_ids, policy_version,
                   start_index=start_index, base_dir=base_dir, order=order)

    def start(self) -> None:
        """Build every task's scorer now, so a broken evals file stops the run before any episode."""
        self.scorers.prepare(self.order.tasks)

    def next_batch(self, n_groups: int, trainer_version: int) -> RolloutBatch:
        """The next `n_groups` groups of the task order, sampled now with the current weights. With
        `grpo.dynamic_sampling`, groups whose rewards are all equal are set aside and the following groups of the
        order sampled in their place, round by round, until `n_groups` have a signal or
        `grpo.max_groups_per_step` were sampled."""
        dynamic, limit = self.plan.dynamic_sampling, self.plan.max_groups_per_step
        started = time.perf_counter()
        kept: list[RolloutGroup] = []
        set_aside: list[RolloutGroup] = []
        sampled, tokens, rounds = 0, 0.0, 0
        while len(kept) < n_groups and sampled < limit:
            indices = list(range(self.next_index, self.next_index + min(n_groups - len(kept), limit - sampled)))
            episodes = self._runner.run(self._sample(indices))
            self.next_index += len(indices)
            sampled += len(indices)
            rounds += 1
            tokens += float(sum(e.tokens_out or 0 for eps in episodes for e in eps))
            for i, eps in zip(indices, episodes, strict=True):
                group = RolloutGroup(self.order.task_at(i).task_id, eps, i)
                (kept if group.has_signal or not dynamic else set_aside).append(group)
        seconds = time.perf_counter() - started
        stats = {"sampler/tokens": tokens, "sampler/seconds": seconds,
                 "sampler/tokens_per_s": tokens / seconds if seconds > 0 else 0.0,
                 **({**set_aside_stats(set_aside, kept), "grpo/sampling_rounds": float(rounds)} if dynamic else {})}
        return RolloutBatch(kept, consumed=sampled, stats=stats, set_aside=set_aside)

    async def _sample(self, indices: list[int]) -> list[list[Episode]]:
        return list(await asyncio.gather(*(self._group(i) for i in indices)))

    async def _group(self, index: int) -> list[Episode]:
        return await self._run([self.order.task_at(index)], self.plan.group_size,
                               self.plan.group_size, derive_seed(self.plan.seed, "group", index))

    def sample_tasks(self, tasks: Sequence[TaskSpec], samples: int, label: str) -> list[list[Episode]]:
        """`samples` episodes of each task with the current weights, every task at once; seeds from the run
        seed and `label`, so the same call samples the same episodes."""
        flat = self._runner.run(self._run(tasks, samples, self.plan.sampler.concurrency,
                                          derive_seed(self.plan.seed, label, 0)))
        return [flat[i * samples:(i + 1) * samples] for i in range(len(tasks))]

    async def _run(self, tasks: Sequence[TaskSpec], samples: int, concurrency: int, seed: int) -> list[Episode]:
        options = RunOptions(samples=samples, concurrency=concurrency, seed=seed, sampling=self.params,
                             limits=self.plan.limits)
        return await run_many(self.policy, list(tasks), self.harnesses.make, options, self.scorers,
                              self.task_set.manifest.name, self.plan.model_ref)

    def publish(self, state_dict: Mapping[str, torch.Tensor], version: int,
                adapter: AdapterWeights | None = None) -> dict[str, float]:
        """Copy the trainer's weights (cast to the sampler precision) into the engine: nothing is sent. The built-in
        engine has no adapter support: with model.lora it takes the merged weights, and `adapter` is not used."""
        self.policy.engine.load_weights(state_dict, version)
        return {}

    def quarantine(self, pool: str, reason: str) -> None:
        """Nothing to do: the trainer's own process samples, in no pool."""

    def totals(self) -> dict[str, float]:
        """The data position and the sampler count (per-batch figures are in each batch's stats)."""
        return {"source/next_group_index": float(self.next_index), "source/samplers_alive": 1.0}

    def pool_figures(self) -> dict[str, PoolFigures]:
        """None: the trainer's own process samples."""
        return {}

    def close(self) -> None:
        self._runner.run(self.policy.aclose())
        self._runner.close()
        self.harnesses.close()
