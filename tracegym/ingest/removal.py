"""Removing the stored rows of traces: for `tracegym traces delete`, and for a stored trace that ingest replaces.

The tables that hold a trace's rows are read from the store's catalog (every table with a `trace_id` column),
so a table a later migration adds is covered without being listed here: messages, tool calls, scores, findings
(`failures`), detection state (`detected`), span parts, labels. Deleting removes the rows from all of them.
Replacing (`ingest --replace`, a log that grew, a span-shaped trace completed) keeps what did not come from the
trace's files: the labels (`labels import`) with the scores they set (their outcomes are put back by the
caller), and the span parts a span-shaped trace is rebuilt from; only the stitched conversation's tip goes
(tracegym/ingest/call_store.py keeps a new one). Joining (a stitched conversation that a later ingest found to
go on in another one, stored under another id: `PartStore.retire`) moves the labels, the scores they set and
the outcome they set to the trace that holds the conversation now (`move_labels`), then deletes the rest; its
findings are made again when the detectors see the longer trace. Either way the clusters are then counted
again from the findings left (`mining.detection.recount_after_removal`), and the change is recorded in
`store_changes`.
"""

from __future__ import annotations

import getpass
import json
import os
import uuid
from typing import Any

import duckdb
import pyarrow as pa

from tracegym.ingest.call_store import LABEL_SCORE
from tracegym.ingest.stitch import PART_KEY

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


def move_labels(con: duckdb.DuckDBPyConnection, moves: str) -> None:
    """Give what `labels import` set on each trace `moves` names (a table of `trace_id`, `successor`) to its
    successor: its `labels` rows (one per import: a row the successor has of that import wins), the scores they
    set (a name the successor's labels scored already stays the successor's) and the outcome they set (where the
    successor has no labelled outcome of its own; of several, the latest). A moved row's `previous_outcome` is the
    successor's outcome as ingest made it. Call inside a transaction, before the traces are removed."""
    con.execute(f"""CREATE TEMP TABLE tg_moved_to AS
                    SELECT DISTINCT r.successor AS trace_id, p.trace_id IS NOT NULL AS labelled,
                           if(p.trace_id IS NULL, t.outcome, p.before) AS ingested
                    FROM {moves} r JOIN traces t ON t.trace_id = r.successor
                    LEFT JOIN (SELECT trace_id, arg_min(previous_outcome, labelled_at) AS before FROM labels
                               WHERE outcome IS NOT NULL GROUP BY trace_id) p ON p.trace_id = r.successor""")
    con.execute(f"""UPDATE traces SET outcome = m.outcome FROM (
                        SELECT r.successor, arg_max(l.outcome, l.labelled_at) AS outcome FROM {moves} r
                        JOIN labels l USING (trace_id) WHERE l.outcome IS NOT NULL GROUP BY r.successor) m,
                        tg_moved_to s
                    WHERE traces.trace_id = m.successor AND s.trace_id = m.successor AND NOT s.labelled""")
    con.execute(f"""INSERT OR IGNORE INTO labels
                    SELECT l.import_id, r.successor, l.key, l.locator, l.value, l.outcome, l.score, s.ingested,
                           l.labelled_at
                    FROM labels l JOIN {moves} r USING (trace_id) JOIN tg_moved_to s ON s.trace_id = r.successor
                    ORDER BY l.labelled_at DESC""")
    con.execute(f"""INSERT INTO scores (trace_id, name, value, label, kind, comment)
                    SELECT r.successor, s.name, s.value, s.label, s.kind, s.comment
                    FROM scores s JOIN {moves} r USING (trace_id)
                    WHERE s.kind = 'human' AND starts_with(coalesce(s.comment, ''), 'label import ')
                      AND NOT EXISTS (SELECT 1 FROM scores x WHERE x.trace_id = r.successor AND x.name = s.name
                                      AND {LABEL_SCORE.replace('comment', 'x.comment').replace('kind', 'x.kind')})
                    QUALIFY row_number() OVER (PARTITION BY r.successor, s.name) = 1""")
    con.execute("DROP TABLE tg_moved_to")


def retire_joined(con: duckdb.DuckDBPyConnection, joined: dict[str, str]) -> tuple[list[str], dict[str, int]]:
    """Remove the stored traces that went on in another (`joined`: each one's successor), once that one is stored,
    giving it what their labels set (`move_labels`). One whose successor was not stored stays: nothing is lost.
    Returns the ids removed and the rows each table lost. Call inside a transaction."""
    if not joined:
        return [], {}
    staged_moves = pa.table({"trace_id": pa.array(list(joined), pa.string()),  # noqa: F841 - read by name
                             "successor": pa.array(list(joined.values()), pa.string())})
    con.execute("CREATE TEMP TABLE tg_retired AS SELECT m.* FROM staged_moves m "
                "SEMI JOIN traces t ON t.trace_id = m.successor")
    move_labels(con, "tg_retired")
    removed = remove_rows(con, "tg_retired")
    retired = sorted(tid for (tid,) in con.execute("SELECT trace_id FROM tg_retired").fetchall())
    con.execute("DROP TABLE tg_retired")
    return retired, removed


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
