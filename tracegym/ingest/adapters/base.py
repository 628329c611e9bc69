"""What an adapter is: detect a format, split a file into records, normalize each."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

import duckdb
import pyarrow as pa

from tracegym.ingest.parts import PartStore
from tracegym.ingest.reading import Sample, iter_json_values
from tracegym.ingest.records import BadRecord, RawRecord, Trace
from tracegym.ingest.stitch import Call


@dataclass
class SourceFile:
    """A file being ingested, with what adapters may need beside it."""

    path: Path
    source_id: str
    sample: Sample
    options: dict[str, Any] = field(default_factory=dict)  # e.g. the generic adapter's mapping
    parts: PartStore | None = None  # for adapters that `upsert`: the parts of traces stored by earlier files
    shown: str = ""
    """What the store and reports call the file, where `path` is a stand-in (a line joined from pieces of
    files is read from a temporary file, and recorded under the pieces' paths)."""

    @property
    def name(self) -> str:
        return self.shown or str(self.path)


class FileSink(Protocol):
    """What a bulk loader hands its results to (the pipeline's per-file load)."""

    def claim(self, trace_id: str) -> bool:
        """True the first time the file shows this id; False for a repeat (counted as a duplicate)."""

    def take(self, item: RawRecord | BadRecord) -> None:
        """Normalize and store one record exactly as the record-by-record path would."""

    def append(self, tables: dict[str, pa.Table]) -> None:
        """Append a batch of Arrow tables shaped like the store's traces, messages, tool_calls and scores."""


class Adapter:
    """Base class. Subclasses set `name` and implement `sniff` and `to_traces`.

    `to_traces` may raise on malformed input: the pipeline catches the error at
    the record boundary and stores the record in `ingest_errors` with its raw
    text, so one bad record never costs the others.
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    upserts: ClassVar[bool] = False
    """Span-shaped formats: a trace may arrive in parts over several files, and each file's parts are merged
    with the stored ones (see tracegym/ingest/parts.py). Others keep the conflict rule: the stored trace wins."""

    def sniff(self, sample: Sample) -> bool:
        raise NotImplementedError

    def check_options(self, options: dict[str, Any]) -> None:
        """Raise a `ConfigError` for options this adapter cannot read with (checked once, before any file)."""

    def records(self, src: SourceFile) -> Iterator[RawRecord | BadRecord]:
        """Split the file into raw records. Default: JSONL lines or JSON array items."""
        return iter_json_values(src.path, src.sample.jsonl)

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        raise NotImplementedError

    def call_of(self, record: RawRecord, src: SourceFile) -> Call | None:
        """For logs with one line per API call: the record as one call (request messages + reply), which the
        pipeline stitches with the file's other calls into one trace per conversation (see
        tracegym/ingest/stitch.py); None for a record that is not a call. May raise like `to_traces`: the record
        then takes the `to_traces` path, which reports it."""
        return None

    def bulk_load(self, con: duckdb.DuckDBPyConnection, src: SourceFile, sink: FileSink) -> bool:
        """Load the whole file in one go (in SQL, say) instead of record by record; False declines.

        What it stores must equal what `records` and `to_traces` would have stored.
        """
        return False


def require(obj: Any, key: str, kind: type | tuple[type, ...], where: str = "") -> Any:
    """obj[key], checked to be of `kind`, or a ValueError naming the field."""
    if not isinstance(obj, dict):
        raise ValueError(f"expected an object{' at ' + where if where else ''}, got {type(obj).__name__}")
    if key not in obj:
        raise ValueError(f"missing field {where + '.' if where else ''}{key}")
    value = obj[key]
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise ValueError(f"field {where + '.' if where else ''}{key} must be {names}, got {type(value).__name__}")
    return value
