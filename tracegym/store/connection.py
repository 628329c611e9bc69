"""Opening the store: path resolution, migrations, read-only access, waiting while another process holds it."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from tracegym.errors import StoreError
from tracegym.store import lock
from tracegym.store.migrations import MIGRATIONS, migrate
from tracegym.store.private import create_folders, owner_only_umask, tighten

DEFAULT_STORE = Path(".tracegym") / "store.duckdb"

# For SQL the user types (`tracegym sql`), perhaps pasted from elsewhere: it reads the store and nothing else. No
# file system (COPY TO, EXPORT DATABASE, ATTACH, read_text, read_csv, glob, INSTALL), no extension fetched or
# loaded on first use, and no SET or RESET that could turn either back on. The store's views read only its tables.
SEALED: dict[str, str | bool | int | float | list[str]] = {  # the type duckdb.connect takes
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,
}


def default_store_path() -> Path:
    """`TRACEGYM_STORE` if set, else `.tracegym/store.duckdb` under the current folder."""
    env = os.environ.get("TRACEGYM_STORE")
    return Path(env) if env else DEFAULT_STORE


class Store:
    """A migrated DuckDB connection with a few helpers for the commands. A writable one is recorded as the
    store's holder (see `lock`) until it is closed."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path, read_only: bool) -> None:
        self.con = con
        self.path = path
        self.read_only = read_only
        self.closed = False
        if not read_only:
            lock.took(path)

    def query(self, sql: str | duckdb.Statement, params: list[Any] | None = None) -> list[dict[str, Any]]:
        """Run SQL and return rows as dicts; DuckDB errors become `StoreError`."""
        try:
            cur = self.con.execute(sql, params or [])
            if cur.description is None:
                return []
            cols = [d[0] for d in cur.description]
            return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]
        except duckdb.Error as e:
            raise StoreError(str(e), title="DuckDB raised an error running the query") from e

    def scalar(self, sql: str, params: list[Any] | None = None) -> Any:
        row = self.con.execute(sql, params or []).fetchone()
        return None if row is None else row[0]

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """All or nothing: a crash inside leaves the store as it was before."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield self.con
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if not self.read_only:
            lock.released(self.path)
        self.con.close()

    def let_waiters_in(self) -> bool:
        """Between units of work (an ingest's files): if other processes wait for the store, close it, give them
        their turn (see `lock.let_in`), and open it again (waiting as any open does). True if it was reopened,
        with the connection's settings back to the store's own."""
        waiters = [] if self.read_only else lock.waiting_processes(self.path)
        if not waiters:
            return False
        self.close()
        lock.let_in(self.path, waiters)
        self.con = lock.waiting_open(self.path, lambda: _open_migrated(self.path))
        self.closed = False
        lock.took(self.path)
        return True

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_store(path: Path | str | None = None, read_only: bool = False, sealed: bool = False,
               wait_s: float | None = None) -> Store:
    """Open (creating and migrating if needed) the store at `path`; `sealed` is read-only too and reaches nothing
    but the store (see `SEALED`). While another process holds the store, waits for at most `wait_s` seconds
    (the process's `--wait` if None; see `lock.waiting_open`)."""
    path = Path(path) if path is not None else default_store_path()
    read_only = read_only or sealed
    if read_only and not path.exists():
        raise StoreError(
            f"No store at {path}. Run `tracegym ingest PATH` first, or point --store at one."
        )
    if path.exists() and not path.is_file():
        raise StoreError(f"{path} is not a store file (a folder, a device or a pipe). Fix: point --store at a "
                         "file, e.g. `--store .tracegym/store.duckdb`.")
    try:
        if read_only:
            con = _open_read_only(path, SEALED if sealed else {}, wait_s)
        else:
            con = lock.waiting_open(path, lambda: _open_migrated(path), wait_s)
    except duckdb.Error as e:
        raise StoreError(f"Cannot open the store at {path}: {e}") from e
    except OSError as e:
        raise StoreError(f"Cannot open the store at {path}: {e}. Check the permissions of its folder.") from e
    return Store(con, path, read_only)


def _open_read_only(path: Path, config: dict[str, str | bool | int | float | list[str]],
                    wait_s: float | None) -> duckdb.DuckDBPyConnection:
    """A read-only connection, which other readers share the file with; a store from an older version is first
    migrated once, writable."""
    con = lock.waiting_open(path, lambda: duckdb.connect(str(path), read_only=True, config=config), wait_s)
    if not pending_migrations(con):
        return con
    con.close()
    lock.waiting_open(path, lambda: _open_migrated(path), wait_s).close()
    return lock.waiting_open(path, lambda: duckdb.connect(str(path), read_only=True, config=config), wait_s)


def pending_migrations(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The migrations the store at `con` has not had (all of them for a file with no `_migrations` table)."""
    try:
        done = {row[0] for row in con.execute("SELECT name FROM _migrations").fetchall()}
    except duckdb.CatalogException:
        done = set()
    return [fn.__name__ for fn in MIGRATIONS if fn.__name__ not in done]


def _open_migrated(path: Path) -> duckdb.DuckDBPyConnection:
    """A writable connection to the store, migrated; a new store is private to this user (see `private`)."""
    if not path.exists():
        _create(path)
    if path.exists():
        tighten(path)
        con = duckdb.connect(str(path))
    else:  # a file system without hard links: created in place, as DuckDB does
        with owner_only_umask():
            con = duckdb.connect(str(path))
    try:
        migrate(con)
    except BaseException:
        con.close()
        raise
    return con


def _create(path: Path) -> None:
    """Build a new, migrated store under a name of this process's own, then publish it at `path` with a hard link,
    which fails if the path exists. DuckDB creates a file before it locks and writes its header: a second process
    opening it in between finds an empty file, "not a valid DuckDB database file", and the creator then meets that
    process's lock. Published whole, `path` never names a store half-made; of several processes creating it, one
    publishes and the others open that one."""
    create_folders(path.parent)
    part = path.with_name(f".{path.name}.new-{os.getpid()}")
    _remove(part)
    try:
        with owner_only_umask():
            con = duckdb.connect(str(part))
        try:
            migrate(con)
        finally:
            con.close()
        os.link(part, path)
    except FileExistsError:  # another process published its store first
        pass
    except OSError as e:
        if e.errno not in _NO_HARD_LINKS:
            raise
    finally:
        _remove(part)


_NO_HARD_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK}
"""What link() gives on a file system without hard links (FAT, some network shares)."""


def _remove(part: Path) -> None:
    for leftover in (part, part.with_name(part.name + ".wal")):
        leftover.unlink(missing_ok=True)
