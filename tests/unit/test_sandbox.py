"""Fast checks of the sandbox package: limits, results, workspaces, the factory, start failures."""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pydantic
import pytest

from tracegym.errors import ConfigError, SandboxError
from tracegym.harnesses.sandbox import (
    BwrapSandbox,
    CommandResult,
    Limits,
    SandboxIsolationWarning,
    SubprocessSandbox,
    Workspaces,
    bwrap_problem,
    factory,
    identity,
    make_sandbox,
    watches,
)
from tracegym.harnesses.sandbox.process import rlimits_for
from tracegym.harnesses.sandbox.results import Outcome, make_result, stop_reason
from tracegym.harnesses.sandbox.supervise import OutputBudget
from tracegym.harnesses.sandbox.watches import Watch, tree_bytes, tree_rss

MIB = 1024 * 1024


def _outcome(exit_code: int = 0, stderr: bytes = b"", cpu: float | None = 0.1, killed=None) -> Outcome:
    return Outcome(
        exit_code=exit_code, stdout=b"", stderr=stderr, truncated=False, killed=killed, duration_s=0.1, cpu_seconds=cpu
    )


@pytest.fixture
def any_sandbox():
    """bubblewrap where it works, else the subprocess fallback: the fast checks need only one."""
    if bwrap_problem() is None:
        return BwrapSandbox()
    with pytest.warns(SandboxIsolationWarning):
        return SubprocessSandbox()


def test_limits_reject_unknown_fields_and_bad_bounds() -> None:
    with pytest.raises(pydantic.ValidationError):
        Limits(wall_secs=3)
    with pytest.raises(pydantic.ValidationError):
        Limits(max_processes=1)
    assert Limits().network is False


def test_every_limit_and_result_field_is_documented() -> None:
    for model in (Limits, CommandResult):
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no docstring"


@pytest.mark.parametrize(
    ("outcome", "reason"),
    [
        (_outcome(0), None),
        (_outcome(1, b"ls: cannot access 'x'"), None),
        (_outcome(128 + signal.SIGXCPU), "cpu_time"),
        (_outcome(128 + signal.SIGKILL, cpu=5.0), "cpu_time"),
        (_outcome(128 + signal.SIGKILL, cpu=0.1), None),
        (_outcome(128 + signal.SIGXFSZ), "file_size"),
        (_outcome(1, b"OSError: [Errno 27] File too large"), "file_size"),
        (_outcome(1, b"Traceback ...\nMemoryError\n"), "memory"),
        (_outcome(1, b"tail: memory exhausted"), "memory"),
        (_outcome(1, b"MemoryError", killed="wall_time"), "wall_time"),
    ],
)
def test_stop_reason(outcome: Outcome, reason: str | None) -> None:
    assert stop_reason(outcome, Limits(cpu_seconds=5)) == reason


def test_output_budget_is_shared_and_marks_truncation() -> None:
    budget = OutputBudget(budget=10)
    budget.keep(budget.out, b"123456")
    budget.keep(budget.err, b"abcdef")
    assert (bytes(budget.out), bytes(budget.err), budget.truncated) == (b"123456", b"abcd", True)


def test_result_decodes_bad_bytes_and_marks_truncation() -> None:
    outcome = Outcome(
        exit_code=137, stdout=b"ok \xff", stderr=b"", truncated=True, killed="output", duration_s=1.0, cpu_seconds=0.5
    )
    result = make_result(outcome, Limits(output_bytes=4), "bwrap", [])
    assert result.stdout == "ok \ufffd"
    assert "output truncated at 4 bytes" in result.stderr
    assert (result.killed, result.timed_out, result.truncated) == ("output", False, True)


def test_rlimits_follow_the_limits_within_inherited_hard_limits() -> None:
    wanted = {
        "RLIMIT_CPU": (7, 8),
        "RLIMIT_AS": (300 * MIB, 300 * MIB),
        "RLIMIT_FSIZE": (20 * MIB, 20 * MIB),
        "RLIMIT_NPROC": (40, 40),
        "RLIMIT_CORE": (0, 0),
    }
    got = rlimits_for(Limits(cpu_seconds=7, memory_mb=300, file_size_mb=20), nproc=40)
    assert set(got) == set(wanted)
    for name, (soft, hard) in wanted.items():
        inherited = resource.getrlimit(getattr(resource, name))[1]
        cap = hard if inherited == resource.RLIM_INFINITY else inherited
        assert got[name] == (min(soft, cap), min(hard, cap))


