"""Appending staged rows to the store: content hashes, re-ingest detection, id conflicts.

Both ingest paths stage a batch as four relations shaped like the store's
`traces` (without `content_hash`), `messages`, `tool_calls` and `scores`, with
trace ids unique within the batch. The content hash is computed here, in SQL,
from exactly the rows about to be stored, so a trace hashes the same whichever
path normalized it.
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


def _hash_sql(staged: dict[str, str]) -> str:
    # Long text (content, results) is digested once with md5; the digests, in order, then go through sha256.
    return f"""
        CREATE OR REPLACE TEMP TABLE _staged_hashes AS
        WITH m AS (
            SELECT trace_id, string_agg({_field('role')} || coalesce(md5(content), '-') || {_field('tool_call_id')},
                                        '' ORDER BY idx) AS h
            FROM {staged['messages']} GROUP BY trace_id
        ), c AS (
            SELECT trace_id, string_agg(d, '' ORDER BY message_idx, d) AS h FROM (
                SELECT trace_id, message_idx,
                       {_field('name')} || coalesce(md5(CAST(arguments AS VARCHAR)), '-') || {_field('call_id')} AS d
                FROM {staged['tool_calls']}
            ) GROUP BY trace_id
        ), s AS (
            SELECT trace_id, string_agg(d, '' ORDER BY d) AS h FROM (
                SELECT trace_id, {_field('name')} || {_field('CAST(value AS VARCHAR)')} || {_field('label')} AS d
                FROM {staged['scores']}
            ) GROUP BY trace_id
        )
        SELECT t.trace_id, left(sha256(concat(
            {_field('t.outcome')}, {_field('t.model')}, '|', m.h, '|', c.h, '|', s.h)), 32) AS content_hash
        FROM {staged['traces']} t
        LEFT JOIN m USING (trace_id) LEFT JOIN c USING (trace_id) LEFT JOIN s USING (trace_id)
    """


def append_staged(con: duckdb.DuckDBPyConnection, staged: dict[str, str]) -> Appended:
    """Store the staged traces that are new; count re-ingests and report id conflicts.

    `staged` maps each store table to the relation holding its incoming rows.
    """
    con.execute(_hash_sql(staged))
    clashes = con.execute(
        "SELECT h.trace_id, h.content_hash = t.content_hash FROM _staged_hashes h JOIN traces t USING (trace_id) "
        "ORDER BY h.trace_id"
    ).fetchall()
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _staged_keep AS SELECT trace_id, content_hash FROM _staged_hashes "
        "ANTI JOIN traces USING (trace_id)"
    )
    out = Appended(duplicates=sum(1 for _, same in clashes if same), conflicts=[t for t, same in clashes if not same])
    cols = ", ".join(TRACE_COLUMNS)
    out.traces = _inserted(con.execute(
        f"INSERT INTO traces ({cols}, content_hash) SELECT {cols}, k.content_hash "
        f"FROM {staged['traces']} JOIN _staged_keep k USING (trace_id)"
    ))
    counts = {}
    for table in ("messages", "tool_calls", "scores"):
        cols = ", ".join(COLUMNS[table])
        counts[table] = _inserted(con.execute(
            f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {staged[table]} SEMI JOIN _staged_keep USING (trace_id)"
        ))
    out.messages, out.tool_calls = counts["messages"], counts["tool_calls"]
    con.execute("DROP TABLE _staged_hashes; DROP TABLE _staged_keep")
    return out


def _inserted(cur: duckdb.DuckDBPyConnection) -> int:
    row = cur.fetchone()
    return int(row[0]) if row else 0
