"""Who holds the store, and waiting for it.

DuckDB lets one process write a store file, or any number read it; every other open fails at once ("Conflicting
lock is held"). tracegym waits instead: an open that meets the lock is tried again until the holder lets go, for
at most `--wait` seconds. Beside the store, `store.duckdb.holder` names the command writing it (its command line,
PID, process start time and since when), and each waiting process leaves `store.duckdb.wait-PID`, which a long
writer (`ingest`) reads between files to let the waiting one in. A file whose process is gone, or whose PID now
belongs to another process (its start time differs, read from /proc), is stale and ignored.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import TypeVar

import duckdb

from tracegym.errors import StoreBusyError, StoreWaitInterrupted, is_interrupt, remembered_interrupts
from tracegym.inert import one_line

DEFAULT_WAIT_S = 600.0
POLL_S = 0.05
"""How often a waiting process tries the store again: the lock is released between files, so a waiter that
polls slowly would mostly find it taken again."""
YIELD_S = 5.0
"""How long a writer that let waiting processes in waits for them to take the store before it goes on."""
_LOCK_CONFLICT = "Could not set lock on file"
_PID = re.compile(r"\(PID (\d+)\)")

T = TypeVar("T")


@dataclass(frozen=True)
class Holder:
    """A process that holds (or waits for) the store."""

    pid: int
    start: int | None
    """The process's start time in clock ticks since boot (/proc/PID/stat); None without /proc."""
    command: str
    since: str

    def alive(self) -> bool:
        """Whether this process still runs: its PID exists and started when it did (not a PID reused since)."""
        if Path("/proc/self/stat").exists():
            return self.start is not None and process_start(self.pid) == self.start
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # another user's process
            return True
        return True

    def describe(self) -> str:
        return f"`{one_line(self.command)}` (PID {self.pid}, since {self.since})"


class _Settings:
    """The process's wait (`--wait`, set by the command line) and the command it records as a holder."""

    wait_s: float = DEFAULT_WAIT_S
    command: str = shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv else "python"


settings = _Settings()
_held: dict[Path, int] = {}
"""Stores this process holds for writing, with how many of its connections: the holder file goes with the last."""


def set_wait(seconds: float) -> None:
    settings.wait_s = seconds


def set_command(command: str) -> None:
    settings.command = command


def process_start(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat, the process's start time; None when there is no such process (or no /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])  # after the command name, which may hold spaces or ')'


def this_process() -> Holder:
    return Holder(os.getpid(), process_start(os.getpid()), settings.command,
                  datetime.now().isoformat(sep=" ", timespec="seconds"))


def holder_file(store: Path) -> Path:
    return store.with_name(store.name + ".holder")


def _waiter_file(store: Path, pid: int) -> Path:
    return store.with_name(f"{store.name}.wait-{pid}")


def _write(path: Path, holder: Holder) -> None:
    """Write `holder` to `path` whole (a reader never sees half a file), readable by its owner only."""
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(asdict(holder), f)
    os.replace(part, path)


