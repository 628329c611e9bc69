"""Reading source files into raw records without loading more than needed.

JSONL is streamed line by line. A JSON document that is an array is streamed
item by item (`json_stream`), so memory holds one item, not the document, and
an item that cannot be read (too deep, not UTF-8, cut off by a truncated file)
becomes one bad record while every other item is kept. A line or an item
larger than MAX_RECORD_BYTES is a bad record too, read no further than its
head: the store could not take it in one piece (DuckDB holds each value in one
block within the ingest memory cap), and keeping it would cost the whole file.
Numbers are read by `exact_json`, which keeps integers beyond 64 bits exact.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from tracegym.exact_json import loads
from tracegym.ingest.json_stream import ArrayItems, Item
from tracegym.ingest.records import BadRecord, RawRecord

SAMPLE_BYTES = 1 << 16
RAW_LIMIT = 1 << 20  # keep the raw text of bad records up to 1 MB
FIRST_LINE_LIMIT = 64 << 20  # detection reads at most this much of a long first line
# The largest line, array item or text value ingest takes: a quarter of the store's memory cap while
# ingesting (pipeline.INGEST_MEMORY_LIMIT), which holds a value of 200 MB but not one of 300 MB.
MAX_RECORD_BYTES = 128 << 20
_BLANK = b" \t\r\n"


def clip_raw(text: str) -> str:
    """Keep raw text whole up to 1 MB; above that, truncate and say so."""
    if len(text) <= RAW_LIMIT:
        return text
    return text[:RAW_LIMIT] + f"\n…[truncated by tracegym: {len(text)} characters in all]"


def decode_bytes(data: bytes) -> str:
    """UTF-8, or raise with the offset; bad bytes are kept visible as escapes."""
    return data.decode("utf-8")


def raw_text(data: bytes) -> str:
    return clip_raw(data.decode("utf-8", errors="backslashreplace"))


@dataclass(slots=True)
class Sample:
    """What format detection sees: the path, its first bytes, its first record."""

    path: Path
    head: bytes
    first: Any  # the first parsed JSON value (first line of JSONL, or the document's first item)
    jsonl: bool  # True when the file is one JSON value per line
    top: Any = None  # for JSON documents: the top-level value when it is an object


def take_sample(path: Path, first_is_piece: bool = False) -> Sample:
    """What detection sees of `path`. `first_is_piece`: its first line is known to be the end of a line cut across
    files (`fragments.continues_a_line`), so the file is JSONL, sampled from its next good line, never a document
    that the piece happens to open (one that starts with `[` or `{`)."""
    with path.open("rb") as f:
        head = f.read(SAMPLE_BYTES)
        line, rest = _first_line(f, head)
    if first_is_piece:
        return Sample(path, head, _later_object_line(rest), jsonl=True)
    try:
        first = loads(line)
    except orjson.JSONDecodeError:
        first = None
    # One JSON value per line: a first line that is an object or an array, with more lines after it.
    # A file that is one short object counts too; a one-line array is a document of items.
    if (isinstance(first, dict) and len(head) < SAMPLE_BYTES) or (isinstance(first, (dict, list)) and rest.strip()):
        return Sample(path, head, first, jsonl=True)
    top = _top_value(path, head)
    if isinstance(top, list):
        return Sample(path, head, top[0] if top else None, jsonl=False)
    later = _later_object_line(rest) if first is None and top is None else None
    if later is not None:  # JSONL whose first line is broken: detect from the next good line
        return Sample(path, head, later, jsonl=True)
    return Sample(path, head, top, jsonl=False, top=top)


def _later_object_line(rest: bytes) -> dict[str, Any] | None:
    """The first line after the first that is a whole JSON object starting at column 0.

    Column 0 keeps a broken pretty-printed document (whose nested objects are
    indented) from passing for JSONL.
    """
    for line in rest.split(b"\n"):
        if line.startswith(b"{"):
            try:
                value = loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    return None


def _first_line(f: BinaryIO, head: bytes) -> tuple[bytes, bytes]:
    """The first non-blank line, read whole even past the head (up to 64 MB), and a peek at what follows."""
    body = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    line, sep, rest = body.partition(b"\n")
    if not sep and len(head) == SAMPLE_BYTES:
        line += f.readline(FIRST_LINE_LIMIT).rstrip(b"\n")
        rest = f.read(SAMPLE_BYTES)
    return line, rest


def _top_value(path: Path, head: bytes) -> Any:
    """The whole document when it is small; else, for an array, a list of its first readable item."""
    if path.stat().st_size <= 64 << 20:
        try:
            return loads(path.read_bytes())
        except orjson.JSONDecodeError:
            pass
    body = head.removeprefix(b"\xef\xbb\xbf").lstrip(_BLANK)
    return _first_item(path, len(head) - len(body) + 1) if body.startswith(b"[") else None


def _first_item(path: Path, offset: int) -> list[Any] | None:
    """The first item of the array at `offset` that parses, within the file's first 64 MB."""
    with path.open("rb") as f:
        f.seek(offset)
        for item in ArrayItems(f, FIRST_LINE_LIMIT, 0):
            if item.start > FIRST_LINE_LIMIT:
                return None
            try:
                return [loads(item.data)]
            except orjson.JSONDecodeError:
                continue
    return None


