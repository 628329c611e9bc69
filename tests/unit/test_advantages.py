"""GRPO group advantages: mean-centring, optional std normalisation, zero-variance groups skipped."""

from __future__ import annotations

import math
import statistics

import pytest
import torch

from tracegym.training.grpo.advantages import AdvantageInputError, group_advantages


def test_mean_centring_within_each_group():
    rewards = [1.0, 0.0, 0.5, 2.0, 4.0]
    result = group_advantages(rewards, ["a", "a", "a", "b", "b"])
    assert result.advantages == pytest.approx([0.5, -0.5, 0.0, -1.0, 1.0])
    assert result.trainable == [True] * 5
    assert (result.num_groups, result.skipped_groups, result.skipped_samples) == (2, 0, 0)


def test_std_normalisation_uses_the_unbiased_std_like_torch():
    rewards = [0.2, 0.9, 0.4, 1.0]
    result = group_advantages(rewards, [7, 7, 7, 7], std_normalization=True)
    tensor = torch.tensor(rewards, dtype=torch.float64)
    expected = (tensor - tensor.mean()) / (tensor.std() + 1e-6)  # slime: torch std is unbiased
    assert result.advantages == pytest.approx(expected.tolist(), abs=1e-12)
    assert statistics.stdev(result.advantages) == pytest.approx(1.0, abs=1e-5)


def test_groups_may_interleave_and_keep_the_input_order():
    rewards = [1.0, 10.0, 3.0, 30.0]
    result = group_advantages(rewards, ["x", ("y", 1), "x", ("y", 1)])
    assert result.advantages == pytest.approx([-1.0, -10.0, 1.0, 10.0])


def test_zero_variance_groups_are_skipped_and_counted():
    rewards = [1.0, 1.0, 1.0, 0.0, 1.0, 0.3]
    result = group_advantages(rewards, ["same", "same", "same", "mixed", "mixed", "alone"])
    assert result.advantages[:3] == [0.0, 0.0, 0.0] and result.advantages[5] == 0.0
    assert result.trainable == [False, False, False, True, True, False]
    assert (result.num_groups, result.skipped_groups, result.skipped_samples) == (3, 2, 4)
    assert result.advantages[3:5] == pytest.approx([-0.5, 0.5])


def test_mismatched_or_bad_inputs_raise_clear_errors():
    with pytest.raises(AdvantageInputError, match="3 rewards but 2 group ids"):
        group_advantages([1.0, 2.0, 3.0], ["a", "a"])
    with pytest.raises(ValueError, match="reward nan of sample 1"):
        group_advantages([1.0, math.nan], ["a", "a"])
    with pytest.raises(AdvantageInputError, match="not a finite number"):
        group_advantages([1.0, "2"], ["a", "a"])


def test_empty_batch():
    result = group_advantages([], [])
    assert result.advantages == [] and result.num_groups == 0 and result.skipped_samples == 0
