"""Reward components: a weighted eval (or a scorer returning `components`) keeps each part beside the scalar, in
the score, the stored rollout and the eval results, and a comparison can show one part per cluster."""

from __future__ import annotations

from pathlib import Path

from tracegym.episodes.record import Episode
from tracegym.episodes.rollout_table import read_rollouts, write_rollouts
from tracegym.evals.checkpoints.comparison import ModelRef, Scores, compare
from tracegym.evals.scorers import ScorerContext, build_scorer, coerce_result
from tracegym.evals.scorers.config import load_evals
from tracegym.evals.scorers.trajectory import Trajectory

EVALS = """version: 1
evals:
  - {name: says_refund, kind: match, mode: contains, expected: refund}
  - {name: says_sorry, kind: match, mode: contains, expected: sorry}
  - {name: both, kind: weighted, parts: {says_refund: 3, says_sorry: 1}}
"""


def _scorer(tmp_path: Path, name: str):
    (tmp_path / "evals.yaml").write_text(EVALS)
    evals = load_evals(tmp_path / "evals.yaml")
    return build_scorer(evals.get(name), ScorerContext(tmp_path), evals)


def test_a_weighted_eval_keeps_each_part_as_a_component(tmp_path):
    result = _scorer(tmp_path, "both").score(Trajectory([], "We will refund you."))
    assert result.reward == 0.75 and result.components == {"says_refund": 1.0, "says_sorry": 0.0}
    assert result.to_dict()["components"] == result.components
    assert result.weights == {"says_refund": 3.0, "says_sorry": 1.0}  # what grpo.advantages: per_component reads
    single = _scorer(tmp_path, "says_refund").score(Trajectory([], "refund"))
    assert single.components == {} and single.weights == {}


def test_a_scorer_that_returns_parts_gets_them_as_components():
    result = coerce_result({"reward": 0.5, "components": {"format": 1, "content": 0.25}, "note": "x"}, "team")
    assert result.components == {"format": 1.0, "content": 0.25} and result.details == {"note": "x"}
    bad = coerce_result((0.5, {"components": {"format": "yes"}}), "team")
    assert bad.reward is None and "not all finite numbers" in bad.error


def _episode(i: int, reward: float, components: dict[str, float]) -> Episode:
    return Episode(rollout_id=f"r{i}", task_id=f"t{i // 2}", task_set_id="ts", split="heldout", harness="chat",
                   sample_idx=i % 2, seed=i, model="m", sampling={}, messages=[], n_prompt_messages=0, tokens=None,
                   turns=[], stop_reason="model_done", reward=reward, components=components)


def test_components_are_stored_with_rollouts_and_shown_per_cluster(store):
    episodes = [_episode(i, 0.75 * (i % 2), {"says_refund": float(i % 2), "says_sorry": 0.0}) for i in range(4)]
    write_rollouts(store, episodes, "run-1")
    assert [e.components for e in read_rollouts(store, run_id="run-1")] == [e.components for e in episodes]
    assert store.scalar("SELECT count(*) FROM rollouts WHERE components->>'says_refund' = '1.0'") == 2
    store.con.execute(
        """INSERT INTO eval_results (eval_id, checkpoint, checkpoint_id, task_set_id, task_id, cluster_id,
               sample_idx, rollout_id, reward, pass, components)
           SELECT 'e', 'base', 'b', task_set_id, task_id, 'c1', sample_idx, rollout_id, reward, reward >= 1,
                  components FROM rollouts""")
    table = compare(store, "e", ModelRef("base", "b"), [], 2, scores=Scores(component="says_refund"))
    assert table["component"] == "says_refund"
    assert [g["rows"][0]["component"]["value"] for g in table["groups"]] == [0.5, 0.5]
    assert "component" not in compare(store, "e", ModelRef("base", "b"), [], 2)["groups"][0]["rows"][0]


def test_a_components_change_against_the_base_is_paired_by_task(store):
    """The trained model gains the component on every task: its change carries an interval and a p-value, as
    the reward's does, so a benchmark can tell a component learned beyond noise."""
    rows = []
    for model, hit in (("b", 0.0), ("m", 1.0)):
        for task in range(12):
            for sample in range(2):
                rows.append((model, f"t{task}", sample, f"{model}-{task}-{sample}", 0.5 + hit / 2,
                             f'{{"says_refund": {hit}}}'))
    store.con.executemany(
        """INSERT INTO eval_results (eval_id, checkpoint, checkpoint_id, task_set_id, task_id, cluster_id,
               sample_idx, rollout_id, reward, pass, components)
           VALUES ('e', ?, ?, 'ts', ?, 'c1', ?, ?, ?, false, ?)""",
        [(m, m, t, s, r, w, c) for m, t, s, r, w, c in rows])
    table = compare(store, "e", ModelRef("base", "b"), [ModelRef("m", "m")], 2, scores=Scores(component="says_refund"))
    base, trained = table["groups"][0]["rows"]
    assert base["component"]["change"] is None and base["component"]["value"] == 0.0
    change = trained["component"]["change"]
    assert trained["component"]["value"] == 1.0 and change["diff"] == 1.0 and change["beyond_noise"]
    assert change["p_value"] < 0.05 and change["low"] > 0


def test_a_weighted_evals_parts_and_weights_reach_the_trainer_on_the_episode(tmp_path):
    """The scorer's result lands on the episode (as the episode runner scores it), where `grpo.advantages:
    per_component` reads each part with its weight."""
    import asyncio

    from tracegym.harnesses.runner import score_trajectory
    from tracegym.training.grpo.trainer import reward_parts

    episode = _episode(0, 0.0, {})
    asyncio.run(score_trajectory(episode, Trajectory([], "So sorry."), _scorer(tmp_path, "both")))
    assert episode.reward == 0.25 and episode.component_weights == {"says_refund": 3.0, "says_sorry": 1.0}
    assert reward_parts(episode) == {"says_refund": (0.0, 3.0), "says_sorry": (1.0, 1.0)}
    asyncio.run(score_trajectory(episode, Trajectory([], "refund"), _scorer(tmp_path, "says_refund")))
    assert episode.component_weights == {} and reward_parts(episode) == {}
