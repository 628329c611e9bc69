"""The run's note about GRPO steps in a row that trained nothing."""

from __future__ import annotations

from tracegym.training.loop import IDLE_STEPS, IdleSteps


def test_a_streak_is_noted_once_when_it_reaches_the_limit_and_a_trained_step_resets_it():
    idle, idle_step, trained_step = IdleSteps(), {"train/optimizer_steps": 0.0}, {"train/optimizer_steps": 1.0}
    notes = [idle.note(s, idle_step) for s in range(1, IDLE_STEPS + 3)]
    assert [i for i, n in enumerate(notes, start=1) if n] == [IDLE_STEPS]
    assert idle.note(IDLE_STEPS + 3, trained_step) is None and idle.streak == 0
    later = [idle.note(s, idle_step) for s in range(IDLE_STEPS + 4, 2 * IDLE_STEPS + 4)]
    assert later[-1] is not None and later[-1].startswith(f"step {2 * IDLE_STEPS + 3}: the last {IDLE_STEPS}")
    assert not any(later[:-1])
