"""`tracegym ingest`: files -> adapters -> batches -> the store, one transaction per file."""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from tracegym.errors import IngestError, TracegymError, is_interrupt
from tracegym.ingest import fragments
from tracegym.ingest.adapters import ADAPTERS, get_adapter
from tracegym.ingest.adapters.base import Adapter, SourceFile
from tracegym.ingest.adapters.log_line import session_key
from tracegym.ingest.adapters.mlflow import file_store_sidecar
from tracegym.ingest.adapters.spans import Incomplete
from tracegym.ingest.append import Appended, append_tables
from tracegym.ingest.batch import TraceBatch
from tracegym.ingest.call_store import StoredCalls, grown_calls
from tracegym.ingest.normalize import check_storable, link_tool_results, to_json
from tracegym.ingest.parts import PartStore
from tracegym.ingest.reading import RAW_LIMIT, Sample, clip_raw, raw_text, take_sample
from tracegym.ingest.records import BadRecord, RawRecord, Trace
from tracegym.ingest.removal import record_change, retire_joined, source_tables
from tracegym.ingest.stitch import CallStitcher
from tracegym.mining.detection import Detection, detect_ingested, recount_after_removal
from tracegym.store import Store

if TYPE_CHECKING:
    from tracegym.redact.session import Run

BATCH_TRACES = 2000
SHOWN_WAITING = 20
INGEST_MEMORY_LIMIT = "512MB"
SKIP_SUFFIXES = {".md", ".txt", ".csv", ".py", ".yaml", ".yml", ".patch", ".diff", ".log", ".html"}


@dataclass
class FileResult:
    path: str
    format: str | None
    status: str  # 'loaded' | 'already ingested' | 'failed' | 'companion' | 'waiting' | 'blank'
    traces: int = 0
    messages: int = 0
    tool_calls: int = 0
    errors: int = 0
    duplicates: int = 0
    conflicts: int = 0
    merged: int = 0  # traces already stored that this file's parts completed (span-shaped formats)
    waiting: int = 0  # traces whose parts so far hold no LLM call or tool run: kept until the rest arrives
    waiting_why: list[str] = field(default_factory=list)
    """For the first `SHOWN_WAITING` of them: the trace and what it holds (spans that no call or tool run is among
    may never complete: a producer whose spans this format does not read)."""
    stitched: int = 0  # logged API calls that went on with a conversation of the file: stored in its trace
    replaced: int = 0  # of `traces`, those that replaced stored ones as asked (--replace)
    differing: int = 0  # of `duplicates`, those with another session, time or metadata than the stored trace
    no_session: int = 0  # traces stored from this file without a session id
    deleted: int = 0  # traces of this file that `traces delete` removed: left out (`ingest --replace` restores them)


@dataclass
class IngestSummary:
    files: list[FileResult] = field(default_factory=list)
    detection: Detection | None = None
    """What the failure detectors did after the files were stored (see tracegym/mining/detection.py)."""
    detection_error: str | None = None
    """Why detection failed, if it did: the traces are stored, and `mine failures` detects them again."""
    skipped_links: list[str] = field(default_factory=list)
    """Symbolic links in the folders given that lead outside them ('link -> target'), not followed."""
    line_pieces_waiting: int = 0
    """Pieces of lines cut across files that the store keeps until the rest of their line is ingested."""

    def total(self, key: str) -> int:
        return sum(getattr(f, key) for f in self.files)

    def by_format(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for f in self.files:
            if f.format is None:
                continue
            row = out.setdefault(f.format, {"files": 0, "traces": 0, "messages": 0, "tool_calls": 0, "errors": 0})
            row["files"] += 1
            for key in ("traces", "messages", "tool_calls", "errors"):
                row[key] += getattr(f, key)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": len(self.files),
            "files_skipped_already_ingested": sum(f.status == "already ingested" for f in self.files),
            "traces": self.total("traces"),
            "messages": self.total("messages"),
            "tool_calls": self.total("tool_calls"),
            "errors": self.total("errors"),
            "duplicates_skipped": self.total("duplicates"),
            "conflicts": self.total("conflicts"),
            "traces_merged": self.total("merged"),
            "traces_waiting": self.total("waiting"),
            "waiting_why": [why for f in self.files for why in f.waiting_why][:SHOWN_WAITING],
            "calls_stitched": self.total("stitched"),
            "traces_replaced": self.total("replaced"),
            "traces_differing": self.total("differing") + self.total("conflicts"),
            "traces_without_session": self.total("no_session"),
            "traces_deleted_skipped": self.total("deleted"),
            "by_format": self.by_format(),
            "traces_detected": self.detection.traces if self.detection else 0,
            "detection_error": self.detection_error,
            "links_skipped": self.skipped_links,
            "files_waiting": sum(f.status == "waiting" for f in self.files),
            "files_blank": sum(f.status == "blank" for f in self.files),
            "line_pieces_waiting": self.line_pieces_waiting,
            "details": [asdict(f) for f in self.files],
        }