def _read(path: Path) -> Holder | None:
    """The live process recorded in `path`; None if there is none, it is garbled, or it is stale."""
    try:
        holder = Holder(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None
    return holder if isinstance(holder.pid, int) and holder.alive() else None


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def took(store: Path) -> None:
    """Record this process as the store's writer (it has just opened it writable)."""
    _held[store] = _held.get(store, 0) + 1
    try:
        _write(holder_file(store), this_process())
    except OSError:  # a read-only folder: the store opened, and waiting processes name the PID alone
        pass


def released(store: Path) -> None:
    """This process's connection to the store is about to close: the last one removes the holder file."""
    _held[store] = _held.get(store, 1) - 1
    if _held[store] > 0:
        return
    del _held[store]
    current = _read(holder_file(store))
    if current is None or current.pid == os.getpid():
        _unlink(holder_file(store))


def current_holder(store: Path, error: str = "") -> tuple[int | None, str]:
    """Who holds the store, as its PID and a phrase: the holder file's command, else the PID DuckDB's `error` names
    with its command line from /proc (a reader, or a program other than tracegym)."""
    holder = _read(holder_file(store))
    found = _PID.search(error)
    if holder is not None and (found is None or int(found.group(1)) == holder.pid):
        return holder.pid, holder.describe()
    if found is None:
        return None, "another process"
    pid = int(found.group(1))
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").rstrip("\0").split("\0")
    except OSError:
        return pid, f"PID {pid}"
    return pid, f"`{one_line(shlex.join([Path(argv[0]).name, *argv[1:]]))}` (PID {pid})"


def waiting_processes(store: Path) -> list[int]:
    """The PIDs of the live processes, other than this one, that wait for the store."""
    pids = []
    for path in store.parent.glob(f"{glob_escape(store.name)}.wait-*"):
        waiter = _read(path)
        if waiter is None:
            _unlink_stale(path)
        elif waiter.pid != os.getpid():
            pids.append(waiter.pid)
    return pids


def glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


def _unlink_stale(path: Path) -> None:
    """Remove a waiter file of a process that is gone (a file still being written reads as garbled: left alone)."""
    try:
        json.loads(path.read_text())
    except (OSError, ValueError):
        return
    _unlink(path)


def let_in(store: Path, waiters: list[int]) -> None:
    """After releasing the store: give the waiting processes `waiters` up to `YIELD_S` to take it (each removes
    its waiter file once it has), so that this writer does not take it straight back."""
    deadline = time.monotonic() + YIELD_S
    while time.monotonic() < deadline and any(_read(_waiter_file(store, pid)) for pid in waiters):
        time.sleep(POLL_S)


def is_lock_conflict(error: duckdb.Error) -> bool:
    return isinstance(error, duckdb.IOException) and _LOCK_CONFLICT in str(error)


def waiting_open(store: Path, connect: Callable[[], T], wait_s: float | None = None) -> T:
    """`connect()`, tried again while another process holds the store, for at most `wait_s` seconds (the
    process's `--wait` if None); one line on stderr names the holder. Raises `StoreBusyError` when the time is up
    (at once for 0), `StoreWaitInterrupted` on Ctrl-C."""
    try:
        return _open_waiting(store, connect, settings.wait_s if wait_s is None else wait_s)
    except BaseException as e:
        if not is_interrupt(e) or isinstance(e, StoreWaitInterrupted):
            raise
        raise StoreWaitInterrupted(f"Stopped waiting for the store at {store}; nothing was changed.") from None


def _open_waiting(store: Path, connect: Callable[[], T], wait_s: float) -> T:
    deadline: float | None = None
    told: int | None = -1
    if wait_s > 0:
        let_in(store, waiting_processes(store))  # those that came first go first: a reader in a loop or a
        # writer taking the store back after a file would otherwise keep a waiting process out
    with _waiting(store) as announce, remembered_interrupts() as interrupted:
        while True:
            try:
                return connect()
            except duckdb.Error as e:
                if not is_lock_conflict(e):
                    raise
                pid, who = current_holder(store, str(e))
            interrupted()  # a Ctrl-C that landed inside DuckDB's open, which drops the KeyboardInterrupt
            if wait_s <= 0:
                raise StoreBusyError(f"The store at {store} is held by {who}. Fix: run this again once it is done, "
                                     "or give --wait SECONDS to wait for it.")
            if deadline is None:
                deadline = time.monotonic() + wait_s
                announce()
            elif time.monotonic() > deadline:
                raise StoreBusyError(f"The store at {store} is still held by {who} after waiting {wait_s:g} s. "
                                     "Fix: run this again once it is done, or give a longer --wait.")
            if pid != told:  # a new holder: the one waited for let another in first
                sys.stderr.write(f"The store at {one_line(str(store))} is held by {who}; waiting for it (at most "
                                 f"{wait_s:g} s: --wait sets it; Ctrl-C stops).\n")
                sys.stderr.flush()
                told = pid
            time.sleep(POLL_S)


@contextmanager
def _waiting(store: Path) -> Iterator[Callable[[], None]]:
    """Yields a call that records this process as waiting for the store; the record goes on exit."""
    path = _waiter_file(store, os.getpid())
    written = False

    def announce() -> None:
        nonlocal written
        try:
            _write(path, this_process())
            written = True
        except OSError:  # a read-only folder: it still waits, with no writer told to let it in
            pass

    try:
        yield announce
    finally:
        if written:
            _unlink(path)
