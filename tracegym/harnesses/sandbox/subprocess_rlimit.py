"""The unisolated sandbox: a plain child process under rlimits, for configs that accept running without isolation.

It enforces every `Limits` field except `network`, but it does not isolate:
the command shares the host's network and sees the host's filesystem. As root
the command runs as the workspace's own sandbox uid, so it cannot write what
root owns (it can still write world-writable places such as /tmp) and
RLIMIT_NPROC bounds its processes; as an ordinary user it runs as that user and
can write whatever the user can. Every result says so in `warnings`.

Processes that leave the command's process group (setsid) escape cleanup when
not running as root; as root every process of the sandbox uid is killed.
"""

from __future__ import annotations

import functools
import logging
import os
import subprocess
import warnings
from collections.abc import Sequence
from pathlib import Path

from tracegym.harnesses.sandbox import identity
from tracegym.harnesses.sandbox.base import Limits
from tracegym.harnesses.sandbox.process import ProcessSandbox

NOT_ISOLATED = (
    "subprocess sandbox: the command is NOT isolated; it can reach the network and write any file "
    "its user may write outside the workspace. Use the bwrap or docker sandbox for untrusted commands."
)
log = logging.getLogger(__name__)


class SandboxIsolationWarning(UserWarning):
    """Commands will run without filesystem and network isolation."""


class SubprocessSandbox(ProcessSandbox):
    """Runs commands as child processes in the workspace under rlimits; see the module docstring.

    `reason`, why this sandbox runs rather than an isolating one, goes into its warnings.
    """

    kind = "subprocess"
    isolated = False

    def __init__(self, env: dict[str, str] | None = None, reason: str | None = None) -> None:
        super().__init__(env)
        self._warning = f"{NOT_ISOLATED} ({reason})" if reason else NOT_ISOLATED
        # Python's warning filters show this once per call site; the log line comes once per process.
        warnings.warn(self._warning, SandboxIsolationWarning, stacklevel=2)
        _log_once(self._warning)

    def inside_path(self, workspace: Path) -> str:
        return str(workspace)

    def _launcher_cwd(self, inside: str) -> str | None:
        # Popen already entered the workspace as root; the sandbox uid may not be able to walk its parents.
        return None

    def _wrap(
        self, launcher: list[str], workspace: Path, limits: Limits, info_fd: int, ro_paths: Sequence[Path]
    ) -> list[str]:
        return launcher  # the command sees the whole host filesystem, `ro_paths` included (and writable)

    def _nproc(self, uid: int | None, limits: Limits) -> int:
        if uid is not None:
            return limits.max_processes
        # Without a uid of its own the command shares the user's count, so the budget comes on top of it.
        return identity.count_threads(os.getuid()) + limits.max_processes

    def _kill(self, process: subprocess.Popen[bytes], uid: int | None, info: bytes) -> None:
        identity.kill_group(process.pid)
        if uid is not None:
            identity.kill_uid(uid)

    def _warnings(self, limits: Limits) -> list[str]:
        return [self._warning]


@functools.cache
def _log_once(message: str) -> None:
    log.warning(message)
