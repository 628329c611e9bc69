"""What an adapter is: detect a format, split a file into records, normalize each."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from tracegym.ingest.reading import Sample, iter_json_values
from tracegym.ingest.records import BadRecord, RawRecord, Trace


@dataclass
class SourceFile:
    """A file being ingested, with what adapters may need beside it."""

    path: Path
    source_id: str
    sample: Sample
    options: dict[str, Any] = field(default_factory=dict)  # e.g. the generic adapter's mapping


class Adapter:
    """Base class. Subclasses set `name` and implement `sniff` and `to_traces`.

    `to_traces` may raise on malformed input: the pipeline catches the error at
    the record boundary and stores the record in `ingest_errors` with its raw
    text, so one bad record never costs the others.
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""

    def sniff(self, sample: Sample) -> bool:
        raise NotImplementedError

    def records(self, src: SourceFile) -> Iterator[RawRecord | BadRecord]:
        """Split the file into raw records. Default: JSONL lines or JSON array items."""
        return iter_json_values(src.path, src.sample.jsonl)

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        raise NotImplementedError


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
