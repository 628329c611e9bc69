"""Who holds the store, and waiting for it (tracegym/store/lock.py), with a real second process holding it."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import duckdb
from pytest import MonkeyPatch
from typer.testing import CliRunner

from tracegym.cli import app
from tracegym.store import connection, lock, open_store

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


CREATE_TOGETHER = """
import os, sys
from pathlib import Path
from tracegym.store import open_store
folder, workers, rounds = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
try:
    for i in range(rounds):
        (folder / f"ready-{i}-{os.getpid()}").touch()
        while len(list(folder.glob(f"ready-{i}-*"))) < workers:
            if (folder / "failed").exists():
                sys.exit(f"round {i}: another process failed")
        with open_store(folder / f"store-{i}.duckdb", wait_s=60) as store:
            store.query("SELECT count(*) FROM traces")
except Exception:
    (folder / "failed").touch()
    raise
print("ok", flush=True)
"""


def test_processes_creating_one_new_store_together_all_open_it(tmp_path: Path) -> None:
    # Each round, four processes open the same store that does not exist yet at the same moment. DuckDB creates a
    # file before it locks it: an opener in between found it empty and failed ("not a valid DuckDB database file").
    workers, rounds = 4, 25
    procs = [subprocess.Popen([sys.executable, "-c", CREATE_TOGETHER, str(tmp_path), str(workers), str(rounds)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}) for _ in range(workers)]
    results = [proc.communicate() for proc in procs]
    errors = [line for _, err in results for line in err.splitlines() if "waiting for it" not in line]
    assert [(proc.returncode, out) for proc, (out, _) in zip(procs, results, strict=True)] == [(0, "ok\n")] * workers, \
        "\n".join(errors)
    assert sorted(p.name for p in tmp_path.glob("store-*.duckdb")) == sorted(f"store-{i}.duckdb" for i in range(rounds))
    assert not list(tmp_path.glob(".store-*"))


def test_a_new_store_appears_at_its_path_only_once_whole(tmp_path: Path, monkeypatch: MonkeyPatch) -> None:
    store = tmp_path / "store.duckdb"
    seen: list[bool] = []
    original = connection.migrate

    def migrate(con: duckdb.DuckDBPyConnection) -> None:
        seen.append(store.exists())
        original(con)

    monkeypatch.setattr(connection, "migrate", migrate)
    open_store(store).close()
    assert seen[0] is False, "the store's path named the file while it was being created"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600 and list(tmp_path.iterdir()) == [store]


SWALLOWED = """
import signal, sys
from pathlib import Path
import duckdb
from tracegym.errors import StoreWaitInterrupted
from tracegym.store import lock
tries = 0
def connect():
    global tries
    tries += 1
    try:
        signal.raise_signal(signal.SIGINT)  # the handler runs here, as it does inside DuckDB's open
    except KeyboardInterrupt:
        pass  # what DuckDB's open does with it
    raise duckdb.IOException('IO Error: Could not set lock on file "x": Conflicting lock is held')
try:
    lock.waiting_open(Path(sys.argv[1]), connect, wait_s=5)
except StoreWaitInterrupted:
    print("stopped after", tries)
"""


def test_a_ctrl_c_that_duckdb_drops_while_opening_still_stops_the_wait(tmp_path: Path) -> None:
    # A SIGINT landing inside duckdb.connect runs Python's handler there, and the KeyboardInterrupt is dropped: a
    # waiting `traces list` sent Ctrl-C under load waited out its 600 s instead (6 of 40 signals sent to a loop of
    # opens on a held store were lost).
    done = subprocess.run([sys.executable, "-c", SWALLOWED, str(tmp_path / "store.duckdb")], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (done.returncode, done.stdout) == (0, "stopped after 1\n"), done.stderr