def test_tree_bytes_counts_allocation_not_apparent_size(tmp_path: Path) -> None:
    (tmp_path / "dense").write_bytes(b"x" * MIB)
    with open(tmp_path / "sparse", "wb") as sparse:
        sparse.truncate(100 * MIB)
    os.symlink("/usr", tmp_path / "link")
    assert MIB <= tree_bytes(tmp_path) < 2 * MIB


def test_tree_rss_counts_descendants() -> None:
    # The grandchild holds its memory until the test kills it: however long it takes to start, it is there.
    hog = "import time; b = bytearray(64 * 2**20); time.sleep(600)"
    spawn_hog = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {hog!r}])"
    parent = subprocess.Popen([sys.executable, "-c", spawn_hog])
    try:
        deadline = time.monotonic() + 300  # a hang guard
        while tree_rss(parent.pid) < 64 * MIB and time.monotonic() < deadline:
            time.sleep(0.05)
        assert tree_rss(parent.pid) >= 64 * MIB
    finally:
        for task in identity.iter_tasks():
            if task.pid != parent.pid and _descends(task.pid, parent.pid):
                os.kill(task.pid, signal.SIGKILL)
        parent.kill()
        parent.wait()


def _descends(pid: int, ancestor: int) -> bool:
    while pid > 1:
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[1])
        except FileNotFoundError:
            return False
        if pid == ancestor:
            return True
    return False


