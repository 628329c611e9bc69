"""SQL the user types at `tracegym sql`: exactly one statement, over a sealed connection (see `SEALED`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from tracegym.errors import StoreError
from tracegym.store.connection import open_store

REFUSED = "`tracegym sql` reads the store and nothing else"
HINT = "Query the store's tables and views; to keep the rows, redirect `tracegym sql --json QUERY` to a file."
QUERY_FAILED = "DuckDB raised an error running the query"


def run_user_sql(store: Path | None, sql: str) -> list[dict[str, Any]]:
    """The rows of `sql`, run read-only over the store with no access to files, extensions or settings."""
    statement = one_statement(sql)
    with open_store(store, sealed=True) as st:
        try:
            return st.query(statement)
        except StoreError as e:
            if not _reaches_outside(e.__cause__):
                raise
            first_line = str(e.__cause__).splitlines()[0].rstrip(".")
            raise StoreError(f"{first_line}. {HINT}", title=REFUSED) from e.__cause__


def one_statement(sql: str) -> duckdb.Statement:
    """The one statement in `sql`, parsed: a second one could ride along after a harmless first one."""
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as e:
        raise StoreError(str(e), title=QUERY_FAILED) from e
    if not statements:
        raise StoreError('No SQL statement to run. Pass one, e.g. `tracegym sql "SELECT count(*) FROM traces"`.')
    if len(statements) > 1:
        raise StoreError(f"Found {len(statements)} SQL statements; it runs exactly one. "
                         "Run each with its own `tracegym sql`.", title=REFUSED)
    return statements[0]


def _reaches_outside(error: BaseException | None) -> bool:
    """DuckDB's refusals under `SEALED`: a file, a directory or an extension, or a setting once locked."""
    return isinstance(error, duckdb.PermissionException) or "configuration has been locked" in str(error)
