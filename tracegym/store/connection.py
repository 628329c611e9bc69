"""Opening the store: path resolution, migrations, read-only access."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from tracegym.errors import StoreError
from tracegym.store.migrations import migrate
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
    """A migrated DuckDB connection with a few helpers for the commands."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path, read_only: bool) -> None:
        self.con = con
        self.path = path
        self.read_only = read_only

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
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_store(path: Path | str | None = None, read_only: bool = False, sealed: bool = False) -> Store:
    """Open (creating and migrating if needed) the store at `path`; `sealed` is read-only too and reaches nothing
    but the store (see `SEALED`)."""
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
        con = _open_migrated(path)
        if read_only:
            # A store from an older version is migrated once, writable, then reopened.
            con.close()
            con = duckdb.connect(str(path), read_only=True, config=SEALED if sealed else {})
    except duckdb.Error as e:
        raise StoreError(f"Cannot open the store at {path}: {e}") from e
    except OSError as e:
        raise StoreError(f"Cannot open the store at {path}: {e}. Check the permissions of its folder.") from e
    return Store(con, path, read_only)


def _open_migrated(path: Path) -> duckdb.DuckDBPyConnection:
    """A writable connection to the store, migrated; a new store is private to this user (see `private`)."""
    if path.exists():
        tighten(path)
        con = duckdb.connect(str(path))
    else:
        create_folders(path.parent)
        with owner_only_umask():
            con = duckdb.connect(str(path))
    try:
        migrate(con)
    except BaseException:
        con.close()
        raise
    return con
