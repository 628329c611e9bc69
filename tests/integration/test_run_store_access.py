"""A run holds no store while its episodes sample: it reads what it needs at its start (the `scores` a `label`
eval replays, in a snapshot), and writes its episodes in batches through short opens."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

from tests.support_log import write_support_log
from tracegym.harnesses.config import HarnessFactory
from tracegym.harnesses.policy import Completion, PolicyClient, PolicyRequest
from tracegym.harnesses.runner import RunOptions
from tracegym.harnesses.taskrun import run_task_set
from tracegym.store import open_store
from tracegym.store.access import StoreAccess
from tracegym.store.lock import holder_file
from tracegym.tasks import load_task_set

EVALS = """version: 1
evals:
  - name: csat
    kind: label
    score: stars
"""


class StoreCheckingPolicy(PolicyClient):
    """Answers "Done." and, at each request, opens the store as another command would, refused at once if this
    process held it (DuckDB allows no read-only and writable connection to one file in one process); the first
    request also rewrites every recorded score, which the run's rewards must not see."""

    def __init__(self, store: Path) -> None:
        self.store = store
        self.requests = 0
        self.stored_meanwhile: list[int] = []

    async def generate(self, requests: Sequence[PolicyRequest]) -> list[Completion]:
        assert not holder_file(self.store).exists()
        with open_store(self.store, read_only=True, wait_s=0) as st:
            self.stored_meanwhile.append(int(st.scalar("SELECT count(*) FROM rollouts")))
        if self.requests == 0:
            with open_store(self.store, wait_s=0) as st:
                st.con.execute("UPDATE scores SET value = 0.5")
        self.requests += len(requests)
        return [Completion("Done.", "stop", "checking") for _ in requests]

    async def aclose(self) -> None:
        """Holds nothing."""


def test_a_run_samples_with_the_store_free_and_label_rewards_from_its_start(cli, tmp_path: Path) -> None:
    log = write_support_log(tmp_path / "support", n_sessions=40, seed=3)
    lines = [json.loads(line) for line in log.log.read_text().splitlines()]
    for line in lines:
        line["request"]["metadata"] = {"session_id": line["session_id"]}
    log.log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    store = tmp_path / "store.duckdb"
    evals = tmp_path / "evals.yaml"
    evals.write_text(EVALS)
    for args in (("ingest", log.log), ("labels", "import", log.csat, "--key", "session_id", "--score", "stars",
                                       "--score-range", "1", "5"), ("mine", "failures"),
                 ("tasks", "generate", "--no-gates", "--allow-unredacted", "--evals", evals, "--out", tmp_path / "set",
                  "--eval", "csat", "--top", "3", "--context", "last-user")):
        result = cli(*args, "--store", store)
        assert result.exit_code == 0, result.output
    task_set = load_task_set(tmp_path / "set")
    with open_store(store, read_only=True) as st:
        recorded = {r["trace_id"]: r["value"] for r in st.query("SELECT trace_id, value FROM scores")}
    assert len(set(recorded.values())) > 1  # rewards that differ by task, none of them the 0.5 written meanwhile
    policy = StoreCheckingPolicy(store)
    run = asyncio.run(run_task_set(StoreAccess(store), task_set, task_set.tasks, policy,
                                   RunOptions(samples=9, concurrency=1), HarnessFactory(), "checking"))
    assert policy.requests == len(run.episodes) == 9 * len(task_set.tasks) > 16
    assert policy.stored_meanwhile[0] == 0 and 0 < max(policy.stored_meanwhile) < len(run.episodes)
    for episode in run.episodes:
        task = next(t for t in task_set.tasks if t.task_id == episode.task_id)
        expected = recorded.get(task.provenance.trace_id)
        assert episode.reward == expected, episode.scorer_error
    with open_store(store, read_only=True) as st:
        assert st.scalar("SELECT count(*) FROM rollouts WHERE run_id = ?", [run.run_id]) == len(run.episodes)
    assert not holder_file(store).exists()
