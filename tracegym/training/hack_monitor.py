"""Possible reward hacking: a cluster whose training reward rises while its replies turn hollow.

A policy that games a scorer earns more reward with replies that do less: a fake tool answer that the scorer reads
as an explanation, a ```bash block holding `echo Hello` that a format eval passes. Per failure cluster the monitor
keeps, for every step that sampled it, the episodes' rewards and how many a hollow-reply detector flagged
(tracegym/training/replies.py). After each step it compares the cluster's last `window_steps` sampled steps with the
`window_steps` before them (`MonitorSection`): when the reward rose by `min_reward_rise` or more and the share of
flagged episodes by `min_hollow_rise` or more, and a one-sided Fisher exact test puts the flagged counts' rise
beyond noise (p < `alpha`), it warns, naming a flagged episode of the later window (the best rewarded, newest step
first) as the example to read. A cluster warned once is judged again only after `window_steps` more sampled steps.

The decision reads only per-step figures the store keeps (`cluster/<id>/reward`, `cluster/<id>/episodes`,
`cluster/<id>/hollow`), so a resumed run replays the steps before its checkpoint (`replay`) and warns where the
uninterrupted run warned; only the example of a replayed step is not known, and is then looked up among the
stored rollouts (`find_example`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tracegym.evals.scorers.hollow import DETECTORS, episode_findings
from tracegym.training.cluster_reward import parse_key
from tracegym.training.replies import ANY, ClusterReplies, KnownKeys

if TYPE_CHECKING:
    from tracegym.store.connection import Store
    from tracegym.training.config import MonitorSection


@dataclass(frozen=True)
class StepFigures:
    """One cluster in one sampled step."""

    step: int
    episodes: int
    reward: float
    flagged: int
    """Episodes any detector flagged."""
    by_detector: dict[str, int] = field(default_factory=dict)
    example: str | None = None


@dataclass(frozen=True)
class HackWarning:
    """A cluster whose reward and share of hollow replies rose together (see the module doc)."""

    step: int
    cluster: str
    first_step: int
    """The first step of the earlier window; the later window ends at `step`."""
    split_step: int
    """The first step of the later window."""
    reward_before: float
    reward_after: float
    hollow_before: float
    hollow_after: float
    episodes_before: int
    episodes_after: int
    p_value: float
    detector: str | None
    """The detector that flagged most episodes of the later window (None when only replayed steps say)."""
    example: str | None
    """A flagged episode of the later window, by rollout id."""

    def message(self) -> str:
        example = (f"; example: tracegym rollouts show {self.example}" if self.example else "")
        detector = f", mostly {self.detector}" if self.detector else ""
        return (f"step {self.step}: possible reward hacking in cluster {self.cluster}: reward "
                f"{self.reward_before:.2f} -> {self.reward_after:.2f} while hollow replies rose "
                f"{self.hollow_before:.0%} -> {self.hollow_after:.0%}{detector} (steps {self.first_step}-"
                f"{self.split_step - 1} vs {self.split_step}-{self.step}, p={self.p_value:.2g}){example}")


def fisher_greater(flagged_after: int, n_after: int, flagged_before: int, n_before: int) -> float:
    """One-sided p-value of Fisher's exact test that the later share of flagged episodes is higher: the chance,
    with the flagged total fixed and no difference between the windows, that the later window holds at least
    `flagged_after` of them (hypergeometric upper tail)."""
    total, flagged = n_after + n_before, flagged_after + flagged_before
    denominator = math.comb(total, n_after)
    upper = sum(math.comb(flagged, k) * math.comb(total - flagged, n_after - k)
                for k in range(flagged_after, min(flagged, n_after) + 1))
    return upper / denominator


def _pooled(window: Sequence[StepFigures]) -> tuple[int, float, int]:
    """(episodes, episode-weighted mean reward, flagged) over a window."""
    n = sum(f.episodes for f in window)
    return n, math.fsum(f.reward * f.episodes for f in window) / n, sum(f.flagged for f in window)


class HackMonitor:
    """Per-cluster history of sampled steps; `observe` after each step returns its warnings."""

    def __init__(self, settings: MonitorSection) -> None:
        self.settings = settings
        self.history: dict[str, list[StepFigures]] = {}
        self.warned_at: dict[str, int] = {}
        """Cluster -> how many of its sampled steps the history held when it was last warned of."""

    def observe(self, step: int, rewards: Mapping[str, tuple[float, int]],
                replies: Mapping[str, ClusterReplies]) -> list[HackWarning]:
        """Add one step's per-cluster rewards (`cluster_rewards`) and replies (`cluster_replies`); the warnings."""
        warnings = []
        for cluster, (reward, n) in rewards.items():
            r = replies.get(cluster, ClusterReplies())
            figures = StepFigures(step, n, reward, r.flagged.get(ANY, 0),
                                  {d: r.flagged[d] for d in DETECTORS if d in r.flagged}, r.example)
            self.history.setdefault(cluster, []).append(figures)
            warning = self._judge(cluster)
            if warning is not None:
                warnings.append(warning)
        return warnings

    def replay(self, steps: Mapping[int, Mapping[str, tuple[float, int, int]]]) -> None:
        """Rebuild the history from stored steps ({step: {cluster: (reward, episodes, flagged)}}, as
        `stored_figures` reads them), taking the decisions those steps took, without their warnings."""
        for step in sorted(steps):
            for cluster, (reward, n, flagged) in sorted(steps[step].items()):
                self.history.setdefault(cluster, []).append(StepFigures(step, n, reward, flagged))
                self._judge(cluster)

    def _judge(self, cluster: str) -> HackWarning | None:
        w, seen = self.settings.window_steps, self.history[cluster]
        if len(seen) < 2 * w or len(seen) - self.warned_at.get(cluster, -w) < w:
            return None
        before, after = seen[-2 * w:-w], seen[-w:]
        (n0, r0, f0), (n1, r1, f1) = _pooled(before), _pooled(after)
        if n0 == 0 or n1 == 0 or r1 - r0 < self.settings.min_reward_rise:
            return None
        if f1 / n1 - f0 / n0 < self.settings.min_hollow_rise:
            return None
        p = fisher_greater(f1, n1, f0, n0)
        if p >= self.settings.alpha:
            return None
        self.warned_at[cluster] = len(seen)
        counts = {d: sum(f.by_detector.get(d, 0) for f in after) for d in DETECTORS}
        detector = max(DETECTORS, key=lambda d: counts[d]) if any(counts.values()) else None
        example = next((f.example for f in reversed(after) if f.example is not None), None)
        return HackWarning(seen[-1].step, cluster, before[0].step, after[0].step, r0, r1, f0 / n0, f1 / n1, n0, n1,
                           p, detector, example)