@dataclass
class Inputs:
    """The files `tracegym ingest` was given, and the links it did not follow to get them."""

    files: list[Path] = field(default_factory=list)
    skipped_links: list[str] = field(default_factory=list)


@contextmanager
def gathered(paths: Iterable[str], follow_symlinks: bool = False) -> Iterator[Inputs]:
    """The files under `paths` (see `expand_paths`); '-' is stdin, copied to a temporary file removed on exit."""
    inputs = Inputs()
    with ExitStack() as stack:
        for p in paths:
            if p == "-":
                folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tracegym-stdin-")))
                inputs.files.append(_stdin_to_file(folder / "stdin.jsonl"))
            else:
                inputs.files.extend(expand_paths([p], follow_symlinks, inputs.skipped_links))
        yield inputs


def expand_paths(paths: Iterable[str], follow_symlinks: bool = False,
                 skipped_links: list[str] | None = None) -> Iterator[Path]:
    """Files as given, folders recursively (sorted).

    Inside a folder, a symbolic link that leads outside it is not followed unless
    `follow_symlinks`: a trace archive could otherwise pull any file of the machine
    into the store (its head is kept even when no adapter reads it). Such links
    are listed in `skipped_links`; links that stay inside the folder are read.
    """
    for p in paths:
        path = Path(p)
        if path.is_dir():
            yield from sorted(_files_under(path, follow_symlinks, skipped_links if skipped_links is not None else []))
        elif path.is_file():
            yield path
        else:
            raise IngestError(f"No such file or folder: {p}")


def _files_under(root: Path, follow_symlinks: bool, skipped_links: list[str]) -> Iterator[Path]:
    """Every file below `root` worth reading (not hidden, not docs or code), by the links the policy above allows;
    each folder is walked once."""
    inside = root.resolve()
    seen: set[tuple[int, int]] = set()
    for folder, dirs, files in os.walk(root, followlinks=follow_symlinks):
        here = Path(folder)
        stat = here.stat()
        if (stat.st_dev, stat.st_ino) in seen:  # a link back to a folder already walked
            dirs.clear()
            continue
        seen.add((stat.st_dev, stat.st_ino))
        for name in dirs:
            if not follow_symlinks:
                _leads_outside(here / name, inside, skipped_links)  # os.walk does not enter it: only report it
        for name in files:
            entry = here / name
            if name.startswith(".") or entry.suffix.lower() in SKIP_SUFFIXES or file_store_sidecar(entry):
                continue
            if (follow_symlinks or not _leads_outside(entry, inside, skipped_links)) and entry.is_file():
                yield entry


def _leads_outside(entry: Path, inside: Path, skipped_links: list[str]) -> bool:
    """Whether `entry` is a symbolic link to somewhere outside `inside`; such links are listed in `skipped_links`."""
    if not entry.is_symlink():
        return False
    target = entry.resolve()
    if target.is_relative_to(inside):
        return False
    skipped_links.append(f"{entry} -> {target}")
    return True


