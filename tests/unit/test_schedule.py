"""The GRPO phase's learning-rate schedule, against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from tracegym.errors import ConfigError
from tracegym.training.config import OptimSection, parse_train_config
from tracegym.training.schedule import learning_rate


def _rates(total: int, **optim: object) -> list[float]:
    section = OptimSection(lr=1.0, **optim)
    return [learning_rate(step, total, section) for step in range(total)]


def test_constant_is_the_default_and_ignores_the_step() -> None:
    assert _rates(5) == [1.0] * 5


def test_warmup_ramps_linearly_to_the_full_rate_at_its_last_step() -> None:
    assert _rates(6, lr_warmup_steps=4) == [0.25, 0.5, 0.75, 1.0, 1.0, 1.0]


def test_linear_decay_after_warmup_ends_one_step_short_of_its_floor() -> None:
    # Warm-up steps 0-1; the decay spans steps 2..9 (8 steps): 1 - k/8 for k = 0..7, towards a floor of 0.2.
    rates = _rates(10, lr_scheduler="linear", lr_warmup_steps=2, min_lr_ratio=0.2)
    assert rates[:2] == [0.5, 1.0]
    assert rates[2:] == pytest.approx([0.2 + 0.8 * (1 - k / 8) for k in range(8)])
    assert learning_rate(10, 10, OptimSection(lr=1.0, lr_scheduler="linear", min_lr_ratio=0.2)) == pytest.approx(0.2)


def test_cosine_decay_is_half_a_cosine() -> None:
    rates = _rates(4, lr_scheduler="cosine")
    assert rates == pytest.approx([1.0, (1 + math.cos(math.pi / 4)) / 2, 0.5, (1 + math.cos(3 * math.pi / 4)) / 2])
    assert all(a >= b for a, b in zip(rates, rates[1:], strict=False))


def test_schedules_scale_with_the_configured_rate() -> None:
    section = OptimSection(lr=3e-6, lr_scheduler="cosine", lr_warmup_steps=1)
    assert learning_rate(0, 8, section) == pytest.approx(3e-6)
    assert learning_rate(4, 8, section) == pytest.approx(3e-6 * (1 + math.cos(math.pi * 3 / 7)) / 2)


def test_bad_schedule_settings_are_config_errors(tmp_path) -> None:
    base = {"run_dir": str(tmp_path / "run"), "tasks": {"task_set": str(tmp_path)}}
    with pytest.raises(ConfigError, match="lr_scheduler"):
        parse_train_config({**base, "optim": {"lr_scheduler": "exponential"}}, tmp_path / "t.yaml")
    with pytest.raises(ConfigError, match="min_lr_ratio"):
        parse_train_config({**base, "optim": {"min_lr_ratio": 1.5}}, tmp_path / "t.yaml")
    with pytest.raises(ConfigError, match="at most batch_groups"):
        parse_train_config({**base, "grpo": {"batch_groups": 2, "optimizer_steps": 3}}, tmp_path / "t.yaml")
