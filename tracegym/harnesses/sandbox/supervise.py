"""Watch a started command: read its output under a byte budget, enforce wall time, disk and memory, reap it.

Everything here is backend-neutral; a backend hands over the started process,
the read ends of its pipes, and a `kill` that takes down every process the
command started.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, overload

from tracegym.harnesses.sandbox.base import KillReason, Limits
from tracegym.harnesses.sandbox.results import Outcome
from tracegym.harnesses.sandbox.watches import Watch, tree_bytes, tree_rss

_READ_CHUNK = 65536
_EXIT_DRAIN_S = 0.5
"""How long output may keep arriving after the command exited (from processes being killed)."""
_TICK_S = 0.05
"""Longest sleep between checks on a command that has closed its pipes but not exited."""


@dataclass
class OutputBudget:
    """stdout and stderr as read so far: the first `budget` bytes of the two together, or with `tail` the last
    `budget` bytes of each."""

    budget: int
    tail: bool = False
    """Keep each stream's newest bytes and never stop the command for its output (a long-lived program's logs)."""
    out: bytearray = field(default_factory=bytearray)
    err: bytearray = field(default_factory=bytearray)
    truncated: bool = False

    def keep(self, buffer: bytearray, data: bytes) -> None:
        if self.tail:
            buffer += data
            if len(buffer) > self.budget:
                del buffer[: len(buffer) - self.budget]
                self.truncated = True
            return
        room = self.budget - len(self.out) - len(self.err)
        buffer += data[: max(room, 0)]
        if len(data) > room:
            self.truncated = True

    @property
    def over(self) -> bool:
        """Whether the output broke the budget, so the command must be killed."""
        return self.truncated and not self.tail


def supervise(
    process: subprocess.Popen[bytes],
    side_pipes: dict[int, bytearray],
    limits: Limits,
    workspace: Path,
    kill: Callable[[], None],
    stop: threading.Event | None = None,
    keep_tail: bool = False,
) -> Outcome:
    """Run `process` to its end under `limits`; `kill` is called on any limit breach, once `stop` is set, and
    after exit.

    `side_pipes` are further read ends (the launcher's marker, bwrap's info pipe)
    whose bytes are collected into the given buffers. All read ends are closed
    before returning. `keep_tail`: see `OutputBudget.tail`.
    """
    started = time.monotonic()
    assert process.stdout is not None and process.stderr is not None
    output = OutputBudget(budget=limits.output_bytes, tail=keep_tail)
    pipes = _Pipes(output, {process.stdout.fileno(): output.out, process.stderr.fileno(): output.err, **side_pipes})
    pipes.wake_on_exit(process.pid)
    watches = limit_watches(limits, workspace, process.pid)
    killed: KillReason | None = None
    status: tuple[int, float] | None = None
    deadline = started + limits.wall_seconds
    try:
        while status is None:
            killed = breach(output, watches, deadline, stop)
            if killed is not None:
                break
            pipes.pump(timeout=min(_TICK_S, max(deadline - time.monotonic(), 0)))
            status = _reap(process, block=False)
        # Whether it exited or broke a limit, nothing it started may outlive the call.
        pipes.pump(timeout=0)
        if killed is None and output.over:
            killed = "output"  # it broke the budget, then exited before the next check could kill it: still cut
        kill()
        status = status or _reap(process, block=True)
        pipes.drain(_EXIT_DRAIN_S)
    finally:
        if process.returncode is None:  # interrupted (e.g. KeyboardInterrupt): still leave nothing running
            kill()
            _reap(process, block=True)
        pipes.close()
        for fd in side_pipes:
            os.close(fd)
        process.stdout.close()
        process.stderr.close()
    exit_code, cpu = status
    return Outcome(
        exit_code=exit_code,
        stdout=bytes(output.out),
        stderr=bytes(output.err),
        truncated=output.truncated,
        killed=killed,
        duration_s=time.monotonic() - started,
        cpu_seconds=cpu,
        kept_tail=keep_tail,
    )


def limit_watches(limits: Limits, workspace: Path, root_pid: int | None) -> list[tuple[KillReason, Watch]]:
    """The polled limits: the workspace's size, and the resident memory of the process tree under `root_pid`."""
    mib = 1024 * 1024
    watches: list[tuple[KillReason, Watch]] = [("disk", Watch(lambda: tree_bytes(workspace), limits.disk_mb * mib))]
    if root_pid is not None:
        watches.append(("memory", Watch(lambda: tree_rss(root_pid), limits.memory_mb * mib)))
    return watches


