"""Keeping the store to the user who owns it: trace content is customer data.

A new store is created 0600, and each folder tracegym creates on the way to it 0700, whatever the umask. DuckDB
writes its WAL (`store.duckdb.wal`) and spill files (`store.duckdb.tmp/`) beside the store with the umask's mode,
so they are private only inside a private folder: one tracegym creates is; a folder that already exists (the
user's home, the current folder, one they chose with --store) keeps the mode its owner gave it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600
GROUP_AND_OTHER = 0o077


def create_folders(folder: Path) -> None:
    """Create `folder` and its missing parents, each 0700; folders that exist are left as they are."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for new in reversed(missing):
        try:
            new.mkdir(mode=PRIVATE_FOLDER)
        except FileExistsError:  # another tracegym made it meanwhile, private as well
            continue
        # mkdir's mode passes through the umask, which may clear the owner's own bits too
        new.chmod(PRIVATE_FOLDER)


@contextmanager
def owner_only_umask() -> Iterator[None]:
    """Files created inside get no group or other bits: DuckDB creates a new store file with 0666 less the umask,
    so only the umask makes it private from its first byte, with no moment an open() by another user succeeds."""
    previous = os.umask(GROUP_AND_OTHER)
    os.umask(previous | GROUP_AND_OTHER)
    try:
        yield
    finally:
        os.umask(previous)


def tighten(store: Path) -> None:
    """Clear the group and other bits of a store made by an earlier tracegym (0644 under a usual umask) and of a
    WAL left beside it; a store another user owns (shared through its group) is theirs to set. Only regular files:
    `--store /dev/null` must not make the machine's /dev/null private."""
    for path in (store, store.with_name(store.name + ".wal")):
        try:
            info = path.stat()
        except FileNotFoundError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() and info.st_mode & GROUP_AND_OTHER:
            path.chmod(stat.S_IMODE(info.st_mode) & ~GROUP_AND_OTHER)
