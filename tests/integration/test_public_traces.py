"""The quickstart's traces on a machine without ../shared: fetched from a mirror (a real HTTP server on 127.0.0.1
serving the same files under OWNER/REPO/COMMIT/PATH), checked against their pinned sha256s, kept in the user cache;
a file with other bytes, an unreachable mirror and a missing file each stop the quickstart with one message."""

from __future__ import annotations

import functools
import re
import shutil
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import terminal_session
from tracegym.commands.quickstart import trace_paths
from tracegym.public_traces import MIRROR_ENV, QUICKSTART_FILES, fetch
from tracegym.store import open_store


@dataclass
class Mirror:
    url: str
    root: Path
    requests: Counter[str]


@pytest.fixture
def mirror(traces_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Mirror]:
    """The pinned files copied from the project's traces into a mirror's layout and served over HTTP; the user
    cache in tmp_path, the mirror variable pointing at the server."""
    root = tmp_path / "mirror"
    for file in QUICKSTART_FILES:
        served = root / file.repo / file.commit / file.path
        served.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(traces_dir / file.local, served)
    requests: Counter[str] = Counter()

    class Handler(SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            requests[self.path] += 1
            super().do_GET()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TRACEGYM_CACHE", raising=False)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv(MIRROR_ENV, url)
    yield Mirror(url, root, requests)
    server.shutdown()
    server.server_close()


def _cached(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "tracegym"


def test_the_quickstart_fetches_its_traces_once_checks_them_and_says_from_where(mirror, traces_dir, tmp_path,
                                                                             capsys):
    folders = trace_paths(None)  # no ../shared/data/traces beside the test's working folder
    said = " ".join(capsys.readouterr().err.split())
    traces = _cached(tmp_path) / "traces"
    assert folders == [traces / "mini-swe-agent", traces / "tau-bench"]
    origins = "(gruckion/mini-swe-agent @ d12a71af; sierra-research/tau-bench @ 59a200c6)"
    assert re.search(rf"Fetched 37 public trace files \(11\.\d MB\) from {re.escape(mirror.url)} "
                     rf"{re.escape(origins)} into {re.escape(str(traces))}, each checked", said), said
    for file in QUICKSTART_FILES:
        assert (traces / file.local).read_bytes() == (traces_dir / file.local).read_bytes()
    assert not list((_cached(tmp_path) / "downloads").iterdir())  # no partial file left behind

    again = fetch()
    assert again.downloaded == [] and sum(mirror.requests.values()) == len(QUICKSTART_FILES)


@pytest.mark.slow  # ingests τ-bench and the mini-swe-agent runs (~9 s)
def test_the_fetched_folders_ingest_with_their_outcomes(mirror, tmp_path, cli):
    folders = fetch().folders
    result = cli("ingest", *folders, "--store", tmp_path / "store.duckdb", "--json")
    assert result.exit_code == 0, result.output
    with open_store(tmp_path / "store.duckdb", read_only=True) as st:
        rows = st.query("SELECT format, count(*) AS n, count(outcome) AS labelled FROM traces GROUP BY 1")
    counts = {r["format"]: (r["n"], r["labelled"]) for r in rows}
    assert counts == {"mini-swe-agent": (35, 35), "tau-bench": (200, 200)}  # outcomes from results_summary.json


def test_a_file_with_other_bytes_is_deleted_and_the_quickstart_stops(mirror, tmp_path):
    last = QUICKSTART_FILES[-1]
    served = mirror.root / last.repo / last.commit / last.path
    served.write_bytes(served.read_bytes().replace(b"bash", b"BASH"))
    code, shown = terminal_session("quickstart", cwd=tmp_path)
    said = " ".join(re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown).split())
    assert code == 2 and "fetching 37 trace files" in said, said  # the progress bar, on a terminal
    assert f"{last.url(mirror.url)} did not hold the pinned bytes" in said and "partial file was deleted" in said
    traces = _cached(tmp_path) / "traces"
    assert not (traces / last.local).exists() and not list((_cached(tmp_path) / "downloads").iterdir())
    assert all((traces / f.local).is_file() for f in QUICKSTART_FILES[:-1])  # the good files are kept


@pytest.mark.parametrize("case", ["offline", "missing"])
def test_an_unreachable_mirror_stops_with_one_message_naming_both_ways_out(mirror, tmp_path, monkeypatch, cli, case):
    if case == "offline":
        with socket.socket() as s:  # a port nothing listens on
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        monkeypatch.setenv(MIRROR_ENV, f"http://127.0.0.1:{port}")
    else:
        first = QUICKSTART_FILES[0]
        (mirror.root / first.repo / first.commit / first.path).unlink()
    result = cli("quickstart")
    said = " ".join(result.stderr.split())
    assert result.exit_code == 2, result.output
    assert said.count("Could not fetch") == 1 and "Traceback" not in said
    assert ("Connection refused" if case == "offline" else "(HTTP 404)") in said
    assert MIRROR_ENV in said and "tracegym quickstart --traces DIR" in said
    assert not (_cached(tmp_path) / "traces").exists() and not (tmp_path / ".tracegym").exists()