@dataclass(slots=True)
class LongLine:
    """A line longer than MAX_RECORD_BYTES: its first RAW_LIMIT bytes and its length."""

    head: bytes
    size: int


def read_line(f: BinaryIO) -> bytes | LongLine:
    """The next line, newline included (b"" at the end of the file); past MAX_RECORD_BYTES, only its head."""
    line = f.readline(MAX_RECORD_BYTES + 1)
    if len(line) <= MAX_RECORD_BYTES or line.endswith(b"\n"):
        return line
    size, head = len(line), line[:RAW_LIMIT]
    del line
    while rest := f.readline(RAW_LIMIT):
        size += len(rest)
        if rest.endswith(b"\n"):
            break
    return LongLine(head, size)


def iter_jsonl(path: Path) -> Iterator[RawRecord | BadRecord]:
    """One record per non-blank line; a bad line is a bad record, never the end."""
    with path.open("rb") as f:
        lineno = 1
        while line := read_line(f):
            if isinstance(line, LongLine) or line.strip():
                yield parse_line(lineno, line)
            lineno += 1


def parse_line(lineno: int, line: bytes | LongLine) -> RawRecord | BadRecord:
    """One non-blank JSONL line (1-based `lineno`) as a record, or a bad record saying why."""
    if isinstance(line, LongLine) or len(line) > MAX_RECORD_BYTES:
        head, size = (line.head, line.size) if isinstance(line, LongLine) else (line[:RAW_LIMIT], len(line))
        return BadRecord(f"line {lineno}", too_large(size), _head_text(head, size))
    try:
        text = decode_bytes(line)
        value = loads(line)
    except (UnicodeDecodeError, orjson.JSONDecodeError) as e:
        return BadRecord(f"line {lineno}", f"{type(e).__name__}: {e}", raw_text(line))
    return RawRecord(f"line {lineno}", value, text)


def too_large(size: int) -> str:
    return (f"record too large: {size} bytes, more than the {MAX_RECORD_BYTES >> 20} MB tracegym reads as one "
            "record (the store holds each value whole in memory while ingesting); split it to ingest it")


def _head_text(head: bytes, size: int) -> str:
    text = head.decode("utf-8", errors="backslashreplace")
    return text + f"\n…[truncated by tracegym: {size} bytes in all]"


def iter_json_document(path: Path) -> Iterator[RawRecord | BadRecord]:
    """A JSON document: each item of a top-level array, streamed, or the one value."""
    with path.open("rb") as f:
        head = f.read(SAMPLE_BYTES)
        body = head.removeprefix(b"\xef\xbb\xbf").lstrip(_BLANK)
        if body.startswith(b"["):
            f.seek(len(head) - len(body) + 1)
            yield from _array_items(f)
            return
    yield whole_document(path)


def whole_document(path: Path) -> RawRecord | BadRecord:
    """The document as one record, read whole: it may hold many traces (a run's results), so it has no size limit;
    `normalize.check_storable` still rejects a single value the store could not hold."""
    data = path.read_bytes()
    try:
        text = decode_bytes(data)
    except UnicodeDecodeError as e:
        return BadRecord(f"byte {e.start}", f"invalid UTF-8: {e}", raw_text(data))
    try:
        value = loads(data)
    except orjson.JSONDecodeError as e:
        return BadRecord("$", f"{type(e).__name__}: {e}", clip_raw(text))
    return RawRecord("$", value, text)


def _array_items(f: BinaryIO) -> Iterator[RawRecord | BadRecord]:
    """Each item of the array `f` is positioned in, parsed on its own; then how the array ended, if badly."""
    items = ArrayItems(f, MAX_RECORD_BYTES, RAW_LIMIT)
    last: RawRecord | BadRecord | None = None
    count = 0
    for item in items:
        last = _item_record(item)
        count += 1
        yield last
    ending = items.ending
    if ending.kind == "trailing":
        f.seek(ending.offset)
        yield BadRecord(f"byte {ending.offset}", "text after the end of the array: it was not read",
                        raw_text(f.read(RAW_LIMIT)))
    elif ending.kind == "unclosed" and not isinstance(last, BadRecord):
        yield BadRecord(f"$[{count}]", "truncated JSON: the array never closes", "")


def _item_record(item: Item) -> RawRecord | BadRecord:
    where = f"$[{item.index}] (byte {item.start})"
    if item.size > len(item.data):
        return BadRecord(where, too_large(item.size), _head_text(item.data, item.size))
    try:
        decode_bytes(item.data)
    except UnicodeDecodeError as e:
        return BadRecord(where, f"invalid UTF-8: {e}", raw_text(item.data))
    try:
        return RawRecord(f"$[{item.index}]", loads(item.data))
    except orjson.JSONDecodeError as e:
        return BadRecord(where, f"{type(e).__name__}: {e}", raw_text(item.data))


def iter_json_values(path: Path, jsonl: bool) -> Iterator[RawRecord | BadRecord]:
    return iter_jsonl(path) if jsonl else iter_json_document(path)
