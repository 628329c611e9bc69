"""Many commands, one store, with real processes: readers are answered while an ingest writes, two ingests both
finish, a killed writer leaves the store whole and free, and `runs show` works while `train` or `run` runs.

Each test synchronises on what the processes show (a file appearing, a line printed), never on a sleep.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from tests.integration.test_ingest_kill import read_offset, snapshot
from tests.integration.train_workspace import (
    Workspace,
    copy_workspace,
    hold_after,
    holdable,
    tiny_config,
    wait_until_held,
    write_config,
)
from tests.support_log import write_conversations
from tracegym.cli import app
from tracegym.store import open_store

pytestmark = pytest.mark.slow  # processes that ingest 20,000 traces, or train, beside each other

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "tracegym.cli"]
TRACES = 20_000  # in one file, stored in one transaction: readers wait for the file and see it whole
PER_FILE = 2000  # the files of the tests of two ingests and of a kill


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "TRACEGYM_STORE": ""}


def _conversations(folder: Path, first: int, files: int, per_file: int = PER_FILE) -> Path:
    folder.mkdir()
    for k in range(files):
        write_conversations(folder / f"part-{k:02d}.jsonl", first + k * per_file, per_file)
    return folder


def _ingest_alone(folder: Path, store: Path) -> dict[str, list[tuple]]:
    result = CliRunner().invoke(app, ["ingest", str(folder), "--store", str(store)])
    assert result.exit_code == 0, result.stderr
    return snapshot(store)


def _wait_for(path: Path, proc: subprocess.Popen) -> None:
    """Until `path` exists; fails if `proc` ended first."""
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)


def _line_with(proc: subprocess.Popen, text: str) -> str:
    """The first line of `proc`'s stderr that holds `text` (read line by line as it is printed)."""
    assert proc.stderr is not None
    for line in proc.stderr:
        if text in line:
            return line
    raise AssertionError(f"the process ended (exit {proc.wait()}) without printing {text!r}")


