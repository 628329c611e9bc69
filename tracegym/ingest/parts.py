"""The parts of span-shaped traces, kept so that a trace spread over files is rebuilt whole.

An OTel trace still running when its spans were exported, a Collector's
size-rotated files, spans and log records written to separate files, a LangSmith
run posted before its feedback: each brings part of a trace. Span-shaped adapters
hand every span, run, observation or log record they read to `PartStore.merge`
with its identity (`part_key`); the store keeps it in `span_parts` and returns the
trace's parts from every file so far, the newest version of each part winning, in
the order of their `seq` (a key of their own, not of the file they came in, so
that any split of the same data, ingested in any order, gives the same trace).

A part key may name a version after its last '@' (`run:<id>@<digest>`): versions of one part that complete
each other (a LangSmith run posted at its start and patched at its end) are all kept, and the adapter merges
them; `owners` finds the trace that holds a version of a part.

The pipeline then replaces the stored trace with the one rebuilt from all parts
(`append.append_tables`, `upsert`); rebuilding the same parts gives the same
content, which counts as a duplicate, not a change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from tracegym import exact_json
from tracegym.ingest.normalize import to_json
from tracegym.ingest.removal import retire_joined

if TYPE_CHECKING:
    from tracegym.redact.session import Run


@dataclass(slots=True)
class Part:
    """One part of a trace: its identity, sort key, and the JSON the adapter reads it back from."""

    key: str
    seq: str
    doc: Any


class PartStore:
    """`span_parts` for one file's load, inside its transaction."""

    def __init__(self, con: duckdb.DuckDBPyConnection, fmt: str, source_id: str, redact: Run | None = None) -> None:
        self.con, self.fmt, self.source_id, self.redact = con, fmt, source_id, redact
        """With `redact`, parts are redacted before they are kept: nothing unredacted reaches the store."""
        self.joined: dict[str, str] = {}
        """Stored traces a rebuilt group no longer makes (`rebuilt`), each with the trace that holds its calls now."""
        self.retired: list[str] = []
        """Of those, the ones `retire` removed from the store."""
        self.renamed = 0
        """Of the traces they went into, those not stored before: a conversation grown under a new id."""
        self.stored_before: set[str] = set()
        """The traces `rebuilt` makes that were stored before this file."""
        self.removed: dict[str, int] = {}
        """The rows each table lost with the retired traces."""
        self.grown: set[str] = set()
        """Trace ids whose parts from earlier files this file added to or changed: their stored trace is
        rebuilt, even where the content hash would not tell (a span adding only timing or tokens)."""

    def trace_id(self, key: str) -> str:
        """The stored trace id of a trace key (redacted as trace ids are, with `redact`)."""
        return self._id(f"{self.fmt}:{key}", "span_parts.trace_id")

    def _id(self, value: str, column: str) -> str:
        return value if self.redact is None else self.redact.identifier(value, column)

    def merge(self, groups: dict[str, list[Part]]) -> dict[str, list[Part]]:
        """Store the file's parts per trace key; return each trace's parts from all files, in `seq` order."""
        ids = pa.table({"trace_id": pa.array([self.trace_id(k) for k in groups], pa.string())})  # noqa: F841
        stored: dict[str, dict[str, Part]] = {}
        rows = self.con.execute(
            "SELECT trace_id, part_key, seq, doc FROM span_parts SEMI JOIN ids USING (trace_id)").fetchall()
        for tid, key, seq, doc in rows:
            stored.setdefault(tid, {})[key] = Part(key, seq, exact_json.loads(doc))
        out: dict[str, list[Part]] = {}
        new_rows: list[tuple[str, str, str, str, str]] = []
        for key, parts in groups.items():
            tid = self.trace_id(key)
            merged = stored.get(tid, {})
            earlier = bool(merged)
            for part in parts:
                if self.redact is not None:
                    part = Part(self._id(part.key, "span_parts.part_key"), part.seq,
                                exact_json.loads(self.redact.part(tid, to_json(part.doc))))
                old = merged.get(part.key)
                if old is None or to_json(old.doc) != to_json(part.doc):
                    new_rows.append((tid, part.key, part.seq, to_json(part.doc), self.source_id))
                    if earlier:
                        self.grown.add(tid)
                merged[part.key] = part
            out[key] = sorted(merged.values(), key=lambda p: (p.seq, p.key))
        self._save(new_rows)
        return out

    def rebuilt(self, group: str, made: dict[str, list[str]]) -> None:
        """The traces built now from the parts of `group`, a key whose parts make several traces (spans without a
        parent, stitched per service: tracegym/ingest/adapters/span_stitch.py), each marked `parts_of` the group in
        its metadata, with the ids its calls would have as traces of their own. Each replaces its stored self; a
        trace an earlier build made that this one does not (its calls went on with a conversation that an earlier
        call, ingested later, opened) joins the trace that holds its first call now (`retire`, once the file's
        traces are stored)."""
        self.grown.update(made)
        rows = self.con.execute("SELECT trace_id FROM traces WHERE format = ? AND metadata->>'parts_of' = ?",
                                [self.fmt, group]).fetchall()
        holder = {call: tid for tid, calls in made.items() for call in calls}
        self.stored_before.update(tid for (tid,) in rows if tid in made)
        for (tid,) in rows:
            if tid not in made and tid in holder:
                self.joined[tid] = holder[tid]

    def retire(self) -> None:
        """Remove the traces that joined another (`rebuilt`) now that the file's traces are stored, giving what
        their labels set to the trace they joined (tracegym/ingest/removal.py). One whose new trace was not
        stored (it failed to build) stays: nothing is lost."""
        if not self.joined:
            return
        self.retired, self.removed = retire_joined(self.con, self.joined)
        self.renamed = len({self.joined[t] for t in self.retired} - self.stored_before)

    def owners(self, names: list[str]) -> dict[str, str]:
        """The trace key whose stored parts hold a version of each named part (key without its '@version')."""
        if not names:
            return {}
        stored = {self._id(n, "span_parts.part_key"): n for n in set(names)}
        staged_names = pa.table({"name": pa.array(sorted(stored), pa.string())})  # noqa: F841 - read by name
        rows = self.con.execute(
            "SELECT DISTINCT n.name, p.trace_id FROM span_parts p JOIN staged_names n "
            "ON regexp_replace(p.part_key, '@[^@]*$', '') = n.name WHERE starts_with(p.trace_id, ?)",
            [f"{self.fmt}:"]).fetchall()
        return {stored[name]: tid.removeprefix(f"{self.fmt}:") for name, tid in rows}

    def adopt(self, moves: dict[str, str]) -> None:
        """Move the parts stored under a provisional trace key to the trace it turned out to be part of (a
        LangSmith feedback naming a child run, stored under that run's id before the run was seen)."""
        moves = {old: new for old, new in moves.items() if old != new}
        if not moves:
            return
        staged_moves = pa.table({"old": pa.array([self.trace_id(k) for k in moves], pa.string()),  # noqa: F841
                                 "new": pa.array([self.trace_id(v) for v in moves.values()], pa.string())})
        moved = self.con.execute("SELECT DISTINCT m.new FROM span_parts p JOIN staged_moves m "
                                 "ON p.trace_id = m.old").fetchall()
        if moved:
            self.con.execute("UPDATE span_parts SET trace_id = m.new FROM staged_moves m "
                             "WHERE span_parts.trace_id = m.old")
            self.grown.update(new for (new,) in moved)

    def _save(self, rows: list[tuple[str, str, str, str, str]]) -> None:
        if not rows:
            return
        cols = ("trace_id", "part_key", "seq", "doc", "source_id")
        staged_parts = pa.table({c: pa.array([r[i] for r in rows], pa.string())  # noqa: F841 - read by name
                                 for i, c in enumerate(cols)})
        self.con.execute("DELETE FROM span_parts WHERE (trace_id, part_key) IN "
                         "(SELECT (trace_id, part_key) FROM staged_parts)")
        self.con.execute("INSERT INTO span_parts SELECT * FROM staged_parts")

