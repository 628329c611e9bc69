"""The docker backend's own logic against a fake engine (the engine's API is the boundary).

The real engine is exercised by tests/integration/test_sandbox_limits.py where
one is reachable; these check what the backend asks the engine for and how it
turns streams, time-outs and floods into results.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from tracegym.errors import SandboxError
from tracegym.harnesses.sandbox import Limits, Workspaces
from tracegym.harnesses.sandbox.docker import DockerSandbox

LIMITS = Limits(wall_seconds=1, memory_mb=256, max_processes=32, output_bytes=1000)


class FakeContainer:
    def __init__(self, number: int, options: dict[str, Any]) -> None:
        self.id = f"container-{number}"
        self.options = options
        self.removed = False

    def remove(self, force: bool) -> None:
        self.removed = True


class FakeAPI:
    """Runs scripted commands: 'echo X' prints X, 'sleep' blocks until removal, 'yes' floods, 'fail' exits 3."""

    def __init__(self, containers: dict[str, FakeContainer]) -> None:
        self.containers = containers
        self.execs: dict[str, dict[str, Any]] = {}

    def exec_create(self, container_id: str, cmd: list[str], user: str = "", workdir: str | None = None,
                    environment: dict[str, str] | None = None) -> dict:
        exec_id = f"exec-{len(self.execs)}"
        self.execs[exec_id] = {"container": container_id, "cmd": cmd, "user": user, "workdir": workdir,
                               "environment": environment}
        return {"Id": exec_id}

    def exec_start(self, exec_id: str, stream: bool = False, demux: bool = False) -> Any:
        chunks = self._chunks(self.execs[exec_id])
        return chunks if stream else b"".join(out or b"" for out, _ in chunks)

    def _chunks(self, record: dict[str, Any]) -> Iterator[tuple[bytes | None, bytes | None]]:
        container = self.containers[record["container"]]
        command = record["cmd"][-1]
        if command.startswith("echo "):
            yield command[5:].encode() + b"\n", None
        elif command == "fail":
            yield None, b"boom\n"
        elif command == "yes":
            for _ in itertools.count():
                if container.removed:
                    return
                yield b"y\n" * 100, None
        elif command == "sleep":
            while not container.removed:
                time.sleep(0.01)

    def exec_inspect(self, exec_id: str) -> dict:
        return {"ExitCode": 3 if self.execs[exec_id]["cmd"][-1] == "fail" else 0}


class FakeClient:
    def __init__(self) -> None:
        self.made: dict[str, FakeContainer] = {}
        self.api = FakeAPI(self.made)
        self.containers = self

    def run(self, image: str, command: list[str], **options: Any) -> FakeContainer:
        container = FakeContainer(len(self.made), {"image": image, "command": command, **options})
        self.made[container.id] = container
        return container


@pytest.fixture
def engine() -> FakeClient:
    return FakeClient()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return Workspaces(tmp_path / "runs").create("ep")


def test_container_is_locked_down(engine: FakeClient, workspace: Path) -> None:
    result = DockerSandbox(client=engine).run("echo hi", workspace, LIMITS)
    assert (result.exit_code, result.stdout, result.killed, result.backend) == (0, "hi\n", None, "docker")
    (container,) = engine.made.values()
    options = container.options
    assert options["network_mode"] == "none"
    assert options["read_only"] is True
    assert options["cap_drop"] == ["ALL"]
    assert (options["mem_limit"], options["memswap_limit"]) == ("256m", "256m")
    assert options["pids_limit"] == 34
    assert options["volumes"] == {str(workspace.resolve()): {"bind": "/workspace", "mode": "rw"}}
    assert {ulimit["Name"] for ulimit in options["ulimits"]} == {"cpu", "data", "fsize", "core"}


def test_leftovers_are_killed_after_each_command(engine: FakeClient, workspace: Path) -> None:
    DockerSandbox(client=engine).run("echo hi", workspace, LIMITS)
    command, cleanup = engine.api.execs.values()
    assert cleanup["cmd"] == ["/bin/sh", "-c", "kill -9 -1"]
    assert cleanup["user"] == command["user"] and command["user"] != ""


def test_a_commands_own_variables_reach_its_exec(engine: FakeClient, workspace: Path) -> None:
    sandbox = DockerSandbox(client=engine)
    sandbox.run("echo hi", workspace, LIMITS, env={"TRACEGYM_FINAL_ANSWER": "42"})
    command, _ = engine.api.execs.values()
    assert command["environment"] == {"TRACEGYM_FINAL_ANSWER": "42"} and command["workdir"] == "/workspace"
    assert sandbox.inside_path(workspace) == "/workspace"


def test_exit_code_and_stderr_come_back(engine: FakeClient, workspace: Path) -> None:
    result = DockerSandbox(client=engine).run("fail", workspace, LIMITS)
    assert (result.exit_code, result.stderr, result.killed) == (3, "boom\n", None)


def test_wall_time_removes_the_container_and_the_next_command_gets_a_new_one(
    engine: FakeClient, workspace: Path
) -> None:
    sandbox = DockerSandbox(client=engine)
    result = sandbox.run("sleep", workspace, LIMITS)
    assert (result.killed, result.timed_out, result.exit_code) == ("wall_time", True, 137)
    assert [c.removed for c in engine.made.values()] == [True]
    sandbox.run("echo again", workspace, LIMITS)
    assert len(engine.made) == 2


def test_read_only_paths_are_mounted_read_only_and_get_a_container_of_their_own(
    engine: FakeClient, workspace: Path, tmp_path: Path
) -> None:
    sandbox = DockerSandbox(client=engine)
    sandbox.run("echo hi", workspace, LIMITS)
    sandbox.run("echo hi", workspace, LIMITS, ro_paths=[tmp_path / "agent"])
    plain, with_paths = engine.made.values()
    agent = str((tmp_path / "agent").resolve())
    assert agent not in plain.options["volumes"]
    assert with_paths.options["volumes"][agent] == {"bind": agent, "mode": "ro"}


def test_a_stop_from_outside_removes_the_container(engine: FakeClient, workspace: Path) -> None:
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    result = DockerSandbox(client=engine).run("sleep", workspace, LIMITS.model_copy(update={"wall_seconds": 30}),
                                              stop=stop)
    assert (result.killed, result.timed_out, result.exit_code) == ("stopped", False, 137)
    assert [c.removed for c in engine.made.values()] == [True]


def test_a_long_lived_programs_flood_keeps_its_tail_until_its_wall_time(engine: FakeClient, workspace: Path) -> None:
    result = DockerSandbox(client=engine).run("yes", workspace, LIMITS, keep_tail=True)
    assert (result.killed, result.truncated) == ("wall_time", True)
    assert result.stdout.endswith("y\n") and len(result.stdout) == LIMITS.output_bytes


def test_output_flood_is_capped(engine: FakeClient, workspace: Path) -> None:
    result = DockerSandbox(client=engine).run("yes", workspace, LIMITS)
    assert (result.killed, result.truncated) == ("output", True)
    assert len(result.stdout) <= LIMITS.output_bytes
    assert all(c.removed for c in engine.made.values())


def test_network_when_allowed(engine: FakeClient, workspace: Path) -> None:
    DockerSandbox(client=engine).run("echo hi", workspace, LIMITS.model_copy(update={"network": True}))
    (container,) = engine.made.values()
    assert container.options["network_mode"] == "bridge"


def test_engine_errors_become_sandbox_errors(engine: FakeClient, workspace: Path, monkeypatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise docker.errors.APIError("image not found")

    monkeypatch.setattr(engine, "run", refuse)
    with pytest.raises(SandboxError, match="image not found"):
        DockerSandbox(client=engine).run("echo hi", workspace, LIMITS)


def test_close_removes_every_container(engine: FakeClient, tmp_path: Path) -> None:
    workspaces = Workspaces(tmp_path / "runs")
    sandbox = DockerSandbox(client=engine)
    for name in ("a", "b"):
        sandbox.run("echo hi", workspaces.create(name), LIMITS)
    sandbox.close()
    assert [c.removed for c in engine.made.values()] == [True, True]