def _stdin_to_file(path: Path) -> Path:
    with path.open("wb") as f:
        shutil.copyfileobj(sys.stdin.buffer, f)
    return path


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def detect(src_path: Path, sample: Any) -> Adapter | None:
    for adapter in ADAPTERS:
        try:
            if adapter.sniff(sample):
                return adapter
        except Exception:  # noqa: BLE001 - a sniffer that chokes on odd input just says no
            continue
    return None


def ingest_paths(
    store: Store,
    paths: Iterable[str],
    fmt: str | None = None,
    options: dict[str, Any] | None = None,
    on_file: Callable[[Path], None] | None = None,
    follow_symlinks: bool = False,
    redact: Run | None = None,
    replace: bool = False,
) -> IngestSummary:
    """Ingest every file under `paths`; each file is all-or-nothing in the store."""
    with gathered(paths, follow_symlinks) as inputs:
        return ingest_inputs(store, inputs, fmt, options, on_file, redact, replace)


def ingest_inputs(
    store: Store,
    inputs: Inputs,
    fmt: str | None = None,
    options: dict[str, Any] | None = None,
    on_file: Callable[[Path], None] | None = None,
    redact: Run | None = None,
    replace: bool = False,
) -> IngestSummary:
    """Ingest the files `gathered` found; each file is all-or-nothing in the store. With `redact`, every
    batch is redacted before it is appended, inside the file's transaction: nothing unredacted is stored.
    With `replace`, files ingested before are read again, and stored traces they bring are replaced (see
    `ingest_file`). `on_file` is called with each file once it is done. Between files, processes waiting for the
    store get their turn (`Store.let_waiters_in`)."""
    options = options or {}
    session_key(options.get("session_key"))  # a bad path stops the run before anything is read
    forced = get_adapter(fmt) if fmt else None
    if forced is not None:
        forced.check_options(options)
    summary = IngestSummary(skipped_links=list(inputs.skipped_links))
    ahead = Counter(p.resolve() for p in inputs.files) if replace else Counter()
    with _memory_capped(store):
        for path in inputs.files:
            ahead[path.resolve()] -= 1
            summary.files.extend(_file_and_its_lines(store, path, forced, options, redact, replace, ahead))
            if on_file:
                on_file(path)
            if store.let_waiters_in():  # the store is held a file at a time while other commands wait for it
                store.con.execute(f"SET memory_limit = '{INGEST_MEMORY_LIMIT}'")
    if redact is not None:
        with store.transaction() as con:
            redact.record(con)
    summary.line_pieces_waiting = fragments.waiting(store)
    _detect(store, summary)
    return summary


def _file_and_its_lines(store: Store, path: Path, forced: Adapter | None, options: dict[str, Any],
                        redact: Run | None, replace: bool, ahead: Counter[Path]) -> list[FileResult]:
    """Ingest one file; the lines that its pieces of lines complete first (see `ingest_file`'s `on_pieces`).

    With `replace`, a line joined before from pieces that include this file is read again (and replaced, or
    restored) when this file is the last of its pieces in the run (`ahead`: the files still to come), as the first
    ingest read it when its last piece arrived: once, and before the lines that follow it."""
    joined: list[FileResult] = []
    here = path.resolve()

    def last_of_its_pieces(chain: list[fragments.Fragment]) -> bool:
        places = {Path(f.path).resolve() for f in chain}
        return here in places and not any(ahead[p] > 0 for p in places)

    def join() -> None:
        again = last_of_its_pieces if replace else None
        joined.extend(_join_pieces(store, forced, options, redact, replace, again, path.parent if replace else None))

    result = ingest_file(store, path, forced, options, redact, replace=replace, restore=replace, on_pieces=join)
    return [*joined, result]


