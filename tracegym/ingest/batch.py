"""Columnar batches: normalized traces -> Arrow tables for `append.append_tables`."""

from __future__ import annotations

import pyarrow as pa

from tracegym.ingest.normalize import to_json
from tracegym.ingest.records import Trace

TRACE_SCHEMA = pa.schema(
    [
        ("trace_id", pa.string()), ("source_id", pa.string()), ("format", pa.string()),
        ("session_id", pa.string()), ("model", pa.string()), ("started_at", pa.timestamp("us")),
        ("ended_at", pa.timestamp("us")), ("outcome", pa.string()), ("n_messages", pa.int32()),
        ("tools", pa.string()), ("metadata", pa.string()),
    ]
)
MESSAGE_SCHEMA = pa.schema(
    [
        ("trace_id", pa.string()), ("idx", pa.int32()), ("role", pa.string()), ("content", pa.large_string()),
        ("tool_call_id", pa.string()), ("name", pa.string()), ("input_tokens", pa.int32()),
        ("output_tokens", pa.int32()), ("latency_ms", pa.float64()), ("ts", pa.timestamp("us")),
    ]
)
TOOL_CALL_SCHEMA = pa.schema(
    [
        ("trace_id", pa.string()), ("message_idx", pa.int32()), ("call_id", pa.string()), ("name", pa.string()),
        ("arguments", pa.string()), ("result", pa.large_string()), ("result_message_idx", pa.int32()),
        ("is_error", pa.bool_()), ("exit_code", pa.int32()),
    ]
)
SCORE_SCHEMA = pa.schema(
    [
        ("trace_id", pa.string()), ("name", pa.string()), ("value", pa.float64()),
        ("label", pa.string()), ("kind", pa.string()), ("comment", pa.string()),
    ]
)


class TraceBatch:
    """Accumulates normalized traces column by column until flushed."""

    def __init__(self, source_id: str) -> None:
        self.source_id = source_id
        self.traces: list[tuple] = []
        self.messages: list[tuple] = []
        self.tool_calls: list[tuple] = []
        self.scores: list[tuple] = []

    def __len__(self) -> int:
        return len(self.traces)

    def add(self, t: Trace) -> None:
        tools = to_json(t.tools) if t.tools is not None else None
        self.traces.append(
            (t.trace_id, self.source_id, t.format, t.session_id, t.model, t.started_at, t.ended_at,
             t.outcome, len(t.messages), tools, to_json(t.metadata))
        )
        tid = t.trace_id
        self.messages.extend(
            (tid, i, m.role, m.content, m.tool_call_id, m.name, m.input_tokens, m.output_tokens, m.latency_ms, m.ts)
            for i, m in enumerate(t.messages)
        )
        self.tool_calls.extend(
            (tid, c.message_idx, c.call_id, c.name, to_json(c.arguments) if c.arguments is not None else None,
             c.result, c.result_message_idx,
             c.is_error, c.exit_code)
            for c in t.tool_calls
        )
        self.scores.extend((tid, s.name, s.value, s.label, s.kind, s.comment) for s in t.scores)

    def tables(self) -> dict[str, pa.Table]:
        return {
            "traces": _table(self.traces, TRACE_SCHEMA),
            "messages": _table(self.messages, MESSAGE_SCHEMA),
            "tool_calls": _table(self.tool_calls, TOOL_CALL_SCHEMA),
            "scores": _table(self.scores, SCORE_SCHEMA),
        }


def _table(rows: list[tuple], schema: pa.Schema) -> pa.Table:
    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in schema]
    arrays = [pa.array(col, type=f.type) for col, f in zip(columns, schema, strict=True)]
    return pa.Table.from_arrays(arrays, schema=schema)
