"""Cluster-aware task sampling (`tasks.sampling: clusters`): a curriculum over failure clusters.

Each group draws a failure cluster first, then a task of that cluster. Before each GRPO step, a cluster's
weight comes from m, the exponential moving average of its training reward over the steps that sampled it
(`cluster/<cluster_id>/reward`, tracegym/training/cluster_reward.py), clamped to [0, 1]:

    failure:       w = 1 - m             toward the clusters the policy still fails
    learnability:  w = 4 m (1 - m)       toward those it solves some of the time (a GRPO signal)
    never sampled: w = 1                 the highest weight either way
    p = floor / K + (1 - floor) * w / sum(w)   over the K clusters (uniform when every w is 0)

and is recorded as `curriculum/<cluster_id>/weight` (p) for the step. The task within the cluster is a
seeded draw. What this follows: prime-rl's `Buffer` (orchestrator/buffer.py) sorts problems into easy and
hard pools by their last mean reward and keeps fixed fractions of each in every batch, and its
`AdaptiveWeightManager` (orchestrator/adaptive_weights.py) moves weights with an EMA of rewards
(`ema_alpha`) above a floor (`min_weights`); DAPO's dynamic sampling and online difficulty filtering (Bae
et al. 2025) drop groups without a signal after sampling them, and `learnability` weighs p(1 - p), the
reward variance of a group, as Foster & Foerster (2025) sample at the frontier of learnability. Here the
pools are the mined failure clusters, the question the run must answer per cluster, and the floor is
a uniform share (as epsilon-exploration in Matiisen et al.'s teacher-student curricula), so each
cluster keeps at least floor / K of the draws.

Determinism. Group i draws from Random((seed, i)) under the probabilities in force, which change only in
`observe`, once per step, from that step's per-cluster rewards. The draws are thus a function of the run
seed, the group index and the per-cluster rewards of earlier steps, which the store keeps: a resumed run
`replay`s them from its metrics and draws what the uninterrupted run drew. That holds for the synchronous
source (`async.max_staleness: 0`), which draws a step's groups after the previous step was observed. The
asynchronous source hands tasks out ahead of training, up to its buffer, so a group draws under the
probabilities in force when it was handed out: timing-dependent, as its task order already is. The monitor
thread reads the probabilities while the trainer's thread replaces them; they are swapped as one tuple.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

from tracegym.errors import NotFoundError
from tracegym.samplers.rollouts import GroupOrder, TaskOrder
from tracegym.training.cluster_reward import cluster_key, reward_history

if TYPE_CHECKING:
    from tracegym.store.connection import Store
    from tracegym.tasks.spec import TaskSpec
    from tracegym.training.config import CurriculumSection, TrainConfig

T = TypeVar("T")
PREFIX = "curriculum/"


def weight_key(cluster: str) -> str:
    return f"{PREFIX}{cluster}/weight"


def cluster_weight(mean: float | None, weighting: str) -> float:
    """The unnormalised weight of a cluster whose reward average is `mean` (None: never sampled), in [0, 1]."""
    if mean is None:
        return 1.0
    m = min(1.0, max(0.0, mean))
    return 1.0 - m if weighting == "failure" else 4.0 * m * (1.0 - m)


def draw_probabilities(means: Sequence[float | None], weighting: str, floor: float) -> list[float]:
    """The probability of drawing each cluster: `floor` spread evenly, the rest in proportion to the weights."""
    weights = [cluster_weight(m, weighting) for m in means]
    total = math.fsum(weights)
    k = len(weights)
    if total <= 0:
        return [1.0 / k] * k
    return [floor / k + (1.0 - floor) * w / total for w in weights]


class ClusterCurriculum(Generic[T]):
    """A task order over clusters of tasks, weighted by their rewards so far; see the module doc."""

    def __init__(self, tasks: Sequence[T], key: Callable[[T], str], seed: int, section: CurriculumSection) -> None:
        if not tasks:
            raise ValueError("a curriculum needs at least one task")
        self.tasks = list(tasks)
        self.seed = seed
        self.section = section
        self._of: dict[str, list[T]] = {}
        for task in self.tasks:
            self._of.setdefault(key(task), []).append(task)
        self.clusters = sorted(self._of)
        self.means: dict[str, float] = {}  # the reward average of each cluster sampled so far
        self._set_probabilities()

    def _set_probabilities(self) -> None:
        probabilities = draw_probabilities([self.means.get(c) for c in self.clusters], self.section.weighting,
                                           self.section.floor)
        self._draw = (tuple(probabilities), tuple(itertools.accumulate(probabilities)))

    def probabilities(self) -> dict[str, float]:
        """cluster -> the probability that a group drawn now is of it."""
        return dict(zip(self.clusters, self._draw[0], strict=True))

    def metrics(self) -> dict[str, float]:
        """`curriculum/<cluster_id>/weight` per cluster: the probabilities the next groups are drawn with."""
        return {weight_key(c): p for c, p in self.probabilities().items()}

    def task_at(self, index: int) -> T:
        """The task of group `index`: its cluster drawn by the current probabilities, then one of its tasks."""
        rng = random.Random(f"{self.seed}\x1fcluster\x1f{index}")
        cumulative = self._draw[1]
        cluster = self.clusters[min(bisect.bisect_right(cumulative, rng.random()), len(self.clusters) - 1)]
        tasks = self._of[cluster]
        return tasks[rng.randrange(len(tasks))]

    def observe(self, rewards: Mapping[str, float]) -> None:
        """Fold one step's mean reward per cluster into the averages; clusters it did not sample keep theirs."""
        rate = self.section.ema
        for cluster, reward in rewards.items():
            if cluster in self._of:
                old = self.means.get(cluster)
                self.means[cluster] = reward if old is None else old + rate * (reward - old)
        self._set_probabilities()

    def replay(self, history: Mapping[int, Mapping[str, float]]) -> None:
        """`observe` each step of `history` ({step: {cluster: reward}}) in step order: the state after them."""
        for step in sorted(history):
            self.observe(history[step])


def task_order(config: TrainConfig, tasks: Sequence[TaskSpec]) -> GroupOrder[TaskSpec]:
    """The order `tasks.sampling` names: the seeded epoch-shuffled one, or the curriculum over clusters."""
    if config.tasks.sampling == "clusters":
        assert config.tasks.curriculum is not None  # filled in by the config's validator
        return ClusterCurriculum(tasks, cluster_key, config.seed, config.tasks.curriculum)
    return TaskOrder(tasks, config.seed)


def stored_history(store: Store, run_id: str, steps: range) -> dict[int, dict[str, float]]:
    """The per-cluster rewards of `steps` of a run, for `replay` on resume; every one of them must have recorded its
    curriculum weights, or the rebuilt curriculum would draw other tasks than the run did."""
    recorded = {row["step"] for row in store.query(
        "SELECT DISTINCT step FROM metrics WHERE run_id = ? AND step BETWEEN ? AND ? AND key LIKE 'curriculum/%'",
        [run_id, steps.start, steps.stop - 1])}
    missing = [step for step in steps if step not in recorded]
    if missing:
        raise NotFoundError(
            f"--resume with tasks.sampling: clusters rebuilds the curriculum from the per-cluster metrics of steps "
            f"{steps.start}-{steps.stop - 1} of run {run_id}, and the store lacks those of {len(missing)} step(s) "
            f"(first: {missing[0]}). Fix: resume with the --store the run trained with, or start a new run_dir.")
    return reward_history(store, run_id, list(steps))
