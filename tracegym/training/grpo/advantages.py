"""GRPO group advantages: each sample's reward against its group's, on the sampler side.

For a group of G samples of one prompt (slime `ray/rollout.py::_post_process_rewards`, the
same in Miles; docs/training-math.md, "GRPO advantages"):

    A_i = R_i - mean_g(R)                      (mean-centring, Dr.GRPO; the default here)
    A_i = (R_i - mean_g(R)) / (std_g(R) + eps)  (std_normalization=True; unbiased std as in torch)

The advantage is broadcast to every token of the sample by the caller. A group whose
rewards are all equal carries no learning signal (every A_i is 0, and so is every gradient,
with or without score centering: oracle 14 of tests/unit/test_loss_oracles.py); it is skipped and counted so
that the trainer spends no compute on it.

With `grpo.advantages: per_component` a reward that is the weighted mean of parts (a `weighted` eval) is
normalised part by part, as GDPO does (Liu et al. 2026, "GDPO: Group reward-Decoupled Normalization Policy
Optimization for Multi-reward RL Optimization", arXiv:2601.05242; NeMo RL's `GDPOAdvantageEstimator`):

    Â_ik = (c_ik - mean_g(c_k)) / (std_g(c_k) + eps)    (0 where part k is constant in the group)
    S_i  = sum_k w_k Â_ik / sum_k w_k
    A_i  = (S_i - mean_b(S)) / (std_b(S) + eps)         (over the trainable samples of the batch)

so that a part with little spread within a group (a content score) steers the update as much as one with much
(a format check). A group is skipped when every part is constant in it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Hashable, Mapping, Sequence
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


RewardParts = Mapping[str, tuple[float, float]]
"""A reward's parts by name: (the part's score, its weight in the reward)."""


def decoupled_advantages(
    rewards: Sequence[float],
    parts: Sequence[RewardParts],
    group_ids: Sequence[Hashable],
    *,
    std_normalization: bool = False,
    eps: float = 1e-6,
) -> GroupAdvantages:
    """GDPO advantages (see the module doc) for samples whose rewards have `parts`.

    A sample with fewer than two parts is one part, its reward; so is every member of a group whose members name
    different parts. A batch in which no sample has two parts gets `group_advantages` exactly (with
    `std_normalization`), the advantages of a reward without parts.
    """
    if not len(rewards) == len(parts) == len(group_ids):
        raise AdvantageInputError(f"{len(rewards)} rewards, {len(parts)} reward parts and {len(group_ids)} group "
                                  "ids; each sample needs one of each")
    if all(len(p) < 2 for p in parts):
        return group_advantages(rewards, group_ids, std_normalization=std_normalization, eps=eps)
    members: dict[Hashable, list[int]] = {}
    for index, (reward, group) in enumerate(zip(rewards, group_ids, strict=True)):
        if not isinstance(reward, int | float) or not math.isfinite(reward):
            raise AdvantageInputError(f"reward {reward!r} of sample {index} (group {group!r}) is not a finite number")
        _check_parts(parts[index], index, group)
        members.setdefault(group, []).append(index)
    summed = [0.0] * len(rewards)
    trainable = [False] * len(rewards)
    skipped = 0
    for indices in members.values():
        combined = _group_parts([float(rewards[i]) for i in indices], [parts[i] for i in indices], eps)
        if combined is None:
            skipped += 1
            continue
        for index, value in zip(indices, combined, strict=True):
            summed[index], trainable[index] = value, True
    return GroupAdvantages(_batch_normalised(summed, trainable, eps), trainable, num_groups=len(members),
                           skipped_groups=skipped)


def _check_parts(parts: RewardParts, index: int, group: Hashable) -> None:
    for name, (score, weight) in parts.items():
        if not math.isfinite(score) or not math.isfinite(weight) or weight <= 0:
            raise AdvantageInputError(f"part {name!r} of sample {index} (group {group!r}) has score {score!r} and "
                                      f"weight {weight!r}; each needs a finite score and a finite weight > 0")


def _group_parts(rewards: list[float], parts: list[RewardParts], eps: float) -> list[float] | None:
    """sum_k w_k Â_ik / sum_k w_k for one group; None when every part is constant in it. Members with fewer than
    two parts, or a group whose members name different parts or weights, are taken by their rewards alone."""
    shapes = {tuple(sorted((name, weight) for name, (_, weight) in p.items())) for p in parts}
    if len(shapes) > 1 or any(len(p) < 2 for p in parts):
        parts = [{"reward": (reward, 1.0)} for reward in rewards]
    weights = {name: weight for name, (_, weight) in parts[0].items()}
    total = [0.0] * len(parts)
    varied = False
    for name, weight in weights.items():
        scores = [p[name][0] for p in parts]
        if max(scores) == min(scores):
            continue
        varied = True
        for i, value in enumerate(_group_advantages(scores, True, eps)):
            total[i] += weight * value
    if not varied:
        return None
    denominator = math.fsum(weights.values())
    return [value / denominator for value in total]


def _batch_normalised(values: list[float], trainable: list[bool], eps: float) -> list[float]:
    """(S_i - mean_b(S)) / (unbiased std_b(S) + eps) over the trainable samples; 0.0 for the others."""
    kept = [v for v, t in zip(values, trainable, strict=True) if t]
    if not kept:
        return values
    mean = math.fsum(kept) / len(kept)
    scale = statistics.stdev(kept) + eps
    return [(v - mean) / scale if t else 0.0 for v, t in zip(values, trainable, strict=True)]
