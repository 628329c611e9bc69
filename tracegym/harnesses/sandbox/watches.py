"""Limits no rlimit can express, checked by polling while a command runs.

RLIMIT_FSIZE bounds one file, not a workspace full of them; RLIMIT_AS bounds
one process, not a tree of them. A `Watch` measures the whole (the workspace's
bytes on disk, the tree's resident memory) often enough to stop a runaway
within a fraction of a second, and rarely enough to cost about 5% of one core.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

_PAGE = os.sysconf("SC_PAGE_SIZE")


class Watch:
    """A measurement polled no more often than every `min_interval_s`, nor than 20x its own cost."""

    def __init__(self, measure: Callable[[], int], limit: int, min_interval_s: float = 0.1) -> None:
        self._measure = measure
        self._limit = limit
        self._min_interval = min_interval_s
        self._next = time.monotonic() + min_interval_s

    def over(self) -> bool:
        """Whether the measurement exceeds the limit; False between polls."""
        now = time.monotonic()
        if now < self._next:
            return False
        value = self._measure()
        cost = time.monotonic() - now
        self._next = time.monotonic() + max(self._min_interval, 20 * cost)
        return value > self._limit


def tree_bytes(root: Path) -> int:
    """Bytes allocated on disk under `root` (sparse files count what they really use), symlinks not followed."""
    total = 0
    stack = [str(root)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            total += info.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return total


def tree_rss(root_pid: int) -> int:
    """Resident bytes of `root_pid` and all its descendants, from one pass over /proc.

    Processes that reparented away (orphans adopted by the host's init) are not
    counted; under bubblewrap the sandbox's own init adopts them, so none escape.
    """
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                # Fields after the command name: state ppid ... rss is the 22nd (man 5 proc: field 24).
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        rss[pid] = int(fields[21]) * _PAGE
    total, stack = 0, [root_pid]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, ()))
    return total
