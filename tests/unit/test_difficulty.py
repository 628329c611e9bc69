"""The difficulty filter's choice of tasks: the band, and a seeded share of solved tasks kept as replay."""

from tracegym.training.config import DifficultySection
from tracegym.training.difficulty import choose

MEANS = {"never": 0.0, "half": 0.5, "most": 0.875, **{f"solved{i}": 1.0 for i in range(8)}}


def test_the_band_alone_keeps_only_tasks_whose_reward_varies() -> None:
    assert choose(MEANS, DifficultySection(samples=8), seed=0) == ["half", "most"]
    assert choose(MEANS, DifficultySection(samples=8, max_mean=0.8), seed=0) == ["half"]


def test_keep_solved_adds_that_share_of_the_solved_tasks_drawn_with_the_seed() -> None:
    band = DifficultySection(samples=8, keep_solved=0.25)
    kept = choose(MEANS, band, seed=0)
    replay = [t for t in kept if t.startswith("solved")]
    assert kept[:2] == ["half", "most"] and len(replay) == 2  # 0.25 of 8, in the order of `means`
    assert choose(MEANS, band, seed=0) == kept
    draws = {tuple(choose(MEANS, band, seed=s)) for s in range(10)}
    assert len(draws) > 1  # the seed picks which
    assert choose(MEANS, DifficultySection(samples=8, keep_solved=1.0), seed=3) == list(MEANS)[1:]
