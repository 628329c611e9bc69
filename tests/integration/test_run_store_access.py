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
from tracegym.tasks.spec import TaskSpec

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


def _support_store(cli, tmp_path: Path) -> Path:
    """The generated support log ingested (sessions in `request.metadata`), its CSAT stars imported as scores
    and its failures mined."""
    log = write_support_log(tmp_path / "support", n_sessions=40, seed=3)
    lines = [json.loads(line) for line in log.log.read_text().splitlines()]
    for line in lines:
        line["request"]["metadata"] = {"session_id": line["session_id"]}
    log.log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    store = tmp_path / "store.duckdb"
    for args in (("ingest", log.log), ("labels", "import", log.csat, "--key", "session_id", "--score", "stars",
                                       "--score-range", "1", "5"), ("mine", "failures")):
        result = cli(*args, "--store", store)
        assert result.exit_code == 0, result.output
    return store


def test_a_run_samples_with_the_store_free_and_label_rewards_from_its_start(cli, tmp_path: Path) -> None:
    store = _support_store(cli, tmp_path)
    evals = tmp_path / "evals.yaml"
    evals.write_text(EVALS)
    result = cli("tasks", "generate", "--no-gates", "--allow-unredacted", "--evals", evals, "--out", tmp_path / "set",
                 "--eval", "csat", "--top", "3", "--context", "last-user", "--store", store)
    assert result.exit_code == 0, result.output
    task_set = load_task_set(tmp_path / "set")
    with open_store(store, read_only=True) as st:
        recorded = {r["trace_id"]: r["value"] for r in st.query("SELECT trace_id, value FROM scores")}
    by_value: dict[float | None, TaskSpec] = {}  # a task per recorded reward (None: no score for its trace)
    for task in task_set.tasks:
        by_value.setdefault(recorded.get(task.provenance.trace_id), task)
    tasks = list(by_value.values())
    assert len([v for v in by_value if v is not None and v != 0.5]) > 1  # none the 0.5 written meanwhile
    samples = 16 // len(tasks) + 1  # more episodes than one batch of writes
    policy = StoreCheckingPolicy(store)
    run = asyncio.run(run_task_set(StoreAccess(store), task_set, tasks, policy,
                                   RunOptions(samples=samples, concurrency=1), HarnessFactory(), "checking"))
    assert policy.requests == len(run.episodes) == samples * len(tasks) > 16
    assert policy.stored_meanwhile[0] == 0 and 0 < max(policy.stored_meanwhile) < len(run.episodes)
    for episode in run.episodes:
        task = next(t for t in tasks if t.task_id == episode.task_id)
        assert episode.reward == recorded.get(task.provenance.trace_id), episode.scorer_error
    with open_store(store, read_only=True) as st:
        assert st.scalar("SELECT count(*) FROM rollouts WHERE run_id = ?", [run.run_id]) == len(run.episodes)
    assert not holder_file(store).exists()


PROBE_EVALS = """version: 1
evals:
  - name: store_seen
    kind: python
    function: store_probe:score
    python_path: ["."]
"""
PROBE_MODULE = """\
import os
import threading
from pathlib import Path

from tracegym.store import open_store
from tracegym.store.lock import holder_file

ONE_AT_A_TIME = threading.Lock()  # probes are scored on several threads; each one's own open writes the holder


def score(traj):
    # How the store is while a gate's probe is scored: a holder file, or a writable open this process cannot
    # make (it holds a read-only connection), means the command holds it.
    store = Path(os.environ["PROBED_STORE"])
    with ONE_AT_A_TIME:
        seen = "held" if holder_file(store).exists() else "free"
        if seen == "free":
            try:
                open_store(store, wait_s=0).close()
            except Exception as e:
                seen = f"held ({e})"
        with open(Path(__file__).with_name("probes.log"), "a") as f:
            f.write(seen + "\\n")
    text = next((m.get("content") or "" for m in reversed(traj.messages) if m.get("role") == "assistant"), "")
    return 1.0 if len(text.split()) > 3 else 0.0
"""


def test_tasks_generate_plays_its_gates_with_the_store_closed(cli, tmp_path: Path, monkeypatch) -> None:
    store = _support_store(cli, tmp_path)
    (tmp_path / "evals.yaml").write_text(PROBE_EVALS)
    (tmp_path / "store_probe.py").write_text(PROBE_MODULE)
    monkeypatch.setenv("PROBED_STORE", str(store))
    with open_store(store, read_only=True) as st:
        clusters = [r["cluster_id"] for r in st.query("SELECT cluster_id FROM clusters ORDER BY rank LIMIT 2")]
    references = tmp_path / "references.csv"  # a good reply for each cluster: the gates play it, and pass it
    references.write_text("cluster_id,reply\n" + "".join(f"{c},I have issued your refund; it arrives by Friday.\n"
                                                          for c in clusters))
    result = cli("tasks", "generate", "--allow-unredacted", "--evals", tmp_path / "evals.yaml", "--out",
                 tmp_path / "set", "--eval", "store_seen", "--context", "last-user", "--references", references,
                 *[a for c in clusters for a in ("--cluster", c)], "--store", store, "--json")
    assert result.exit_code == 0, result.output
    seen = (tmp_path / "probes.log").read_text().splitlines()
    assert len(seen) >= json.loads(result.stdout)["gates"]["episodes"] > 0
    assert set(seen) == {"free"}
    with open_store(store, read_only=True) as st:  # and the set was registered once the gates were done
        assert st.scalar("SELECT count(*) FROM task_sets WHERE task_set_id = 'set'") == 1
