"""A finished command as the sandbox saw it, and how that becomes a `CommandResult`."""

from __future__ import annotations

import signal
from dataclasses import dataclass

from tracegym.harnesses.sandbox.base import CommandResult, KillReason, Limits

_MEMORY_SIGNS = (b"MemoryError", b"Cannot allocate memory", b"std::bad_alloc", b"out of memory", b"memory exhausted")
_FILE_SIZE_SIGNS = (b"File too large", b"File size limit exceeded")


@dataclass
class Outcome:
    """What supervision saw; `make_result` turns it into a `CommandResult`."""

    exit_code: int
    stdout: bytes
    stderr: bytes
    truncated: bool
    killed: KillReason | None
    duration_s: float
    cpu_seconds: float | None
    """CPU time of the command's process tree, where the backend can measure it."""
    launcher_message: bytes = b"S"
    """What the launcher wrote on the marker pipe: b'S' once it started the shell, b'E...' when it could not."""
    kept_tail: bool = False
    """Whether the output is each stream's last bytes (`truncated` then means older ones were dropped)."""


def make_result(outcome: Outcome, limits: Limits, backend: str, warnings: list[str]) -> CommandResult:
    """The user-facing result: output decoded, the truncation marked, the stopping limit named."""
    stdout = outcome.stdout.decode("utf-8", "replace")
    stderr = outcome.stderr.decode("utf-8", "replace")
    if outcome.truncated and outcome.kept_tail:
        kept = f"the last {limits.output_bytes} bytes of each stream kept"
        stderr = f"[tracegym: earlier output dropped; {kept}]\n" + stderr
    elif outcome.truncated:
        stderr += f"\n[tracegym: output truncated at {limits.output_bytes} bytes]\n"
    killed = stop_reason(outcome, limits)
    return CommandResult(
        exit_code=outcome.exit_code,
        stdout=stdout,
        stderr=stderr,
        timed_out=killed == "wall_time",
        killed=killed,
        truncated=outcome.truncated,
        duration_s=outcome.duration_s,
        cpu_seconds=outcome.cpu_seconds,
        backend=backend,
        warnings=warnings,
    )


def stop_reason(outcome: Outcome, limits: Limits) -> KillReason | None:
    """Which limit stopped the command, from the supervisor's own kill or from how the command died.

    RLIMIT_AS and RLIMIT_FSIZE make allocations and writes fail rather than kill;
    programs then die with their own words (Python's MemoryError, "File too
    large"), which is what is recognised here.
    """
    code = outcome.exit_code
    if outcome.killed is not None:
        return outcome.killed
    if code == 0:
        return None
    cpu = outcome.cpu_seconds
    if code == 128 + signal.SIGXCPU or (code == 128 + signal.SIGKILL and cpu is not None and cpu >= limits.cpu_seconds):
        return "cpu_time"
    if code == 128 + signal.SIGXFSZ or any(sign in outcome.stderr for sign in _FILE_SIZE_SIGNS):
        return "file_size"
    if any(sign in outcome.stderr for sign in _MEMORY_SIGNS):
        return "memory"
    return None
