"""The part bubblewrap and the plain-subprocess backend share: start the launcher, supervise, report.

A backend says how to wrap the launcher's argv (bubblewrap puts its own
command line in front), where the workspace appears to the command, and how to
kill everything a command started.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path

from tracegym.errors import SandboxError
from tracegym.harnesses.sandbox import identity
from tracegym.harnesses.sandbox.base import CommandResult, Limits, Sandbox
from tracegym.harnesses.sandbox.results import Outcome, make_result
from tracegym.harnesses.sandbox.supervise import supervise

_LAUNCHER_SOURCE = (Path(__file__).with_name("launcher.py")).read_text(encoding="utf-8")
_MIB = 1024 * 1024


class ProcessSandbox(Sandbox):
    """Runs each command as a child process tree under rlimits, via `launcher.py`."""

    as_init: bool = False
    """Whether the launcher is PID 1 of a namespace and must stay as its init rather than exec the shell."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._extra_env = dict(env or {})

    @abstractmethod
    def _wrap(
        self, launcher: list[str], workspace: Path, limits: Limits, info_fd: int, ro_paths: Sequence[Path]
    ) -> list[str]:
        """The full argv that starts `launcher` inside this backend's confinement, `ro_paths` visible read-only."""

    def _launcher_cwd(self, inside: str) -> str | None:
        """Where the launcher changes directory after dropping privileges; None keeps the one Popen set."""
        return inside

    @abstractmethod
    def _kill(self, process: subprocess.Popen[bytes], uid: int | None, info: bytes) -> None:
        """Kill every process the command started; called after exit too, to clear what it left running."""

    def _nproc(self, uid: int | None, limits: Limits) -> int:
        """RLIMIT_NPROC to set: the process budget, counted however this backend's uid makes it count."""
        return limits.max_processes

    def _warnings(self, limits: Limits) -> list[str]:
        return []

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
        limits = limits or Limits()
        workspace = _existing_dir(workspace)
        uid = identity.workspace_uid(workspace)
        outcome = self._execute(command, workspace, limits, uid, env or {}, _Attached(ro_paths, stop, keep_tail))
        if not outcome.launcher_message.startswith(b"S") or b"E" in outcome.launcher_message:
            raise SandboxError(self._start_failure(outcome, workspace))
        return make_result(outcome, limits, self.kind, self._warnings(limits))

    def _execute(
        self, command: str, workspace: Path, limits: Limits, uid: int | None, env: Mapping[str, str], run: _Attached
    ) -> Outcome:
        inside = self.inside_path(workspace)
        marker_r, marker_w = os.pipe()
        info_r, info_w = os.pipe()
        spec = {
            "rlimits": rlimits_for(limits, self._nproc(uid, limits)),
            "uid": uid,
            "gid": uid,
            "cwd": self._launcher_cwd(inside),
            "shell": _shell(),
            "command": command,
            "env": {**self._env(inside), **env},
            "marker_fd": marker_w,
            "as_init": self.as_init,
        }
        with tempfile.TemporaryFile() as spec_file:
            spec_file.write(json.dumps(spec).encode())
            spec_file.flush()
            spec_file.seek(0)
            launcher = [sys.executable, "-I", "-S", "-c", _LAUNCHER_SOURCE, str(spec_file.fileno())]
            argv = self._wrap(launcher, workspace, limits, info_w, run.ro_paths)
            try:
                process = subprocess.Popen(
                    argv,
                    cwd=workspace,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    pass_fds=(spec_file.fileno(), marker_w, info_w),
                    start_new_session=True,
                    env={"PATH": os.environ.get("PATH", os.defpath)},
                )
            except OSError as exc:
                for fd in (marker_r, marker_w, info_r, info_w):
                    os.close(fd)
                raise SandboxError(f"could not start the {self.kind} sandbox ({argv[0]}): {exc}") from exc
            os.close(marker_w)
            os.close(info_w)
        marker, info = bytearray(), bytearray()
        outcome = supervise(
            process,
            {marker_r: marker, info_r: info},
            limits,
            workspace,
            kill=lambda: self._kill(process, uid, bytes(info)),
            stop=run.stop,
            keep_tail=run.keep_tail,
        )
        return dataclasses.replace(outcome, launcher_message=bytes(marker))

    def _env(self, inside: str) -> dict[str, str]:
        # Nothing of the host's environment (API keys included) reaches the command.
        python_bin = os.path.dirname(sys.executable)
        env = {
            "PATH": f"{python_bin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": inside,
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            # glibc reserves 64 MiB of address space per thread arena; under RLIMIT_AS that starves threads.
            "MALLOC_ARENA_MAX": "2",
        }
        env.update(self._extra_env)
        return env

    def _start_failure(self, outcome: Outcome, workspace: Path) -> str:
        said = outcome.launcher_message.partition(b"E")[2] or outcome.stderr[-2000:]
        reason = said.decode("utf-8", "replace").strip() or f"it exited with code {outcome.exit_code} before starting"
        return f"The {self.kind} sandbox could not start a command in {workspace}: {reason}"


@dataclasses.dataclass(frozen=True)
class _Attached:
    """What `run`'s caller attached beyond the command itself (see `Sandbox.run`)."""

    ro_paths: Sequence[Path]
    stop: threading.Event | None
    keep_tail: bool


def rlimits_for(limits: Limits, nproc: int) -> dict[str, tuple[int, int]]:
    """Soft and hard limits for the launcher to set, never above the hard limits it inherits."""
    wanted = {
        # The hard CPU limit a second later turns an ignored SIGXCPU into SIGKILL.
        "RLIMIT_CPU": (limits.cpu_seconds, limits.cpu_seconds + 1),
        "RLIMIT_AS": (limits.memory_mb * _MIB,) * 2,
        "RLIMIT_FSIZE": (limits.file_size_mb * _MIB,) * 2,
        "RLIMIT_NPROC": (nproc, nproc),
        "RLIMIT_CORE": (0, 0),
    }
    result = {}
    for name, (soft, hard) in wanted.items():
        inherited = resource.getrlimit(getattr(resource, name))[1]
        if inherited != resource.RLIM_INFINITY:
            soft, hard = min(soft, inherited), min(hard, inherited)
        result[name] = (soft, hard)
    return result


def _shell() -> str:
    return "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"


def _existing_dir(workspace: Path) -> Path:
    path = Path(workspace).resolve()
    if not path.is_dir():
        raise SandboxError(f"workspace {path} is not a directory; create it first (see harnesses.sandbox.workspace).")
    return path