def ingest_fetched(store: Store, path: Path, adapter: Adapter, shown: str,
                   redact: Run | None = None) -> tuple[IngestSummary, str]:
    """A file fetched from a service (`tracegym ingest mlflow+http://…`), read by `adapter` and recorded as `shown`,
    and its source id. Traces it brings replace stored ones of the same id: changed on the service since."""
    summary = IngestSummary()
    with _memory_capped(store):
        summary.files.append(ingest_file(store, path, adapter, {}, redact, shown=shown, replace=True))
    if redact is not None:
        with store.transaction() as con:
            redact.record(con)
    _detect(store, summary)
    return summary, file_sha256(path)


def _detect(store: Store, summary: IngestSummary) -> None:
    """Run the per-trace failure detectors on the new traces, so that mining reads their findings."""
    try:
        summary.detection = detect_ingested(store)
    except (TracegymError, duckdb.Error) as e:
        summary.detection_error = str(e)


@contextmanager
def _memory_capped(store: Store) -> Iterator[None]:
    """Cap DuckDB's buffer pool while ingesting, then restore the store's own setting.

    Left at its default (most of the machine's RAM), DuckDB keeps every block a
    long ingest writes cached in memory, so a 1 GB file would cost gigabytes.
    """
    before = store.scalar("SELECT current_setting('memory_limit')")
    store.con.execute(f"SET memory_limit = '{INGEST_MEMORY_LIMIT}'")
    try:
        yield
    finally:
        if not store.closed:  # closed by a Ctrl-C while it waited for the store between files
            store.con.execute(f"SET memory_limit = '{before}'")


def ingest_file(store: Store, path: Path, forced: Adapter | None, options: dict[str, Any],
                redact: Run | None = None, shown: str = "", replace: bool = False,
                restore: bool = False, on_pieces: Callable[[], None] | None = None) -> FileResult:
    """Ingest one file. `shown`: what to record it as, where `path` is a stand-in (see `SourceFile.shown`).
    `on_pieces` is called once the pieces of lines at the file's edges are kept, before its own lines are read:
    the lines they complete are stored first, as they come first in the data (a chat log's calls are stitched in
    the order they were made).

    With `replace`, a file ingested before is read again, its record in `sources` and its bad records made
    anew, and every stored trace it brings is replaced with all that derives from it (labels kept; see
    tracegym/ingest/removal.py), the replacement recorded in `store_changes`. Traces `traces delete` removed are
    left out, unless `restore` (`ingest --replace`: the file read again on purpose).
    """
    before = path.stat()
    source_id = file_sha256(path)
    label = shown or str(path)
    if redact is not None:  # the file's name is recorded: its personal parts replaced, its folders kept
        label = redact.path(label, "sources.path")
    known = store.scalar("SELECT count(*) FROM sources WHERE source_id = ?", [source_id])
    if known and not replace:
        return FileResult(label, None, "already ingested")
    if before.st_size == 0:
        return _record_failure(store, label, source_id, "empty file", "", redact)
    sample = take_sample(path)
    # With redaction, a line's pieces are not kept to be joined: each could hold half of a value no detector
    # sees whole. They are bad records, their raw text redacted, as a cut line was before pieces were kept.
    pieces = fragments.edges(path, sample) if redact is None else []
    only_pieces = bool(pieces) and all(f.alone for f in pieces)
    # A piece that continues the line the files before it leave open may open as a document would (`[`, `{`):
    # shown to be a piece by that line's bytes, it is never read as one. Its lines after it are JSONL; with none,
    # it waits, whatever adapter --format names.
    continues = (not sample.jsonl and any(f.side != "trail" for f in pieces)
                 and fragments.continues_a_line(path))
    if continues and not only_pieces:
        sample = take_sample(path, first_is_piece=True)
    if pieces:
        fragments.keep(store, source_id, pieces)
        if on_pieces is not None:
            on_pieces()
        if only_pieces and fragments.all_joined(store, source_id):
            return FileResult(label, None, "already ingested")  # as the lines it completed
    if fragments.blank(path, sample):  # nothing any adapter could read, --format or not
        return _blank_file(store, path, label, source_id, bool(pieces), redact)
    adapter = None if continues and only_pieces else forced or detect(path, sample)
    if adapter is None:
        if not only_pieces:
            return _record_failure(store, label, source_id, "unknown format: no adapter recognised this file",
                                   _head(sample), redact)
        waiting = _record_failure(store, label, source_id, fragments.WAITING, _head(sample), redact)
        waiting.status = "waiting"
        return waiting
    if getattr(adapter, "companion_only", False):
        return FileResult(label, adapter.name, "companion")
    src = SourceFile(path, source_id, sample, options, shown=label)
    try:
        with store.transaction() as con:
            if known:
                _forget_source(con, source_id)
            result = _load(con, adapter, src, redact, replace, restore)
            if pieces:
                result.errors -= fragments.settle_reports(con, source_id)
            _check_unchanged(path, before)
            if redact is not None:
                redact.mark(con, [source_id])
            con.execute(
                "INSERT INTO sources VALUES (?, ?, ?, ?, current_timestamp, ?, ?, ?, ?, ?, ?)",
                [source_id, label, adapter.name, before.st_size, result.traces, result.messages,
                 result.tool_calls, result.errors, result.duplicates, result.conflicts],
            )
    except TracegymError:
        raise
    except FileChanged as e:
        return _record_failure(store, label, source_id, str(e), "", redact)
    except Exception as e:  # noqa: BLE001 - the file boundary: an adapter bug costs this file, not the run
        if is_interrupt(e):  # Ctrl-C during a DuckDB query: the file is fine, the user wants to stop
            raise KeyboardInterrupt from e
        error = f"{type(e).__name__} while loading with {adapter.name}; nothing from this file was stored: {e}"
        return _record_failure(store, label, source_id, error, _head(sample), redact)
    return result


