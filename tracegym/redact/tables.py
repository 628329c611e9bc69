"""Redacting a batch of traces as Arrow tables, the shape both ingest paths hand to the store.

Only the rows RE2 flags are touched in Python; every other value passes through as Arrow data. Every text
column of the batch is covered, redacted as its kind says (`tracegym/redact/columns.py`): identifiers first, with
the store-wide numbering, then content, each trace's rows sharing one numbering (or the store's), so a value gets
one placeholder wherever the trace carries it: in a message, a tool call's arguments, the tool's result, the
trace's metadata.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from tracegym.redact.columns import LASTING, Kind
from tracegym.redact.detect import POOL, Detector, Finding
from tracegym.redact.pseudonyms import Pseudonyms
from tracegym.redact.text import Tally, apply, redact_json_text, redact_path


class Redactor:
    """Redacts batches with one detector; `numbering(trace_id)` gives the pseudonyms a trace's rows share."""

    def __init__(self, detector: Detector, numbering: Callable[[str | None], Pseudonyms],
                 lasting: Callable[[], Pseudonyms], kinds: dict[tuple[str, str], Kind]) -> None:
        self.detector = detector
        self.numbering = numbering
        self.lasting = lasting
        """The store-wide numbering of identifiers, paths and tool schemas."""
        self.kinds = kinds
        """(table, column) -> how it is redacted, from the store's catalog."""
        self.tally = Tally()

    def tables(self, tables: dict[str, pa.Table]) -> dict[str, pa.Table]:
        """The batch with every finding replaced (identifiers first: content is numbered per redacted trace id);
        the tally counts them."""
        out = dict(tables)
        todo = [(table, column, kind) for table, rows in tables.items() if rows.num_rows
                for column, kind in self._kinds(table, rows) if _is_text(rows.schema.field(column).type)]
        values = [_large(tables[table].column(column)) for table, column, _ in todo]
        found = self.detector.find_columns(values)  # one detection over the batch's texts, each read once
        for (table, column, kind), column_values, column_found in zip(todo, values, found, strict=True):
            out[table] = self._column(out[table], table, column, kind, column_values, column_found)
        return out

    def _kinds(self, table: str, rows: pa.Table) -> list[tuple[str, Kind]]:
        """The table's columns to redact and their kinds, identifiers first."""
        kinds = [(c, k) for c in rows.column_names if (k := self.kinds.get((table, c))) is not None]
        return sorted(kinds, key=lambda ck: ck[1] not in LASTING)

    def redacted(self, text: str, found: list[Finding], kind: Kind, trace_id: str | None) -> str:
        """`text` with `found` replaced as a value of a column of `kind` is."""
        names = self.lasting() if kind in LASTING else self.numbering(trace_id)
        if kind == "path":
            return redact_path(text, self.detector, names)
        return redact_json_text(text, found, names, self.detector) if kind in ("json", "schema") \
            else apply(text, found, names)

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

    def _column(self, rows: pa.Table, table: str, column: str, kind: Kind, values: pa.ChunkedArray,
                found: list[tuple[int, str, list[Finding]]]) -> pa.Table:
        """`rows` with `column` (its texts `values`, as large strings) redacted at the rows of `found`."""
        ids = rows.column("trace_id") if "trace_id" in rows.column_names else None
        trace_ids = pc.take(ids, pa.array([row for row, _, _ in found], pa.int64())).to_pylist() \
            if ids is not None and found else [None] * len(found)
        changed: dict[int, str] = {}
        for (row, text, row_found), trace_id in zip(found, trace_ids, strict=True):
            changed[row] = self.redacted(text, row_found, kind, trace_id)
            self.tally.add(row_found, changed[row] if column == "trace_id" else trace_id, f"{table}.{column}")
        if not changed:
            return rows
        new = pa.chunked_array(_replaced(values, changed), values.type)
        return rows.set_column(rows.schema.get_field_index(column), rows.schema.field(column), pc.cast(
            new, rows.schema.field(column).type, memory_pool=POOL))


def _replaced(values: pa.ChunkedArray, changed: dict[int, str]) -> list[pa.Array]:
    """The column's chunks with the rows of `changed` replaced, chunk by chunk: a chunk without a change is kept
    as it is, and the column is never copied whole to one chunk first."""
    chunks = []
    at = 0
    for chunk in values.chunks:
        rows = [i for i in range(at, at + len(chunk)) if i in changed]
        if rows:
            mask = pa.array([i in changed for i in range(at, at + len(chunk))])
            chunk = pc.replace_with_mask(chunk, mask, pa.array([changed[i] for i in rows], chunk.type),
                                         memory_pool=POOL)
        chunks.append(chunk)
        at += len(chunk)
    return chunks


def _large(values: pa.ChunkedArray) -> pa.ChunkedArray:
    """A text column as large strings (a rewritten column may outgrow 32-bit offsets)."""
    return values if pa.types.is_large_string(values.type) else pc.cast(values, pa.large_string(), memory_pool=POOL)


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)
