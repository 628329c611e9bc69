"""Appending a batch of normalized rows to the store: re-ingest detection and id conflicts.

Both ingest paths hand over a batch as Arrow tables shaped like the store's
`traces`, `messages`, `tool_calls` and `scores`, with trace ids unique within
the batch. A trace whose id is already stored is compared by content hash,
computed in SQL from the rows themselves on both sides (the incoming rows and
the stored ones), so a trace hashes the same whichever path normalized it.
Only clashing ids are hashed: new traces cost no hashing at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from tracegym.mining.detection import forget_traces

TRACE_COLUMNS = (
    "trace_id", "source_id", "format", "session_id", "model", "started_at", "ended_at", "outcome", "n_messages",
    "tools", "metadata",
)
MESSAGE_COLUMNS = (
    "trace_id", "idx", "role", "content", "tool_call_id", "name", "input_tokens", "output_tokens", "latency_ms", "ts",
)
TOOL_CALL_COLUMNS = (
    "trace_id", "message_idx", "call_id", "name", "arguments", "result", "result_message_idx", "is_error", "exit_code",
)
SCORE_COLUMNS = ("trace_id", "name", "value", "label", "kind", "comment")
COLUMNS = {
    "traces": TRACE_COLUMNS, "messages": MESSAGE_COLUMNS, "tool_calls": TOOL_CALL_COLUMNS, "scores": SCORE_COLUMNS,
}


@dataclass
class Appended:
    traces: int = 0
    messages: int = 0
    tool_calls: int = 0
    duplicates: int = 0  # already stored with the same content
    merged: int = 0  # already stored, and replaced by the trace rebuilt from its stored and new parts
    # `messages` and `tool_calls` count the rows the batch added to the store: a replaced trace's rows count by
    # what it gained (or lost) since it was last stored, not again in full each time it is rebuilt.
    conflicts: list[str] = field(default_factory=list)  # already stored with different content: kept the stored one
    no_session: int = 0  # traces stored by the batch without a session id


def _field(expr: str) -> str:
    """A nullable text field, length-prefixed so that concatenations cannot collide."""
    return f"coalesce(length({expr})::VARCHAR || ':' || {expr}, '-') || ';'"


def _hashes(tables: dict[str, str], ids: str) -> str:
    """SQL for (trace_id, content_hash) of the traces listed in `ids`, read from `tables`."""
    # Long text (content, arguments) is digested once with sha1; the digests, in order, then go through sha256.
    return f"""
        WITH m AS (
            SELECT trace_id, string_agg({_field('role')} || coalesce(sha1(content), '-') || {_field('tool_call_id')},
                                        '' ORDER BY idx) AS h
            FROM {tables['messages']} SEMI JOIN {ids} USING (trace_id) GROUP BY trace_id
        ), c AS (
            SELECT trace_id, string_agg(d, '' ORDER BY message_idx, d) AS h FROM (
                SELECT trace_id, message_idx,
                       {_field('name')} || coalesce(sha1(CAST(arguments AS VARCHAR)), '-') || {_field('call_id')} AS d
                FROM {tables['tool_calls']} SEMI JOIN {ids} USING (trace_id)
            ) GROUP BY trace_id
        ), s AS (
            SELECT trace_id, string_agg(d, '' ORDER BY d) AS h FROM (
                SELECT trace_id, {_field('name')} || {_field('CAST(value AS VARCHAR)')} || {_field('label')} AS d
                FROM {tables['scores']} SEMI JOIN {ids} USING (trace_id)
            ) GROUP BY trace_id
        )
        SELECT t.trace_id, sha256(concat({_field('t.outcome')}, {_field('t.model')}, '|', m.h, '|', c.h, '|', s.h))
        FROM {tables['traces']} t SEMI JOIN {ids} USING (trace_id)
        LEFT JOIN m USING (trace_id) LEFT JOIN c USING (trace_id) LEFT JOIN s USING (trace_id)
    """


STORED = {table: table for table in COLUMNS}
# DuckDB reads a batch's Arrow tables through local variables of these names (replacement scans).
# Registering them as views instead would keep every batch in memory until the file's transaction commits.
STAGED = {table: f"staged_{table}" for table in COLUMNS}


def append_tables(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table],
                  grown: set[str] | None = None) -> Appended:
    """Store the batch's traces that are new; count exact re-ingests and report id conflicts.

    A clashing trace in `grown` is replaced instead: it is span-shaped, and the batch holds it rebuilt from the
    parts earlier files stored and the ones this file added (tracegym/ingest/parts.py).
    """
    out = Appended()
    removed = {"messages": 0, "tool_calls": 0}
    clashing = _clashing(con, tables["traces"])
    replaced = [tid for tid in clashing if tid in (grown or ())]
    if clashing:
        others = [tid for tid in clashing if tid not in set(replaced)]
        if others:
            out.duplicates, out.conflicts = _compare(con, tables, others)
        removed = _remove(con, replaced)
        skipped = pa.array(others, pa.string())
        keep = {t: pc.invert(pc.is_in(rows["trace_id"], skipped)) for t, rows in tables.items()}
        tables = {t: rows.filter(keep[t]) for t, rows in tables.items()}
    counts = _insert(con, tables)
    out.merged = len(replaced)
    out.traces = counts["traces"] - out.merged
    out.messages = counts["messages"] - removed["messages"]
    out.tool_calls = counts["tool_calls"] - removed["tool_calls"]
    out.no_session = tables["traces"]["session_id"].null_count
    if replaced:
        _after_replace(con)
    return out


def _remove(con: duckdb.DuckDBPyConnection, ids: list[str]) -> dict[str, int]:
    """Delete the stored rows of traces about to be replaced, keeping what `labels import` set on them; return
    how many messages and tool calls were deleted."""
    removed = {"messages": 0, "tool_calls": 0}
    if not ids:
        return removed
    staged_ids = pa.table({"trace_id": pa.array(ids, pa.string())})  # noqa: F841 - read by name in SQL
    con.execute("CREATE TEMP TABLE tg_replaced AS SELECT trace_id FROM staged_ids")
    con.execute("CREATE TEMP TABLE tg_labelled AS SELECT trace_id, outcome FROM traces SEMI JOIN tg_replaced "
                "USING (trace_id) WHERE trace_id IN (SELECT trace_id FROM labels WHERE outcome IS NOT NULL)")
    for table in ("traces", "messages", "tool_calls"):
        deleted = _inserted(con.execute(f"DELETE FROM {table} WHERE trace_id IN (SELECT trace_id FROM tg_replaced)"))
        if table in removed:
            removed[table] = deleted
    con.execute("DELETE FROM scores WHERE trace_id IN (SELECT trace_id FROM tg_replaced) "
                "AND NOT (kind = 'human' AND starts_with(coalesce(comment, ''), 'label import '))")
    return removed


def _after_replace(con: duckdb.DuckDBPyConnection) -> None:
    """Put back the outcomes labels set, and have the failure detectors look at the replaced traces again."""
    con.execute("UPDATE traces SET outcome = r.outcome FROM tg_labelled r WHERE traces.trace_id = r.trace_id")
    forget_traces(con, "tg_replaced")
    con.execute("DROP TABLE tg_labelled")
    con.execute("DROP TABLE tg_replaced")


def _clashing(con: duckdb.DuckDBPyConnection, staged_traces: pa.Table) -> list[str]:
    """Ids of the batch that the store already holds."""
    query = "SELECT trace_id FROM staged_traces SEMI JOIN traces USING (trace_id) ORDER BY trace_id"
    return [tid for (tid,) in con.execute(query).fetchall()]


def _compare(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table], clashing: list[str]) -> tuple[int, list[str]]:
    """(re-ingests, conflicts) among the clashing ids, by hashing the incoming and the stored rows alike."""
    staged_traces, staged_messages = tables["traces"], tables["messages"]  # noqa: F841 - read by name in SQL
    staged_tool_calls, staged_scores = tables["tool_calls"], tables["scores"]  # noqa: F841
    staged_clash = pa.table({"trace_id": pa.array(clashing, pa.string())})  # noqa: F841
    incoming = dict(con.execute(_hashes(STAGED, "staged_clash")).fetchall())
    stored = dict(con.execute(_hashes(STORED, "staged_clash")).fetchall())
    conflicts = [tid for tid in clashing if incoming[tid] != stored.get(tid)]
    return len(clashing) - len(conflicts), conflicts


def _insert(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table]) -> dict[str, int]:
    staged_traces, staged_messages = tables["traces"], tables["messages"]  # noqa: F841 - read by name in SQL
    staged_tool_calls, staged_scores = tables["tool_calls"], tables["scores"]  # noqa: F841
    counts = {}
    for table, cols in COLUMNS.items():
        names = ", ".join(cols)
        counts[table] = _inserted(con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {STAGED[table]}"))
    return counts


def _inserted(cur: duckdb.DuckDBPyConnection) -> int:
    """The row count an INSERT or DELETE reports."""
    rows = cur.fetchall()
    return int(rows[0][0]) if rows else 0
