"""What every sandbox shares: the limits a command runs under, what comes back, and the interface.

A sandbox runs one shell command at a time inside an episode's workspace folder:
`run` blocks until it ends, `start` runs a long-lived program (the proxy's agent)
that the caller may stop at any time. Backends differ in how strongly they
isolate the command (see each module); `Sandbox.isolated` says whether the
filesystem outside the workspace and the network are really closed to it.
"""

from __future__ import annotations

import asyncio
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from tracegym.harnesses.sandbox.running import RunningCommand

KillReason = Literal["wall_time", "cpu_time", "memory", "output", "file_size", "disk", "stopped"]
"""Why a command was stopped before it finished on its own; "stopped": its caller stopped it (see `Sandbox.start`)."""


class Limits(BaseModel):
    """The resources one command may use; each is enforced by every backend."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    cpu_seconds: int = Field(60, ge=1)
    """CPU seconds each process may burn (RLIMIT_CPU); past it the process gets SIGXCPU, then SIGKILL a second later."""
    wall_seconds: float = Field(120.0, gt=0)
    """Seconds from start to finish; past it every process the command started is killed."""
    memory_mb: int = Field(1024, ge=64)
    """MiB of memory: each process's address space (RLIMIT_AS, allocations past it fail), and the resident
    memory of all the command's processes together (polled; past it the command is killed)."""
    output_bytes: int = Field(256 * 1024, ge=1)
    """Bytes of stdout and stderr, together, kept; one byte more and the command is killed."""
    file_size_mb: int = Field(256, ge=1)
    """Largest file, in MiB, any process may write (RLIMIT_FSIZE); writes past it fail."""
    disk_mb: int = Field(1024, ge=1)
    """MiB the workspace may hold (checked while the command runs), and the size of the sandbox's private /tmp."""
    max_processes: int = Field(64, ge=2)
    """Processes and threads the command may have at once (RLIMIT_NPROC under a uid of its own)."""
    network: bool = False
    """Whether the command may use the network; False gives it no interface but a loopback of its own."""


class CommandResult(BaseModel):
    """What one command did: its exit status, its (capped) output, and whether a limit stopped it."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    exit_code: int
    """The command's exit status; 128+N when signal N ended it (the shell's convention)."""
    stdout: str
    """Standard output, decoded as UTF-8 (bad bytes replaced), at most `Limits.output_bytes` plus a marker."""
    stderr: str
    """Standard error, decoded the same way, sharing the same byte budget."""
    timed_out: bool
    """True when the wall-time limit killed the command."""
    killed: KillReason | None
    """The limit that stopped the command, or None when it ended on its own terms."""
    truncated: bool
    """True when output was cut at `Limits.output_bytes` (for a command run with `keep_tail`: its oldest bytes)."""
    duration_s: float
    """Wall-clock seconds from start to the last process gone."""
    cpu_seconds: float | None = None
    """User plus system CPU seconds of the command and its reaped children, where the backend can tell."""
    backend: str
    """The sandbox kind that ran the command: 'bwrap', 'subprocess' or 'docker'."""
    warnings: list[str] = Field(default_factory=list)
    """Caveats about how the command ran, e.g. that the backend does not isolate it."""


class Sandbox(ABC):
    """Runs shell commands in a workspace folder under `Limits`.

    `run` blocks until the command and everything it started are gone; call
    `arun` from asyncio. A sandbox that cannot start raises `SandboxError`; a
    command that fails or hits a limit is a normal `CommandResult`.
    """

    kind: ClassVar[str]
    isolated: ClassVar[bool]
    """True when writes outside the workspace and network access are impossible, not merely discouraged."""

    @abstractmethod
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
        """Run `command` with `/bin/bash -c` (or `/bin/sh`) in `workspace`; return once all its processes are gone.

        `env` adds variables to the sandbox's own minimal environment for this command.
        `ro_paths` are host files and folders the command sees read-only at their own paths.
        Setting `stop` (from any thread) kills the command and all it started (`killed == "stopped"`).
        With `keep_tail`, output past `Limits.output_bytes` drops the oldest bytes of each stream
        instead of killing the command.
        One command at a time per workspace: whatever a command leaves running is
        killed when it ends, and that cleanup may reach a concurrent command there.
        """

    @abstractmethod
    def inside_path(self, workspace: Path) -> str:
        """Where commands see `workspace`."""

    async def arun(self, command: str, workspace: Path, limits: Limits | None = None) -> CommandResult:
        """`run` on a worker thread, so an event loop keeps serving other episodes meanwhile."""
        return await asyncio.to_thread(self.run, command, workspace, limits)

    def start(
        self,
        command: str,
        workspace: Path,
        limits: Limits | None = None,
        env: Mapping[str, str] | None = None,
        *,
        ro_paths: Sequence[Path] = (),
    ) -> RunningCommand:
        """Start a long-lived program from asyncio: `run` with `keep_tail`, on a thread of its own, until it ends
        or the caller stops it (`RunningCommand.stop`)."""
        stop = threading.Event()

        def run() -> CommandResult:
            return self.run(command, workspace, limits, env, ro_paths=ro_paths, stop=stop, keep_tail=True)

        return RunningCommand(run, stop)

    def close(self) -> None:  # noqa: B027 - most backends hold nothing between commands
        """Release what the sandbox holds (containers, for docker); commands already finished keep their results."""

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