def test_watch_polls_no_more_often_than_its_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a clock the test moves (a loaded machine may pause the test longer than the interval at any line)."""
    now = [100.0]
    monkeypatch.setattr(watches, "time", SimpleNamespace(monotonic=lambda: now[0]))
    calls = []
    watch = Watch(lambda: calls.append(1) or 10, limit=5, min_interval_s=0.2)
    assert watch.over() is False  # not yet due
    now[0] += 0.25
    assert watch.over() is True
    assert watch.over() is False  # measured just now
    assert len(calls) == 1


def test_workspace_from_template_and_files(tmp_path: Path) -> None:
    template = tmp_path / "template"
    (template / "src").mkdir(parents=True)
    (template / "src" / "app.py").write_text("print('v1')\n")
    (template / "README").write_text("template\n")
    workspaces = Workspaces(tmp_path / "runs")
    path = workspaces.create("ep-1", template=template, files={"src/app.py": "print('v2')\n", "data/blob": b"\x00\x01"})
    assert path == (tmp_path / "runs" / "ep-1").resolve()
    assert (path / "src" / "app.py").read_text() == "print('v2')\n"
    assert (path / "README").read_text() == "template\n"
    assert (path / "data" / "blob").read_bytes() == b"\x00\x01"
    assert (template / "src" / "app.py").read_text() == "print('v1')\n"


@pytest.mark.parametrize("name", ["../escape", "/etc/passwd", "a/../../escape", "", "link/escape"])
def test_workspace_files_cannot_leave_the_workspace(tmp_path: Path, name: str) -> None:
    template = tmp_path / "template"
    template.mkdir()
    os.symlink(tmp_path, template / "link")
    with pytest.raises(SandboxError):
        Workspaces(tmp_path / "runs").create("ep", template=template, files={name: "x"})
    assert not (tmp_path / "escape").exists()


def test_workspace_names_and_reuse_are_checked(tmp_path: Path) -> None:
    workspaces = Workspaces(tmp_path / "runs")
    with pytest.raises(SandboxError, match="episode id"):
        workspaces.create("../up")
    workspaces.create("ep")
    with pytest.raises(SandboxError, match="already exists"):
        workspaces.create("ep")
    with pytest.raises(SandboxError, match="refusing"):
        workspaces.remove(tmp_path)


def test_workspace_is_removed_even_when_made_read_only(tmp_path: Path) -> None:
    workspaces = Workspaces(tmp_path / "runs")
    with workspaces.episode("ep", files={"deep/file.txt": "x"}) as path:
        os.chmod(path / "deep", 0o500)
        os.chmod(path, 0o500)
    assert not path.exists()


def test_make_sandbox_rejects_unknown_kinds() -> None:
    with pytest.raises(ConfigError, match="bwrap"):
        make_sandbox("bwrp")  # type: ignore[arg-type]


def test_make_sandbox_auto_picks_bwrap_where_it_works() -> None:
    if bwrap_problem() is not None:
        pytest.skip(f"bubblewrap cannot run here: {bwrap_problem()}")
    assert make_sandbox("auto").kind == "bwrap"
    assert make_sandbox("bwrap").kind == "bwrap"


def test_make_sandbox_auto_falls_back_only_where_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(factory, "bwrap_problem", lambda: "bwrap: setting up uid map: Permission denied")
    with pytest.raises(SandboxError, match="uid map.*allow_unisolated"):
        make_sandbox("auto")
    with pytest.warns(SandboxIsolationWarning, match="fell back to it because.*uid map"):
        assert make_sandbox("auto", allow_unisolated=True).kind == "subprocess"
    with pytest.raises(SandboxError, match="uid map"):
        make_sandbox("bwrap", allow_unisolated=True)
    with pytest.raises(ConfigError, match="allow_unisolated"):
        make_sandbox("subprocess")
    with pytest.warns(SandboxIsolationWarning, match="chosen with sandbox: subprocess"):
        assert make_sandbox("subprocess", allow_unisolated=True).kind == "subprocess"


def test_docker_kind_without_an_engine_raises_a_sandbox_error() -> None:
    from tracegym.harnesses.sandbox.docker import connect

    try:
        connect()
    except SandboxError:
        with pytest.raises(SandboxError, match="no Docker engine reachable"):
            make_sandbox("docker")
    else:
        pytest.skip("a Docker engine is reachable here; the integration tests cover it")


def test_missing_bwrap_is_a_sandbox_error() -> None:
    with pytest.raises(SandboxError, match="apt-get install bubblewrap"):
        BwrapSandbox(executable="bwrap-that-does-not-exist")


def test_sandbox_that_cannot_start_raises(tmp_path: Path) -> None:
    if bwrap_problem() is not None:
        pytest.skip(f"bubblewrap cannot run here: {bwrap_problem()}")
    workspace = Workspaces(tmp_path / "runs").create("ep")
    # bubblewrap cannot mount the workspace over procfs, so no command ever starts.
    with pytest.raises(SandboxError, match="could not start"):
        BwrapSandbox(workdir="/proc/sys/kernel/hostname").run("true", workspace)


def test_missing_workspace_is_a_sandbox_error(any_sandbox, tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="not a directory"):
        any_sandbox.run("true", tmp_path / "missing")


def test_host_environment_does_not_leak(any_sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACEGYM_TEST_SECRET", "hunter2")
    workspace = Workspaces(tmp_path / "runs").create("ep")
    result = any_sandbox.run("env", workspace, Limits(wall_seconds=10))
    assert "hunter2" not in result.stdout
    assert "HOME=" in result.stdout and "PATH=" in result.stdout


def test_arun_runs_from_an_event_loop(any_sandbox, tmp_path: Path) -> None:
    workspaces = Workspaces(tmp_path / "runs")
    paths = [workspaces.create(f"ep-{i}") for i in range(3)]

    async def main():
        limits = Limits(wall_seconds=10)
        return await asyncio.gather(*(any_sandbox.arun(f"echo {i}", p, limits) for i, p in enumerate(paths)))

    results = asyncio.run(main())
    assert [r.stdout for r in results] == ["0\n", "1\n", "2\n"]


def test_commands_longer_than_the_kernel_argument_limit_run(any_sandbox, tmp_path: Path) -> None:
    workspace = Workspaces(tmp_path / "runs").create("ep")
    body = "x" * 300_000
    result = any_sandbox.run(f"cat > big.txt <<'EOF'\n{body}\nEOF\nwc -c < big.txt", workspace, Limits(wall_seconds=10))
    assert (result.exit_code, result.stdout) == (0, f"{len(body) + 1}\n")

