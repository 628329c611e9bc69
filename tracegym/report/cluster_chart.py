"""A run's training reward per failure cluster, as the chart, the report and `runs show` present it.

The figures are the per-step metrics `cluster/<cluster_id>/reward` and `cluster/<cluster_id>/episodes`
(tracegym/training/cluster_reward.py), what the policy wrote (`cluster/<cluster_id>/hollow`, `reply_tokens`,
`distinct`: tracegym/training/replies.py) and, with `tasks.sampling: clusters`, `curriculum/<cluster_id>/weight`.
One step samples a few groups, so a cluster's reward at one step rests on a few episodes: the chart adds a
rolling mean over the cluster's last ROLLING_STEPS sampled steps, and the table compares the first and the
last TABLE_STEPS steps in which each cluster was sampled, both weighted by episodes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tracegym.report.rundata import RunData
from tracegym.training.replies import FIELDS as REPLY_FIELDS

ROLLING_STEPS = 5
TABLE_STEPS = 5
LABEL_CHARS = 48


@dataclass
class ClusterSeries:
    """One cluster's per-step figures, in step order."""

    cluster: str
    steps: list[int] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    episodes: list[float] = field(default_factory=list)
    weights: dict[int, float] = field(default_factory=dict)
    """step -> the probability the curriculum drew the cluster with (empty without a curriculum)."""
    replies: dict[str, list[float | None]] = field(default_factory=dict)
    """What the policy wrote (`hollow`, `hollow_<detector>`, `reply_tokens`, `distinct`), per step of `steps`; None
    at a step that did not record it (runs from before it was)."""


_FIGURES = {("cluster", "reward"), ("cluster", "episodes"), ("curriculum", "weight"),
            *(("cluster", name) for name in REPLY_FIELDS)}


def _split(key: str) -> tuple[str, str] | None:
    """(cluster, figure) of cluster/<id>/reward, cluster/<id>/episodes, the reply figures cluster/<id>/hollow, ...
    and curriculum/<id>/weight; else None."""
    parts = key.split("/")
    if len(parts) == 3 and (parts[0], parts[2]) in _FIGURES:
        return parts[1], parts[2]
    return None


def cluster_series(metrics: Mapping[str, Mapping[int, float | None]]) -> list[ClusterSeries]:
    """Every cluster the run recorded a reward or a curriculum weight for, by cluster key."""
    figures: dict[str, dict[str, dict[int, float]]] = {}
    for key, values in metrics.items():
        split = _split(key)
        if split is not None:
            figures.setdefault(split[0], {})[split[1]] = {s: float(v) for s, v in values.items() if v is not None}
    out = []
    for cluster, by_name in sorted(figures.items()):
        rewards, episodes = by_name.get("reward", {}), by_name.get("episodes", {})
        steps = sorted(s for s in rewards if episodes.get(s))
        replies = {name: [by_name[name].get(s) for s in steps] for name in REPLY_FIELDS if name in by_name}
        out.append(ClusterSeries(cluster, steps, [rewards[s] for s in steps], [episodes[s] for s in steps],
                                 dict(sorted(by_name.get("weight", {}).items())), replies))
    return out


def weighted_mean(rewards: Sequence[float | None], episodes: Sequence[float]) -> float | None:
    """The episode-weighted mean of `rewards` (or any per-step figure), leaving out the steps without one."""
    pairs = [(r, n) for r, n in zip(rewards, episodes, strict=True) if r is not None]
    total = math.fsum(n for _, n in pairs)
    return math.fsum(r * n for r, n in pairs) / total if total > 0 else None


def rolling_mean(series: ClusterSeries, window: int = ROLLING_STEPS, figure: str = "reward") -> list[float | None]:
    """At each sampled step, the episode-weighted mean reward (or reply `figure`, such as `hollow`) over the cluster's
    last `window` sampled steps."""
    values = series.rewards if figure == "reward" else series.replies.get(figure, [None] * len(series.steps))
    return [weighted_mean(values[max(0, i - window + 1):i + 1], series.episodes[max(0, i - window + 1):i + 1])
            for i in range(len(series.steps))]


def _window(series: ClusterSeries, figure: str, part: slice) -> float | None:
    values = series.replies.get(figure)
    return weighted_mean(values[part], series.episodes[part]) if values is not None else None


def short_signature(cluster: str, info: Mapping[str, Any] | None, chars: int = LABEL_CHARS) -> str:
    """The cluster's signature cut to `chars` (its key when the store has none), printable characters only."""
    text = (info or {}).get("signature") or cluster
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    return text if len(text) <= chars else text[:chars - 1] + "…"


def cluster_table(data: RunData, steps: int = TABLE_STEPS) -> list[dict[str, Any]]:
    """One row per cluster the run sampled: what the store knows of it, its episodes, its training reward and its
    share of hollow replies over the first and the last `steps` steps that sampled it (fewer when it was sampled in
    fewer than 2 x `steps`, so the two never overlap), its reply length and distinct share over the last of them,
    and its last curriculum weight. Ordered by cluster rank, unranked last."""
    rows = []
    for s in cluster_series(data.metrics):
        if not s.steps:
            continue
        info = data.clusters.get(s.cluster, {})
        n = max(1, min(steps, len(s.steps) // 2))
        first = weighted_mean(s.rewards[:n], s.episodes[:n])
        last = weighted_mean(s.rewards[-n:], s.episodes[-n:])
        rows.append({
            "cluster_id": s.cluster, "rank": info.get("rank"), "detector": info.get("detector"),
            "signature": info.get("signature"), "formats": ", ".join(info.get("formats", [])) or None,
            "steps": len(s.steps), "episodes": int(math.fsum(s.episodes)), "window": n,
            "reward_first": first, "reward_last": last,
            "change": None if first is None or last is None else last - first,
            "hollow_first": _window(s, "hollow", slice(None, n)), "hollow_last": _window(s, "hollow", slice(-n, None)),
            "reply_tokens": _window(s, "reply_tokens", slice(-n, None)),
            "distinct": _window(s, "distinct", slice(-n, None)),
            "draw_weight": s.weights[max(s.weights)] if s.weights else None,
        })
    return sorted(rows, key=lambda r: (r["rank"] is None, r["rank"] or 0, r["cluster_id"]))