def _blank_file(store: Store, path: Path, label: str, source_id: str, piece: bool,
                redact: Run | None) -> FileResult:
    """A file of nothing but whitespace. A `piece` of a line the files before it leave open waits for that line
    (`fragments.blank_edges`); else, after another file of its folder, what it holds ends a line or lies between
    lines: nothing to store, nothing to report (status `blank`); with no file before it, it is empty."""
    if piece:
        waiting = _record_failure(store, label, source_id, fragments.WAITING, "", redact)
        waiting.status = "waiting"
        return waiting
    if fragments.open_line(path) is None:
        return _record_failure(store, label, source_id, "empty file: nothing but whitespace", "", redact)
    return FileResult(label, None, "blank")


def _head(sample: Sample) -> str:
    return sample.head.decode("utf-8", errors="backslashreplace")


def _join_pieces(store: Store, forced: Adapter | None, options: dict[str, Any], redact: Run | None = None,
                 replace: bool = False, again: Callable[[list[fragments.Fragment]], bool] | None = None,
                 folder_of_again: Path | None = None) -> list[FileResult]:
    """Ingest the lines that the pieces of lines stored so far complete (see tracegym/ingest/fragments.py), and
    those joined before that `again` picks among the pieces of `folder_of_again`."""
    pending = fragments.pending(store, folder_of_again)
    if len(pending) < 2 or (again is None and all(f.joined for f in pending)):
        return []
    results = []
    with tempfile.TemporaryDirectory(prefix="tracegym-joined-") as folder:
        for chain in fragments.complete_lines(pending, again):
            shown = " + ".join(f.path for f in chain)
            result = ingest_file(store, fragments.joined_file(Path(folder), chain), forced, options, redact, shown,
                                 replace, restore=replace)
            result.path = "line joined from " + shown
            fragments.mark_joined(store, chain)
            results.append(result)
    return results


