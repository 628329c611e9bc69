"""Reading source files into raw records without loading more than needed.

JSONL is streamed line by line. A JSON document that is an array is decoded
item by item, so a truncated file still yields every complete item before the
cut, and the cut itself becomes one bad record.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from tracegym.ingest.records import BadRecord, RawRecord

SAMPLE_BYTES = 1 << 16
RAW_LIMIT = 1 << 20  # keep the raw text of bad records up to 1 MB
FIRST_LINE_LIMIT = 64 << 20  # detection reads at most this much of a long first line


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


def take_sample(path: Path) -> Sample:
    with path.open("rb") as f:
        head = f.read(SAMPLE_BYTES)
        line, rest = _first_line(f, head)
    try:
        first = orjson.loads(line)
    except orjson.JSONDecodeError:
        first = None
    # One JSON value per line: a first line that is an object or an array, with more lines after it.
    # A file that is one short object counts too; a one-line array is a document of items.
    if (isinstance(first, dict) and len(head) < SAMPLE_BYTES) or (isinstance(first, (dict, list)) and rest.strip()):
        return Sample(path, head, first, jsonl=True)
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    top = _top_value(path, text)
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
                value = orjson.loads(line)
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


def _top_value(path: Path, head_text: str) -> Any:
    """The whole document when it is small; its first array item or key otherwise."""
    if path.stat().st_size <= 64 << 20:
        try:
            return orjson.loads(path.read_bytes())
        except orjson.JSONDecodeError:
            pass
    stripped = head_text.lstrip()
    if stripped.startswith("["):
        try:
            item, _ = json.JSONDecoder().raw_decode(stripped[1:].lstrip())
            return [item]
        except json.JSONDecodeError:
            return None
    return None


def iter_jsonl(path: Path) -> Iterator[RawRecord | BadRecord]:
    """One record per non-blank line; a bad line is a bad record, never the end."""
    with path.open("rb") as f:
        for lineno, line in enumerate(f, start=1):
            if line.strip():
                yield parse_line(lineno, line)


def parse_line(lineno: int, line: bytes) -> RawRecord | BadRecord:
    """One non-blank JSONL line (1-based `lineno`) as a record, or a bad record saying why."""
    try:
        text = decode_bytes(line)
        value = orjson.loads(text)
    except (UnicodeDecodeError, orjson.JSONDecodeError) as e:
        return BadRecord(f"line {lineno}", f"{type(e).__name__}: {e}", raw_text(line))
    return RawRecord(f"line {lineno}", value, text)


def iter_json_document(path: Path) -> Iterator[RawRecord | BadRecord]:
    """A JSON document: each item of a top-level array, or the one object."""
    data = path.read_bytes()
    try:
        text = decode_bytes(data)
    except UnicodeDecodeError as e:
        # An array is salvaged item by item, so only the items holding the bad bytes are lost.
        text = data.decode("utf-8", errors="surrogateescape")
        if not text.lstrip("\ufeff \t\r\n").startswith("["):
            yield BadRecord(f"byte {e.start}", f"invalid UTF-8: {e}", raw_text(data))
            return
        yield from _salvage_array(text)
        return
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        yield from _salvage_array(text)
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield RawRecord(f"$[{i}]", item)
    else:
        yield RawRecord("$", value, text)


def _salvage_array(text: str) -> Iterator[RawRecord | BadRecord]:
    """Decode a broken document item by item, keeping every complete item."""
    decoder = json.JSONDecoder()
    stripped = text.lstrip("\ufeff \t\r\n")
    if not stripped.startswith("["):
        yield BadRecord("$", "not valid JSON (and not an array to salvage)", clip_raw(text))
        return
    pos, i = text.index("[") + 1, 0
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text):
            yield BadRecord(f"$[{i}]", "truncated JSON: the array never closes", "")
            return
        if text[pos] == "]":
            return
        try:
            _, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            yield BadRecord(f"$[{i}] (byte {pos})", f"JSONDecodeError: {e}", _escaped(text[pos:]))
            return
        yield _strict_item(text[pos:end], f"$[{i}]", pos)
        pos, i = end, i + 1


def _strict_item(span: str, locator: str, pos: int) -> RawRecord | BadRecord:
    """The lenient decoder found the item's end; orjson rejects what the store cannot hold
    (bytes that were not UTF-8, unpaired surrogates)."""
    try:
        return RawRecord(locator, orjson.loads(span))
    except orjson.JSONDecodeError as e:
        return BadRecord(f"{locator} (byte {pos})", f"invalid UTF-8 or unpaired surrogate: {e}", _escaped(span))


def _escaped(text: str) -> str:
    """Text decoded with surrogateescape, with the undecodable bytes shown as \\xNN escapes."""
    return raw_text(text.encode("utf-8", errors="surrogateescape"))


def iter_json_values(path: Path, jsonl: bool) -> Iterator[RawRecord | BadRecord]:
    return iter_jsonl(path) if jsonl else iter_json_document(path)
