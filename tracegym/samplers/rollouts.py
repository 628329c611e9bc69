"""What rollout sources hand the trainer: groups of scored episodes, batches of groups, and the task order.

A `RolloutGroup` is the k episodes of one task (one prompt), each with its reward; GRPO compares
rewards within a group. A `RolloutBatch` is what one trainer step consumes, with counters about what
the source dropped on the way (stale groups, failed episodes). Sources (`SyncRollouts` in-process,
`AsyncRollouts`' sampler processes) implement `RolloutSource`.

Data position. Tasks are drawn in a seeded order that depends only on the index of the group being
drawn (`TaskOrder.task_at`): group i of a run always asks for the same task. A source is built with
`start_index` (the number of groups the trainer consumed before a resume, dropped ones included) and
reports the groups it handed out or dropped in `RolloutBatch.consumed`; the trainer's checkpoint
stores the running total as its data position.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from tracegym.episodes.record import Episode, TrainUse

if TYPE_CHECKING:
    from torch import Tensor

    from tracegym.samplers.weights.lora_adapters import AdapterWeights

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


def trainable(episode: Episode) -> bool:
    """An episode the trainer can learn from: scored, no harness failure, and a token record with sampled tokens."""
    return (episode.reward is not None and episode.harness_error is None and episode.tokens is not None
            and episode.tokens.n_trainable > 0)


@dataclass
class RolloutGroup:
    """The episodes of one task sampled together, all from the same prompt."""

    task_id: str
    episodes: list[Episode]
    group_index: int = 0
    """The group's position in the run's task order (see the module doc)."""

    @property
    def rewards(self) -> list[float | None]:
        return [e.reward for e in self.episodes]

    @property
    def has_signal(self) -> bool:
        """Whether GRPO can learn from the group: trainable episodes with at least two different rewards (a group
        whose rewards are all equal has every advantage 0)."""
        return len({e.reward for e in self.episodes if trainable(e)}) > 1

    @property
    def policy_version(self) -> int:
        """The oldest weights version among the episodes (0 when none recorded one): staleness is measured from it."""
        versions = [e.policy_version for e in self.episodes if e.policy_version is not None]
        return min(versions) if versions else 0


def set_aside_stats(set_aside: list[RolloutGroup], kept: list[RolloutGroup]) -> dict[str, float]:
    """What dynamic sampling did in one step: the groups it set aside, and the mean reward over every scored
    episode it looked at (the trainer's `reward/mean` covers the kept groups only, which leans to the middle)."""
    rewards = [e.reward for g in (*set_aside, *kept) for e in g.episodes if e.reward is not None]
    return {"grpo/set_aside_groups": float(len(set_aside)),
            "grpo/sampled_reward_mean": sum(rewards) / len(rewards) if rewards else float("nan")}


@dataclass
class RolloutBatch:
    """The groups of one trainer step, and what the source did to produce them."""

    groups: list[RolloutGroup]
    consumed: int = 0
    """Groups taken from the task order for this batch: the groups below plus the ones dropped or set aside."""
    stats: dict[str, float] = field(default_factory=dict)
    """Source figures for this batch under their metric names, e.g. `sampler/tokens`, `async/wait_s`."""
    set_aside: list[RolloutGroup] = field(default_factory=list)
    """Groups that dynamic sampling took for this batch and did not train on (all rewards equal): stored, not
    trained."""
    stale: list[RolloutGroup] = field(default_factory=list)
    """Groups dropped for lagging more than `async.max_staleness` versions: stored, not trained."""

    @property
    def episodes(self) -> list[Episode]:
        """The episodes of the groups to train on."""
        return [e for g in self.groups for e in g.episodes]

    def stored_episodes(self, step: int) -> list[Episode]:
        """Every episode the batch holds, each marked with `step` and what the trainer did with it
        (`Episode.train_use`): what the store keeps."""
        labelled: list[tuple[RolloutGroup, TrainUse]] = [(g, "trained" if g.has_signal else "no_signal")
                                                         for g in self.groups]
        labelled += [(g, "set_aside") for g in self.set_aside] + [(g, "stale") for g in self.stale]
        out = []
        for group, use in labelled:
            for episode in group.episodes:
                episode.train_step, episode.train_use = step, use
                out.append(episode)
        return out

    def staleness(self, version: int) -> dict[str, float]:
        """How many versions each trained group lags the trainer at `version` (a histogram, the mean and the
        max), and the groups dropped as too stale."""
        lags = [version - g.policy_version for g in self.groups]
        out = {f"staleness/lag_{lag}": float(n) for lag, n in sorted(Counter(lags).items())}
        if lags:
            out["staleness/mean"] = sum(lags) / len(lags)
            out["staleness/max"] = float(max(lags))
        out["staleness/dropped_groups"] = float(len(self.stale))
        return out


class TaskOrder(Generic[T]):
    """A seeded, epoch-by-epoch shuffled order over tasks, addressable by group index.

    Epoch e is a permutation drawn from Random((seed, e)); group i asks for task
    perm_{i // n}[i % n]. No state: resuming at group index i draws exactly what an
    uninterrupted run would have drawn.
    """

    def __init__(self, tasks: Sequence[T], seed: int) -> None:
        if not tasks:
            raise ValueError("a task order needs at least one task")
        self.tasks = list(tasks)
        self.seed = seed
        self._epochs: dict[int, list[int]] = {}

    def task_at(self, index: int) -> T:
        epoch, offset = divmod(index, len(self.tasks))
        if epoch not in self._epochs:
            order = list(range(len(self.tasks)))
            random.Random(f"{self.seed}\x1f{epoch}").shuffle(order)
            self._epochs = {epoch: order}  # one epoch at a time is all a run ever reads
        return self.tasks[self._epochs[epoch][offset]]


class GroupOrder(Protocol[T_co]):
    """What rollout sources draw each group's task from: a `TaskOrder`, or the trainer's cluster curriculum."""

    @property
    def tasks(self) -> Sequence[T_co]: ...

    def task_at(self, index: int) -> T_co: ...


PoolFigures = dict[str, Any]
"""One sampler pool's running figures (`AsyncRollouts.pools`): numbers by name, and `quarantined`, the reason or
None."""


class RolloutSource(Protocol):
    """What the training loop needs from whatever samples its rollouts: `SyncRollouts` in-process
    (tracegym/samplers/inprocess.py), `AsyncRollouts`' sampler processes (tracegym/samplers/orchestrator.py)."""

    def start(self) -> None:
        """Get ready to sample (build scorers, start processes); errors in the setup surface here."""

    def next_batch(self, n_groups: int, trainer_version: int) -> RolloutBatch:
        """`n_groups` groups sampled by weights at most `max_staleness` versions older than `trainer_version`;
        older ones are dropped and kept in the batch's `stale`."""

    def publish(self, state_dict: Mapping[str, Tensor], version: int,
                adapter: AdapterWeights | None = None) -> dict[str, float]:
        """The trainer's weights after its step number `version`: later groups are sampled with them. Returns the
        figures of the weight sync (`sync/bytes`, `sync/dense_bytes`, ...; none when nothing is sent). `adapter`:
        with model.lora, the adapter alone, for samplers that serve it over the base weights."""

    def quarantine(self, pool: str, reason: str) -> None:
        """Hand the sampler pool `pool` no more tasks (a source without pools has nothing to stop)."""

    def totals(self) -> dict[str, float]:
        """Running totals under their metric names (`source/...`): groups consumed and dropped, samplers alive,
        deaths and restarts, throughput, waiting vs working time."""

    def pool_figures(self) -> dict[str, PoolFigures]:
        """Running figures per sampler pool (device time, tokens, groups, weight syncs, quarantine); none for a source
        without pools."""

    def close(self) -> None:
        """Stop sampling and release every process, thread and file handle."""
