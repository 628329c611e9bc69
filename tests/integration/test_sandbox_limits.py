"""Each sandbox backend that runs here, against the limits it promises.

bubblewrap and the subprocess fallback run on every Linux machine with bwrap
installed; docker runs where an engine answers and is skipped otherwise. Every
command is bounded by a short wall time, so a broken limit fails a test rather
than the machine.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tracegym.errors import SandboxError
from tracegym.harnesses.sandbox import Limits, Sandbox, Workspaces, bwrap_problem
from tracegym.harnesses.sandbox.bwrap import BwrapSandbox
from tracegym.harnesses.sandbox.subprocess_rlimit import (
    SandboxIsolationWarning,
    SubprocessSandbox,
)
from tracegym.harnesses.sandbox.watches import tree_bytes

MIB = 1024 * 1024
QUICK = Limits(wall_seconds=10, cpu_seconds=5, memory_mb=256, file_size_mb=16, disk_mb=64, max_processes=32)


def _bwrap() -> Sandbox:
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"bubblewrap cannot run here: {problem}")
    return BwrapSandbox()


def _subprocess() -> Sandbox:
    with pytest.warns(SandboxIsolationWarning):
        return SubprocessSandbox()


def _docker() -> Iterator[Sandbox]:
    from tracegym.harnesses.sandbox.docker import DockerSandbox, connect

    try:
        client = connect()
    except SandboxError:
        pytest.skip("no Docker engine reachable")
    sandbox = DockerSandbox(client=client)
    yield sandbox
    sandbox.close()


@pytest.fixture(params=["bwrap", "subprocess", "docker"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    if request.param == "docker":
        yield from _docker()
    else:
        yield _bwrap() if request.param == "bwrap" else _subprocess()


@pytest.fixture(params=["bwrap", "subprocess"])
def process_backend(request: pytest.FixtureRequest) -> Sandbox:
    """The backends that run commands as host processes under rlimits and polled watches."""
    return _bwrap() if request.param == "bwrap" else _subprocess()


@pytest.fixture(params=["bwrap", "docker"])
def isolated(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """The backends that claim isolation from the network and the host's files."""
    if request.param == "docker":
        yield from _docker()
    else:
        yield _bwrap()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return Workspaces(tmp_path / "workspaces").create("episode-1", files={"task.txt": "fix the bug\n"})


def _processes_running(token: str) -> list[int]:
    """Live processes whose command line holds `token` (forked shells keep their parent's)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmdline = Path(entry.path, "cmdline").read_bytes()
            state = Path(entry.path, "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            continue
        if token.encode() in cmdline and state not in (b"Z", b"X"):
            found.append(int(entry.name))
    return found


def test_command_runs_in_its_workspace(sandbox: Sandbox, workspace: Path) -> None:
    result = sandbox.run("cat task.txt && echo done > out.txt", workspace, QUICK)
    assert (result.exit_code, result.stdout, result.killed) == (0, "fix the bug\n", None)
    assert (workspace / "out.txt").read_text() == "done\n"


def test_cannot_write_outside_the_workspace(sandbox: Sandbox, workspace: Path, tmp_path: Path) -> None:
    if not sandbox.isolated and os.geteuid() != 0:
        pytest.skip("the subprocess backend runs as the calling user when not root, who may write here")
    outside = tmp_path / "outside"
    outside.mkdir()
    result = sandbox.run(f"echo escaped > {outside}/escape.txt; echo escaped > ../escape.txt", workspace, QUICK)
    assert result.exit_code != 0
    assert not (outside / "escape.txt").exists()
    assert not (workspace.parent / "escape.txt").exists()


def test_system_is_read_only(sandbox: Sandbox, workspace: Path) -> None:
    probe = Path("/etc") / f"tracegym-probe-{uuid.uuid4().hex}"
    result = sandbox.run(f"touch {probe}", workspace, QUICK)
    assert result.exit_code != 0
    assert not probe.exists()


@contextmanager
def _listener() -> Iterator[int]:
    """A TCP server on the host's loopback, accepting until the block ends; yields its port."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)

    def serve() -> None:
        try:
            while True:
                server.accept()[0].close()
        except OSError:  # shut down by the test
            return

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        server.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept(); close() alone would not
        server.close()
        thread.join(timeout=5)


