"""Read queries the inspection commands share."""

from __future__ import annotations

from typing import Any

from tracegym.errors import NotFoundError
from tracegym.store.connection import Store

TABLES = ("sources", "traces", "messages", "tool_calls", "scores", "ingest_errors", "failures", "clusters",
          "task_sets", "tasks")


def list_traces(store: Store, fmt: str | None, outcome: str | None, model: str | None,
                limit: int) -> list[dict[str, Any]]:
    where, params = [], []
    for col, value in (("format", fmt), ("model", model)):
        if value is not None:
            where.append(f"t.{col} = ?")
            params.append(value)
    if outcome is not None:
        where.append("t.outcome IS NULL" if outcome == "none" else "t.outcome = ?")
        params += [] if outcome == "none" else [outcome]
    sql = f"""
        SELECT t.trace_id, t.format, t.model, t.outcome, t.n_messages,
               (SELECT count(*) FROM tool_calls c WHERE c.trace_id = t.trace_id) AS tool_calls,
               (SELECT count(*) FROM tool_calls c WHERE c.trace_id = t.trace_id AND c.is_error) AS tool_errors
        FROM traces t {'WHERE ' + ' AND '.join(where) if where else ''}
        ORDER BY t.format, t.trace_id LIMIT ?"""
    return store.query(sql, params + [limit])


def get_trace(store: Store, trace_id: str) -> dict[str, Any]:
    rows = store.query("SELECT * FROM traces WHERE trace_id = ?", [trace_id])
    if not rows:
        close = store.query(
            "SELECT trace_id FROM traces ORDER BY jaro_winkler_similarity(trace_id, ?) DESC LIMIT 1", [trace_id]
        )
        hint = f" Did you mean {close[0]['trace_id']!r}?" if close else ""
        raise NotFoundError(f"No trace {trace_id!r} in the store.{hint}")
    trace = rows[0]
    trace["messages"] = store.query("SELECT * EXCLUDE (trace_id) FROM messages WHERE trace_id = ? ORDER BY idx",
                                    [trace_id])
    trace["tool_calls"] = store.query(
        "SELECT * EXCLUDE (trace_id) FROM tool_calls WHERE trace_id = ? ORDER BY message_idx", [trace_id]
    )
    trace["scores"] = store.query("SELECT * EXCLUDE (trace_id) FROM scores WHERE trace_id = ?", [trace_id])
    return trace


def trace_as_json(trace: dict[str, Any]) -> dict[str, Any]:
    """`get_trace`'s record with its JSON columns (tool schemas, metadata, call arguments) as JSON values, not the
    strings DuckDB returns them as."""
    from tracegym.exact_json import loads

    def decoded(row: dict[str, Any], columns: tuple[str, ...]) -> dict[str, Any]:
        return {k: loads(v) if k in columns and isinstance(v, str) else v for k, v in row.items()}

    return {**decoded(trace, ("tools", "metadata")),
            "tool_calls": [decoded(call, ("arguments",)) for call in trace["tool_calls"]]}


def stats(store: Store) -> dict[str, Any]:
    present = {r["table_name"] for r in store.query("SELECT table_name FROM duckdb_tables()")}
    counts = {t: store.scalar(f"SELECT count(*) FROM {t}") for t in TABLES if t in present}
    by_format = store.query(
        """SELECT format, count(*) AS traces,
                  count(*) FILTER (outcome = 'success') AS success,
                  count(*) FILTER (outcome = 'failure') AS failure,
                  count(*) FILTER (outcome IS NULL) AS no_outcome,
                  sum(n_messages) AS messages
           FROM traces GROUP BY format ORDER BY format"""
    )
    return {"path": str(store.path), "tables": counts, "by_format": by_format}
