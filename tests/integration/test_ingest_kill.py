"""SIGKILL in the middle of a file leaves the store exactly as it was before that file; a rerun completes it.

A real `tracegym ingest` process loads a small file (committed), then a large
generated one. The kill is timed by watching the process read the large file
through /proc (its read offset past the first batch means the file's
transaction has appended rows and not yet committed), so it lands mid-file on
any machine speed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from tracegym.cli import app
from tracegym.ingest.pipeline import BATCH_TRACES

TAU = Path(__file__).resolve().parents[3] / "shared" / "data" / "traces" / "tau-bench" / "gpt-4o-airline.json"
# One and a half batches (3000 runs, about 55 MB): killed once 1.2 batches are read, the file's
# transaction has appended a batch that is not committed; reading takes over a second, far longer
# than the polling interval.
BIG_RUNS = BATCH_TRACES * 3 // 2
KILL_AT = BATCH_TRACES * 1.2 / BIG_RUNS
# Columns that record when a row was written, which a rerun legitimately changes.
VOLATILE = {"sources": "ingested_at", "ingest_errors": "created_at"}
TABLES = ("sources", "traces", "messages", "tool_calls", "scores", "ingest_errors")

pytestmark = [pytest.mark.slow,  # a 55 MB file ingested, killed midway, ingested again
              pytest.mark.skipif(not Path("/proc/self/fdinfo").is_dir(), reason="needs Linux /proc to time the kill")]


def snapshot(store: Path) -> dict[str, list[tuple]]:
    """Every row of every ingest table, sorted, without write timestamps."""
    with duckdb.connect(str(store), read_only=True) as con:
        out = {}
        for table in TABLES:
            exclude = f" EXCLUDE ({VOLATILE[table]})" if table in VOLATILE else ""
            out[table] = sorted(con.execute(f"SELECT *{exclude} FROM {table}").fetchall(), key=repr)
        return out


def write_runs(path: Path, runs: list[dict[str, Any]], first_trial: int, n: int) -> Path:
    with path.open("w") as f:
        for i in range(n):
            f.write(json.dumps({**runs[i % len(runs)], "trial": first_trial + i}) + "\n")
    return path


def read_offset(pid: int, target: Path) -> int | None:
    """How far process `pid` has read `target`, or None while it does not have it open."""
    fd_dir = Path(f"/proc/{pid}/fd")
    try:
        for fd in fd_dir.iterdir():
            if os.readlink(fd) == str(target):
                return int((Path(f"/proc/{pid}/fdinfo") / fd.name).read_text().split()[1])
    except OSError:  # the process or the descriptor went away between the listing and the read
        return None
    return None


def kill_mid_file(cmd: list[str], target: Path, fraction: float, timeout: float = 600.0) -> subprocess.Popen:
    """Start `cmd`, SIGKILL it once it has read `fraction` of `target`. `timeout` only guards against a hang: on a
    loaded machine starting Python and reading the files before `target` took longer than the 30 s it was."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    threshold, deadline = fraction * target.stat().st_size, time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        offset = read_offset(proc.pid, target)
        if offset is not None and offset >= threshold:
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.005)
    proc.wait(timeout=timeout)
    return proc


def test_sigkill_mid_file_leaves_the_store_as_before_that_file(tmp_path: Path) -> None:
    if not TAU.is_file():
        pytest.skip(f"real traces not found at {TAU} (they live in ../shared beside the checkout)")
    runs = json.loads(TAU.read_text())
    first = write_runs(tmp_path / "a_first.jsonl", runs, 100, 3)
    second = write_runs(tmp_path / "b_second.jsonl", runs, 200, 3)
    big = write_runs(tmp_path / "c_big.jsonl", runs, 1000, BIG_RUNS)

    reference, store = tmp_path / "reference.duckdb", tmp_path / "store.duckdb"
    for target in (reference, store):
        assert CliRunner().invoke(app, ["ingest", str(first), "--store", str(target)]).exit_code == 0
    assert CliRunner().invoke(app, ["ingest", str(second), "--store", str(reference)]).exit_code == 0
    expected = snapshot(reference)  # the state just before the big file

    cmd = [sys.executable, "-m", "tracegym.cli", "ingest", str(second), str(big), "--store", str(store)]
    proc = kill_mid_file(cmd, big, fraction=KILL_AT)
    assert proc.returncode == -signal.SIGKILL, f"not killed mid-file: {proc.stderr.read().decode()[-2000:]}"

    after_kill = snapshot(store)
    assert after_kill == expected
    assert not any(str(big) in row for row in after_kill["sources"])

    rerun = subprocess.run([*cmd, "--json"], capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    summary = json.loads(rerun.stdout)
    assert summary["traces"] == BIG_RUNS and summary["files_skipped_already_ingested"] == 1
    final = snapshot(store)
    assert len(final["traces"]) == len(expected["traces"]) + BIG_RUNS
    assert sum(str(big) in row for row in final["sources"]) == 1