def test_network_is_unreachable(isolated: Sandbox, workspace: Path) -> None:
    with _listener() as port:
        connect = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
        outside = subprocess.run(["bash", "-c", connect], capture_output=True, text=True, timeout=10)
        inside = isolated.run(connect, workspace, QUICK)
    # The same connection works from the host, so only the sandbox's namespace can have stopped it.
    assert outside.stdout == "connected\n"
    assert inside.exit_code != 0 and "connected" not in inside.stdout


def test_network_when_allowed(workspace: Path) -> None:
    sandbox = _bwrap()
    with _listener() as port:
        command = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
        result = sandbox.run(command, workspace, QUICK.model_copy(update={"network": True}))
    assert result.stdout == "connected\n"


def test_subprocess_backend_says_it_is_not_isolated(workspace: Path) -> None:
    result = _subprocess().run("true", workspace, QUICK)
    assert SubprocessSandbox.isolated is False
    assert any("NOT isolated" in warning for warning in result.warnings)


def test_killed_at_wall_time(sandbox: Sandbox, workspace: Path) -> None:
    token = uuid.uuid4().hex
    result = sandbox.run(f": {token}; sleep 600; : > finished", workspace, QUICK.model_copy(update={"wall_seconds": 1}))
    assert result.timed_out and result.killed == "wall_time"
    assert result.exit_code == 137
    # Stopped at its limit, not when `sleep 600` would have ended (then writing `finished`).
    assert not (workspace / "finished").exists()
    assert _processes_running(token) == []


def test_killed_at_cpu_time(sandbox: Sandbox, workspace: Path) -> None:
    # A hang guard only: on a loaded machine a second of CPU can take more than QUICK's ten of wall-clock.
    limits = QUICK.model_copy(update={"cpu_seconds": 1, "wall_seconds": 300})
    result = sandbox.run("while :; do :; done", workspace, limits)
    assert result.killed == "cpu_time"
    assert not result.timed_out


def test_stopped_at_memory_limit(sandbox: Sandbox, workspace: Path) -> None:
    result = sandbox.run("python3 -c 'bytearray(2 * 1024**3)'", workspace, QUICK)
    assert result.killed == "memory", result.stderr
    assert result.exit_code != 0


def test_memory_of_many_processes_together_is_limited(process_backend: Sandbox, workspace: Path) -> None:
    # Each process stays under RLIMIT_AS; only the polled total of the tree can stop them.
    # The hogs hold their memory until stopped, so the total is reached however slowly the machine starts them.
    hog = "python3 -c 'import time; b = bytearray(100 * 2**20); time.sleep(600)'"
    limits = QUICK.model_copy(update={"wall_seconds": 300})  # a hang guard: the memory limit ends it
    result = process_backend.run(f"for i in $(seq 8); do {hog} & done; wait", workspace, limits)
    assert result.killed == "memory"


def test_fork_bomb_is_contained(sandbox: Sandbox, workspace: Path) -> None:
    token = uuid.uuid4().hex
    limits = QUICK.model_copy(update={"wall_seconds": 3, "max_processes": 32})
    peak = [0]
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], len(_processes_running(token)))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = sandbox.run(f": {token}; b() {{ b | b & }}; b; sleep 30", workspace, limits)
    finally:
        done.set()
        watcher.join()
    assert result.killed == "wall_time"
    assert "Resource temporarily unavailable" in result.stderr  # fork() hit the process cap
    assert 0 < peak[0] <= limits.max_processes
    assert _processes_running(token) == []
    assert subprocess.run(["true"], timeout=10).returncode == 0  # the host still starts processes


