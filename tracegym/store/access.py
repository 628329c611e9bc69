"""The store opened for each piece of work, for commands that run long without needing it in between (`run`,
`eval`, `tasks generate`): other commands take their turn while these sample.

A command reads what it needs at its start, keeps what its scorers read in a snapshot (`snapshot`), and writes
its rows in batches (`BatchedWrites`), each through a short open that waits, as any open does, for another
process holding the store.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Generic, TypeVar

import duckdb

from tracegym.store.connection import Store, default_store_path, open_store

T = TypeVar("T")


class StoreAccess:
    """Where the store is, and short opens of it. One open at a time in this process: DuckDB refuses a read-only
    and a writable connection to one file in one process."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_store_path()
        self._lock = threading.RLock()  # an open inside another fails loudly (DuckDB), rather than hanging

    @contextmanager
    def reading(self) -> Iterator[Store]:
        """The store open read-only (it must exist) until the block ends."""
        with self._lock, open_store(self.path, read_only=True) as store:
            yield store

    @contextmanager
    def writing(self) -> Iterator[Store]:
        """The store open writable (created if need be) until the block ends."""
        with self._lock, open_store(self.path) as store:
            yield store


class BatchedWrites(Generic[T]):
    """Items written to the store in batches, each batch through one short open: once `every` items are pending,
    or `seconds` have passed since the oldest pending one arrived, and at `flush()`. A crash loses at most the
    pending ones."""

    def __init__(self, store: StoreAccess, write: Callable[[Store, list[T]], object], every: int = 16,
                 seconds: float = 5.0) -> None:
        self.store, self.write = store, write
        self.every, self.seconds = every, seconds
        self.pending: list[T] = []
        self._oldest = 0.0

    def add(self, item: T) -> None:
        if not self.pending:
            self._oldest = time.monotonic()
        self.pending.append(item)
        if len(self.pending) >= self.every or time.monotonic() - self._oldest >= self.seconds:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        with self.store.writing() as store:
            self.write(store, self.pending)
        self.pending = []


def snapshot(store: Store, table: str, column: str, keys: Collection[str]) -> Store:
    """The rows of `table` whose `column` is one of `keys`, copied into an in-memory store that is queried like
    the store itself (the `scores` a `label` eval reads) and closed by the caller."""
    rows = store.con.sql(f"SELECT * FROM {table} WHERE {column} IN (SELECT unnest(?))",
                         params=[sorted(keys)]).to_arrow_table()
    con = duckdb.connect(":memory:")
    con.register("_snapshot_rows", rows)
    con.execute(f"CREATE TABLE {table} AS SELECT * FROM _snapshot_rows")
    con.unregister("_snapshot_rows")
    return Store(con, store.path, read_only=True)
