"""The first program inside a sandbox: apply limits, drop to the sandbox's uid, then exec the shell.

It runs as `python -I -S -c <this source> SPEC_FD`, so it imports nothing from
tracegym (the package is not visible inside bubblewrap). The spec arrives as
JSON on an unlinked temporary file, so a command of any length fits (one over
the kernel's per-argument limit reaches the shell as a script instead of `-c`):

    {"rlimits": {"RLIMIT_AS": [soft, hard], ...}, "uid": int | null, "gid": int | null,
     "cwd": str | null, "shell": str, "command": str, "env": {...}, "marker_fd": int, "as_init": bool}

On the marker pipe it writes b"S" just before exec, or b"E<message>" when it
cannot apply the spec, so the parent can tell "the sandbox failed to start"
from "the command failed".
"""

import ctypes
import json
import os
import resource
import sys

_PR_SET_NO_NEW_PRIVS = 38


def _apply(spec: dict) -> None:
    for name, (soft, hard) in spec["rlimits"].items():
        resource.setrlimit(getattr(resource, name), (soft, hard))
    # setuid programs (su, sudo) must not hand the command back any privilege.
    if ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if spec["uid"] is not None:
        # Order matters: groups and gid need privileges that setuid gives up.
        os.setgroups([])
        os.setgid(spec["gid"])
        os.setuid(spec["uid"])
    # As the sandbox uid: root here holds no CAP_DAC_OVERRIDE to enter the uid's 0700 workspace.
    if spec["cwd"] is not None:
        os.chdir(spec["cwd"])


def main(argv: list) -> None:
    spec_fd = int(argv[1])
    with os.fdopen(spec_fd, "rb") as spec_file:
        spec = json.loads(spec_file.read())
    marker = spec["marker_fd"]
    # No descriptor of the parent's reaches the command; the marker closes itself at exec.
    os.closerange(3, marker)
    open_max = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    os.closerange(marker + 1, open_max if 0 < open_max < 1 << 20 else 1 << 20)
    os.set_inheritable(marker, False)
    try:
        _apply(spec)
    except OSError as exc:
        _fail(marker, exc)
    os.write(marker, b"S")
    if spec["as_init"]:
        _serve_as_init(spec, marker)
    _exec_shell(spec, marker)


_ARG_MAX = 100_000
"""Longer commands go to the shell as a script; the kernel refuses any one argument over 128 KiB."""


def _exec_shell(spec: dict, marker: int) -> None:
    shell, command = spec["shell"], spec["command"]
    try:
        if len(command.encode()) <= _ARG_MAX:
            os.execve(shell, [shell, "-c", command], spec["env"])
        script = os.memfd_create("command", 0)  # stays open across exec for the shell to read
        os.write(script, command.encode())
        os.lseek(script, 0, os.SEEK_SET)
        os.execve(shell, [shell, f"/proc/self/fd/{script}"], spec["env"])
    except OSError as exc:
        _fail(marker, exc)


def _serve_as_init(spec: dict, marker: int) -> None:
    """Be PID 1 of the sandbox: run the shell as a child, reap orphans, exit with the shell's status.

    The shell must not be PID 1 itself: the kernel ignores signals such as
    SIGXCPU and SIGXFSZ for a namespace's init. When this exits, the kernel
    kills whatever else is left in the namespace.
    """
    shell = os.fork()
    if shell == 0:
        _exec_shell(spec, marker)
    os.close(marker)
    while True:
        pid, status = os.wait()
        if pid == shell:
            code = os.waitstatus_to_exitcode(status)
            os._exit(128 - code if code < 0 else code)


def _fail(marker: int, exc: OSError) -> None:
    os.write(marker, b"E" + f"sandbox launcher: {exc}".encode())
    os._exit(126)


if __name__ == "__main__":
    main(sys.argv)
