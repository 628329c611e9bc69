"""A run's charts as PNG: matplotlib figures (Agg, no display), each with a title and axes labelled with units.

One chart per question a person asks of a run: is the reward going up, and for which failure clusters (and
where a curriculum sent the groups), is the policy earning it with hollow replies (per cluster, with the run's
warnings of possible reward hacking), did held-out failures improve per checkpoint, do sampler and trainer
disagree (per pool), how much do the importance-sampling corrections cut, is the gradient sane, how stale
are rollouts, what does weight sync cost against dense.
A chart whose metrics this run did not record is not drawn; `not_recorded` says which and why.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from tracegym.report.cluster_chart import ROLLING_STEPS, cluster_series, rolling_mean, short_signature
from tracegym.report.rundata import RunData

Series = dict[int, float | None]
STEP = "optimizer step (count)"
REWARD_RANGE = (-0.02, 1.02)


@dataclass(frozen=True)
class Chart:
    name: str
    """File stem, e.g. 'reward'."""
    title: str
    figure: Figure


def _series(data: RunData, key: str) -> tuple[list[int], list[float]]:
    points = sorted((s, v) for s, v in data.metrics.get(key, {}).items() if v is not None)
    return [s for s, _ in points], [v for _, v in points]


def _line(ax: Axes, data: RunData, key: str, label: str | None = None, scale: float = 1.0, **style: object) -> bool:
    """Draw one metric; False when the run recorded none of it."""
    steps, values = _series(data, key)
    if not steps:
        return False
    ax.plot(steps, [v * scale for v in values], marker="o", markersize=3, label=label or key, **style)
    return True


def _figure(panels: int = 1) -> tuple[Figure, list[Axes]]:
    fig = Figure(figsize=(6.4 * panels, 3.6), dpi=100, layout="constrained")
    axes = fig.subplots(1, panels, squeeze=False)[0]
    return fig, list(axes)


def _lines(ax: Axes, data: RunData, keys: list[tuple[str, str | None]], scale: float = 1.0) -> bool:
    """Draw every metric of `keys` (no short-circuit: each recorded one gets its line); whether any was drawn."""
    drawn = [_line(ax, data, key, label, scale) for key, label in keys]
    return any(drawn)


def _finish(ax: Axes, title: str, ylabel: str, xlabel: str = STEP, legend: bool = True,
            ylim: tuple[float | None, float | None] = (None, None)) -> None:
    """Title, labels with units, whole-number steps on x; `ylim` pins a bound (0 for counts and fractions)."""
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.ticklabel_format(axis="y", useOffset=False)
    bottom, top = ylim
    if bottom is not None:
        ax.set_ylim(bottom=bottom)
    if top is not None:
        ax.set_ylim(top=top)
    ax.grid(alpha=0.3)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")


def reward_chart(data: RunData) -> Figure | None:
    fig, (ax,) = _figure()
    # With dynamic sampling the batch holds only groups with a signal; the mean over all sampled is the curve.
    if not _lines(ax, data, [("reward/mean", "GRPO batch mean"),
                             ("grpo/sampled_reward_mean", "all sampled (dynamic sampling)")]):
        return None
    _, idle = data.grpo_steps()
    if idle:
        rewards = data.metrics.get("reward/mean", {})
        ax.plot(idle, [rewards.get(s) or 0.0 for s in idle], "x", color="tab:red", markersize=8,
                label="trained nothing (equal rewards in every group)")
    _finish(ax, "Training reward per GRPO step", "mean reward (0-1)", ylim=REWARD_RANGE)
    return fig


def cluster_chart(data: RunData) -> Figure | None:
    """Training reward per failure cluster: each step faint, a rolling mean as the line; beside it, with a
    curriculum, the chance each step gave a group to draw each cluster (same colours)."""
    series = [s for s in cluster_series(data.metrics) if s.steps or s.weights]
    if not any(s.steps for s in series):
        return None
    curriculum = any(s.weights for s in series)
    panels = 2 if curriculum else 1
    rows = -(-len(series) // (2 * panels))  # legend rows below the axes
    fig = Figure(figsize=(6.4 * panels, 3.6 + 0.2 * rows), dpi=100, layout="constrained")
    axes = list(fig.subplots(1, panels, squeeze=False)[0])
    colours = colormaps["tab10" if len(series) <= 10 else "tab20"]
    for i, s in enumerate(series):
        colour = colours(i % colours.N)
        # Signatures are trace text: a '$' would start matplotlib's math mode.
        label = short_signature(s.cluster, data.clusters.get(s.cluster)).replace("$", r"\$")
        axes[0].plot(s.steps, s.rewards, "o", markersize=2.5, alpha=0.3, color=colour)
        axes[0].plot(s.steps, rolling_mean(s), "-", color=colour, label=label)
        if curriculum:
            axes[1].plot(list(s.weights), list(s.weights.values()), "-", color=colour)
    _finish(axes[0], f"Training reward per failure cluster (rolling mean, {ROLLING_STEPS} steps)", "mean reward (0-1)",
            legend=False, ylim=REWARD_RANGE)
    if curriculum:
        _finish(axes[1], "Curriculum: chance a group draws each cluster", "probability (0-1)", legend=False,
                ylim=(0, None))
    fig.legend(loc="outside lower center", ncols=2 * panels, fontsize="x-small", frameon=False)
    return fig


REPLY_PANELS = (("hollow", "Hollow replies per failure cluster", "share of episodes flagged (0-1)"),
                ("reply_tokens", "Reply length per failure cluster", "model tokens per episode (count)"),
                ("distinct", "Distinct replies per group", "distinct / group size (0-1)"))


def replies_chart(data: RunData) -> Figure | None:
    """What the policy wrote, per failure cluster (rolling means, colours as in the cluster chart): the share of
    episodes a hollow-reply detector flagged, with a red ✕ where the run warned of possible reward hacking; model
    tokens per episode; distinct replies per group."""
    series = [s for s in cluster_series(data.metrics) if s.steps or s.weights]
    if not any("hollow" in s.replies for s in series):
        return None
    rows = -(-len(series) // 6)
    fig = Figure(figsize=(6.4 * 3, 3.6 + 0.2 * rows), dpi=100, layout="constrained")
    axes = list(fig.subplots(1, 3, squeeze=False)[0])
    colours = colormaps["tab10" if len(series) <= 10 else "tab20"]
    for i, s in enumerate(series):
        colour = colours(i % colours.N)
        label = short_signature(s.cluster, data.clusters.get(s.cluster)).replace("$", r"\$")
        for ax, (name, _, _) in zip(axes, REPLY_PANELS, strict=True):
            if name in s.replies:
                ax.plot(s.steps, rolling_mean(s, figure=name), "-", color=colour, label=label if name == "hollow"
                        else None)
    warned = [(w["step"], w["hollow_after"]) for w in data.hack_warnings]
    if warned:
        axes[0].plot(*zip(*warned, strict=True), "x", color="tab:red", markersize=9, label="possible reward hacking")
    for ax, (name, title, ylabel) in zip(axes, REPLY_PANELS, strict=True):
        _finish(ax, f"{title} (rolling mean, {ROLLING_STEPS} steps)", ylabel, legend=False,
                ylim=REWARD_RANGE if name != "reply_tokens" else (0, None))
    fig.legend(loc="outside lower center", ncols=6, fontsize="x-small", frameon=False)
    return fig


def warmup_chart(data: RunData) -> Figure | None:
    fig, (ax,) = _figure()
    if not _line(ax, data, "warmup/loss", "target-token loss"):
        return None
    _finish(ax, "Warm start: supervised loss", "cross-entropy (nats/token)")
    return fig


def eval_chart(data: RunData) -> Figure | None:
    if not data.eval_points:
        return None
    fig, (ax,) = _figure()
    points = data.eval_points
    steps = [p["step"] for p in points]
    values = [p["value"] for p in points]
    errors = [[p["value"] - p["low"] for p in points], [p["high"] - p["value"] for p in points]]
    ax.errorbar(steps, values, yerr=errors, fmt="o-", capsize=5, label="mean over held-out tasks, 95% CI")
    for p in points:
        ax.annotate(p["label"], (p["step"], p["value"]), textcoords="offset points", xytext=(4, 6), fontsize="x-small")
    _finish(ax, "Held-out eval reward per checkpoint (step 0 = base)", "mean reward (0-1)", "checkpoint step (count)",
            ylim=REWARD_RANGE)
    return fig


def mismatch_chart(data: RunData) -> Figure | None:
    keys = sorted(k for k in data.metrics if k.startswith("mismatch/"))
    fig, (ax,) = _figure()
    if not _lines(ax, data, [(k, None) for k in keys]):
        return None
    _finish(ax, "Trainer/sampler mismatch per pool", "KL(mu || pi) estimate (nats/token)")
    return fig


def importance_chart(data: RunData) -> Figure | None:
    fig, (ratio, masked) = _figure(2)
    drew_ratio = _lines(ratio, data, [(f"is_ratio/{s}", s) for s in ("min", "mean", "max")])
    drew_mask = _lines(masked, data, [("mis/masked_frac", "MIS masked"), ("tis/clipped_frac", "TIS clipped")])
    if not (drew_ratio or drew_mask):
        return None
    _finish(ratio, "Importance ratio pi/mu over trained tokens", "ratio (pi/mu, unitless)")
    _finish(masked, "Tokens masked (MIS) or clipped (TIS)", "fraction of tokens (0-1)", ylim=(0, None))
    return fig


def grad_norm_chart(data: RunData) -> Figure | None:
    fig, (ax,) = _figure()
    if not _lines(ax, data, [("warmup/grad_norm", "warm start"), ("train/grad_norm", "GRPO")]):
        return None
    _finish(ax, "Gradient norm before clipping", "global L2 norm (unitless)", ylim=(0, None))
    return fig


def staleness_chart(data: RunData) -> Figure | None:
    fig, (lag, dropped) = _figure(2)
    drew_lag = _lines(lag, data, [(f"staleness/{s}", s) for s in ("mean", "max")])
    drew_drop = _line(dropped, data, "staleness/dropped_groups", "dropped as too stale")
    if not (drew_lag or drew_drop):
        return None
    _finish(lag, "Rollout staleness at training time", "lag (policy versions)", ylim=(0, None))
    _finish(dropped, "Groups dropped for staleness", "groups per step (count)", ylim=(0, None))
    return fig


def sync_chart(data: RunData) -> Figure | None:
    keys = sorted(k for k in data.metrics if k.startswith("sync/") and "bytes" in k)
    fig, (ax,) = _figure()
    if not _lines(ax, data, [(k, None) for k in keys], scale=1e-6):
        return None
    _finish(ax, "Bytes per weight sync vs dense", "size per sync (MB)", ylim=(0, None))
    return fig


CHARTS: dict[str, tuple[str, Callable[[RunData], Figure | None], str]] = {
    "reward": ("Training reward", reward_chart, "reward/mean"),
    "clusters": ("Training reward per failure cluster", cluster_chart, "cluster/*/reward"),
    "replies": ("Hollow replies, reply length and diversity per failure cluster", replies_chart, "cluster/*/hollow"),
    "eval": ("Held-out eval reward per checkpoint", eval_chart, "an evaluation (`tracegym eval`)"),
    "warmup": ("Warm-start loss", warmup_chart, "warmup/loss"),
    "mismatch": ("Per-pool mismatch", mismatch_chart, "mismatch/*"),
    "importance": ("IS ratio and masked fraction", importance_chart, "is_ratio/*, mis/masked_frac"),
    "grad_norm": ("Gradient norm", grad_norm_chart, "train/grad_norm"),
    "staleness": ("Staleness", staleness_chart, "staleness/*"),
    "sync": ("Weight-sync bytes vs dense", sync_chart, "sync/*bytes*"),
}


def missing_labels(fig: Figure) -> list[str]:
    """What a figure lacks: per axes a title, an x label and a y label ending in a unit in parentheses."""
    problems = []
    for i, ax in enumerate(fig.axes):
        if not ax.get_title():
            problems.append(f"axes {i}: no title")
        for name, text in (("x", ax.get_xlabel()), ("y", ax.get_ylabel())):
            if not text or not text.rstrip().endswith(")") or "(" not in text:
                problems.append(f"axes {i}: {name} label {text!r} names no unit in parentheses")
    return problems


def build_charts(data: RunData) -> tuple[list[Chart], list[str]]:
    """The charts this run has data for, and a line for each one it has not."""
    charts, missing = [], []
    for name, (title, build, needs) in CHARTS.items():
        fig = build(data)
        if fig is None:
            missing.append(f"{title}: not recorded by this run (needs {needs})")
            continue
        problems = missing_labels(fig)
        if problems:
            raise AssertionError(f"chart {name} is not labelled: {'; '.join(problems)}")
        charts.append(Chart(name, title, fig))
    return charts, missing


def png_bytes(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def write_pngs(charts: list[Chart], folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for chart in charts:
        path = folder / f"{chart.name}.png"
        path.write_bytes(png_bytes(chart.figure))
        paths.append(path)
    return paths
