"""Who a sandboxed command runs as, and how to find and kill what it left behind.

RLIMIT_NPROC, the only cgroup-free bound on a fork bomb, counts tasks per real
uid and does not apply to root at all. So when tracegym runs as root, each
workspace gets a uid of its own from a reserved range (no account needed):
the command runs as that uid, RLIMIT_NPROC counts exactly its processes, it
cannot write anything root owns, and killing "every process of that uid" is a
precise cleanup. When tracegym runs as an ordinary user the command keeps that
user's uid; bubblewrap's user namespace then still makes the count per sandbox.
"""

from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path
from typing import NamedTuple

SANDBOX_UIDS = range(1_800_000_000, 1_900_000_000)
"""uids handed to workspaces when running as root; far above any account or subuid range in use."""


def running_as_root() -> bool:
    return os.geteuid() == 0


def workspace_uid(workspace: Path) -> int | None:
    """The uid to run commands in `workspace` as: its sandbox owner (claimed on first use), or None when not root."""
    if not running_as_root():
        return None
    owner = workspace.stat().st_uid
    if owner in SANDBOX_UIDS:
        return owner
    uid = _fresh_uid()
    chown_tree(workspace, uid)
    return uid


def _fresh_uid() -> int:
    in_use = {task.uid for task in iter_tasks()}
    while True:
        uid = random.SystemRandom().choice(SANDBOX_UIDS)
        if uid not in in_use:
            return uid


def chown_tree(root: Path, uid: int) -> None:
    """Give `root` and everything below it to uid:uid, never following symlinks out of it."""
    os.chown(root, uid, uid, follow_symlinks=False)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), uid, uid, follow_symlinks=False)


class Task(NamedTuple):
    pid: int
    uid: int
    """Real uid, the one RLIMIT_NPROC counts."""
    pgid: int
    zombie: bool
    """Exited but not yet reaped: holds only a pid, and can neither run nor be killed."""


def iter_tasks() -> list[Task]:
    """Every process visible in /proc; processes that vanish mid-scan are skipped."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            task = _read_task(int(entry.name))
            if task is not None:
                found.append(task)
    return found


def _read_task(pid: int) -> Task | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            # The command name may hold spaces and parentheses: split after its last ')'.
            fields = stat.read().rsplit(b")", 1)[1].split()
        with open(f"/proc/{pid}/status", "rb") as status:
            uid_line = next(line for line in status if line.startswith(b"Uid:"))
    except (FileNotFoundError, ProcessLookupError, StopIteration):
        return None
    return Task(pid=pid, uid=int(uid_line.split()[1]), pgid=int(fields[2]), zombie=fields[0] in (b"Z", b"X"))


def count_threads(uid: int) -> int:
    """Tasks (threads included, as RLIMIT_NPROC counts them) whose real uid is `uid`."""
    total = 0
    for task in iter_tasks():
        if task.uid != uid or task.zombie:
            continue
        try:
            total += len(os.listdir(f"/proc/{task.pid}/task"))
        except FileNotFoundError:
            continue
    return total


def kill_uid(uid: int, timeout_s: float = 5.0) -> int:
    """SIGKILL every process of a sandbox uid until none is left; returns how many were killed.

    Repeats because a fork bomb may fork between the scan and the kill; RLIMIT_NPROC
    keeps each round small.
    """
    if uid not in SANDBOX_UIDS:
        raise ValueError(f"refusing to kill processes of uid {uid}: not a sandbox uid")
    killed = 0
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        pids = [task.pid for task in iter_tasks() if task.uid == uid and not task.zombie]
        if not pids:
            return killed
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                continue
        time.sleep(0.01)
    return killed


def kill_group(pgid: int, timeout_s: float = 5.0) -> None:
    """SIGKILL a process group until no live member is left (a fork bomb may add members between rounds)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return
        if not any(task.pgid == pgid and not task.zombie for task in iter_tasks()):
            return
        time.sleep(0.01)
