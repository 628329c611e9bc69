"""Progress of a training run on stderr: a rich live panel on a terminal, one line per step otherwise."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

from tracegym.output import literal

SHOWN = (
    ("reward/mean", "reward"), ("advantage/std", "adv std"), ("train/loss", "loss"), ("train/grad_norm", "grad"),
    ("optim/lr", "lr"), ("is_ratio/mean", "ratio"), ("mis/masked_frac", "masked"), ("grpo/skipped_groups", "skipped"),
    ("grpo/set_aside_groups", "set aside"),
    ("warmup/loss", "sft loss"), ("warmup/token_accuracy", "sft acc"), ("time/wait_s", "wait s"),
    ("time/train_s", "train s"), ("sampler/tokens_per_s", "sample tok/s"),
    ("source/sampler_tokens_per_s", "sampler tok/s"), ("train/tokens_per_s", "train tok/s"),
    ("staleness/mean", "staleness"), ("source/samplers_alive", "samplers"), ("replies/hollow", "hollow"),
    ("replies/tokens", "reply tok"), ("replies/distinct", "distinct"),
)
CLUSTER_ROWS = 5
"""Clusters the live panel shows (those of the last step with the most hollow replies)."""


class RunDisplay:
    """`update(step, metrics)` after each step; use as a context manager."""

    def __init__(self, console: Console, run_id: str, total_steps: int, warmup_steps: int) -> None:
        self.console = console
        self.run_id = run_id
        self.total = total_steps
        self.warmup = warmup_steps
        self.started = time.perf_counter()
        self.last: dict[str, float] = {}
        self.step = 0
        self.events: list[str] = []
        self.hacking: list[str] = []
        self._live: Live | None = None

    def __enter__(self) -> RunDisplay:
        if self.console.is_terminal:
            # get_renderable: re-rendered at every refresh, so the clock and the estimate move between steps.
            self._live = Live(console=self.console, refresh_per_second=2, transient=False,
                              get_renderable=self._render)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)

    def note(self, message: str) -> None:
        """An event worth seeing (a sampler died, a checkpoint was written)."""
        self.events = [*self.events[-4:], message]
        if self._live is None:
            self.console.print(literal(message), highlight=False, soft_wrap=True)
        else:
            self._live.update(self._render())

    def update(self, step: int, metrics: Mapping[str, float], hacking: Sequence[str] = ()) -> None:
        """One step's figures; `hacking`: the clusters the hack monitor warned of at this step."""
        self.step = step
        # The per-cluster figures are the last step's alone: a cluster not sampled in it has none to show.
        self.last = {k: v for k, v in self.last.items() if not k.startswith("cluster/")}
        self.last.update(metrics)
        self.hacking = list(hacking)
        if self._live is not None:
            self._live.update(self._render())
            return
        phase = "warmup" if step <= self.warmup else "grpo"
        shown = " ".join(f"{label}={_fmt(metrics[key])}" for key, label in SHOWN if key in metrics)
        idle = f" ({TRAINED_NOTHING})" if trained_nothing(step, self.warmup, metrics) else ""
        hacks = "".join(f" (possible reward hacking in {literal(c)})" for c in self.hacking)
        self.console.print(f"step {step}/{self.total} \\[{phase}] {shown}{idle}{hacks}", highlight=False,
                           soft_wrap=True)

    def _render(self) -> Table:
        elapsed = time.perf_counter() - self.started
        phase = "warm start" if self.step < self.warmup else "GRPO"
        left = f", ~{_clock(elapsed / self.step * (self.total - self.step))} left" if self.step else ""
        table = Table(title=f"run {self.run_id}: step {self.step}/{self.total} ({phase}), {_clock(elapsed)}{left}",
                      show_header=False, title_justify="left")
        table.add_column("metric")
        table.add_column("value", justify="right")
        for key, label in SHOWN:
            if key in self.last:
                table.add_row(label, _fmt(self.last[key]))
        if trained_nothing(self.step, self.warmup, self.last):
            table.add_row("[yellow]this step[/yellow]", f"[yellow]{TRAINED_NOTHING}[/yellow]")
        for cluster, text in cluster_rows(self.last):
            table.add_row(f"cluster {literal(cluster)}", text)
        for cluster in self.hacking:
            table.add_row("[red]this step[/red]", f"[red]possible reward hacking in {literal(cluster)}[/red]")
        for event in self.events:
            table.add_row("[dim]event[/dim]", literal(event))
        return table


TRAINED_NOTHING = "trained nothing: every group's rewards were equal"


def trained_nothing(step: int, warmup_steps: int, metrics: Mapping[str, float]) -> bool:
    """A GRPO step that took no optimizer step: no group had a reward spread, so no advantage to learn from."""
    return step > warmup_steps and metrics.get("train/optimizer_steps", 1.0) == 0


def cluster_rows(metrics: Mapping[str, float], limit: int = CLUSTER_ROWS) -> list[tuple[str, str]]:
    """(cluster, its figures as text) for the clusters of `metrics` with a hollow share, most hollow first."""
    hollow = {k.split("/")[1]: v for k, v in metrics.items() if k.startswith("cluster/") and k.endswith("/hollow")}
    rows = []
    for cluster in sorted(hollow, key=lambda c: (-hollow[c], c))[:limit]:
        figures = [("reward", "reward"), ("hollow", "hollow"), ("reply_tokens", "reply tok"), ("distinct", "distinct")]
        rows.append((cluster, " ".join(f"{label}={_fmt(metrics[f'cluster/{cluster}/{key}'])}" for key, label in figures
                                       if f"cluster/{cluster}/{key}" in metrics)))
    return rows


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}" if minutes >= 60 else f"{minutes}:{secs:02d}"
