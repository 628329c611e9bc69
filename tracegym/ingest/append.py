"""Appending staged rows to the store: re-ingest detection and id conflicts.

Both ingest paths stage a batch as four relations shaped like the store's
`traces`, `messages`, `tool_calls` and `scores`, with trace ids unique within
the batch. A staged trace whose id is already stored is compared by content
hash, computed in SQL from the rows themselves on both sides (the staged rows
and the stored ones), so a trace hashes the same whichever path normalized it.
Only clashing ids are hashed: new traces cost no hashing at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

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
COLUMNS = {"traces": TRACE_COLUMNS, "messages": MESSAGE_COLUMNS, "tool_calls": TOOL_CALL_COLUMNS, "scores": SCORE_COLUMNS}


@dataclass
class Appended:
    traces: int = 0
    messages: int = 0
    tool_calls: int = 0
    duplicates: int = 0  # already stored with the same content
    conflicts: list[str] = field(default_factory=list)  # already stored with different content: kept the stored one


def _field(expr: str) -> str:
    """A nullable text field, length-prefixed so that concatenations cannot collide."""
    return f"coalesce(length({expr})::VARCHAR || ':' || {expr}, '-') || ';'"


def _hashes(tables: dict[str, str], ids: str) -> str:
    """SQL for (trace_id, content_hash) of the traces in relation `ids`, read from `tables`."""
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


STORE = {table: table for table in COLUMNS}


def append_staged(con: duckdb.DuckDBPyConnection, staged: dict[str, str]) -> Appended:
    """Store the staged traces that are new; count re-ingests and report id conflicts.

    `staged` maps each store table to the relation holding its incoming rows.
    """
    con.execute(f"CREATE OR REPLACE TEMP TABLE _staged_clash AS SELECT trace_id FROM {staged['traces']} "
                "SEMI JOIN traces USING (trace_id)")
    out = Appended()
    if con.execute("SELECT count(*) FROM _staged_clash").fetchall()[0][0]:
        incoming = dict(con.execute(_hashes(staged, "_staged_clash")).fetchall())
        stored = dict(con.execute(_hashes(STORE, "_staged_clash")).fetchall())
        for trace_id in sorted(incoming):
            if incoming[trace_id] == stored.get(trace_id):
                out.duplicates += 1
            else:
                out.conflicts.append(trace_id)
    for table in COLUMNS:
        cols = ", ".join(COLUMNS[table])
        inserted = _inserted(con.execute(
            f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {staged[table]} ANTI JOIN _staged_clash USING (trace_id)"
        ))
        if table != "scores":
            setattr(out, table, inserted)
    con.execute("DROP TABLE _staged_clash")
    return out


def _inserted(cur: duckdb.DuckDBPyConnection) -> int:
    rows = cur.fetchall()
    return int(rows[0][0]) if rows else 0
