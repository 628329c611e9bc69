"""GRPO group advantages: each sample's reward against its group's, on the sampler side.

For a group of G samples of one prompt (slime `ray/rollout.py::_post_process_rewards`, the
same in Miles; docs/training-math.md, "GRPO advantages"):

    A_i = R_i - mean_g(R)                      (mean-centring, Dr.GRPO; the default here)
    A_i = (R_i - mean_g(R)) / (std_g(R) + eps)  (std_normalization=True; unbiased std as in torch)

The advantage is broadcast to every token of the sample by the caller. A group whose
rewards are all equal carries no learning signal (every A_i is 0, and so is every gradient,
with or without score centering: oracle 14 of tests/unit/test_loss_oracles.py); it is skipped and counted so
that the trainer spends no compute on it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from tracegym.errors import TracegymError


class AdvantageInputError(TracegymError, ValueError):
    """Rewards and group ids that cannot form advantages."""

    title = "Advantage input error"


@dataclass(frozen=True)
class GroupAdvantages:
    """Advantages for a batch of samples, in the order the rewards came in."""

    advantages: list[float]
    """One per sample; 0.0 for the samples of skipped groups."""
    trainable: list[bool]
    """False for the samples of skipped groups: the trainer can leave them out."""
    num_groups: int
    """Distinct group ids in the batch."""
    skipped_groups: int
    """Groups with zero reward variance (a single sample, or all rewards equal)."""

    @property
    def skipped_samples(self) -> int:
        """Samples that belong to skipped groups."""
        return self.trainable.count(False)


def group_advantages(
    rewards: Sequence[float],
    group_ids: Sequence[Hashable],
    *,
    std_normalization: bool = False,
    eps: float = 1e-6,
) -> GroupAdvantages:
    """GRPO advantages for samples grouped by `group_ids` (any hashable, in any order).

    Zero variance means the rewards of a group are exactly equal; such groups are skipped.
    """
    if len(rewards) != len(group_ids):
        raise AdvantageInputError(
            f"{len(rewards)} rewards but {len(group_ids)} group ids; each sample needs one of each"
        )
    members: dict[Hashable, list[int]] = {}
    for index, (reward, group) in enumerate(zip(rewards, group_ids, strict=True)):
        if not isinstance(reward, int | float) or not math.isfinite(reward):
            raise AdvantageInputError(f"reward {reward!r} of sample {index} (group {group!r}) is not a finite number")
        members.setdefault(group, []).append(index)
    advantages = [0.0] * len(rewards)
    trainable = [False] * len(rewards)
    skipped = 0
    for indices in members.values():
        group_rewards = [float(rewards[i]) for i in indices]
        if max(group_rewards) == min(group_rewards):
            skipped += 1
            continue
        centred = _group_advantages(group_rewards, std_normalization, eps)
        for index, advantage in zip(indices, centred, strict=True):
            advantages[index] = advantage
            trainable[index] = True
    return GroupAdvantages(advantages, trainable, num_groups=len(members), skipped_groups=skipped)


def _group_advantages(rewards: list[float], std_normalization: bool, eps: float) -> list[float]:
    """R_i - mean(R), optionally over (unbiased std(R) + eps), for one group of >= 2 rewards."""
    mean = math.fsum(rewards) / len(rewards)
    centred = [reward - mean for reward in rewards]
    if not std_normalization:
        return centred
    scale = statistics.stdev(rewards) + eps
    return [value / scale for value in centred]
