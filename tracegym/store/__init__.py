"""The DuckDB store: one file holding traces, failures, tasks, runs and results.

Its names load on first use, so a module that needs only `tracegym.store.private` (folders made 0700) imports
without duckdb: the GPU check's sampling path runs where duckdb is not installed."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tracegym.store.connection import Store, default_store_path, open_store

__all__ = ["Store", "default_store_path", "open_store"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from tracegym.store import connection

        return getattr(connection, name)
    raise AttributeError(f"module 'tracegym.store' has no attribute {name!r}")
