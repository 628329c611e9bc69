"""An evaluation killed (SIGKILL) halfway and run again completes without repeating a finished sample.

The tasks are bound to a Python eval that notes every trajectory it scores in a file (one line per call,
with the scoring process's pid), so the test counts exactly which samples the second process ran. The first is
killed once the store holds some of its samples (it writes them in batches, and holds the store only for that).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.integration.train_workspace import Workspace, copy_workspace, tiny_config, write_config
from tracegym.evals.checkpoints.evaluate import WRITE_EVERY
from tracegym.store import open_store

MARK_EVALS = """\
version: 1
evals:
  - name: marked
    kind: python
    function: mark_eval:score
    python_path: ["."]
"""

MARK_MODULE = """\
import os, time
from pathlib import Path

def score(traj):
    log, hold = Path(__file__).with_name("scored.log"), Path(__file__).with_name("hold")
    # While `hold` exists (the first run), scoring stops after 12 samples: the run is still working when the
    # test kills it, however slow or fast the machine.
    while hold.exists() and log.exists() and len(log.read_text().splitlines()) >= 12:
        time.sleep(0.05)
    with open(log, "a") as f:
        f.write(f"{os.getpid()}\\t{traj.task_id}\\n")
    text = next((m.get("content") or "" for m in reversed(traj.messages) if m.get("role") == "assistant"), "")
    return 1.0 if text[:1].isupper() else 0.0
"""


@pytest.fixture(scope="module")
def workspace(
    tmp_path_factory: pytest.TempPathFactory, tau_workspace_template: Workspace
) -> Workspace:
    return copy_workspace(tau_workspace_template, tmp_path_factory.mktemp("resume"))


def _marked_task_set(ws: Workspace, root: Path) -> Path:
    (root / "evals.yaml").write_text(MARK_EVALS)
    (root / "mark_eval.py").write_text(MARK_MODULE)
    out = root / "tasks-marked"
    from tracegym.cli import app

    result = CliRunner().invoke(
        app,
        ["tasks", "generate", "--allow-unredacted", "--no-gates", "--out", str(out),
         "--evals", str(root / "evals.yaml"), "--eval", "marked", "--top", "12", "--context", "last-user",
         "--store", str(ws.store)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return out


def _second_model(root: Path) -> Path:
    from tracegym.models.tiny import tiny_policy

    model, tokenizer = tiny_policy(seed=1)
    model.save_pretrained(root / "tiny-2")
    tokenizer.save_pretrained(root / "tiny-2")
    return root / "tiny-2"


def _stored(store: Path) -> int:
    """The samples the store holds: the evaluation leaves it free between its writes."""
    if not store.is_file():
        return 0
    with open_store(store, read_only=True) as st:
        return int(st.scalar("SELECT count(*) FROM eval_results"))


def _scored(log: Path) -> list[tuple[int, str]]:
    if not log.is_file():
        return []
    return [(int(pid), task) for pid, task in (line.split("\t") for line in log.read_text().splitlines())]


@pytest.mark.slow
def test_killed_eval_resumes_without_rerunning_finished_samples(workspace: Workspace, tmp_path: Path) -> None:
    root = tmp_path
    task_set, other = _marked_task_set(workspace, root), _second_model(root)
    config = write_config(root / "eval.yaml", tiny_config(workspace, root / "unused-run"))
    log = root / "scored.log"
    samples = 3
    args = [sys.executable, "-m", "tracegym.cli", "eval", str(other), "--tasks", str(task_set), "--base",
            str(workspace.tiny_model), "--config", str(config), "--samples", str(samples), "--concurrency", "2",
            "--store", str(workspace.store), "--json"]
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false"}

    (root / "hold").touch()
    first = subprocess.Popen(args, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while not _stored(workspace.store) and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert first.poll() is None, f"the evaluation ended before it could be killed: {first.stderr.read().decode()}"
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    (root / "hold").unlink()
    killed_pid = first.pid

    with open_store(workspace.store, read_only=True) as st:
        before = st.query("SELECT checkpoint_id, task_id, sample_idx, created_at FROM eval_results")
        # A sample whose policy or harness failed is stored with no reward and never reaches the scorer.
        before_scored = int(st.scalar("SELECT count(*) FROM eval_results WHERE reward IS NOT NULL"))
    assert 0 < len(before), "some samples were stored before the kill"

    second = subprocess.run(args, check=False, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr
    table = json.loads(second.stdout)
    tasks = table["tasks"]
    total = tasks * samples * 2
    assert len(before) < total, "the kill landed before the evaluation finished"

    counts = table["counts"]
    assert sum(c["reused"] for c in counts.values()) == len(before)
    assert sum(c["ran"] for c in counts.values()) == total - len(before)

    # The second process scored exactly the samples that were missing: nothing finished ran again.
    scored = _scored(log)
    rerun = [task for pid, task in scored if pid != killed_pid]
    assert len(rerun) == total - len(before)
    in_flight = len([1 for pid, _ in scored if pid == killed_pid]) - before_scored
    assert 0 <= in_flight < WRITE_EVERY + 2, "at most a batch not yet written and the episodes in flight " \
                                              "(concurrency 2) were lost to the kill"

    with open_store(workspace.store, read_only=True) as st:
        after = st.query("SELECT checkpoint_id, task_id, sample_idx, created_at FROM eval_results")
        duplicates = st.scalar("SELECT count(*) FROM (SELECT checkpoint_id, task_id, sample_idx FROM eval_results "
                               "GROUP BY ALL HAVING count(*) > 1)")
        rollouts = st.query("SELECT model, task_id, sample_idx, count(*) AS n FROM rollouts WHERE run_id = ? "
                            "GROUP BY ALL", [table["eval_id"]])
    assert len(after) == total and duplicates == 0
    kept = {(r["checkpoint_id"], r["task_id"], r["sample_idx"]): r["created_at"] for r in after}
    assert all(kept[(r["checkpoint_id"], r["task_id"], r["sample_idx"])] == r["created_at"] for r in before), \
        "rows from before the kill are untouched"
    # Each stored sample has exactly one episode; episodes whose result row the kill cut off were removed.
    assert sum(r["n"] for r in rollouts) == total and all(r["n"] == 1 for r in rollouts)

    third = subprocess.run(args, check=False, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert third.returncode == 0, third.stderr
    assert all(c["ran"] == 0 for c in json.loads(third.stdout)["counts"].values())
    assert len(_scored(log)) == len(scored), "a finished evaluation runs nothing again"
