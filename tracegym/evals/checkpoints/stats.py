"""The statistics of checkpoint evaluation: pass@k, bootstrap intervals, and a paired test for "beyond noise".

The unit of resampling is the task: samples of one task are not independent draws of the model's skill
(they share the prompt), so intervals resample whole tasks, each carrying its per-task figure (mean
reward, pass rate, pass@k over its samples).

- pass@k is the unbiased estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained on
  Code", eq. 1): with n samples of which c pass, 1 - C(n-c, k) / C(n, k), averaged over tasks.
- An interval is a percentile bootstrap of the mean over tasks (seeded, so a report is reproducible).
- A change against the base model is paired by task. It is *beyond noise* when an exact (or, for many
  tasks, Monte Carlo) sign-flip permutation test of the mean paired difference rejects "no change" at
  `alpha`: under that hypothesis each task's difference is as likely to have either sign. The bootstrap
  interval of the difference is reported beside it; the decision is the test's alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RESAMPLES = 4000
"""Bootstrap resamples: the interval ends move by well under 0.01 between seeds at this count."""
EXACT_FLIPS_UP_TO = 16
"""Tasks up to which the permutation test enumerates every sign pattern (2^16 = 65,536)."""
MONTE_CARLO_FLIPS = 20_000


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chance that at least one of k samples drawn without replacement from n (c of them passing) passes."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    # 1 - prod_{i=n-c+1}^{n} (1 - k/i): the ratio of binomials without overflowing for large n.
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


@dataclass(frozen=True)
class Interval:
    """A statistic over tasks and its percentile-bootstrap interval."""

    value: float
    low: float
    high: float
    n: int


def bootstrap_mean(values: Sequence[float], confidence: float = 0.95, seed: int = 0,
                   resamples: int = RESAMPLES) -> Interval:
    """The mean of per-task values and a percentile-bootstrap interval, resampling tasks."""
    data = np.asarray(values, dtype=np.float64)  # (T,)
    if data.size == 0:
        raise ValueError("no values to summarise")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, data.size, size=(resamples, data.size))  # (R, T) task indices
    means = data[picks].mean(axis=1)  # (R,)
    tail = (1.0 - confidence) / 2
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return Interval(float(data.mean()), float(low), float(high), int(data.size))


@dataclass(frozen=True)
class PairedChange:
    """A checkpoint's change against the base, paired by task."""

    diff: Interval
    """Mean per-task difference (checkpoint - base) with its bootstrap interval."""
    p_value: float
    """Two-sided sign-flip permutation test of a zero mean difference."""
    beyond_noise: bool
    """p_value < alpha."""


def sign_flip_p_value(diffs: Sequence[float], seed: int = 0) -> float:
    """Two-sided p-value of the mean paired difference under random sign flips (exact for few tasks)."""
    d = np.asarray(diffs, dtype=np.float64)  # (T,)
    observed = abs(d.mean())
    if not np.any(d):
        return 1.0
    if d.size <= EXACT_FLIPS_UP_TO:
        patterns = np.arange(2 ** d.size)[:, None] >> np.arange(d.size)[None, :] & 1  # (2^T, T)
        signs = 1.0 - 2.0 * patterns
    else:
        signs = np.random.default_rng(seed).choice([-1.0, 1.0], size=(MONTE_CARLO_FLIPS, d.size))
    flipped = np.abs((signs * d).mean(axis=1))  # (P,)
    # A tolerance keeps ties (patterns whose mean equals the observed one) counted despite rounding.
    extreme = int(np.sum(flipped >= observed - 1e-12))
    if d.size > EXACT_FLIPS_UP_TO:  # the observed pattern counts once more (Phipson & Smyth 2010)
        return (extreme + 1) / (len(signs) + 1)
    return extreme / len(signs)


def fewest_tasks_for_a_verdict(alpha: float = 0.05) -> int:
    """The fewest paired tasks whose sign-flip test can reach p < alpha: over n tasks the least p, every difference
    of one sign, is 2 / 2^n (6 tasks at alpha 0.05)."""
    return math.floor(math.log2(2 / alpha)) + 1


def paired_change(checkpoint: Sequence[float], base: Sequence[float], alpha: float = 0.05, confidence: float = 0.95,
                  seed: int = 0) -> PairedChange:
    """The per-task change of `checkpoint` over `base` (same tasks, same order), and whether it is noise."""
    if len(checkpoint) != len(base):
        raise ValueError(f"paired values differ in length: {len(checkpoint)} vs {len(base)}")
    diffs = [c - b for c, b in zip(checkpoint, base, strict=True)]
    p = sign_flip_p_value(diffs, seed)
    return PairedChange(bootstrap_mean(diffs, confidence, seed), p, p < alpha)