def _forget_source(con: duckdb.DuckDBPyConnection, source_id: str) -> None:
    """What an earlier ingest of the file recorded about it (not its traces, which the file's batches replace, nor
    the pieces of lines it holds, kept before this transaction): its `sources` row, bad records, redaction mark."""
    for table in source_tables(con):
        if table != "line_fragments":
            con.execute(f"DELETE FROM {table} WHERE source_id = ?", [source_id])


class FileChanged(Exception):
    """The file was written to while it was ingested, so what was read may not be what was hashed."""


def _check_unchanged(path: Path, before: os.stat_result) -> None:
    """Raise FileChanged unless `path` is the same file, of the same size and times, as when it was hashed.

    The store knows a file by the hash of its bytes: a file truncated, grown or
    rewritten between hashing and reading would be stored under a hash that is
    not what was read, and re-ingesting the complete file would find nothing new.
    The change time is compared too, since no program can set it back.
    """
    after = path.stat()
    fields = ("st_dev", "st_ino", "st_size", "st_mtime_ns", "st_ctime_ns")
    if any(getattr(before, f) != getattr(after, f) for f in fields):
        raise FileChanged(
            f"the file changed while it was being ingested (its size or modification time moved: {before.st_size} "
            f"bytes when hashed, {after.st_size} after reading); nothing from this file was stored: ingest it again "
            "once it is complete")


def _record_failure(store: Store, path: str, source_id: str, error: str, raw: str,
                    redact: Run | None = None) -> FileResult:
    """Report a file that could not be loaded; the row is written once, however often the file is retried."""
    if redact is not None:
        error, raw = redact.redactor.text(error, column="ingest_errors.error"), \
            redact.redactor.text(raw, column="ingest_errors.raw")
    with store.transaction() as con:
        con.execute(
            """INSERT INTO ingest_errors (source_id, path, locator, error, raw)
               SELECT ?, ?, 'file', ?, ? WHERE NOT EXISTS
               (SELECT 1 FROM ingest_errors WHERE source_id = ? AND locator = 'file' AND error = ?)""",
            [source_id, path, error, clip_raw(raw), source_id, error],
        )
        if redact is not None:
            redact.mark(con, [source_id])
    return FileResult(path, None, "failed", errors=1)


def _load(con: duckdb.DuckDBPyConnection, adapter: Adapter, src: SourceFile, redact: Run | None = None,
          replace: bool = False, restore: bool = False) -> FileResult:
    if adapter.upserts:
        src.parts = PartStore(con, adapter.name, src.source_id, redact)
    load = FileLoad(con, adapter, src, redact, replace, restore)
    if not adapter.bulk_load(con, src, load):
        for item in _guarded_records(adapter, src):
            load.take(item)
    load.finish()
    return load.result