def test_ten_gigabyte_write_is_contained(sandbox: Sandbox, workspace: Path) -> None:
    result = sandbox.run("dd if=/dev/zero of=big bs=1M count=10240", workspace, QUICK)
    assert result.killed == "file_size", result.stderr
    assert (workspace / "big").stat().st_size <= QUICK.file_size_mb * MIB
    assert not result.timed_out


def test_many_files_are_stopped_at_the_disk_limit(sandbox: Sandbox, workspace: Path) -> None:
    result = sandbox.run("for i in $(seq 1000); do head -c 8M /dev/zero > f$i; done", workspace, QUICK)
    assert result.killed == "disk"
    # 1000 files would be 8 GB; the watcher's bounded overshoot keeps it far below that.
    assert tree_bytes(workspace) < 1024 * MIB


def test_private_tmp_is_capped(isolated: Sandbox, workspace: Path) -> None:
    limits = QUICK.model_copy(update={"file_size_mb": 1024, "disk_mb": 32})
    result = isolated.run("dd if=/dev/zero of=/tmp/big bs=1M count=10240", workspace, limits)
    assert result.exit_code != 0
    assert "No space left on device" in result.stderr


def test_a_long_lived_program_keeps_the_tail_of_its_output_and_is_never_stopped_for_it(
    sandbox: Sandbox, workspace: Path
) -> None:
    limits = QUICK.model_copy(update={"output_bytes": 10_000})
    result = sandbox.run("seq 100000; echo done >&2", workspace, limits, keep_tail=True)
    assert (result.exit_code, result.killed, result.truncated) == (0, None, True)
    assert len(result.stdout.encode()) == 10_000 and result.stdout.endswith("\n99999\n100000\n")
    assert result.stderr.endswith("done\n") and "earlier output dropped" in result.stderr


def test_a_started_program_is_stopped_from_outside_with_all_it_started(sandbox: Sandbox, workspace: Path) -> None:
    token = uuid.uuid4().hex
    command = f"(: {token}; sleep 600) & echo started; : > started; sleep 600"

    async def run_then_stop():
        running = sandbox.start(command, workspace, QUICK.model_copy(update={"wall_seconds": 600}))
        deadline = time.monotonic() + 300  # a hang guard, not a measure
        while not (workspace / "started").exists():  # it has started what it starts
            assert time.monotonic() < deadline, "the program never started"
            await asyncio.sleep(0.05)
        running.stop()
        return await running.wait()

    result = asyncio.run(run_then_stop())
    # Stopped from outside (not at its wall time, nor when its sleeps would have ended).
    assert (result.stdout, result.killed, result.timed_out) == ("started\n", "stopped", False)
    assert _processes_running(token) == []


def test_read_only_paths_are_visible_and_stay_read_only(isolated: Sandbox, workspace: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "tool.txt").write_text("the team's tool\n")
    command = f"cat {shared}/tool.txt; echo planted > {shared}/tool.txt || echo refused"
    result = isolated.run(command, workspace, QUICK, ro_paths=[shared])
    assert result.stdout == "the team's tool\nrefused\n"
    assert (shared / "tool.txt").read_text() == "the team's tool\n"


def test_output_is_capped(sandbox: Sandbox, workspace: Path) -> None:
    result = sandbox.run("yes", workspace, QUICK.model_copy(update={"output_bytes": 10_000}))
    assert result.killed == "output" and result.truncated
    assert len(result.stdout.encode()) <= 10_000
    assert "output truncated at 10000 bytes" in result.stderr


def test_background_processes_do_not_outlive_the_command(sandbox: Sandbox, workspace: Path) -> None:
    token = uuid.uuid4().hex
    command = f"(: {token}; sleep 60) & setsid bash -c ': {token}; sleep 60' & echo started"
    try:
        result = sandbox.run(command, workspace, QUICK)
        assert result.stdout == "started\n"
        assert result.killed is None  # it returned when the shell did, not at the wall-time limit
        if sandbox.isolated or os.geteuid() == 0:
            assert _processes_running(token) == []
    finally:
        # Without root, the subprocess backend cannot reach a process that left its session.
        for pid in _processes_running(token):
            os.kill(pid, signal.SIGKILL)
