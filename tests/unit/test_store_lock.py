"""Who holds the store, and waiting for it (tracegym/store/lock.py), with a real second process holding it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from tracegym.cli import app
from tracegym.store import lock, open_store

ROOT = Path(__file__).resolve().parents[2]
HOLD = """
import sys
from tracegym.store import lock, open_store
lock.set_command("tracegym ingest nightly/")
with open_store(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.readline()
"""


def _holder(store: Path) -> subprocess.Popen:
    """A process that holds `store` writable until a line reaches its stdin."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(store)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def _reader(store: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tracegym.cli", "traces", "list", "--json", "--store", str(store)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def _release(proc: subprocess.Popen) -> None:
    proc.communicate("\n")
    assert proc.returncode == 0


def test_a_writer_is_named_in_the_holder_file_until_it_closes(tmp_path: Path) -> None:
    store = tmp_path / "store.duckdb"
    with open_store(store):
        recorded = json.loads(lock.holder_file(store).read_text())
        assert (recorded["pid"], recorded["start"]) == (os.getpid(), lock.process_start(os.getpid()))
    assert not lock.holder_file(store).exists()
    with open_store(store, read_only=True):
        assert not lock.holder_file(store).exists()


def test_a_holder_file_of_a_gone_or_reused_pid_is_stale(tmp_path: Path) -> None:
    store = tmp_path / "store.duckdb"
    open_store(store).close()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    for pid, start in ((int(gone.stdout), 1), (os.getpid(), (lock.process_start(os.getpid()) or 0) + 1)):
        lock.holder_file(store).write_text(json.dumps({"pid": pid, "start": start, "command": "tracegym ingest x",
                                                       "since": "2026-01-01 00:00:00"}))
        assert lock.current_holder(store) == (None, "another process")
        result = CliRunner().invoke(app, ["traces", "list", "--wait", "0", "--store", str(store)])
        assert result.exit_code == 0, result.stderr


def test_wait_0_fails_at_once_naming_the_command_that_holds_the_store(tmp_path: Path) -> None:
    store = tmp_path / "store.duckdb"
    holder = _holder(store)
    try:
        result = CliRunner().invoke(app, ["traces", "list", "--wait", "0", "--store", str(store)])
    finally:
        _release(holder)
    assert result.exit_code == 2
    assert f"held by `tracegym ingest nightly/` (PID {holder.pid}, since " in result.stderr
    assert "--wait" in result.stderr and "Traceback" not in result.stderr


def test_a_reader_waits_for_the_writer_then_answers(tmp_path: Path) -> None:
    store = tmp_path / "store.duckdb"
    holder = _holder(store)
    reader = _reader(store)
    assert reader.stderr is not None
    line = reader.stderr.readline()
    assert f"held by `tracegym ingest nightly/` (PID {holder.pid}" in line and "waiting for it" in line
    _release(holder)
    out, _ = reader.communicate()
    assert reader.returncode == 0 and json.loads(out) == []


def test_ctrl_c_stops_the_wait_cleanly(tmp_path: Path) -> None:
    store = tmp_path / "store.duckdb"
    holder = _holder(store)
    try:
        reader = _reader(store)
        assert reader.stderr is not None and "waiting for it" in reader.stderr.readline()
        reader.send_signal(signal.SIGINT)
        _, err = reader.communicate()
    finally:
        _release(holder)
    assert reader.returncode == 130
    assert "Stopped waiting for the store" in err and "Traceback" not in err
    assert not list(tmp_path.glob("store.duckdb.wait-*"))
