"""`tracegym ingest` as a person sees it: under a pseudo-terminal, with its progress bar, and stopped by Ctrl-C."""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path

from tests.conftest import on_a_terminal, terminal_session
from tracegym.store import Store, lock, open_store


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
    or not at all) and how to go on, with the shell's code for an interrupt, and the store holds those files.

    The test holds the store before ingest starts, and waits for it as another command would once ingest waits too:
    ingest stores one file, lets the test in (as it lets any waiting process in between files), and waits for the
    store again. The Ctrl-C lands then, on a run that cannot go further, however fast the machine."""
    files = _copies(traces_dir, tmp_path / "parts", 3)
    store = tmp_path / "s.duckdb"
    taken, held = threading.Event(), [open_store(store)]
    relay = threading.Thread(target=_take_back_after_a_file, args=(store, held, taken), daemon=True)
    relay.start()
    code, shown = terminal_session("ingest", tmp_path / "parts", "--store", store, timeout=120,
                                   interrupt_on=lambda _: taken.is_set())
    assert taken.is_set(), f"ingest never let the waiting test in:\n{shown}"
    relay.join()
    held[-1].close()
    assert code == 130 and "Traceback" not in shown, shown
    said = re.search(r"Interrupted: (\d+) of (\d+) files \([0-9.]+ MB\) are stored; the file being read is not\. "
                     r"Run the same command again", " ".join(re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown).split()))
    assert said is not None, shown
    assert (int(said[1]), int(said[2])) == (1, len(files))
    with open_store(store, read_only=True) as st:
        assert st.scalar("SELECT count(*) FROM sources") == 1
        assert st.scalar("SELECT count(*) FROM traces") == 200


def _take_back_after_a_file(store: Path, held: list[Store], taken: threading.Event) -> None:
    """Once ingest waits for the store `held[0]` holds: note this process as waiting (a file ingest reads between
    its files), hand the store over, and take it back when ingest lets this process in; `taken` is set then, and
    the store (appended to `held`) held until the test closes it."""
    while not [p for p in store.parent.glob(f"{store.name}.wait-*") if p.name != f"{store.name}.wait-{os.getpid()}"]:
        time.sleep(0.05)
    with lock._waiting(store) as announce:
        announce()  # before ingest can take the store: after its first file it lets this process in
        held[0].close()
        while lock.current_holder(store)[0] in (None, os.getpid()):
            time.sleep(0.05)
        held.append(open_store(store))
    taken.set()
