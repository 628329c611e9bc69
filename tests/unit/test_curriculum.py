"""The curriculum over failure clusters (`tasks.sampling: clusters`): weights, the floor, draws, determinism, and
its rebuild from the per-cluster metrics in the store."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tracegym.errors import NotFoundError
from tracegym.samplers.rollouts import TaskOrder
from tracegym.training.cluster_reward import cluster_metrics
from tracegym.training.config import CurriculumSection, parse_train_config
from tracegym.training.curriculum import (
    ClusterCurriculum,
    cluster_weight,
    draw_probabilities,
    stored_history,
    task_order,
)
from tracegym.training.metrics import RunRecorder

TASKS = ["a:1", "a:2", "a:3", "b:1", "b:2", "c:1"]
DRAWS = 4000


def _curriculum(seed: int = 0, **settings: object) -> ClusterCurriculum[str]:
    return ClusterCurriculum(TASKS, lambda t: t.split(":")[0], seed, CurriculumSection(**settings))


def _shares(curriculum: ClusterCurriculum[str], start: int = 0) -> dict[str, float]:
    counts = Counter(curriculum.task_at(i).split(":")[0] for i in range(start, start + DRAWS))
    return {c: counts[c] / DRAWS for c in curriculum.clusters}


def test_a_cluster_with_a_low_reward_is_drawn_more_often() -> None:
    curriculum = _curriculum(floor=0.2)
    curriculum.observe({"a": 0.1, "b": 0.9, "c": 0.5})
    expected = curriculum.probabilities()
    assert expected["a"] > expected["c"] > expected["b"]
    assert sum(expected.values()) == pytest.approx(1.0)
    shares = _shares(curriculum)
    assert shares["a"] > shares["c"] > shares["b"]
    assert all(shares[c] == pytest.approx(expected[c], abs=0.03) for c in expected)
    # The weights: 1 - reward, then a fifth of the draws spread evenly.
    assert expected["a"] == pytest.approx(0.2 / 3 + 0.8 * 0.9 / 1.5)


def test_the_floor_keeps_a_solved_cluster_alive() -> None:
    kept, starved = _curriculum(floor=0.3), _curriculum(floor=0.0)
    for curriculum in (kept, starved):
        curriculum.observe({"a": 0.0, "b": 1.0, "c": 0.0})
    assert kept.probabilities()["b"] == pytest.approx(0.1)
    assert _shares(kept)["b"] == pytest.approx(0.1, abs=0.02)
    assert starved.probabilities()["b"] == 0.0 and _shares(starved)["b"] == 0.0


def test_clusters_never_sampled_get_the_highest_weight() -> None:
    curriculum = _curriculum()
    assert curriculum.probabilities() == pytest.approx({"a": 1 / 3, "b": 1 / 3, "c": 1 / 3})
    curriculum.observe({"a": 0.4})
    p = curriculum.probabilities()
    assert p["b"] == p["c"] > p["a"]
    learn = _curriculum(weighting="learnability")
    learn.observe({"a": 0.5, "b": 0.0})
    q = learn.probabilities()
    assert q["a"] == pytest.approx(q["c"]) and q["a"] > q["b"]


def test_learnability_favours_clusters_solved_some_of_the_time() -> None:
    assert cluster_weight(0.5, "learnability") == 1.0
    assert cluster_weight(0.0, "learnability") == cluster_weight(1.0, "learnability") == 0.0
    assert cluster_weight(0.0, "failure") == 1.0 and cluster_weight(1.0, "failure") == 0.0
    assert cluster_weight(1.7, "failure") == 0.0 and cluster_weight(-2.0, "failure") == 1.0  # clamped to [0, 1]
    assert draw_probabilities([1.0, 1.0], "failure", 0.0) == [0.5, 0.5], "all solved: uniform"


def test_the_moving_average_weighs_the_newest_step_by_ema() -> None:
    curriculum = _curriculum(ema=0.25)
    curriculum.observe({"a": 0.0})
    curriculum.observe({"a": 1.0, "b": 0.5})
    curriculum.observe({"b": 1.0})
    assert curriculum.means == pytest.approx({"a": 0.25, "b": 0.625})
    curriculum.observe({"unknown": 1.0})  # a cluster the curriculum does not draw from changes nothing
    assert set(curriculum.means) == {"a", "b"}


def test_draws_are_a_function_of_the_seed_the_index_and_the_history() -> None:
    history = {3: {"a": 0.0, "b": 1.0}, 4: {"a": 0.5}, 5: {}, 6: {"c": 0.25}}
    stepwise, replayed, other_seed = _curriculum(seed=7), _curriculum(seed=7), _curriculum(seed=8)
    for step in sorted(history):
        stepwise.observe(history[step])
        other_seed.observe(history[step])
    replayed.replay(history)
    draws = [stepwise.task_at(i) for i in range(200)]
    assert draws == [replayed.task_at(i) for i in range(200)]
    assert draws == [stepwise.task_at(i) for i in range(200)], "drawing does not change what is drawn next"
    assert draws != [other_seed.task_at(i) for i in range(200)]
    assert draws != [_curriculum(seed=7).task_at(i) for i in range(200)], "the history changes the draws"
    assert set(draws) == set(TASKS), "every task of a cluster is drawn"


def test_uniform_sampling_keeps_the_seeded_task_order(tmp_path: Path) -> None:
    base = {"run_dir": "r", "seed": 3, "tasks": {"task_set": "t"}}
    uniform = task_order(parse_train_config(base, tmp_path / "a.yaml"), TASKS)  # type: ignore[arg-type]
    assert isinstance(uniform, TaskOrder)
    assert [uniform.task_at(i) for i in range(12)] == [TaskOrder(TASKS, 3).task_at(i) for i in range(12)]
    clusters = parse_train_config({**base, "tasks": {"task_set": "t", "sampling": "clusters",
                                                     "curriculum": {"floor": 0.5}}}, tmp_path / "b.yaml")
    assert clusters.tasks.curriculum is not None and clusters.tasks.curriculum.floor == 0.5


def test_a_resume_rebuilds_the_history_from_the_store_after_forgetting_later_steps(store_path: Path) -> None:
    recorder = RunRecorder(store_path, "run")
    rewards = {3: {"a": (0.0, 8)}, 4: {"a": (0.5, 4), "b": (1.0, 4)}, 5: {}, 6: {"b": (0.25, 8)}}
    curriculum = _curriculum()
    for step, by_cluster in rewards.items():
        recorder.log(step, {**cluster_metrics(by_cluster), **curriculum.metrics(), "reward/mean": 0.5})
        curriculum.observe({c: mean for c, (mean, _) in by_cluster.items()})
    recorder.forget_after(5)  # killed after the step-5 checkpoint: steps after it run again

    from tracegym.store import open_store

    with open_store(store_path) as store:
        history = stored_history(store, "run", range(3, 6))
        assert history == {3: {"a": 0.0}, 4: {"a": 0.5, "b": 1.0}, 5: {}}
        with pytest.raises(NotFoundError, match="lacks those of 1 step"):
            stored_history(store, "run", range(3, 7))
        assert store.scalar("SELECT count(*) FROM metrics WHERE run_id = 'run' AND step = 6") == 0
    resumed = _curriculum()
    resumed.replay(history)
    uninterrupted = _curriculum()
    uninterrupted.replay({s: {c: m for c, (m, _) in r.items()} for s, r in rewards.items() if s <= 5})
    assert resumed.probabilities() == uninterrupted.probabilities()


def test_curriculum_settings_need_cluster_sampling(tmp_path: Path) -> None:
    from tracegym.errors import ConfigError
    from tracegym.training.config import load_train_config

    path = tmp_path / "train.yaml"
    path.write_text("run_dir: r\ntasks:\n  task_set: t\n  curriculum:\n    floor: 0.5\n")
    with pytest.raises(ConfigError, match=r"train.yaml:2: tasks: tasks.curriculum .* Fix: set tasks.sampling: "):
        load_train_config(path)
    path.write_text("run_dir: r\ntasks:\n  task_set: t\n  sampling: clusters\n  curriculum:\n    flor: 0.5\n")
    with pytest.raises(ConfigError, match="tasks.curriculum.flor'. Did you mean 'floor'"):
        load_train_config(path)
    config = parse_train_config({"run_dir": "r", "tasks": {"task_set": "t", "sampling": "clusters"}}, path)
    resolved = config.resolved()
    assert resolved["tasks"]["curriculum"] == {"weighting": "failure", "ema": 0.3, "floor": 0.2}
    assert parse_train_config(resolved, path) == config, "the resolved config names the defaults and reloads"
