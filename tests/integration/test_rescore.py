"""`tracegym rescore` on a stored run: after a `match` eval's pattern is edited, exactly the rewards the edit
should change change, under a new score version, and the old version stays queryable; `compare` then reads
either version."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.integration.task_sets import SHELL_REPLY, mentions_task_set, shell_spec, write_shell_task_set
from tracegym.evals.checkpoints.comparison import ModelRef, Scores, compare
from tracegym.harnesses.config import HarnessFactory
from tracegym.harnesses.policy import Completion, PolicyClient, PolicyRequest
from tracegym.harnesses.runner import RunOptions
from tracegym.harnesses.taskrun import run_task_set
from tracegym.store import open_store
from tracegym.store.access import StoreAccess
from tracegym.tasks import load_task_set

REPLIES = ["I can refund that.", "Sorry, I cannot help.", "Sorry: a full REFUND is due.", "Let me check.", ""]


class CyclingPolicy(PolicyClient):
    """Answers in turn with each of REPLIES: the run's model, at the boundary."""

    def __init__(self) -> None:
        self.n = 0

    async def generate(self, requests: Sequence[PolicyRequest]) -> list[Completion]:
        out = []
        for _ in requests:
            out.append(Completion(REPLIES[self.n % len(REPLIES)], "stop", "cycle"))
            self.n += 1
        return out

    async def aclose(self) -> None:
        """Holds nothing."""


@pytest.fixture
def stored_run(cli, traces_dir, tmp_path) -> tuple[Path, Path, str]:
    """τ-bench mined; a task set bound to the `mentions` match eval; a run of 5 samples per task stored."""
    store = tmp_path / "store.duckdb"
    for args in (("ingest", traces_dir / "tau-bench"), ("mine", "failures")):
        assert cli(*args, "--store", store).exit_code == 0
    folder = mentions_task_set(store, tmp_path, top=2, per_cluster=4)
    task_set = load_task_set(folder)
    result = asyncio.run(run_task_set(StoreAccess(store), task_set, task_set.tasks, CyclingPolicy(),
                                      RunOptions(samples=5, concurrency=1), HarnessFactory(), "cycle"))
    return store, folder, result.run_id


def _texts(st, run_id: str) -> dict[str, str]:
    rows = st.query("SELECT rollout_id, messages, n_prompt_messages FROM rollouts WHERE run_id = ?", [run_id])
    return {r["rollout_id"]: json.loads(r["messages"])[r["n_prompt_messages"]]["content"] or "" for r in rows}


