"""The training run's progress display: a line per step when piped, a live panel on a terminal."""

from __future__ import annotations

import io

from rich.console import Console

from tracegym.training.display import TRAINED_NOTHING, RunDisplay

IDLE = {"reward/mean": 1.0, "grpo/skipped_groups": 4.0, "train/optimizer_steps": 0.0}
TRAINED = {"reward/mean": 0.5, "grpo/skipped_groups": 1.0, "train/optimizer_steps": 1.0}


def test_a_grpo_step_that_trained_nothing_says_so_in_its_line():
    shown = io.StringIO()
    with RunDisplay(Console(file=shown, width=200), "run-1", total_steps=4, warmup_steps=1) as display:
        display.update(1, {"warmup/loss": 2.0})
        display.update(2, TRAINED)
        display.update(3, IDLE)
    lines = shown.getvalue().splitlines()
    assert [TRAINED_NOTHING in line for line in lines] == [False, False, True]


def test_the_live_panel_shows_the_time_left_and_an_idle_step():
    shown = io.StringIO()
    console = Console(file=shown, force_terminal=True, width=200)
    with RunDisplay(console, "run-1", total_steps=10, warmup_steps=0) as display:
        display.update(1, IDLE)
    text = shown.getvalue()
    assert "step 1/10 (GRPO)" in text and " left" in text and TRAINED_NOTHING in text


HOLLOW = {"reward/mean": 0.9, "train/optimizer_steps": 1.0, "replies/hollow": 0.5,
          "cluster/9ad607e04a/reward": 0.9, "cluster/9ad607e04a/hollow": 0.75, "cluster/9ad607e04a/reply_tokens": 12.0,
          "cluster/d0d6ed6684/reward": 0.4, "cluster/d0d6ed6684/hollow": 0.0, "cluster/d0d6ed6684/distinct": 1.0}


def test_a_step_the_hack_monitor_warned_at_says_so_in_its_line():
    shown = io.StringIO()
    with RunDisplay(Console(file=shown, width=300), "run-1", total_steps=3, warmup_steps=0) as display:
        display.update(1, TRAINED)
        display.update(2, HOLLOW, hacking=["9ad607e04a"])
    first, second = shown.getvalue().splitlines()
    assert "hacking" not in first and "hollow=0.5" in second
    assert second.endswith("(possible reward hacking in 9ad607e04a)")


def test_the_live_panel_shows_each_clusters_figures_most_hollow_first_and_the_warning():
    shown = io.StringIO()
    console = Console(file=shown, force_terminal=True, width=200)
    with RunDisplay(console, "run-1", total_steps=10, warmup_steps=0) as display:
        display.update(1, HOLLOW, hacking=["9ad607e04a"])
    text = shown.getvalue()
    a, b = text.rindex("cluster 9ad607e04a"), text.rindex("cluster d0d6ed6684")
    assert a < b and "hollow=0.75" in text and "reply tok=12" in text
    assert "possible reward hacking in 9ad607e04a" in text
