"""JSONL lines cut across files: keep the pieces, join them when the rest of the line arrives.

A file split at any byte (a log shipper cutting by size, `split -b`, a copy taken
while the writer was mid-line) leaves the first line of one piece without its
start and the last line of the piece before without its end; a piece smaller than
a line holds neither. Such a piece of a line is a *fragment*: the first line of a
file when it does not parse (`lead`: a line's end), its last line when it does not
parse and has no newline (`trail`: a line's start), or the whole file when it has
no newline and does not parse (`whole`: any part of a line, the data's last bytes
too when no newline ends it). A file of nothing but whitespace is a piece too when
the files before it in its folder leave a line open (`blank_edges`): a middle piece
(`whole`) or, with a newline, its end (`lead`); after a line that is whole, or
between lines, it adds nothing (the pipeline's status `blank`); with no file before
it in its folder, it is an empty file.

Fragments are stored (`line_fragments`) beside the bad-record report the file's
ingest makes for them, since they may never be completed. After each file,
`complete_lines` looks for chains trail, whole…, lead (or trail, whole… where the
last whole ends the data) over files that follow each other by name in one folder,
whose bytes parse as JSON. A file's fragments are kept, and the lines they complete
ingested, before its own lines are read, as those lines come after them. Each
complete line is ingested as a one-line file of its own, like any other; its
fragments are marked joined, and the reports about them are removed (for a file
that held nothing but fragments, every report about it: what a --format adapter
made of a piece too, and the errors its `sources` row counts). A piece that opens
as a document would (a cut just before a `[` or `{` inside a line) is told from a
document by the line's bytes (`continues_a_line`), never by its first byte: a
document after a file whose last line is unfinished stays a document. A file of
nothing but fragments that no adapter recognises (or one that continues a line)
is reported as `WAITING`, not as an unknown format; a line's start or end at a
file's edge, as `PIECE` says, until it is joined.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import duckdb
import orjson

from tracegym.ingest.reading import MAX_RECORD_BYTES, Sample
from tracegym.store import Store

MAX_CHAIN = 64  # pieces in one line
WAITING = ("a piece of a line cut across files, with no whole line in it: kept, and ingested as part of the line "
           "once the files before and after it are ingested (if it is not such a piece, no adapter can read it)")

PIECE = {
    "trail": "the start of a line cut across files, its rest in the next file of this folder: kept, and stored as "
             "part of the line once that file is ingested",
    "lead": "the end of a line cut across files, its start in the file before this one in its folder: kept, and "
            "stored as part of the line once that file is ingested",
}


@dataclass(slots=True)
class Fragment:
    source_id: str
    path: str
    side: str  # lead | trail | whole
    text: bytes
    locator: str  # what the file's ingest reported the fragment as
    alone: bool = False  # the file holds nothing else
    joined: bool = False  # part of a line stored already


def edges(path: Path, sample: Sample) -> list[Fragment]:
    """The fragments at the edges of `path` (source id left blank)."""
    if _clean_edges(path):
        return []
    size = path.stat().st_size
    if size > MAX_RECORD_BYTES:
        return _big_file_edges(path)
    data = path.read_bytes()
    if not data.strip():
        return blank_edges(path, data)
    if b"\n" not in data:
        text = data.strip()
        return [Fragment("", str(path), "whole", data, "file", alone=True)] if text and not _parses(text) else []
    out = []
    first, _, rest = data.partition(b"\n")
    if first.strip() and not _parses(first):
        out.append(Fragment("", str(path), "lead", first, "line 1"))
    last = rest.rpartition(b"\n")[2]
    if last.strip() and not _parses(last):
        out.append(Fragment("", str(path), "trail", last, f"line {data.count(10) + 1}"))
    if out and sum(1 for line in data.split(b"\n") if line.strip()) == len(out):
        for frag in out:
            frag.alone = True
    return out


def _clean_edges(path: Path) -> bool:
    """Whether the file ends with a newline and its first line is whole (blank, or JSON): no fragment at either
    edge, known from its first line and last byte (the common case, where reading the whole file, or the last
    MAX_RECORD_BYTES of a large one, would cost as much as hashing it)."""
    with path.open("rb") as f:
        first = f.readline(MAX_RECORD_BYTES)
        if not first.endswith(b"\n") or (first.strip() and not _parses(first)):
            return False
        if not first.strip() and _blank_from(f):  # a blank file may be a piece: `blank_edges`
            return False
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def _blank_from(f: BinaryIO) -> bool:
    """Whether `f` holds nothing but whitespace from where it is; read only as far as its first other byte."""
    return not any(chunk.strip() for chunk in iter(lambda: f.read(1 << 16), b""))


def blank(path: Path, sample: Sample) -> bool:
    """Whether the file holds nothing but whitespace."""
    if sample.head.strip():
        return False
    with path.open("rb") as f:
        return _blank_from(f)


def blank_edges(path: Path, data: bytes) -> list[Fragment]:
    """A file of nothing but whitespace: a piece of the line the files before it leave open, when that line's
    bytes so far are not whole JSON (a middle piece without a newline, its end with one); else no fragment."""
    start = open_line(path)
    if start is None or not start.strip() or _parses(start):
        return []
    if b"\n" in data:
        return [Fragment("", str(path), "lead", data.partition(b"\n")[0], "line 1", alone=True)]
    return [Fragment("", str(path), "whole", data, "file", alone=True)]


def continues_a_line(path: Path) -> bool:
    """Whether `path` opens with the rest of a line that the files before it in its folder leave open, shown by
    the line's bytes, not by the file's first byte: the open line's start followed by the file's bytes up to its
    first newline (through the next files of its folder while they hold none) parse as one JSON value or, where
    the folder's files end before a newline does, are the start of one (a piece whose next piece is not written
    yet). A document of its own after an unfinished line fails both: `}` + `[...]` and `{"a": "b` + `[{"c"…` are
    no JSON, nor the start of any."""
    start = open_line(path)
    if start is None or not start.strip() or _parses(start):
        return False
    rest, ended = _until_newline(path)
    return _parses(start + rest) or (not ended and _json_start(start + rest))


def _until_newline(path: Path) -> tuple[bytes, bool]:
    """The bytes from the start of `path` up to its first newline, read on through the next files of its folder
    while they hold none (up to MAX_CHAIN files, MAX_RECORD_BYTES), and whether a newline ended them."""
    names: dict[Path, list[str]] = {}
    place = _place(path, names)
    files = [path] if place is None else [place[0] / n for n in names[place[0]][place[1]:place[1] + MAX_CHAIN]]
    text = b""
    for file in files:
        try:
            with file.open("rb") as f:
                line = f.readline(MAX_RECORD_BYTES - len(text))
        except OSError:
            break
        text += line
        if line.endswith(b"\n") or len(text) >= MAX_RECORD_BYTES:
            return text.rstrip(b"\r\n"), True
    return text, False


def _json_start(text: bytes) -> bool:
    """Whether `text` is the start of a JSON value: the parser reads it to its very end without a fault (a UTF-8
    character cut at the end left out)."""
    text = _without_cut_character(text)
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError as e:
        return e.msg == "unexpected end of data" and e.pos == len(e.doc)  # pos counts characters, as doc does
    return True


def _without_cut_character(text: bytes) -> bytes:
    """`text` less the first bytes of a UTF-8 character cut at its end."""
    for back in range(1, min(4, len(text)) + 1):
        byte = text[-back]
        if byte < 0x80:
            return text
        if byte >= 0xC0:  # the character's first byte: how many it needs
            return text[:-back] if (2 if byte < 0xE0 else 3 if byte < 0xF0 else 4) > back else text
    return text


def open_line(path: Path) -> bytes | None:
    """The start of the line that the files before `path` in its folder leave open: their bytes after the last
    newline among them; None where no file comes before it, or one before it is empty or unreadable (it says
    nothing of where the line starts)."""
    names: dict[Path, list[str]] = {}
    place = _place(path, names)
    if place is None or place[1] == 0:
        return None
    folder, index = place
    text = b""
    for name in reversed(names[folder][:index]):
        try:
            with (folder / name).open("rb") as f:
                last = _last_line(f)
        except OSError:
            return None
        if last is None:
            return None
        text = last[0] + text
        if last[1]:
            break
    return text


def _last_line(f: BinaryIO) -> tuple[bytes, bool] | None:
    """The bytes of `f` after its last newline (at most MAX_RECORD_BYTES), and whether a newline comes before them;
    None for an empty file. Read backwards in blocks: a large file that ends with a newline costs one block."""
    pos = f.seek(0, os.SEEK_END)
    if pos == 0:
        return None
    text = b""
    while pos > 0 and len(text) < MAX_RECORD_BYTES:
        step = min(1 << 16, pos)
        pos -= step
        f.seek(pos)
        _, newline, last = f.read(step).rpartition(b"\n")
        text = last + text
        if newline:
            return text, True
    return text, False


def _big_file_edges(path: Path) -> list[Fragment]:
    """Large files: the first line and the last, read without reading what lies between."""
    out = []
    with path.open("rb") as f:
        first = f.readline(MAX_RECORD_BYTES)
        if first.endswith(b"\n") and first.strip() and not _parses(first):
            out.append(Fragment("", str(path), "lead", first[:-1], "line 1"))
        f.seek(max(0, path.stat().st_size - MAX_RECORD_BYTES))
        tail = f.read()
    if not tail.endswith(b"\n") and b"\n" in tail:
        last = tail.rpartition(b"\n")[2]
        if last.strip() and not _parses(last):
            lines = _count_lines(path)
            out.append(Fragment("", str(path), "trail", last, f"line {lines}"))
    return out


def _count_lines(path: Path) -> int:
    count = 1
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            count += chunk.count(b"\n")
    return count


def _parses(text: bytes) -> bool:
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


def keep(store: Store, source_id: str, fragments: list[Fragment]) -> None:
    """Store the file's fragments, once however often the file is retried."""
    with store.transaction() as con:
        for frag in fragments:
            con.execute(
                """INSERT INTO line_fragments SELECT ?, ?, ?, ?, ?, ?, false WHERE NOT EXISTS
                   (SELECT 1 FROM line_fragments WHERE source_id = ? AND side = ?)""",
                [source_id, frag.path, frag.side, frag.text, frag.locator, frag.alone, source_id, frag.side])


