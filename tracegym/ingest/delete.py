"""`tracegym traces delete`: stored traces removed with everything derived from them, in one transaction.

Traces are chosen by id, by the file they were ingested from (`--source`: the traces stored from it, and the
store's record of the file, so that it can be ingested again), or by start time (`--before`: traces whose
`started_at` is earlier; traces without one are kept). Every choice is checked before anything is written: an
unknown id or file, or a date that is no date, changes nothing. The rows go from every table keyed by trace id
(tracegym/ingest/removal.py), the clusters are counted again without them, and the deletion is recorded in
`store_changes` with who ran it, when, what was asked and how many rows each table lost. Traces chosen by id or
by time are recorded in `deleted_traces`, so that nothing brings them back (the same lines in a grown log, a
stitched group rebuilt from its parts, an MLflow pull) unless `ingest --replace` reads a file that holds them;
`--source` forgets the file instead, so that it can be ingested anew.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from tracegym.errors import ConfigError, NotFoundError, StoreError, did_you_mean
from tracegym.ingest.pipeline import file_sha256
from tracegym.ingest.removal import record_change, remove_rows, row_count, source_tables, trace_tables
from tracegym.mining.detection import recount_after_removal
from tracegym.store.connection import Store

STAGED = "tg_delete_ids"


@dataclass(slots=True)
class Selection:
    """The traces to delete, and the files forgotten with them (`--source`)."""

    trace_ids: list[str]
    source_ids: list[str] = field(default_factory=list)
    asked: dict[str, Any] = field(default_factory=dict)
    """What was asked, as the audit record keeps it."""
    undated: int = 0
    """With `--before`: traces without a start time, which it does not choose."""


@dataclass(slots=True)
class Deletion:
    change_id: str
    traces: int
    removed: dict[str, int]
    """Rows removed per table, tables that lost none left out."""


def select_traces(store: Store, ids: list[str], source: str | None, before: str | None) -> Selection:
    """The traces that exactly one of `ids`, `source` or `before` names; a ConfigError or NotFoundError (and
    nothing chosen) for anything that names nothing."""
    given = [name for name, value in (("IDs", ids), ("--source", source), ("--before", before)) if value]
    if len(given) != 1:
        raise ConfigError("Say which traces to delete with one of: trace IDs, --source PATH or --before DATE"
                          + (f" (not {' and '.join(given)} together)." if given else "."))
    if ids:
        return _by_id(store, ids)
    if source is not None:
        return _by_source(store, source)
    return _by_start(store, str(before))


def _by_id(store: Store, ids: list[str]) -> Selection:
    wanted = list(dict.fromkeys(ids))
    staged_wanted = pa.table({"trace_id": pa.array(wanted, pa.string())})  # noqa: F841 - read by name in SQL
    found = {tid for (tid,) in store.con.execute(
        "SELECT trace_id FROM traces SEMI JOIN staged_wanted USING (trace_id)").fetchall()}
    missing = [tid for tid in wanted if tid not in found]
    if missing:
        known = [tid for (tid,) in store.con.execute("SELECT trace_id FROM traces").fetchall()]
        shown = ", ".join(repr(tid) for tid in missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5
                                                                else "")
        raise NotFoundError(f"No trace {shown} in the store at {store.path}; nothing was deleted."
                            f"{did_you_mean(missing[0], known)} `tracegym traces list` shows the stored ids.")
    return Selection(wanted, asked={"ids": wanted})


def _by_source(store: Store, source: str) -> Selection:
    rows = store.con.execute("SELECT source_id, path FROM sources").fetchall()
    matched = [sid for sid, path in rows if _same_file(path, source)]
    given = Path(source)
    if not matched and given.is_file():  # the same bytes, ingested under another name
        digest = file_sha256(given)
        matched = [sid for sid, _ in rows if sid == digest]
    if not matched:
        raise NotFoundError(f"No ingested file {source!r} in the store at {store.path}; nothing was deleted."
                            f"{did_you_mean(source, [path for _, path in rows])} "
                            "`tracegym sql \"SELECT path FROM sources\"` lists the files ingested.")
    staged_sources = pa.table({"source_id": pa.array(matched, pa.string())})  # noqa: F841 - read by name in SQL
    ids = [tid for (tid,) in store.con.execute(
        "SELECT trace_id FROM traces SEMI JOIN staged_sources USING (source_id) ORDER BY trace_id").fetchall()]
    return Selection(ids, matched, {"source": source, "source_ids": matched})


def _same_file(recorded: str, given: str) -> bool:
    if recorded == given:
        return True
    try:
        return Path(recorded).resolve() == Path(given).resolve()
    except (OSError, RuntimeError):  # a path that cannot be resolved names no file here
        return False


def parse_before(text: str) -> datetime:
    """An ISO date or time; one with a zone is taken to UTC, the store's times being UTC."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ConfigError(f"--before {text!r} is not a date. Fix: give a date such as 2026-11-01 or a time such as "
                          "2026-11-01T09:30 (UTC unless it names its zone, as 2026-11-01T09:30+01:00)."
                          ) from None
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def _by_start(store: Store, before: str) -> Selection:
    moment = parse_before(before)
    ids = [tid for (tid,) in store.con.execute(
        "SELECT trace_id FROM traces WHERE started_at < ? ORDER BY trace_id", [moment]).fetchall()]
    undated = store.scalar("SELECT count(*) FROM traces WHERE started_at IS NULL")
    return Selection(ids, asked={"before": moment.isoformat()}, undated=undated)