class FileLoad:
    """One file's ingest inside its transaction: normalize records, dedupe, batch, append.

    Adapters with a bulk path (`Adapter.bulk_load`) drive it directly: `claim` ids
    they normalized themselves, `take` the records they hand back, `append` staged rows.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, adapter: Adapter, src: SourceFile,
                 redact: Run | None = None, replace: bool = False, restore: bool = False) -> None:
        self.con, self.adapter, self.src, self.redact, self.replace = con, adapter, src, redact, replace
        self.restore = restore
        self.result = FileResult(src.name, adapter.name, "loaded")
        self.batch = TraceBatch(src.source_id)
        self.seen: set[str] = set()
        self.calls = CallStitcher()
        self.grown: set[str] = set()
        """Stored traces this file's batches replace: conversations of calls logged further (`grown_calls`)."""
        self.replaced: list[str] = []
        """Stored traces replaced as asked (`replace`), and the rows each table lost with them."""
        self.removed: dict[str, int] = {}

    def claim(self, trace_id: str) -> bool:
        """True the first time a file shows this id; later repeats count as duplicates."""
        if trace_id in self.seen:
            self.result.duplicates += 1
            return False
        self.seen.add(trace_id)
        return True

    def take(self, item: RawRecord | BadRecord) -> None:
        """Normalize one record; a record that raises becomes a bad record with its raw text. A logged API call
        waits for the file's other calls, to be stored with its conversation (`finish`)."""
        if isinstance(item, RawRecord) and self._stitched(item):
            return
        self._keep(item)

    def _stitched(self, item: RawRecord) -> bool:
        try:
            call = self.adapter.call_of(item, self.src)
        except Exception as e:  # noqa: BLE001 - `to_traces` reports it
            if is_interrupt(e):
                raise KeyboardInterrupt from e
            return False
        if call is None:
            return False
        status = self.calls.add(call, item)
        if status == "duplicate":
            self.result.duplicates += 1
        elif status == "extended":
            self.result.stitched += 1
        return True

    def finish(self) -> None:
        """Store the file's conversations stitched from its calls, then what is left of the batch. A stored
        conversation that this file goes on with, or holds with more calls (a log that grew), is replaced
        (see tracegym/ingest/call_store.py); not with redaction, which keeps no hashes of what it redacts."""
        earlier = StoredCalls(self.con, self.adapter.name) if self.redact is None and self.calls.open else None
        stitched = list(self.calls.conversations(earlier.continued if earlier is not None else None,
                                                 earlier.following if earlier is not None else None))
        self.result.stitched += self.calls.continued
        self.grown = grown_calls(self.con, [trace for trace, _, _ in stitched]) if stitched else set()
        for trace, record, _ in stitched:
            self._keep(record, [trace])
        self.flush()
        if earlier is not None:
            earlier.keep(self.src.source_id, {trace.trace_id: tip for trace, _, tip in stitched})
        joined = self._join_calls()
        if self.src.parts is not None:
            self._retire(self.src.parts)
        if self.result.merged or self.replaced or joined or (self.src.parts is not None and self.src.parts.retired):
            recount_after_removal(self.con)
        if self.replaced:
            record_change(self.con, "replace", {"file": self.src.name, "source_id": self.src.source_id},
                          self.replaced, self.removed)

    def _join_calls(self) -> bool:
        """Remove the stored conversations that went on with one of the file's, now stored under its id
        (`CallStitcher.joined`), and count them as `_retire` does; True when some were."""
        joined = self.calls.joined
        retired, removed = retire_joined(self.con, joined)
        if not retired:
            return False
        self.result.traces -= len(retired)
        self.result.merged += len({joined[t] for t in retired} - self.grown)  # a stored successor counted already
        self.result.messages -= removed.get("messages", 0)
        self.result.tool_calls -= removed.get("tool_calls", 0)
        record_change(self.con, "join", {"file": self.src.name, "source_id": self.src.source_id,
                                         "joined": {t: joined[t] for t in retired}}, retired, removed)
        return True

    def _retire(self, parts: PartStore) -> None:
        """Remove the stored conversations that went on in another trace (`PartStore.retire`) and count them:
        the store holds a trace less for each, and a conversation that took them in under an id of its own grew,
        so the counts of every ingest add up to what the store holds."""
        parts.retire()
        if not parts.retired:
            return
        self.result.traces -= len(parts.retired)
        self.result.merged += parts.renamed
        self.result.messages -= parts.removed.get("messages", 0)
        self.result.tool_calls -= parts.removed.get("tool_calls", 0)
        record_change(self.con, "join", {"file": self.src.name, "source_id": self.src.source_id,
                                         "joined": {t: parts.joined[t] for t in parts.retired}},
                      parts.retired, parts.removed)

    def _keep(self, item: RawRecord | BadRecord, made: list[Trace] | None = None) -> None:
        if isinstance(item, RawRecord):
            try:
                traces = made if made is not None else list(self.adapter.to_traces(item, self.src))
                for trace in traces:
                    link_tool_results(trace)
                    check_storable(trace)
            except Incomplete as e:
                if not self.adapter.upserts:
                    item = BadRecord(item.locator, f"ValueError: {e}", _raw_of(item))
                else:  # its parts are stored: a later file may bring its calls
                    self.result.waiting += 1
                    if len(self.result.waiting_why) < SHOWN_WAITING:
                        self.result.waiting_why.append(f"{item.locator}: {e}")
                    return
            except Exception as e:  # noqa: BLE001 - the record boundary: bad input is data, not a crash
                if is_interrupt(e):
                    raise KeyboardInterrupt from e
                item = BadRecord(item.locator, f"{type(e).__name__}: {e}", _raw_of(item))
            else:
                for trace in traces:
                    if self.claim(trace.trace_id):
                        self.batch.add(trace)
                if len(self.batch) >= BATCH_TRACES:
                    self.flush()
                return
        if self.redact is not None:
            text = self.redact.redactor.text
            item = BadRecord(text(item.locator, column="ingest_errors.locator"),
                             text(item.error, column="ingest_errors.error"),
                             text(item.raw, column="ingest_errors.raw"))
        _insert_error(self.con, self.src, item)
        self.result.errors += 1

    def append(self, tables: dict[str, pa.Table]) -> None:
        """Append a batch the adapter normalized itself (see `append.append_tables`), redacted first if asked."""
        if self.redact is not None:
            tables = self.redact.batch(tables)
        grown = self.grown | (self.src.parts.grown if self.src.parts is not None else set())
        appended = append_tables(self.con, tables, grown, self.replace, self.restore)
        self.replaced += appended.replaced
        for table, n in appended.removed.items():
            self.removed[table] = self.removed.get(table, 0) + n
        record_appended(self.con, self.src, self.result, appended)

    def flush(self) -> None:
        if len(self.batch):
            self.append(self.batch.tables())
            self.batch = TraceBatch(self.src.source_id)