def breach(output: OutputBudget, watches: list[tuple[KillReason, Watch]], deadline: float,
           stop: threading.Event | None) -> KillReason | None:
    """Why the running command must be killed now, if it must: a limit it has just broken, or its caller's stop."""
    if stop is not None and stop.is_set():
        return "stopped"
    if output.over:
        return "output"
    if time.monotonic() >= deadline:
        return "wall_time"
    for reason, watch in watches:
        if watch.over():
            return reason
    return None


class _Pipes:
    """Non-blocking reads from several pipes into their buffers; stdout and stderr go through the budget."""

    def __init__(self, output: OutputBudget, buffers: dict[int, bytearray]) -> None:
        self._output = output
        self._buffers = buffers
        self._pidfd: int | None = None
        self._selector = selectors.DefaultSelector()
        for fd in buffers:
            os.set_blocking(fd, False)
            self._selector.register(fd, selectors.EVENT_READ)

    def wake_on_exit(self, pid: int) -> None:
        """Let `pump` return as soon as `pid` exits (a pidfd turns readable), not at the next tick."""
        try:
            self._pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):  # before Linux 5.3, or not Linux: the tick still notices
            self._pidfd = None
            return
        self._selector.register(self._pidfd, selectors.EVENT_READ)

    def pump(self, timeout: float) -> None:
        """Read whatever is ready within `timeout`; a pipe at EOF is dropped."""
        if not self._selector.get_map():
            time.sleep(timeout)
            return
        for key, _ in self._selector.select(timeout):
            fd = int(key.fd)
            if fd == self._pidfd:
                self._stop_waking()
                continue
            try:
                data = os.read(fd, _READ_CHUNK)
            except BlockingIOError:
                continue
            if not data:
                self._selector.unregister(fd)
                continue
            buffer = self._buffers[fd]
            if buffer is self._output.out or buffer is self._output.err:
                self._output.keep(buffer, data)
            else:
                buffer += data

    def drain(self, within_s: float) -> None:
        """Read until every pipe is at EOF, for at most `within_s` (a process that escaped may hold one open)."""
        until = time.monotonic() + within_s
        while self._selector.get_map() and time.monotonic() < until:
            self.pump(timeout=until - time.monotonic())

    def close(self) -> None:
        self._stop_waking()
        self._selector.close()

    def _stop_waking(self) -> None:
        if self._pidfd is not None:
            self._selector.unregister(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None


@overload
def _reap(process: subprocess.Popen[bytes], block: Literal[True]) -> tuple[int, float]: ...
@overload
def _reap(process: subprocess.Popen[bytes], block: Literal[False]) -> tuple[int, float] | None: ...
def _reap(process: subprocess.Popen[bytes], block: bool) -> tuple[int, float] | None:
    """(exit code as the shell reports it, CPU seconds of it and its reaped descendants), or None if still running."""
    pid, status, usage = os.wait4(process.pid, 0 if block else os.WNOHANG)
    if pid == 0:
        return None
    code = os.waitstatus_to_exitcode(status)
    # Popen would otherwise think the child still runs and try to wait for it again.
    process.returncode = code
    exit_code = 128 - code if code < 0 else code
    return exit_code, usage.ru_utime + usage.ru_stime
