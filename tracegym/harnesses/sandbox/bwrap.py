"""bubblewrap: the default sandbox on Linux.

The command sees a read-only system (/usr, /etc and the Python it needs), its
workspace read-write at `/workspace`, a private size-capped /tmp and
/dev/shm, its own PID, IPC and UTS namespaces, and no network but its own
loopback.

The launcher is the PID namespace's init (`--as-pid-1`): it runs the shell as
its child, reaps orphans, and exits with the shell's status, whereupon the
kernel kills whatever else is left in the namespace. bwrap exits only after
that, so when `run` returns nothing the command started is alive, even
processes that left its session; CPU time of the whole tree reaches the
result. (bwrap's own init would let bwrap return as soon as the shell exits,
while the rest dies asynchronously.)

As root, bubblewrap runs privileged without a user namespace and the launcher
drops to the workspace's sandbox uid (see identity.py), so RLIMIT_NPROC bounds
fork bombs. The command may still create nested user namespaces (if the host
allows unprivileged ones); RLIMIT_NPROC keeps holding inside them. As an
ordinary user bubblewrap runs unprivileged in a new user namespace (nested
ones disabled), which makes RLIMIT_NPROC count the sandbox's own tasks only.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from tracegym.errors import SandboxError
from tracegym.harnesses.sandbox import identity
from tracegym.harnesses.sandbox.base import Limits
from tracegym.harnesses.sandbox.process import ProcessSandbox

_TOP_LEVEL_SYSTEM = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_SHM_MB = 64
_EXIT_WAIT_S = 5.0


class BwrapSandbox(ProcessSandbox):
    """Runs commands under bubblewrap; see the module docstring for what the command can reach."""

    kind = "bwrap"
    isolated = True
    as_init = True

    def __init__(
        self,
        workdir: str = "/workspace",
        env: Mapping[str, str] | None = None,
        ro_paths: Sequence[Path] = (),
        executable: str = "bwrap",
    ) -> None:
        super().__init__(env)
        found = shutil.which(executable)
        if found is None:
            raise SandboxError(
                f"bubblewrap ({executable}) is not installed. Install it (Debian/Ubuntu: "
                "`apt-get install bubblewrap`) or choose another sandbox."
            )
        self._bwrap = found
        self._workdir = workdir
        self._ro_paths = [Path(p) for p in ro_paths]

    def inside_path(self, workspace: Path) -> str:
        return self._workdir

    def _wrap(
        self, launcher: list[str], workspace: Path, limits: Limits, info_fd: int, ro_paths: Sequence[Path]
    ) -> list[str]:
        namespaces = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--hostname", "sandbox"]
        if not limits.network:
            namespaces.append("--unshare-net")
        return [
            self._bwrap,
            "--die-with-parent",
            "--new-session",
            "--as-pid-1",
            *namespaces,
            *_user_args(),
            *_system_binds(),
            "--proc", "/proc",
            "--dev", "/dev",
            *_scratch("/tmp", limits.disk_mb),
            *_scratch("/dev/shm", min(limits.disk_mb, _SHM_MB)),
            # After the scratch mounts, which would otherwise hide a Python (a virtualenv, say) under /tmp.
            *_python_binds([*self._ro_paths, *ro_paths]),
            "--bind", str(workspace), self._workdir,
            "--clearenv",
            "--info-fd", str(info_fd),
            "--",
            *launcher,
        ]  # fmt: skip

    def _kill(self, process: subprocess.Popen[bytes], uid: int | None, info: bytes) -> None:
        if process.returncode is not None:
            return  # bwrap exits only after its namespace is empty
        child = _namespace_init(info)
        if child is not None:
            # Killing the namespace's init kills every process in it; bwrap then reaps it and exits.
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
            if _exited_within(process.pid, _EXIT_WAIT_S):
                return
        identity.kill_group(process.pid)


def _user_args() -> list[str]:
    if identity.running_as_root():
        # The launcher needs only these two to drop to the sandbox uid, which then has none.
        return ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return ["--unshare-user", "--disable-userns"]


def _system_binds() -> list[str]:
    """Read-only binds of the system; symlinked top dirs stay symlinks."""
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for name in _TOP_LEVEL_SYSTEM:
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return args


def _python_binds(extra: Sequence[Path]) -> list[str]:
    """Read-only binds of the running Python and `extra`, where the system binds do not already hold them."""
    args: list[str] = []
    covered = [Path("/usr"), Path("/etc")]
    python_homes = {Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).resolve().parent.parent}
    for path in sorted(python_homes) + list(extra):
        path = path.resolve()
        if path.exists() and not any(path.is_relative_to(done) for done in covered):
            # bwrap would copy the host's modes onto the parents it creates (/root is 0700).
            for parent in reversed(path.parents[:-1]):
                args += ["--perms", "0755", "--dir", str(parent)]
            args += ["--ro-bind", str(path), str(path)]
            covered.append(path)
    return args


def _scratch(path: str, size_mb: int) -> list[str]:
    """A private tmpfs that any uid may write, capped so it cannot eat the host's memory."""
    return ["--perms", "1777", "--size", str(size_mb * 1024 * 1024), "--tmpfs", path]


def _namespace_init(info: bytes) -> int | None:
    """The host pid of the sandbox's PID-namespace init, from bwrap's --info-fd JSON."""
    try:
        return int(json.loads(info)["child-pid"])
    except (ValueError, KeyError, TypeError):
        return None


def _exited_within(pid: int, timeout_s: float) -> bool:
    """Whether `pid` exits within the timeout; it stays unreaped for the caller to collect."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        time.sleep(0.01)
    return False


@functools.cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot sandbox commands on this machine, or None when a probe command ran in it.

    Cached per process: installing bubblewrap or enabling user namespaces takes a restart to be seen.
    """
    try:
        sandbox = BwrapSandbox()
        with tempfile.TemporaryDirectory(prefix="tracegym-bwrap-probe-") as probe:
            result = sandbox.run("echo ok", Path(probe), Limits(wall_seconds=30))
    except SandboxError as exc:
        return str(exc)
    if result.exit_code != 0 or result.stdout.strip() != "ok":
        return f"a probe command in bubblewrap exited {result.exit_code}: {result.stderr.strip()[:500]}"
    return None
