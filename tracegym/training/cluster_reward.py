"""Training reward per failure cluster: what each GRPO step's episodes scored, cluster by cluster.

Every task carries the failure cluster it was mined from (`task.provenance.cluster_id`); tasks without one
share the key `none`. Each GRPO step stores, for every cluster with a scored episode in the step:

    cluster/<cluster_id>/reward     the mean reward of those episodes
    cluster/<cluster_id>/episodes   how many they are

The episodes are those of every group the step took fresh from its source: trained, skipped for want of a
signal, and set aside by dynamic sampling. That is the population of `grpo/sampled_reward_mean`, not of
`reward/mean`, which keeps only the groups the trainer saw and so, with dynamic sampling, leaves out the
clusters the policy always or never solves. Groups dropped as stale are left out, as from both: weights more
than `async.max_staleness` versions old sampled them, so they tell of an older policy. Unscored episodes
(`grpo/failed_episodes`) are left out too. In SQL, per run:

    SELECT r.train_step, coalesce(t.cluster_id, 'none'), avg(r.reward), count(*)
    FROM rollouts r JOIN tasks t USING (task_set_id, task_id)
    WHERE r.run_id = ? AND r.train_use <> 'stale' AND r.reward IS NOT NULL GROUP BY ALL
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tracegym.samplers.rollouts import RolloutBatch, RolloutGroup
    from tracegym.store.connection import Store
    from tracegym.tasks.spec import TaskSpec

NO_CLUSTER = "none"
"""The cluster key of tasks mined without one (cluster ids are hex digits, so it cannot clash)."""
PREFIX = "cluster/"


def cluster_key(task: TaskSpec) -> str:
    return task.provenance.cluster_id or NO_CLUSTER


def reward_key(cluster: str) -> str:
    return f"{PREFIX}{cluster}/reward"


def episodes_key(cluster: str) -> str:
    return f"{PREFIX}{cluster}/episodes"


def cluster_rewards(groups: Iterable[RolloutGroup], cluster_of: Mapping[str, str]) -> dict[str, tuple[float, int]]:
    """Per cluster with a scored episode among `groups`: the mean reward of its scored episodes and their number."""
    rewards: dict[str, list[float]] = {}
    for group in groups:
        scored = [float(e.reward) for e in group.episodes if e.reward is not None]
        if scored:
            rewards.setdefault(cluster_of[group.task_id], []).extend(scored)
    return {c: (math.fsum(values) / len(values), len(values)) for c, values in sorted(rewards.items())}


def batch_cluster_rewards(batch: RolloutBatch, cluster_of: Mapping[str, str]) -> dict[str, tuple[float, int]]:
    """`cluster_rewards` over the groups a step took fresh: trained or not, and set aside (see the module doc)."""
    return cluster_rewards([*batch.groups, *batch.set_aside], cluster_of)


def cluster_metrics(rewards: Mapping[str, tuple[float, int]]) -> dict[str, float]:
    """The metrics of one step's `cluster_rewards`."""
    out: dict[str, float] = {}
    for cluster, (mean, n) in rewards.items():
        out[reward_key(cluster)] = mean
        out[episodes_key(cluster)] = float(n)
    return out


def parse_key(key: str) -> tuple[str, str] | None:
    """(cluster, field) of a per-cluster metric key such as cluster/9ad607e04a/reward; None for other keys."""
    parts = key.split("/")
    if len(parts) != 3 or f"{parts[0]}/" != PREFIX:
        return None
    return parts[1], parts[2]


def reward_history(store: Store, run_id: str, steps: Sequence[int]) -> dict[int, dict[str, float]]:
    """{step: {cluster: mean reward}} of a run's stored per-cluster metrics, for `steps` (each present, perhaps
    empty: a step whose episodes were all unscored stored none)."""
    history: dict[int, dict[str, float]] = {step: {} for step in steps}
    if not steps:
        return history
    rows = store.query("SELECT step, key, value FROM metrics WHERE run_id = ? AND step BETWEEN ? AND ? "
                       "AND key LIKE 'cluster/%/reward' ORDER BY step, key", [run_id, min(steps), max(steps)])
    for row in rows:
        parsed = parse_key(row["key"])
        if parsed is not None and row["step"] in history and row["value"] is not None:
            history[row["step"]][parsed[0]] = float(row["value"])
    return history
