"""`tracegym ingest` as a person sees it: under a pseudo-terminal, with its progress bar, and stopped by Ctrl-C."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import on_a_terminal, terminal_session
from tracegym.store import open_store


def _copies(traces_dir: Path, folder: Path, n: int) -> list[Path]:
    """`n` files of the τ-bench results, each of different bytes (so each is read, not skipped as stored)."""
    folder.mkdir()
    data = (traces_dir / "tau-bench" / "gpt-4o-airline.json").read_bytes()
    paths = [folder / f"part-{i:02d}.json" for i in range(n)]
    for i, path in enumerate(paths):
        path.write_bytes(data + b"\n" * i)
    return paths


def test_ingest_progress_counts_bytes(traces_dir, tmp_path):
    """The bar counted files (1 of 1 for a 4 MB file); it counts megabytes, as a download does."""
    shown = on_a_terminal("ingest", traces_dir / "tau-bench", "--store", tmp_path / "s.duckdb", timeout=120)
    assert "4.1/4.1 MB" in shown and "Traceback" not in shown


def test_one_ctrl_c_stops_ingest_and_says_what_is_stored(traces_dir, tmp_path):
    """Ctrl-C after the first file exited silently; it says how many files are stored (each file is stored whole
    or not at all) and how to go on, with the shell's code for an interrupt, and the store holds those files."""
    files = _copies(traces_dir, tmp_path / "parts", 8)
    store = tmp_path / "s.duckdb"
    code, shown = terminal_session("ingest", tmp_path / "parts", "--store", store, timeout=120,
                                   interrupt_on=r"(?<![0-9.])[1-9][0-9.]*/[0-9.]+ MB")
    assert code == 130 and "Traceback" not in shown, shown
    said = re.search(r"Interrupted: (\d+) of (\d+) files \([0-9.]+ MB\) are stored; the file being read is not\. "
                     r"Run the same command again", " ".join(re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown).split()))
    assert said is not None, shown
    stored, total = int(said[1]), int(said[2])
    assert total == len(files) and 1 <= stored < total
    with open_store(store, read_only=True) as st:
        assert st.scalar("SELECT count(*) FROM sources") == stored
        assert st.scalar("SELECT count(*) FROM traces") == 200
