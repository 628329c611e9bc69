"""Docker: for users who run an engine, one container per workspace (and set of limits).

The container has a read-only root, the workspace bind-mounted read-write at
`/workspace` (and a command's `ro_paths` read-only at their own paths: the
engine must run on this machine), a size-capped /tmp, no network
(`network_mode='none'`), all capabilities dropped, a memory cgroup
(`mem_limit`, no swap) and a pids cgroup (`pids_limit`). CPU time, per-process data size and file size are container
ulimits. Each command is a `docker exec` as the workspace's uid; after it ends,
whatever it left running is killed. A limit breach, or the caller's stop, kills
the whole container, which the next command replaces.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from tracegym.errors import SandboxError
from tracegym.harnesses.sandbox import identity
from tracegym.harnesses.sandbox.base import CommandResult, KillReason, Limits, Sandbox
from tracegym.harnesses.sandbox.results import Outcome, make_result
from tracegym.harnesses.sandbox.supervise import OutputBudget, breach, limit_watches
from tracegym.harnesses.sandbox.watches import Watch

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container
    from docker.types import Ulimit

_MIB = 1024 * 1024
_SHM_MB = 64
# Prefer bash where the image has it, as the other backends do.
_SHELL = ["/bin/sh", "-c", 'if [ -x /bin/bash ]; then exec /bin/bash -c "$0"; fi; exec /bin/sh -c "$0"']
_TICK_S = 0.05


def connect() -> DockerClient:
    """A docker client whose engine answers, or SandboxError saying why not."""
    import docker

    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as exc:
        raise SandboxError(
            f"no Docker engine reachable ({exc}). Start Docker (or set DOCKER_HOST), or use the bwrap sandbox."
        ) from exc
    return client


class DockerSandbox(Sandbox):
    """Runs commands with `docker exec` in a container per workspace; see the module docstring."""

    kind = "docker"
    isolated = True

    def __init__(self, image: str = "python:3.11-slim", workdir: str = "/workspace",
                 client: DockerClient | None = None) -> None:
        self._client = client if client is not None else connect()
        self._image = image
        self._workdir = workdir
        self._containers: dict[_Key, Container] = {}
        self._lock = threading.Lock()

    def run(
        self,
        command: str,
        workspace: Path,
        limits: Limits | None = None,
        env: Mapping[str, str] | None = None,
        *,
        ro_paths: Sequence[Path] = (),
        stop: threading.Event | None = None,
        keep_tail: bool = False,
    ) -> CommandResult:
        import docker

        limits = limits or Limits()
        workspace = Path(workspace).resolve()
        if not workspace.is_dir():
            raise SandboxError(f"workspace {workspace} is not a directory; create it first.")
        uid = identity.workspace_uid(workspace)
        user = f"{uid}:{uid}" if uid is not None else f"{os.getuid()}:{os.getgid()}"
        key = _Key(workspace, limits, tuple(sorted(Path(p).resolve() for p in ro_paths)))
        output = OutputBudget(budget=limits.output_bytes, tail=keep_tail)
        try:
            container = self._container(key)
            outcome = self._exec(container, command, user, key, dict(env or {}), output, stop)
        except docker.errors.DockerException as exc:
            self._forget(key)
            raise SandboxError(f"the docker sandbox failed for {workspace}: {exc}") from exc
        return make_result(outcome, limits, self.kind, [])

    def inside_path(self, workspace: Path) -> str:
        return self._workdir

    def _exec(
        self,
        container: Container,
        command: str,
        user: str,
        key: _Key,
        env: dict[str, str],
        output: OutputBudget,
        stop: threading.Event | None,
    ) -> Outcome:
        api = self._client.api
        exec_id = api.exec_create(container.id, [*_SHELL, command], user=user, workdir=self._workdir,
                                  environment=env)["Id"]
        stream = api.exec_start(exec_id, stream=True, demux=True)
        reader = threading.Thread(target=_read, args=(stream, output), daemon=True)
        started = time.monotonic()
        reader.start()
        # Memory is the container's cgroup's job; only the workspace's size needs polling.
        watches = limit_watches(key.limits, key.workspace, root_pid=None)
        killed = _watch(reader, output, watches, started + key.limits.wall_seconds, stop)
        if killed is not None:
            self._forget(key)  # removing the container is the only way to stop an exec
            code = 137
        else:
            code = int(api.exec_inspect(exec_id)["ExitCode"])
            # Nothing the command left running may outlive it: kill -1 reaches every process of its uid.
            api.exec_start(api.exec_create(container.id, ["/bin/sh", "-c", "kill -9 -1"], user=user)["Id"])
        reader.join(timeout=5)
        return Outcome(
            exit_code=code,
            stdout=bytes(output.out),
            stderr=bytes(output.err),
            truncated=output.truncated,
            killed=killed,
            duration_s=time.monotonic() - started,
            cpu_seconds=None,
            kept_tail=output.tail,
        )

    def _container(self, key: _Key) -> Container:
        workspace, limits = key.workspace, key.limits
        volumes = {str(path): {"bind": str(path), "mode": "ro"} for path in key.ro_paths}
        with self._lock:
            if key not in self._containers:
                self._containers[key] = self._client.containers.run(
                    self._image,
                    ["sleep", "infinity"],
                    detach=True,
                    init=True,
                    read_only=True,
                    network_mode="bridge" if limits.network else "none",
                    mem_limit=f"{limits.memory_mb}m",
                    memswap_limit=f"{limits.memory_mb}m",
                    pids_limit=limits.max_processes + 2,  # the init and `sleep infinity` count too
                    cap_drop=["ALL"],
                    security_opt=["no-new-privileges"],
                    ulimits=_ulimits(limits),
                    tmpfs={"/tmp": f"size={limits.disk_mb}m,mode=1777"},
                    shm_size=f"{min(limits.disk_mb, _SHM_MB)}m",
                    volumes={**volumes, str(workspace): {"bind": self._workdir, "mode": "rw"}},
                    working_dir=self._workdir,
                    environment={"HOME": self._workdir, "TMPDIR": "/tmp", "LANG": "C.UTF-8"},
                )
            return self._containers[key]

    def _forget(self, key: _Key) -> None:
        import docker

        with self._lock:
            container = self._containers.pop(key, None)
        if container is not None:
            try:
                container.remove(force=True)
            except docker.errors.NotFound:
                pass

    def close(self) -> None:
        for key in list(self._containers):
            self._forget(key)


class _Key(NamedTuple):
    """What a container is made for: commands sharing all three share it."""

    workspace: Path
    limits: Limits
    ro_paths: tuple[Path, ...]


def _ulimits(limits: Limits) -> list[Ulimit]:
    import docker

    def fixed(name: str, value: int) -> Ulimit:
        return docker.types.Ulimit(name=name, soft=value, hard=value)

    return [
        # The hard CPU limit a second later turns an ignored SIGXCPU into SIGKILL.
        docker.types.Ulimit(name="cpu", soft=limits.cpu_seconds, hard=limits.cpu_seconds + 1),
        # Docker has no RLIMIT_AS; RLIMIT_DATA covers heap and anonymous mappings alike.
        fixed("data", limits.memory_mb * _MIB),
        fixed("fsize", limits.file_size_mb * _MIB),
        fixed("core", 0),
    ]


def _read(stream: Iterable[tuple[bytes | None, bytes | None]], output: OutputBudget) -> None:
    for out, err in stream:
        if out:
            output.keep(output.out, out)
        if err:
            output.keep(output.err, err)
        if output.over:
            return


def _watch(
    reader: threading.Thread,
    output: OutputBudget,
    watches: list[tuple[KillReason, Watch]],
    deadline: float,
    stop: threading.Event | None,
) -> KillReason | None:
    """Wait for the exec's output to end; the limit broken first, or the caller's stop, ends it sooner."""
    while reader.is_alive():
        killed = breach(output, watches, deadline, stop)
        if killed is not None:
            return killed
        reader.join(timeout=_TICK_S)
    # The reader stops early once output overflows, while the command itself still runs.
    return "output" if output.over else None
