"""Evaluation statistics: pass@k against enumeration, interval coverage, the beyond-noise decision."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from tracegym.evals.checkpoints.stats import (
    bootstrap_mean,
    fewest_tasks_for_a_verdict,
    paired_change,
    pass_at_k,
    sign_flip_p_value,
)


def _pass_at_k_by_enumeration(n: int, c: int, k: int) -> float:
    """The share of k-subsets of n samples (the first c passing) that hold at least one pass."""
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(i < c for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_pass_at_k_matches_enumeration(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert pass_at_k(n, c, k) == pytest.approx(_pass_at_k_by_enumeration(n, c, k), abs=1e-12), (n, c, k)


def test_pass_at_k_edges_and_large_n() -> None:
    assert pass_at_k(10, 0, 5) == 0.0
    assert pass_at_k(10, 6, 5) == 1.0  # fewer than k failures: every k-subset holds a pass
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    # Large n, where the binomials themselves overflow floats: the product form stays exact.
    assert pass_at_k(2000, 1, 1000) == pytest.approx(0.5)
    assert pass_at_k(200, 20, 10) == pytest.approx(1 - math.comb(180, 10) / math.comb(200, 10))
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)


def test_bootstrap_interval_covers_the_true_mean_about_95_percent() -> None:
    rng = np.random.default_rng(123)
    trials, covered = 300, 0
    for trial in range(trials):
        sample = rng.binomial(1, 0.3, size=60).astype(float)
        interval = bootstrap_mean(sample, seed=trial, resamples=1000)
        assert interval.low <= interval.value <= interval.high
        covered += interval.low <= 0.3 <= interval.high
    # Percentile intervals run a little narrow at n=60; far from 95% would mean a wrong resampling unit or quantile.
    assert 0.88 <= covered / trials <= 0.99


def test_bootstrap_is_reproducible_and_degenerate_for_constant_values() -> None:
    values = [0.1, 0.5, 0.9, 0.4]
    assert bootstrap_mean(values, seed=7) == bootstrap_mean(values, seed=7)
    flat = bootstrap_mean([0.5] * 9)
    assert (flat.value, flat.low, flat.high) == (0.5, 0.5, 0.5)


def test_sign_flip_p_value_is_exact_for_few_tasks() -> None:
    # Five tasks, all better by the same amount: only the all-plus and all-minus patterns are as extreme.
    assert sign_flip_p_value([0.2] * 5) == pytest.approx(2 / 32)
    assert sign_flip_p_value([0.0] * 5) == 1.0
    # Enumeration by hand for three tasks.
    diffs = [0.5, -0.1, 0.2]
    observed = abs(sum(diffs) / 3)
    extreme = sum(abs(sum(s * d for s, d in zip(signs, diffs, strict=True)) / 3) >= observed - 1e-12
                  for signs in itertools.product([1, -1], repeat=3))
    assert sign_flip_p_value(diffs) == pytest.approx(extreme / 8)


def test_beyond_noise_decision() -> None:
    rng = np.random.default_rng(5)
    base = rng.uniform(0, 0.5, size=40)
    better = base + 0.3 + rng.normal(0, 0.05, size=40)
    change = paired_change(list(better), list(base))
    assert change.beyond_noise and change.p_value < 0.001
    assert change.diff.low > 0.2 and change.diff.high < 0.4

    noise = base + rng.normal(0, 0.05, size=40)
    same = paired_change(list(noise), list(base), seed=1)
    assert not same.beyond_noise and same.diff.low < 0 < same.diff.high

    worse = paired_change(list(base), list(better))
    assert worse.beyond_noise and worse.diff.value < 0

    # Four tasks can never be beyond noise at 0.05: the smallest exact p-value is 2/16.
    assert not paired_change([1.0] * 4, [0.0] * 4).beyond_noise
    with pytest.raises(ValueError):
        paired_change([1.0], [0.0, 1.0])


@pytest.mark.parametrize("alpha", [0.2, 0.1, 0.05, 0.0625, 0.01])
def test_fewest_tasks_for_a_verdict_is_where_the_exact_test_first_gets_below_alpha(alpha: float) -> None:
    n = fewest_tasks_for_a_verdict(alpha)
    assert sign_flip_p_value([0.5] * n) < alpha <= sign_flip_p_value([0.5] * (n - 1))