def pending(store: Store, folder: Path | None = None) -> list[Fragment]:
    """The fragments not joined yet, and the joined ones of their folders: a file whose traces were deleted
    (`traces delete --source`) and that is ingested again keeps its pieces anew, and their neighbours were
    joined before. With `folder`, its joined ones too (`ingest --replace` reads their lines again)."""
    dirs = [str(folder), str(folder.resolve())] if folder is not None else []
    rows = store.con.execute(
        """SELECT source_id, path, side, text, locator, alone, joined FROM line_fragments
           WHERE NOT joined OR parse_dirpath(path) IN (SELECT parse_dirpath(path) FROM line_fragments WHERE NOT joined)
                 OR list_contains(?, parse_dirpath(path))
           ORDER BY source_id, side""", [dirs]).fetchall()
    return [Fragment(sid, path, side, bytes(text), loc, alone, joined)
            for sid, path, side, text, loc, alone, joined in rows]


def waiting(store: Store) -> int:
    return int(store.scalar("SELECT count(*) FROM line_fragments WHERE NOT joined"))


def all_joined(store: Store, source_id: str) -> bool:
    return not store.scalar("SELECT count(*) FROM line_fragments WHERE source_id = ? AND NOT joined", [source_id])


def complete_lines(fragments: list[Fragment],
                   again: Callable[[list[Fragment]], bool] | None = None) -> Iterator[list[Fragment]]:
    """Chains of fragments that make whole lines, one fragment of each not joined yet (or any, where `again` says
    so: a line joined before, read again): a trail (or a whole that
    starts a line: the first file of its folder, or one after a file that ends with a newline), the wholes of the
    next files, the lead of the file after them (none where the last whole ends the data without a newline), in
    the order of the files' names in their folder, and joined bytes that parse as JSON.

    Parsing alone cannot place a piece: JSON stays valid when a balanced stretch of a line (an attribute, a
    message) is left out or put elsewhere. The names can: `split` and log rotation name the pieces in order.
    A chain waits while a file of it is not ingested yet, so no line is joined around a missing piece.
    """
    at: dict[tuple[Path, int], dict[str, Fragment]] = {}
    names: dict[Path, list[str]] = {}
    for frag in fragments:
        place = _place(Path(frag.path), names)
        if place is not None:
            at.setdefault(place, {})[frag.side] = frag
    for (folder, index), sides in sorted(at.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        if "trail" in sides:
            chain = [sides["trail"]]
        elif "whole" in sides and _line_starts_at(folder, names[folder], index):
            chain = [sides["whole"]]
        else:
            continue
        nxt = at.get((folder, index + 1), {})
        while "whole" in nxt and len(chain) < MAX_CHAIN:
            chain.append(nxt["whole"])
            index += 1
            nxt = at.get((folder, index + 1), {})
        text = b"".join(f.text for f in chain)
        if "lead" in nxt and _parses(text + nxt["lead"].text):
            chain.append(nxt["lead"])
        elif "lead" in nxt or len(chain) < 2 or not _parses(text):
            continue
        # else the line ends where its last piece ends the file: the data's last line, with no newline after it
        if not all(f.joined for f in chain) or (again is not None and again(chain)):
            yield chain


def _place(path: Path, names: dict[Path, list[str]]) -> tuple[Path, int] | None:
    """The file's folder and its position among the folder's files, in natural name order (`names`: each folder's
    names, listed once)."""
    folder = path.parent.resolve()
    if folder not in names:
        try:
            names[folder] = sorted((p.name for p in folder.iterdir() if p.is_file()), key=_natural)
        except OSError:
            return None
    listed = names[folder]
    return (folder, listed.index(path.name)) if path.name in listed else None


def _line_starts_at(folder: Path, names: list[str], index: int) -> bool:
    """Whether a line starts at the first byte of the folder's file `index`: it is the first file, or the file
    before it ends with a newline (that file need not be ingested: none of its bytes belong to the line)."""
    if index == 0:
        return True
    try:
        with (folder / names[index - 1]).open("rb") as f:
            f.seek(0, 2)
            if f.tell() == 0:
                return False  # an empty file says nothing of where the line starts
            f.seek(-1, 2)
            return f.read(1) == b"\n"
    except OSError:
        return False


def _natural(name: str) -> list[Any]:
    """'x-10' after 'x-9'."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def joined_file(folder: Path, chain: list[Fragment]) -> Path:
    """The chain's line as a one-line file in `folder`."""
    path = Path(tempfile.mkstemp(prefix="joined-line-", suffix=".jsonl", dir=folder)[1])
    path.write_bytes(b"".join(f.text for f in chain) + b"\n")
    return path


def settle_reports(con: duckdb.DuckDBPyConnection, source_id: str) -> int:
    """The reports the file's ingest just made about its pieces of lines: those of pieces joined already (their
    line was completed, and stored, before the file's own lines were read) removed, the others saying that the
    piece waits for its line. Returns how many were removed."""
    removed = con.execute(
        """DELETE FROM ingest_errors e USING line_fragments f
           WHERE e.source_id = ? AND f.source_id = e.source_id AND f.joined AND e.locator = f.locator
           RETURNING 1""", [source_id]).fetchall()
    for side, why in PIECE.items():
        con.execute("""UPDATE ingest_errors e SET error = ? FROM line_fragments f
                       WHERE e.source_id = ? AND f.source_id = e.source_id AND NOT f.joined AND f.side = ?
                             AND e.locator = f.locator""", [why, source_id, side])
    return len(removed)


def mark_joined(store: Store, chain: list[Fragment]) -> None:
    """The chain's fragments are one line now: take them off the pending list, and their reports out of
    ingest_errors (the fragment's line; every report about the file, when it held nothing else) and out of the
    error count its `sources` row keeps."""
    with store.transaction() as con:
        for frag in chain:
            con.execute("UPDATE line_fragments SET joined = true WHERE source_id = ? AND side = ?",
                        [frag.source_id, frag.side])
            removed = len(con.execute(
                "DELETE FROM ingest_errors WHERE source_id = ? AND (locator = ? OR ?) RETURNING 1",
                [frag.source_id, frag.locator, frag.alone]).fetchall())
            con.execute("UPDATE sources SET n_errors = greatest(n_errors - ?, 0) WHERE source_id = ?",
                        [removed, frag.source_id])
