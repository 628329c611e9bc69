"""The DuckDB store: one file holding traces, failures, tasks, runs and results."""

from tracegym.store.connection import Store, default_store_path, open_store

__all__ = ["Store", "default_store_path", "open_store"]
