"""The store is private to its user (issue 24, finding 10, the store's part): a new store file is 0600 and every
folder tracegym creates for it 0700, under the usual umask 022 too; folders that already exist keep their mode."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_ingest_creates_a_private_default_store(tmp_path, fixtures_dir):
    """As a user runs it: `tracegym ingest` in a folder of theirs, umask 022, the default store path."""
    before = mode(tmp_path)
    result = subprocess.run(
        ["sh", "-c", 'umask 022 && exec "$0" -m tracegym.cli ingest "$1"', sys.executable,
         str(fixtures_dir / "openai-chat")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert mode(tmp_path / ".tracegym") == 0o700
    assert mode(tmp_path / ".tracegym" / "store.duckdb") == 0o600
    assert mode(tmp_path) == before  # the user's own folder is theirs to set


def test_every_new_folder_is_private(tmp_path, umask_022):
    from tracegym.store import open_store

    open_store(tmp_path / "a" / "b" / "store.duckdb").close()
    assert [mode(tmp_path / "a"), mode(tmp_path / "a" / "b")] == [0o700, 0o700]
    assert mode(tmp_path / "a" / "b" / "store.duckdb") == 0o600


def test_a_folder_the_user_chose_keeps_its_mode(tmp_path, umask_022):
    from tracegym.store import open_store

    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    with open_store(shared / "store.duckdb") as st:
        st.query("INSERT INTO traces (trace_id) VALUES ('t1')")
    assert mode(shared) == 0o755
    assert mode(shared / "store.duckdb") == 0o600


def test_a_store_from_an_earlier_version_is_tightened(tmp_path, umask_022):
    """Earlier versions left DuckDB's 0644; opening the store, read-only too, makes it 0600 and keeps its rows."""
    from tracegym.store import open_store

    old = tmp_path / "store.duckdb"
    with duckdb.connect(str(old)) as con:
        con.execute("CREATE TABLE keep AS SELECT 1 AS i")
    assert mode(old) == 0o644
    with open_store(old, read_only=True) as st:
        assert st.scalar("SELECT count(*) FROM keep") == 1
    assert mode(old) == 0o600


def test_a_store_path_that_is_no_regular_file_keeps_its_mode(tmp_path, cli):
    """`--store /dev/null` once made the machine's /dev/null 0600 (and every sandbox's with it): a FIFO stands in."""
    fifo = tmp_path / "store.duckdb"
    os.mkfifo(fifo, 0o666)
    os.chmod(fifo, 0o666)
    result = cli("traces", "list", "--store", fifo)
    assert result.exit_code == 2
    assert mode(fifo) == 0o666
