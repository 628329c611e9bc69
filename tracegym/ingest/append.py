"""Appending a batch of normalized rows to the store: re-ingest detection and id conflicts.

Both ingest paths hand over a batch as Arrow tables shaped like the store's
`traces`, `messages`, `tool_calls` and `scores`, with trace ids unique within
the batch. A trace whose id is already stored is compared by content hash,
computed in SQL from the rows themselves on both sides (the incoming rows and
the stored ones), so a trace hashes the same whichever path normalized it.
Only clashing ids are hashed: new traces cost no hashing at all. Two hashes
tell a re-sent trace from a changed one: the content (messages, calls, scores,
outcome, model), whose change is a conflict, and every other column (session,
times, tokens, metadata, results), whose change alone makes the trace differ.
The stored side is hashed without what `labels import` set on it (outcomes,
scores), which is not the trace's own. Either way the stored trace is kept,
unless the batch replaces it (`ingest --replace`; tracegym/ingest/removal.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from tracegym.ingest.removal import LABEL_SCORE, remove_rows, row_count

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
    duplicates: int = 0  # already stored with the same content (`differing` of them in other columns)
    merged: int = 0  # already stored, and replaced by the trace rebuilt from its stored and new parts
    # `messages` and `tool_calls` count the rows the batch added to the store: a replaced trace's rows count by
    # what it gained (or lost) since it was last stored, not again in full each time it is rebuilt.
    conflicts: list[str] = field(default_factory=list)  # already stored with different content: kept the stored one
    differing: int = 0  # of `duplicates`, those stored with another session, time or metadata: kept
    replaced: list[str] = field(default_factory=list)  # already stored and replaced as asked (`ingest --replace`),
    # counted in `traces` (and their rows in `messages` and `tool_calls`) as what the batch brought
    removed: dict[str, int] = field(default_factory=dict)  # rows of those replaced traces deleted, per table
    no_session: int = 0  # traces stored by the batch without a session id
    deleted: int = 0  # traces `traces delete` removed, left out (`deleted_traces`)


def _field(expr: str) -> str:
    """A nullable text field, length-prefixed so that concatenations cannot collide."""
    return f"coalesce(length({expr})::VARCHAR || ':' || {expr}, '-') || ';'"


_FULL = {
    "traces": ("session_id", "CAST(started_at AS VARCHAR)", "CAST(ended_at AS VARCHAR)",
               "CAST(n_messages AS VARCHAR)", "CAST(tools AS VARCHAR)", "CAST(metadata AS VARCHAR)"),
    "messages": ("name", "CAST(input_tokens AS VARCHAR)", "CAST(output_tokens AS VARCHAR)",
                 "CAST(latency_ms AS VARCHAR)", "CAST(ts AS VARCHAR)"),
    "tool_calls": ("sha1(result)", "CAST(result_message_idx AS VARCHAR)", "CAST(is_error AS VARCHAR)",
                   "CAST(exit_code AS VARCHAR)"),
    "scores": ("kind", "comment"),
}
"""The columns the content hash leaves out, which the full hash adds."""


def _extra(table: str, full: bool) -> str:
    return "".join(f" || {_field(expr)}" for expr in _FULL[table]) if full else ""


def _hashes(tables: dict[str, str], ids: str, full: bool = False) -> str:
    """SQL for (trace_id, hash) of the traces listed in `ids`, read from `tables`: of their content, or with
    `full` of every column but `source_id`."""
    # Long text (content, arguments) is digested once with sha1; the digests, in order, then go through sha256.
    return f"""
        WITH m AS (
            SELECT trace_id, string_agg({_field('role')} || coalesce(sha1(content), '-') || {_field('tool_call_id')}
                                        {_extra('messages', full)}, '' ORDER BY idx) AS h
            FROM {tables['messages']} SEMI JOIN {ids} USING (trace_id) GROUP BY trace_id
        ), c AS (
            SELECT trace_id, string_agg(d, '' ORDER BY message_idx, d) AS h FROM (
                SELECT trace_id, message_idx,
                       {_field('name')} || coalesce(sha1(CAST(arguments AS VARCHAR)), '-') || {_field('call_id')}
                       {_extra('tool_calls', full)} AS d
                FROM {tables['tool_calls']} SEMI JOIN {ids} USING (trace_id)
            ) GROUP BY trace_id
        ), s AS (
            SELECT trace_id, string_agg(d, '' ORDER BY d) AS h FROM (
                SELECT trace_id, {_field('name')} || {_field('CAST(value AS VARCHAR)')} || {_field('label')}
                       {_extra('scores', full)} AS d
                FROM {tables['scores']} SEMI JOIN {ids} USING (trace_id)
            ) GROUP BY trace_id
        )
        SELECT t.trace_id, sha256(concat({_field('t.outcome')}, {_field('t.model')}{_extra('traces', full)},
                                         '|', m.h, '|', c.h, '|', s.h))
        FROM {tables['traces']} t SEMI JOIN {ids} USING (trace_id)
        LEFT JOIN m USING (trace_id) LEFT JOIN c USING (trace_id) LEFT JOIN s USING (trace_id)
    """


# The stored traces as ingest made them: outcomes before `labels import` set them, without the scores it set.
STORED = {
    "traces": """(SELECT t.* REPLACE (CASE WHEN l.trace_id IS NULL THEN t.outcome ELSE l.before END AS outcome)
                  FROM traces t LEFT JOIN (SELECT trace_id, arg_min(previous_outcome, labelled_at) AS before
                                           FROM labels WHERE outcome IS NOT NULL GROUP BY trace_id) l
                  USING (trace_id))""",
    "messages": "messages", "tool_calls": "tool_calls",
    "scores": f"(SELECT * FROM scores WHERE NOT ({LABEL_SCORE}))",
}
# DuckDB reads a batch's Arrow tables through local variables of these names (replacement scans).
# Registering them as views instead would keep every batch in memory until the file's transaction commits.
STAGED = {table: f"staged_{table}" for table in COLUMNS}


def append_tables(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table],
                  grown: set[str] | None = None, replace: bool = False, restore: bool = False) -> Appended:
    """Store the batch's traces that are new; count exact re-ingests, report id conflicts and differences.

    A clashing trace in `grown` is replaced instead: it is span-shaped, and the batch holds it rebuilt from the
    parts earlier files stored and the ones this file added (tracegym/ingest/parts.py), or it is a conversation
    of logged calls that this file holds with more calls. With `replace`, every clashing trace is replaced.
    The caller counts the clusters again once its replacements are done (`recount_after_removal`). Traces
    deleted before (`deleted_traces`) are left out, unless `restore`: then they are stored, no longer deleted.
    """
    out = Appended()
    tables, out.deleted = _without_deleted(con, tables, restore)
    grown = grown or set()
    clashing = _clashing(con, tables["traces"])
    unchanged = _unchanged(con, tables, [tid for tid in clashing if tid in grown])
    merged = [tid for tid in clashing if tid in grown and tid not in unchanged]
    out.replaced = [tid for tid in clashing if replace and tid not in grown]
    removed: dict[str, int] = {}
    if clashing:
        others = [tid for tid in clashing if tid not in grown and not replace]
        if others:
            out.duplicates, out.conflicts, out.differing = _compare(con, tables, others)
        out.duplicates += len(unchanged)
        others += unchanged
        _keep_labelled(con, merged + out.replaced)
        removed, out.removed = _remove(con, merged), _remove(con, out.replaced)
        skipped = pa.array(others, pa.string())
        keep = {t: pc.invert(pc.is_in(rows["trace_id"], skipped)) for t, rows in tables.items()}
        tables = {t: rows.filter(keep[t]) for t, rows in tables.items()}
    counts = _insert(con, tables)
    out.merged = len(merged)
    out.traces = counts["traces"] - out.merged
    out.messages = counts["messages"] - removed.get("messages", 0)
    out.tool_calls = counts["tool_calls"] - removed.get("tool_calls", 0)
    out.no_session = tables["traces"]["session_id"].null_count
    if clashing:
        _put_back_labelled(con)
    return out


def _without_deleted(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table],
                     restore: bool) -> tuple[dict[str, pa.Table], int]:
    """The batch less the traces `traces delete` removed, and how many those were; with `restore` the batch
    whole, those traces no longer recorded as deleted."""
    staged_traces = tables["traces"]  # noqa: F841 - read by name in SQL
    if restore:
        con.execute("DELETE FROM deleted_traces WHERE trace_id IN (SELECT trace_id FROM staged_traces)")
        return tables, 0
    deleted = pa.array([tid for (tid,) in con.execute(
        "SELECT trace_id FROM deleted_traces SEMI JOIN staged_traces USING (trace_id)").fetchall()], pa.string())
    if not len(deleted):
        return tables, 0
    return {t: rows.filter(pc.invert(pc.is_in(rows["trace_id"], deleted))) for t, rows in tables.items()}, len(deleted)


def _keep_labelled(con: duckdb.DuckDBPyConnection, ids: list[str]) -> None:
    """Note the outcomes `labels import` set on traces about to be replaced (`_put_back_labelled`)."""
    staged_ids = pa.table({"trace_id": pa.array(ids, pa.string())})  # noqa: F841 - read by name in SQL
    con.execute("CREATE TEMP TABLE tg_labelled AS SELECT trace_id, outcome FROM traces SEMI JOIN staged_ids "
                "USING (trace_id) WHERE trace_id IN (SELECT trace_id FROM labels WHERE outcome IS NOT NULL)")


def _remove(con: duckdb.DuckDBPyConnection, ids: list[str]) -> dict[str, int]:
    """Delete the stored rows of traces about to be replaced, keeping what `labels import` set on them; return
    how many rows each table lost."""
    if not ids:
        return {}
    staged_ids = pa.table({"trace_id": pa.array(ids, pa.string())})  # noqa: F841 - read by name in SQL
    con.execute("CREATE TEMP TABLE tg_replaced AS SELECT trace_id FROM staged_ids")
    removed = remove_rows(con, "tg_replaced", replacing=True)
    con.execute("DROP TABLE tg_replaced")
    return removed


def _put_back_labelled(con: duckdb.DuckDBPyConnection) -> None:
    """Put back the outcomes labels set (the failure detectors see the replaced traces again: their findings
    and `detected` rows went with them)."""
    con.execute("UPDATE traces SET outcome = r.outcome FROM tg_labelled r WHERE traces.trace_id = r.trace_id")
    con.execute("DROP TABLE tg_labelled")


def _clashing(con: duckdb.DuckDBPyConnection, staged_traces: pa.Table) -> list[str]:
    """Ids of the batch that the store already holds."""
    query = "SELECT trace_id FROM staged_traces SEMI JOIN traces USING (trace_id) ORDER BY trace_id"
    return [tid for (tid,) in con.execute(query).fetchall()]


def _unchanged(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table], ids: list[str]) -> list[str]:
    """Of `ids` (traces the batch rebuilt), those it rebuilt as stored, every column alike: kept, not replaced (a
    group of spans rebuilds all its conversations, most of them as they were)."""
    if not ids:
        return []
    staged_traces, staged_messages = tables["traces"], tables["messages"]  # noqa: F841 - read by name in SQL
    staged_tool_calls, staged_scores = tables["tool_calls"], tables["scores"]  # noqa: F841
    staged_rebuilt = pa.table({"trace_id": pa.array(ids, pa.string())})  # noqa: F841
    incoming = dict(con.execute(_hashes(STAGED, "staged_rebuilt", full=True)).fetchall())
    stored = dict(con.execute(_hashes(STORED, "staged_rebuilt", full=True)).fetchall())
    return [tid for tid in ids if incoming.get(tid) == stored.get(tid)]


def _compare(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table],
             clashing: list[str]) -> tuple[int, list[str], int]:
    """(re-ingests, conflicts, differing) among the clashing ids, by hashing the incoming and the stored rows
    alike: conflicts differ in content; re-ingests do not, and `differing` of them differ in the other columns."""
    staged_traces, staged_messages = tables["traces"], tables["messages"]  # noqa: F841 - read by name in SQL
    staged_tool_calls, staged_scores = tables["tool_calls"], tables["scores"]  # noqa: F841
    staged_clash = pa.table({"trace_id": pa.array(clashing, pa.string())})  # noqa: F841
    incoming = dict(con.execute(_hashes(STAGED, "staged_clash")).fetchall())
    stored = dict(con.execute(_hashes(STORED, "staged_clash")).fetchall())
    conflicts = [tid for tid in clashing if incoming[tid] != stored.get(tid)]
    alike = [tid for tid in clashing if tid not in set(conflicts)]
    staged_alike = pa.table({"trace_id": pa.array(alike, pa.string())})  # noqa: F841
    incoming = dict(con.execute(_hashes(STAGED, "staged_alike", full=True)).fetchall())
    stored = dict(con.execute(_hashes(STORED, "staged_alike", full=True)).fetchall())
    differing = sum(incoming[tid] != stored.get(tid) for tid in incoming)
    return len(clashing) - len(conflicts), conflicts, differing


def _insert(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table]) -> dict[str, int]:
    staged_traces, staged_messages = tables["traces"], tables["messages"]  # noqa: F841 - read by name in SQL
    staged_tool_calls, staged_scores = tables["tool_calls"], tables["scores"]  # noqa: F841
    counts = {}
    for table, cols in COLUMNS.items():
        names = ", ".join(cols)
        counts[table] = row_count(con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {STAGED[table]}"))
    return counts