def test_readers_are_answered_while_one_file_of_20000_traces_is_ingested(tmp_path: Path) -> None:
    folder = _conversations(tmp_path / "logs", 0, 1, TRACES)
    alone = _ingest_alone(folder, tmp_path / "alone.duckdb")
    store = tmp_path / "store.duckdb"
    open_store(store).close()  # a new, empty store for the readers to hold
    signals = {name: tmp_path / name for name in ("ready", "go", "stop", "answers.json")}
    readers = subprocess.Popen([sys.executable, str(ROOT / "tests" / "integration" / "store_readers.py"), str(store),
                                *map(str, signals.values())], env=_env(), stderr=subprocess.PIPE, text=True)
    _wait_for(signals["ready"], readers)
    ingest = subprocess.Popen([*CLI, "ingest", str(folder), "--store", str(store)], env=_env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    waited = _line_with(ingest, "waiting for it")  # the ingest waits for the reader holding the store
    assert f"(PID {readers.pid})" in waited and "store_readers.py" in waited
    signals["go"].touch()
    _, ingest_err = ingest.communicate()
    assert ingest.returncode == 0, ingest_err
    signals["stop"].touch()
    _, readers_err = readers.communicate()
    assert readers.returncode == 0, readers_err
    answers = json.loads(signals["answers.json"].read_text())
    assert [a for a in answers if a["exit"] != 0] == []
    assert any("held by `tracegym ingest" in a["stderr"] for a in answers)  # readers waited for the ingest...
    counts = [a["n"] for a in answers if a["command"] == "sql"]
    assert set(counts) <= {0, TRACES} and counts == sorted(counts) and counts[-1] == TRACES  # the file whole or not
    assert snapshot(store) == alone


def test_two_ingests_of_different_files_both_finish(tmp_path: Path) -> None:
    per_file = PER_FILE // 2
    first, second = _conversations(tmp_path / "a", 0, 3, per_file), _conversations(tmp_path / "b", 3 * per_file, 3,
                                                                                   per_file)
    store = tmp_path / "store.duckdb"
    procs = [subprocess.Popen([*CLI, "ingest", str(folder), "--store", str(store), "--json"], env=_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for folder in (first, second)]
    outputs = [p.communicate() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], "\n".join(err for _, err in outputs)  # whole, not cut
    assert [json.loads(out)["traces"] for out, _ in outputs] == [3 * per_file, 3 * per_file]
    with duckdb.connect(str(store), read_only=True) as con:
        assert con.execute("SELECT count(DISTINCT trace_id), count(*) FROM traces").fetchone() == (
            6 * per_file, 6 * per_file)
        assert con.execute("SELECT count(*) FROM sources").fetchone() == (6,)


def test_a_writer_killed_mid_file_leaves_the_store_whole_and_free(tmp_path: Path) -> None:
    folder = _conversations(tmp_path / "logs", 0, 2)
    big = folder / "part-01.jsonl"
    write_conversations(big, PER_FILE, 3 * PER_FILE)  # the second file three times as long
    alone = _ingest_alone(folder, tmp_path / "alone.duckdb")
    store = tmp_path / "store.duckdb"
    proc = subprocess.Popen([*CLI, "ingest", str(folder), "--store", str(store)], env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while read_offset(proc.pid, big) is None:  # the first file is stored; the big one is being read
        assert proc.poll() is None, "the ingest ended before it read the big file"
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    holder = json.loads((tmp_path / "store.duckdb.holder").read_text())
    assert holder["pid"] == proc.pid  # left behind, and stale: its process is gone
    listed = CliRunner().invoke(app, ["traces", "list", "--json", "--limit", "100000", "--wait", "0",
                                      "--store", str(store)])
    assert listed.exit_code == 0, listed.stderr
    stored = {(t["trace_id"]) for t in json.loads(listed.stdout)}
    assert len(stored) in (0, PER_FILE)  # no file half stored: none, or the first whole
    rerun = CliRunner().invoke(app, ["ingest", str(folder), "--wait", "0", "--store", str(store)])
    assert rerun.exit_code == 0, rerun.stderr
    assert snapshot(store) == alone
    assert not (tmp_path / "store.duckdb.holder").exists()


def test_runs_show_answers_while_train_runs(tmp_path: Path, tau_workspace_template: Workspace) -> None:
    """`runs show` while `train` is held scoring its second step, its first checkpoint saved: the run is running."""
    ws = holdable(copy_workspace(tau_workspace_template, tmp_path / "ws"))
    run_dir = tmp_path / "run"
    # The shortest run that writes while another reads: two GRPO steps, a checkpoint after each, no warm start.
    config = write_config(tmp_path / "run.yaml", tiny_config(ws, run_dir, steps=2, checkpoint_every=1,
                                                             warmup={"steps": 0}))
    env, hold, held = hold_after(run_dir, 1)
    train = subprocess.Popen([*CLI, "train", "--allow-unredacted", str(config), "--store", str(ws.store)],
                             env={**env, **_env()}, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
    try:
        wait_until_held(held, train)
        assert train.poll() is None, train.communicate()[1]
        result = CliRunner().invoke(app, ["runs", "show", str(run_dir), "--json", "--store", str(ws.store)])
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["run"]["status"] == "running"
    finally:
        hold.unlink()
    _, train_err = train.communicate()
    assert train.returncode == 0, train_err
    final = CliRunner().invoke(app, ["runs", "show", str(run_dir), "--json", "--store", str(ws.store)])
    assert json.loads(final.stdout)["run"]["status"] == "completed"


class _HeldEndpoint:
    """An OpenAI-compatible endpoint on 127.0.0.1 (the model a `run` samples, at the boundary) that answers the
    first `answered` requests at once and holds the next ones until `release()`: while it holds one, the run is
    sampling."""

    def __init__(self, answered: int) -> None:
        self.answered, self.seen = answered, 0
        self.holding, self.released = threading.Event(), threading.Event()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                self.rfile.read(int(self.headers["Content-Length"]))
                endpoint.seen += 1
                if endpoint.seen > endpoint.answered:
                    endpoint.holding.set()
                    endpoint.released.wait()
                data = json.dumps({"id": "c", "object": "chat.completion", "model": "m", "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": "Done."}, "finish_reason": "stop"}]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data.encode())

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def wait_holding(self, proc: subprocess.Popen) -> None:
        """Until a request is held; fails if `proc` ended first."""
        while not self.holding.wait(0.05):
            assert proc.poll() is None, proc.communicate()

    def close(self) -> None:
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


def _read(*args: str) -> object:
    """A read-only command's JSON answer, refused at once (`--wait 0`) if anything holds the store."""
    result = CliRunner().invoke(app, [*args, "--json", "--wait", "0"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_runs_and_rollouts_show_answer_while_run_samples(tmp_path: Path, tau_workspace_template: Workspace) -> None:
    ws = copy_workspace(tau_workspace_template, tmp_path / "ws")
    store = str(ws.store)
    endpoint = _HeldEndpoint(answered=16)  # one batch of episodes (16) written, then the run waits on the model
    try:
        run = subprocess.Popen([*CLI, "run", str(ws.task_set), "--base-url", endpoint.url, "--model", "m", "--limit",
                                "2", "-k", "9", "--concurrency", "1", "--json", "--store", store],
                               env=_env(), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        endpoint.wait_holding(run)  # the 17th episode is sampling: nothing may hold the store now
        stored = _read("rollouts", "list", "--limit", "100", "--store", store)
        assert isinstance(stored, list) and 1 <= len(stored) <= 16  # what the run has written so far
        [run_id] = {r["run_id"] for r in stored}
        shown = _read("runs", "show", run_id, "--store", store)
        assert isinstance(shown, dict) and len(shown["rollouts"]) == len(stored)
        rollout = _read("rollouts", "show", stored[0]["rollout_id"], "--store", store)
        assert isinstance(rollout, dict) and rollout["rollout"]["run_id"] == run_id
        endpoint.released.set()
        out, err = run.communicate()
    finally:
        endpoint.close()
    assert run.returncode == 0, err
    assert json.loads(out)["run_id"] == run_id
    final = _read("runs", "show", run_id, "--store", store)
    assert isinstance(final, dict) and len(final["rollouts"]) == 18
    assert not (ws.store.parent / f"{ws.store.name}.holder").exists()
