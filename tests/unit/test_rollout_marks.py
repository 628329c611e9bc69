"""What the store says the trainer did with each rollout: `train_step` and `train_use` (migration m070)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import torch

from tracegym.episodes.record import Episode, TokenRecord, TurnRecord
from tracegym.episodes.rollout_table import read_rollouts, write_rollouts
from tracegym.samplers.rollouts import RolloutBatch, RolloutGroup
from tracegym.store import open_store
from tracegym.store.migrations import MIGRATIONS
from tracegym.training.metrics import RunRecorder


def _episode(task_id: str, k: int, reward: float, version: int = 0) -> Episode:
    tokens = TokenRecord(torch.tensor([5, 6, 7, 8]), torch.tensor([False, False, True, True]),
                         torch.tensor([float("nan"), float("nan"), -0.5, -1.0]), None)
    turn = TurnRecord("stop", "s", version, k, 0.1, start=2, end=4)
    return Episode(rollout_id=f"{task_id}-{k}-{version}", task_id=task_id, task_set_id="ts", split="train",
                   harness="chat", sample_idx=k, seed=k, model="m", sampling={}, messages=[], n_prompt_messages=0,
                   tokens=tokens, turns=[turn], stop_reason="model_done", reward=reward)


def _group(task_id: str, rewards: list[float], version: int = 0) -> RolloutGroup:
    return RolloutGroup(task_id, [_episode(task_id, k, r, version) for k, r in enumerate(rewards)])


def test_a_batch_marks_every_episode_with_its_step_and_use() -> None:
    batch = RolloutBatch([_group("a", [0.0, 1.0]), _group("b", [1.0, 1.0])], consumed=4,
                         set_aside=[_group("c", [0.0, 0.0])], stale=[_group("d", [0.0, 1.0])])
    stored = batch.stored_episodes(7)
    assert {(e.task_id, e.train_use) for e in stored} == {
        ("a", "trained"), ("b", "no_signal"), ("c", "set_aside"), ("d", "stale")}
    assert len(stored) == 8 and {e.train_step for e in stored} == {7}
    assert [e.task_id for e in batch.episodes] == ["a", "a", "b", "b"], "only the batch's groups go to the trainer"


def test_marks_round_trip_through_the_store(store) -> None:
    stored = RolloutBatch([_group("a", [0.0, 1.0])], stale=[_group("d", [1.0, 1.0])]).stored_episodes(3)
    write_rollouts(store, stored, "run")
    back = {e.rollout_id: (e.train_step, e.train_use) for e in read_rollouts(store, run_id="run")}
    assert back == {e.rollout_id: (3, e.train_use) for e in stored}
    write_rollouts(store, [_episode("x", 0, 1.0)], "eval")
    assert [(e.train_step, e.train_use) for e in read_rollouts(store, run_id="eval")] == [(None, None)]


def test_a_store_from_before_the_marks_keeps_its_rollouts_unmarked(store_path: Path) -> None:
    con = duckdb.connect(str(store_path))
    old = [fn for fn in MIGRATIONS if fn.__name__ != "m070_rollout_train_use"]
    for fn in old:
        fn(con)
    con.execute("CREATE TABLE _migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP DEFAULT current_timestamp)")
    con.executemany("INSERT INTO _migrations (name) VALUES (?)", [[fn.__name__] for fn in old])
    con.execute("INSERT INTO rollouts (rollout_id, run_id, task_id, reward) VALUES ('r1', 'run', 't', 1.0)")
    con.close()
    with open_store(store_path) as st:
        assert st.query("SELECT rollout_id, train_step, train_use FROM rollouts") == [
            {"rollout_id": "r1", "train_step": None, "train_use": None}]
        assert "sampled_rollouts" in [r["column_name"] for r in st.query(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'lineage'")]


def test_resume_forgets_the_rollouts_of_the_steps_that_run_again(store_path: Path, tmp_path: Path) -> None:
    """By the step that took them: a stale group taken at step 5 was sampled by version 2 weights, yet step 5
    runs again after a resume from step 4. Rows without a step (older stores) go by their weights' version."""
    recorder = RunRecorder(store_path, "run")
    recorder.start({}, tmp_path, "m", "ts")
    for step, batch in ((4, RolloutBatch([_group("a", [0.0, 1.0], version=3)])),
                        (5, RolloutBatch([_group("b", [0.0, 1.0], version=4)], stale=[_group("c", [1.0, 0.0], 2)]))):
        recorder.log(step, {"reward/mean": 0.5}, batch.stored_episodes(step))
    with open_store(store_path) as st:
        write_rollouts(st, [_episode("old", 0, 1.0, version=3), _episode("old", 1, 1.0, version=4)], "run")
    recorder.forget_after(4)
    with open_store(store_path, read_only=True) as st:
        left = st.query("SELECT task_id, policy_version, train_step FROM rollouts ORDER BY rollout_id")
    assert [(r["task_id"], r["policy_version"], r["train_step"]) for r in left] == [
        ("a", 3, 4), ("a", 3, 4), ("old", 3, None)]