def preview(store: Store, chosen: Selection) -> dict[str, int]:
    """The rows deleting `chosen` would remove, per table (tables that would lose none left out)."""
    _stage(store.con, chosen)
    try:
        counts = {table: store.scalar(f"SELECT count(*) FROM {table} WHERE trace_id IN "
                                      f"(SELECT trace_id FROM {STAGED})") for table in trace_tables(store.con)}
        counts.update(_source_rows(store.con, chosen, "SELECT count(*) FROM"))
    finally:
        store.con.execute(f"DROP TABLE IF EXISTS {STAGED}")
    return {table: n for table, n in counts.items() if n}


def delete_traces(store: Store, chosen: Selection) -> Deletion:
    """Delete the chosen traces and what derives from them, and the chosen files' records, in one transaction."""
    if store.read_only:
        raise StoreError(f"The store at {store.path} is open read-only; deleting traces writes to it.")
    with store.transaction() as con:
        _stage(con, chosen)  # a temporary table made in the transaction goes with it if it rolls back
        removed = remove_rows(con, STAGED)
        removed.update(_source_rows(con, chosen, "DELETE FROM"))
        recount_after_removal(con)
        change_id = record_change(con, "delete", chosen.asked, chosen.trace_ids, removed)
        if not chosen.source_ids:  # `--source` forgets the file, to be ingested anew; other choices are kept out
            con.execute(f"INSERT OR IGNORE INTO deleted_traces SELECT trace_id, ? FROM {STAGED}", [change_id])
        con.execute(f"DROP TABLE {STAGED}")
    return Deletion(change_id, len(chosen.trace_ids), {table: n for table, n in removed.items() if n})


def _stage(con: duckdb.DuckDBPyConnection, chosen: Selection) -> None:
    staged = pa.table({"trace_id": pa.array(chosen.trace_ids, pa.string())})  # noqa: F841 - read by name in SQL
    con.execute(f"CREATE OR REPLACE TEMP TABLE {STAGED} AS SELECT trace_id FROM staged")


def _source_rows(con: duckdb.DuckDBPyConnection, chosen: Selection, verb: str) -> dict[str, int]:
    """The rows of the chosen files' records (`sources`, `ingest_errors`, ...), counted or deleted (`verb`)."""
    if not chosen.source_ids:
        return {}
    return {table: row_count(con.execute(f"{verb} {table} WHERE list_contains(?, source_id)", [chosen.source_ids]))
            for table in source_tables(con)}
