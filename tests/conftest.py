"""Shared fixtures: the real public traces, fresh stores, and the CLI runner."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tracegym

# The README's test command runs two pytest-xdist workers, sized for the 2-core CI machine: each worker, and
# every process it starts (OMP_NUM_THREADS is inherited), runs torch on one thread. With torch's default of one
# thread per core in every process, OpenMP threads wait on each other and a model test runs many times slower
# than alone; the CPU count is not used because a container's quota can be far below it.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    os.environ["OMP_NUM_THREADS"] = "1"


# xdist hands out files in collection order (`--no-loadscope-reorder` in pyproject.toml): files with more tests
# first, as xdist's own reordering does, but the lint test first of all: mypy from a cold cache takes about a minute,
# and started last it would run after the other worker had finished.
_FIRST = "tests/unit/test_lint.py"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    per_file = Counter(item.nodeid.split("::")[0] for item in items)
    items.sort(key=lambda item: (not item.nodeid.startswith(_FIRST), -per_file[item.nodeid.split("::")[0]]))


def pytest_configure(config: pytest.Config) -> None:
    if _WORKERS > 1:
        import torch

        torch.set_num_threads(1)


@pytest.fixture
def one_thread(monkeypatch: pytest.MonkeyPatch):
    """Torch on one thread in this process and in the processes it starts, as under the README's test command,
    for tests that compare float results bit for bit or across batchings: with two threads on two cores the order
    of float sums is not fixed (`pytest -n 0` here: the embedding gradient's reductions differed by ~1e-4 of its
    largest entry across micro-batchings, and a resumed run's metrics from an uninterrupted one's in the last
    digits, differently each try)."""
    import torch

    threads = torch.get_num_threads()
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


SHARED = Path(__file__).resolve().parents[2] / "shared"
TRACES = SHARED / "data" / "traces"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def traces_dir() -> Path:
    """../shared/data/traces, the real public agent traces; skip where it is absent."""
    if not TRACES.is_dir():
        pytest.skip(f"real traces not found at {TRACES} (they live in ../shared beside the checkout)")
    return TRACES


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "store.duckdb"


@pytest.fixture
def store(store_path: Path):
    from tracegym.store import open_store

    st = open_store(store_path)
    yield st
    st.close()


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the developer's own store or caches."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TRACEGYM_STORE", raising=False)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture
def cli():
    """Run `tracegym ARGS...` in-process; returns the click Result (exit_code, stdout, stderr)."""
    from tracegym.cli import app

    runner = CliRunner()

    def run(*args: str, input: str | None = None):
        return runner.invoke(app, [str(a) for a in args], input=input, catch_exceptions=False)

    return run


def on_a_terminal(*args: str | Path, timeout: float = 60, cwd: Path | None = None) -> str:
    """`tracegym ARGS` under a pseudo-terminal, as a user runs it (rich styles and sizes output for a tty, and shows
    progress bars); everything it printed. Fails when it exits non-zero or goes quiet for `timeout` seconds."""
    code, shown = terminal_session(*args, timeout=timeout, cwd=cwd)
    assert code == 0, shown
    return shown


def terminal_session(*args: str | Path, timeout: float = 60, interrupt_on: str | Callable[[str], bool] | None = None,
                     cwd: Path | None = None, deadline: float = 900) -> tuple[int, str]:
    """`tracegym ARGS` under a pseudo-terminal (in `cwd`, with no TRACEGYM_STORE: the default store); its exit code
    and everything it printed. With `interrupt_on` (a regular expression the output matches, or a check given the
    output so far, asked at least every 0.1 s), one Ctrl-C (SIGINT) once it holds. Fails when the command goes quiet
    for `timeout` seconds, or is still running after `deadline` seconds however much it prints (a progress bar
    redraws forever in a stuck run): guards against a hang, not measures of speed."""
    unset = ("NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS", "TRACEGYM_STORE")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(TERM="xterm-256color", COLUMNS="120", PYTHONPATH=str(Path(tracegym.__file__).parents[1]))
    leader, follower = pty.openpty()
    with _as_a_shell_starts_it():
        proc = subprocess.Popen([sys.executable, "-m", "tracegym.cli", *map(str, args)], stdin=follower,
                                stdout=follower, stderr=follower, env=env, close_fds=True, cwd=cwd)
    os.close(follower)
    chunks: list[bytes] = []

    def shown() -> str:
        return b"".join(chunks).decode(errors="replace")

    if isinstance(interrupt_on, str):
        interrupt_on = _matches(interrupt_on)
    started = heard = time.monotonic()
    interrupted: float | None = None
    try:
        while time.monotonic() - heard < timeout:
            if interrupted is not None and time.monotonic() - interrupted > 5:
                print(f"still running 5 s after the Ctrl-C: {_signal_state(proc.pid)}")  # shown if the test fails
                interrupted = None
            if time.monotonic() - started > deadline:
                proc.kill()
                raise AssertionError(f"`tracegym {' '.join(map(str, args))}` still ran after {deadline:g} s "
                                     f"(a hang guard); it printed:\n{shown()[-6000:]}")
            if select.select([leader], [], [], 0.1)[0]:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                chunks.append(chunk)
                heard = time.monotonic()
            if interrupt_on is not None and interrupt_on(shown()):
                proc.send_signal(signal.SIGINT)
                interrupted, interrupt_on = time.monotonic(), None
    finally:
        os.close(leader)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise AssertionError(shown()) from None
    return code, shown()


@contextmanager
def _as_a_shell_starts_it() -> Iterator[None]:
    """Start a child as a shell starts a foreground command: Ctrl-C neither ignored nor blocked. A child inherits
    both from the process that starts it (an ignored signal survives exec), and a library loaded by an earlier test
    in this worker may have set either."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _signal_state(pid: int) -> str:
    """The signal lines of /proc/PID/status (pending, blocked, ignored, caught) and each thread's blocked set."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
        threads = {t.name: Path(t, "status").read_text().split("SigBlk:")[1].split()[0]
                   for t in Path(f"/proc/{pid}/task").iterdir()}
    except (OSError, IndexError):
        return "(gone)"
    return " ".join(line.replace("\t", "") for line in lines if line.startswith(("SigPnd", "ShdPnd", "SigBlk",
                                                                                 "SigIgn", "SigCgt"))) + \
        f"; threads' SigBlk {threads}"


@pytest.fixture(autouse=True)
def _signal_handlers_restored() -> Iterator[None]:
    """Put back the process's Ctrl-C and SIGTERM handlers after each test: libraries loaded in-process (verifiers'
    environments) install their own and keep them, which would change how later tests in this worker react."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in saved.items():
        if handler is not None and signal.getsignal(sig) is not handler:
            signal.signal(sig, handler)


def _matches(pattern: str) -> Callable[[str], bool]:
    return lambda text: re.search(pattern, text) is not None
