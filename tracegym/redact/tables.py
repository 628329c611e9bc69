"""Redacting a batch of traces as Arrow tables, the shape both ingest paths hand to the store.

Only the rows RE2 flags are touched in Python; every other value passes through as Arrow data. Each trace's
rows share one numbering (or the store's), so a value gets one placeholder wherever the trace carries it:
in a message, a tool call's arguments, the tool's result, the trace's metadata.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from tracegym.redact.detect import Detector
from tracegym.redact.pseudonyms import Pseudonyms
from tracegym.redact.text import Tally, apply, redact_json_text

# (table, column, trace-id column, is JSON text): everything in a batch that holds content from the trace.
COLUMNS: tuple[tuple[str, str, str, bool], ...] = (
    ("messages", "content", "trace_id", False),
    ("tool_calls", "arguments", "trace_id", True),
    ("tool_calls", "result", "trace_id", False),
    ("traces", "metadata", "trace_id", True),
    ("scores", "comment", "trace_id", False),
)


class Redactor:
    """Redacts batches with one detector; `numbering(trace_id)` gives the pseudonyms a trace's rows share."""

    def __init__(self, detector: Detector, numbering: Callable[[str | None], Pseudonyms]) -> None:
        self.detector = detector
        self.numbering = numbering
        self.tally = Tally()

    def tables(self, tables: dict[str, pa.Table]) -> dict[str, pa.Table]:
        """The batch with every finding replaced; the tally counts them."""
        out = dict(tables)
        for table, column, key, is_json in COLUMNS:
            if table in out and out[table].num_rows:
                out[table] = self._column(out[table], table, column, key, is_json)
        return out

    def text(self, text: str, trace_id: str | None = None, column: str = "text", is_json: bool = False,
             names: Pseudonyms | None = None) -> str:
        """One text, e.g. a bad record's raw text, redacted with `names`, else `trace_id`'s numbering (a fresh one
        if None)."""
        found = self.detector.find(text)
        if not found:
            return text
        self.tally.add(found, trace_id, column)
        names = names or self.numbering(trace_id)
        return redact_json_text(text, found, names, self.detector) if is_json else apply(text, found, names)

    def _column(self, rows: pa.Table, table: str, column: str, key: str, is_json: bool) -> pa.Table:
        values = rows.column(column)
        if not pa.types.is_string(values.type) and not pa.types.is_large_string(values.type):
            values = values.cast(pa.large_string())
        ids = rows.column(key)
        changed: dict[int, str] = {}
        for row, text, found in self.detector.find_column(values):
            trace_id = ids[row].as_py()
            self.tally.add(found, trace_id, f"{table}.{column}")
            names = self.numbering(trace_id)
            changed[row] = redact_json_text(text, found, names, self.detector) if is_json \
                else apply(text, found, names)
        if not changed:
            return rows
        mask = pa.array([i in changed for i in range(rows.num_rows)])
        replacements = pa.array([changed[i] for i in sorted(changed)], values.type)
        new = pc.replace_with_mask(values.combine_chunks(), mask, replacements)
        return rows.set_column(rows.schema.get_field_index(column), rows.schema.field(column), new.cast(
            rows.schema.field(column).type))
