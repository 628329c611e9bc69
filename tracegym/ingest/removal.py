"""Removing the stored rows of traces: for `tracegym traces delete`, and for a stored trace that ingest replaces.

The tables that hold a trace's rows are read from the store's catalog (every table with a `trace_id` column),
so a table a later migration adds is covered without being listed here: messages, tool calls, scores, findings
(`failures`), detection state (`detected`), span parts, labels. Deleting removes the rows from all of them.
Replacing (`ingest --replace`, a log that grew, a span-shaped trace completed) keeps what did not come from the
trace's files: the labels (`labels import`) with the scores they set (their outcomes are put back by the
caller), and the span parts a span-shaped trace is rebuilt from; only the stitched conversation's tip goes
(tracegym/ingest/call_store.py keeps a new one). Either way the clusters are then counted again from the
findings left (`mining.detection.recount_after_removal`), and the change is recorded in `store_changes`.
"""

from __future__ import annotations

import getpass
import json
import os
import uuid
from typing import Any

import duckdb

from tracegym.ingest.call_store import PART_KEY

LABEL_SCORE = "kind = 'human' AND starts_with(coalesce(comment, ''), 'label import ')"
"""Scores that `labels import` set (tracegym/labels/apply.py), not the trace's own."""
KEPT_ON_REPLACE = {"scores": f" AND NOT ({LABEL_SCORE})", "span_parts": f" AND part_key = '{PART_KEY}'"}
"""What a replaced trace keeps of each table (besides its labels): the rows these conditions leave out."""


def trace_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The store's tables with a `trace_id` column (not views, not temporary tables)."""
    return _tables_with(con, "trace_id")


def source_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The store's tables that describe ingested files by `source_id` and hold no trace's rows (`sources`,
    `ingest_errors`, ...)."""
    return [t for t in _tables_with(con, "source_id") if t not in set(trace_tables(con))]


def _tables_with(con: duckdb.DuckDBPyConnection, column: str) -> list[str]:
    rows = con.execute(
        """SELECT table_name FROM duckdb_columns() c JOIN duckdb_tables() t
               USING (database_name, schema_name, table_name)
           WHERE c.column_name = ? AND NOT t.temporary AND t.database_name = current_database()
                 AND t.schema_name = current_schema()
           ORDER BY table_name""", [column]).fetchall()
    return [name for (name,) in rows]


def remove_rows(con: duckdb.DuckDBPyConnection, ids: str, replacing: bool = False) -> dict[str, int]:
    """Delete the rows of the traces in the table `ids` (a `trace_id` column) from every table that holds some;
    `replacing` keeps what a replaced trace keeps (see the module's docstring). Returns the rows deleted per
    table (tables that lost none included). Call inside a transaction."""
    removed = {}
    for table in trace_tables(con):
        if replacing and table == "labels":
            continue
        kept = KEPT_ON_REPLACE.get(table, "") if replacing else ""
        removed[table] = row_count(con.execute(f"DELETE FROM {table} WHERE trace_id IN "
                                             f"(SELECT trace_id FROM {ids}){kept}"))
    return removed


def row_count(cur: duckdb.DuckDBPyConnection) -> int:
    """The row count a DELETE or INSERT reports."""
    rows = cur.fetchall()
    return int(rows[0][0]) if rows else 0


def record_change(con: duckdb.DuckDBPyConnection, action: str, selection: dict[str, Any], trace_ids: list[str],
                  removed: dict[str, int]) -> str:
    """Keep a row of `store_changes` for a deletion or replacement; returns its id. Call in the change's
    transaction, so that the record and the change are stored together."""
    change_id = uuid.uuid4().hex[:12]
    con.execute("INSERT INTO store_changes VALUES (?, ?, current_timestamp, ?, ?, ?, ?, ?)",
                [change_id, action, _user(), json.dumps(selection), len(trace_ids),
                 json.dumps({t: n for t, n in removed.items() if n}), json.dumps(trace_ids)])
    return change_id


def _user() -> str:
    """Who runs the command, as the operating system names them."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name and no passwd entry (a container's numeric user)
        return f"uid {os.getuid()}" if hasattr(os, "getuid") else "unknown"