def test_rescore_after_a_pattern_edit_changes_exactly_the_rewards_it_should(cli, stored_run):
    store, folder, run_id = stored_run
    with open_store(store, read_only=True) as st:
        texts = _texts(st, run_id)
        before = {r["rollout_id"]: r["reward"] for r in st.query(
            "SELECT rollout_id, reward FROM rollouts WHERE run_id = ?", [run_id])}
    old = {rid: float(bool(re.search("refund", t, re.IGNORECASE))) for rid, t in texts.items()}
    assert before == old and len(set(old.values())) == 2
    evals = folder / "evals.yaml"
    evals.write_text(evals.read_text().replace('"refund"', '"sorry"'))
    result = cli("rescore", "--run", run_id, "--store", store, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    new = {rid: float(bool(re.search("sorry", t, re.IGNORECASE))) for rid, t in texts.items()}
    should_change = {rid for rid in texts if new[rid] != old[rid]}
    assert report["version"] == 1 and report["rescored"] == len(texts)
    assert report["changed"] == len(should_change) == sum(c["changed"] for c in report["clusters"]) > 0
    with open_store(store, read_only=True) as st:
        versions = st.query("SELECT rollout_id, version, reward FROM rollout_score_versions "
                            "WHERE rollout_id IN (SELECT rollout_id FROM rollouts WHERE run_id = ?)", [run_id])
        assert {r["rollout_id"]: r["reward"] for r in versions if r["version"] == 0} == old  # kept as it was
        assert {r["rollout_id"]: r["reward"] for r in versions if r["version"] == 1} == new
        assert {r["rollout_id"]: r["reward"] for r in st.query(
            "SELECT rollout_id, reward FROM rollouts WHERE run_id = ?", [run_id])} == old
    again = json.loads(cli("rescore", "--run", run_id, "--store", store, "--json").stdout)
    assert again["version"] == 2 and again["changed"] == 0


def test_compare_reads_the_scores_of_a_version(cli, stored_run):
    """Two models' samples in one evaluation, pointing at the stored episodes: the comparison on version 0 and
    on the rescored version 1 each read their own rewards."""
    store, folder, run_id = stored_run
    with open_store(store) as st:
        st.con.execute(
            """INSERT INTO eval_results (eval_id, checkpoint, checkpoint_id, task_set_id, task_id, cluster_id, split,
                   sample_idx, rollout_id, reward, pass)
               SELECT 'eval-x', CASE WHEN sample_idx < 2 THEN 'base' ELSE 'model' END,
                      CASE WHEN sample_idx < 2 THEN 'b' ELSE 'm' END, r.task_set_id, r.task_id, t.cluster_id, r.split,
                      CASE WHEN sample_idx < 2 THEN sample_idx ELSE sample_idx - 2 END, r.rollout_id, r.reward,
                      r.reward >= 1
               FROM rollouts r JOIN tasks t USING (task_set_id, task_id) WHERE r.run_id = ? AND sample_idx < 4""",
            [run_id])
        texts = _texts(st, run_id)
    evals = folder / "evals.yaml"
    evals.write_text(evals.read_text().replace('"refund"', '"sorry"'))
    assert cli("rescore", "--run", run_id, "--store", store).exit_code == 0
    with open_store(store, read_only=True) as st:
        rows = st.query("SELECT rollout_id, checkpoint_id FROM eval_results WHERE eval_id = 'eval-x'")
        for version, pattern in ((None, "refund"), (1, "sorry")):
            table = compare(st, "eval-x", ModelRef("base", "b"), [ModelRef("model", "m")], 2,
                            scores=Scores(version, 1.0))
            by_model = {r["model"]: r["reward"]["value"] for r in table["groups"][0]["rows"]}
            for label, ident in (("base", "b"), ("model", "m")):
                hits = [bool(re.search(pattern, texts[r["rollout_id"]], re.IGNORECASE)) for r in rows
                        if r["checkpoint_id"] == ident]
                assert by_model[label] == pytest.approx(sum(hits) / len(hits))


class ShellPolicy(PolicyClient):
    """Runs one command that makes done.txt: the run's model, at the boundary."""

    async def generate(self, requests: Sequence[PolicyRequest]) -> list[Completion]:
        return [Completion(SHELL_REPLY, "stop", "shell") for _ in requests]

    async def aclose(self) -> None:
        """Holds nothing."""


def test_rollouts_whose_command_eval_read_a_removed_workspace_are_listed_per_cluster(cli, tmp_path):
    """A shell run scored by a command eval (alone, and as a weighted part) and by a match eval: after rescore,
    the match-scored rollouts have a new version, the others are named per cluster with the reason."""
    from tracegym.harnesses.runner import EpisodeLimits
    from tracegym.tasks.taskset import register_task_set

    specs = [shell_spec("cmd", "shell", ["made"]), shell_spec("mix", "shell", ["both"]),
             shell_spec("text", "shell", ["says"])]
    task_set = load_task_set(write_shell_task_set(tmp_path / "set", specs))
    store = tmp_path / "store.duckdb"
    with open_store(store) as st:
        register_task_set(st, task_set)
    run = asyncio.run(run_task_set(StoreAccess(store), task_set, task_set.tasks, ShellPolicy(),
                                   RunOptions(samples=2, concurrency=1, limits=EpisodeLimits(max_turns=1)),
                                   HarnessFactory(), "shell"))
    with open_store(store, read_only=True) as st:
        stored = {r["rollout_id"]: (r["task_id"], r["reward"]) for r in st.query(
            "SELECT rollout_id, task_id, reward FROM rollouts WHERE run_id = ?", [run.run_id])}
    assert sorted(reward for _, reward in stored.values()) == [1.0] * 6  # scored in the workspace at run time
    result = cli("rescore", "--run", run.run_id, "--store", store, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["rescored"] == 2 and report["skipped"] == {"workspace_gone": 4}
    listed = {n["rollout_id"]: n for n in report["not_rescored"]}
    assert set(listed) == {rid for rid, (task, _) in stored.items() if task in ("cmd", "mix")}
    assert {n["cluster_id"] for n in listed.values()} == {"c-cmd", "c-mix"}
    assert all(n["reason"] == "workspace_gone" and "tracegym run" in n["detail"] for n in listed.values())
    assert "command eval made reads the episode's shell workspace" in listed[next(iter(listed))]["detail"]
    clusters = {c["cluster_id"]: c for c in report["clusters"]}
    assert clusters["c-mix"]["not_rescored"] == {"workspace_gone": 2} and clusters["c-mix"]["rescored"] == 0
    assert clusters["c-text"]["rescored"] == 2 and clusters["c-text"]["not_rescored"] == {}
    table = cli("rescore", "--run", run.run_id, "--store", store)
    assert table.exit_code == 0
    assert "Not rescored" in table.stdout and "c-mix" in table.stdout and "workspace_gone" in table.stdout