def _guarded_records(adapter: Adapter, src: SourceFile) -> Iterator[RawRecord | BadRecord]:
    """The adapter's records; if splitting the file raises, the records before it stay and the rest is one bad
    record."""
    records = adapter.records(src)
    while True:
        try:
            rec = next(records)
        except StopIteration:
            return
        except TracegymError:  # a problem with how tracegym was asked to read (e.g. a bad --mapping), not the data
            raise
        except Exception as e:  # noqa: BLE001 - the file boundary: a reader choking on odd input is data, not a crash
            if is_interrupt(e):
                raise KeyboardInterrupt from e
            with src.path.open("rb") as f:
                head = f.read(RAW_LIMIT)
            yield BadRecord("file", f"{type(e).__name__} while splitting the file into records: {e}", raw_text(head))
            return
        yield rec


def _raw_of(rec: RawRecord) -> str:
    return clip_raw(rec.raw if rec.raw is not None else to_json(rec.value))


def _insert_error(con: duckdb.DuckDBPyConnection, src: SourceFile, bad: BadRecord) -> None:
    con.execute(
        "INSERT INTO ingest_errors (source_id, path, locator, error, raw) VALUES (?, ?, ?, ?, ?)",
        [src.source_id, src.name, bad.locator, bad.error, clip_raw(bad.raw)],
    )


def record_appended(con: duckdb.DuckDBPyConnection, src: SourceFile, result: FileResult, appended: Appended) -> None:
    """Count what was stored; each id conflict becomes an ingest error naming the trace."""
    result.traces += appended.traces
    result.messages += appended.messages
    result.tool_calls += appended.tool_calls
    result.duplicates += appended.duplicates
    result.merged += appended.merged
    result.replaced += len(appended.replaced)
    result.differing += appended.differing
    result.no_session += appended.no_session
    result.deleted += appended.deleted
    result.conflicts += len(appended.conflicts)
    for tid in appended.conflicts:
        _insert_error(con, src, BadRecord(
            f"trace {tid}", "conflict: a trace with this id but different content is already in the store; "
            "kept the stored one (`tracegym ingest --replace` replaces it)", tid))
