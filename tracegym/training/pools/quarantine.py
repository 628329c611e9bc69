"""Quarantine of sampler pools: after each step, a pool past one of its limits gets no more tasks.

A pool's limits (`SamplerPool.max_mismatch_kl`, `max_error_rate`) are judged over the windows of
`async.quarantine` (docs/training-runs.md, "Quarantine and rollout cost"):

- mismatch: the k3 KL of the pool's trained tokens against the trainer (`mismatch/POOL/k3_kl`, or `mismatch/k3_kl`
  for a step that trained on one pool's tokens alone), token-weighted over the pool's last `window_steps` steps
  that trained on its tokens; judged once those steps hold `min_tokens` of its tokens;
- error rate: the share of the pool's last `window_episodes` episodes that ended in an error: a harness or policy
  error (`Episode.harness_error`), or lost in flight with a sampler process that died (each lost group counts
  `group_size` episodes); judged once the window holds `min_episodes`. Episodes count when the trainer receives
  them (trained, skipped, set aside or stale alike), deaths after the step that sees them.

The loop stores each verdict (`pool_quarantines`) and hands it to the rollout source (`source.quarantine`); when
every pool is quarantined the run stops with `PoolsQuarantinedError`.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from tracegym.errors import ModelError

if TYPE_CHECKING:
    from tracegym.samplers.config import QuarantineSection, SamplerPool
    from tracegym.samplers.rollouts import RolloutBatch


class PoolsQuarantinedError(ModelError):
    title = "Every sampler pool quarantined"


@dataclass(frozen=True)
class Verdict:
    """A pool past its limit, and the evidence."""

    pool: str
    cause: Literal["mismatch", "error_rate"]
    value: float
    limit: float
    first_step: int
    last_step: int
    evidence: float
    """How many tokens (mismatch) or episodes (error rate) `value` is measured over."""
    step: int
    """The step after which it was judged."""

    @property
    def unit(self) -> str:
        return "tokens" if self.cause == "mismatch" else "episodes"

    def reason(self) -> str:
        what = "k3 KL against the trainer" if self.cause == "mismatch" else "error rate"
        steps = f"step {self.first_step}" if self.first_step == self.last_step else \
            f"steps {self.first_step}-{self.last_step}"
        return (f"{what} {self.value:.4g} > its limit {self.limit:g}, over {self.evidence:.0f} {self.unit} of "
                f"{steps}")


def _pool_of(sampler_id: str | None) -> str:
    return sampler_id.rsplit("/", 1)[0] if sampler_id else ""


def trained_tokens(batch: RolloutBatch) -> dict[str, int]:
    """Per pool, the tokens the trainer learned from in this batch: those of trainable episodes in groups with a
    signal (what its loss metrics are averaged over)."""
    from tracegym.samplers.rollouts import trainable

    out: dict[str, int] = {}
    for group in batch.groups:
        if not group.has_signal:
            continue
        for episode in group.episodes:
            if trainable(episode):
                pool = _pool_of(episode.sampler_id)
                out[pool] = out.get(pool, 0) + episode.tokens.n_trainable  # type: ignore[union-attr]
    return out


def step_mismatch(metrics: Mapping[str, float], tokens: Mapping[str, int]) -> dict[str, tuple[float, int]]:
    """Per pool whose tokens the step trained on: (its k3 KL, its tokens). The trainer keeps per-pool figures only
    for a step that trained on several pools; a step of one pool's tokens has them as the step's own."""
    trained = {pool: n for pool, n in tokens.items() if n > 0}
    out = {}
    for pool, n in trained.items():
        value = metrics.get(f"mismatch/{pool}/k3_kl")
        if value is None and len(trained) == 1:
            value = metrics.get("mismatch/k3_kl")
        if value is not None and math.isfinite(value):
            out[pool] = (float(value), n)
    return out


def episode_errors(batch: RolloutBatch) -> dict[str, list[bool]]:
    """Per pool, whether each episode the trainer received in this batch ended in a harness or policy error."""
    out: dict[str, list[bool]] = {}
    for group in (*batch.groups, *batch.set_aside, *batch.stale):
        for episode in group.episodes:
            out.setdefault(_pool_of(episode.sampler_id), []).append(episode.harness_error is not None)
    return out


class QuarantineWatch:
    """The evidence windows of every pool with a limit, fed after each step."""

    def __init__(self, pools: Sequence[SamplerPool], section: QuarantineSection, group_size: int) -> None:
        self.pools = {p.label: p for p in pools}
        self.section = section
        self.group_size = group_size
        self.kl: dict[str, deque[tuple[int, float, int]]] = {p: deque(maxlen=section.window_steps)
                                                             for p in self.pools}
        self.errors: dict[str, deque[tuple[int, bool]]] = {p: deque(maxlen=section.window_episodes)
                                                           for p in self.pools}
        self.lost_seen: dict[str, float] = {p: 0.0 for p in self.pools}
        self.out: dict[str, str] = {}
        """Quarantined pools and why."""

    @property
    def active(self) -> bool:
        return any(p.max_mismatch_kl is not None or p.max_error_rate is not None for p in self.pools.values())

    def observe(self, step: int, metrics: Mapping[str, float], batch: RolloutBatch,
                pool_stats: Mapping[str, Mapping[str, Any]]) -> list[Verdict]:
        """Add the step's evidence; the pools it puts past a limit (each pool once)."""
        for pool, (value, n) in step_mismatch(metrics, trained_tokens(batch)).items():
            if pool in self.kl:
                self.kl[pool].append((step, value, n))
        for pool, flags in episode_errors(batch).items():
            if pool in self.errors:
                self.errors[pool].extend((step, flag) for flag in flags)
        for pool, stats in pool_stats.items():
            lost = float(stats.get("lost_groups", 0.0))
            if pool in self.errors and lost > self.lost_seen[pool]:
                self.errors[pool].extend([(step, True)] * int((lost - self.lost_seen[pool]) * self.group_size))
                self.lost_seen[pool] = lost
        verdicts = []
        for pool in self.pools:
            if pool in self.out:
                continue
            verdict = self._mismatch(pool, step) or self._error_rate(pool, step)
            if verdict is not None:
                self.out[pool] = verdict.reason()
                verdicts.append(verdict)
        return verdicts

    def _mismatch(self, pool: str, step: int) -> Verdict | None:
        limit, window = self.pools[pool].max_mismatch_kl, self.kl[pool]
        tokens = sum(n for _, _, n in window)
        if limit is None or tokens < self.section.min_tokens:
            return None
        value = sum(v * n for _, v, n in window) / tokens
        if value <= limit:
            return None
        return Verdict(pool, "mismatch", value, limit, window[0][0], window[-1][0], float(tokens), step)

    def _error_rate(self, pool: str, step: int) -> Verdict | None:
        limit, window = self.pools[pool].max_error_rate, self.errors[pool]
        if limit is None or len(window) < self.section.min_episodes:
            return None
        value = sum(flag for _, flag in window) / len(window)
        if value <= limit:
            return None
        return Verdict(pool, "error_rate", value, limit, window[0][0], window[-1][0], float(len(window)), step)

    def all_out(self) -> bool:
        return set(self.out) >= set(self.pools)

    def error(self) -> PoolsQuarantinedError:
        reasons = "\n".join(f"- {pool}: {reason}" for pool, reason in self.out.items())
        return PoolsQuarantinedError(
            f"Every sampler pool is quarantined, so no sampler is left to sample:\n{reasons}\nFix: fix the pools "
            "(precision, engine, harness), or raise their limits (sampler.pools[].max_mismatch_kl, max_error_rate) "
            "or widen async.quarantine, in a new run_dir (a resumed run keeps its config and the quarantines up to "
            "its checkpoint).")