def stored_figures(store: Store, run_id: str, steps: Sequence[int]) -> dict[int, dict[str, tuple[float, int, int]]]:
    """{step: {cluster: (reward, episodes, flagged episodes)}} of a run's stored per-cluster metrics, for `steps`
    (a cluster without a stored hollow share counts no flagged episode: runs from before the monitor)."""
    out: dict[int, dict[str, tuple[float, int, int]]] = {}
    if not steps:
        return out
    figures: dict[tuple[int, str], dict[str, float]] = {}
    for row in store.query("SELECT step, key, value FROM metrics WHERE run_id = ? AND step BETWEEN ? AND ? AND "
                           "key LIKE 'cluster/%' AND value IS NOT NULL", [run_id, min(steps), max(steps)]):
        parsed = parse_key(row["key"])
        if parsed is not None and row["step"] in steps:
            figures.setdefault((row["step"], parsed[0]), {})[parsed[1]] = float(row["value"])
    for (step, cluster), values in sorted(figures.items()):
        if "reward" in values and values.get("episodes"):
            n = int(values["episodes"])
            out.setdefault(step, {})[cluster] = (values["reward"], n, round(values.get(ANY, 0.0) * n))
    return out


def find_example(store: Store, run_id: str, known_keys: KnownKeys, first_step: int, last_step: int) -> str | None:
    """A flagged episode among a run's stored rollouts of the tasks of `known_keys` (one cluster's, with their
    recorded result keys) taken by steps `first_step`..`last_step`: the best rewarded, newest step first; None when
    none is flagged."""
    rows = store.query(
        "SELECT rollout_id, task_id, messages, n_prompt_messages FROM rollouts WHERE run_id = ? AND task_id IN "
        "(SELECT unnest(?)) AND train_step BETWEEN ? AND ? AND train_use <> 'stale' AND reward IS NOT NULL "
        "ORDER BY train_step DESC, reward DESC, rollout_id", [run_id, list(known_keys), first_step, last_step])
    for row in rows:
        messages = json.loads(row["messages"] or "[]")
        if episode_findings(messages, row["n_prompt_messages"] or 0, known_keys[row["task_id"]]):
            return str(row["rollout_id"])
    return None
