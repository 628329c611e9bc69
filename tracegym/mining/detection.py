"""Per-trace detection: the built-in detectors run on each trace once, when it is new.

Traces do not change once stored (ingest keeps the stored copy of an id it
sees again; a trace replaced or removed takes its findings with it, and a
replaced one is detected again), and every built-in detector but runaway_turns
looks at one trace at a time, so a trace's findings stay what they were as long
as the detectors and their thresholds do. `tracegym ingest` therefore ends by detecting the
traces it added, and `mine failures` detects only traces no run has covered
yet, re-runs what compares traces with each other (runaway_turns, the user's
rules) and ranks the clusters. Mining an ingested store reads the findings
and their cluster counts instead of every message again.

What the store keeps for this:
- `detected`: the traces detected so far, with the assistant-turn count that
  runaway_turns compares across the store and whether anything was found;
- `detection_settings`: a key for the detectors (a hash of their SQL) and the
  thresholds the stored findings were made with; when it differs from the
  current one, every trace is detected again;
- `cluster_parts`: each cluster's counts over the traces of one detection
  run; a cluster's counts are the sums of its parts.

A run over a few traces copies their rows into temporary tables and points
the detectors' `@table` names at the copies; a run over most of the store
reads the store's tables directly, where copying would cost more than it saves.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import duckdb

from tracegym.errors import ConfigError, StoreError
from tracegym.mining.clusters import build_clusters, cluster_id_sql, parts_sql, quoted_list
from tracegym.mining.config import MineConfig
from tracegym.mining.detectors import DETECTORS, PER_TRACE, Detector
from tracegym.mining.scans import STORE_TABLES
from tracegym.mining.signature import install_macros, macros
from tracegym.mining.timing import Timings, timed
from tracegym.store.connection import Store

SCOPED = {table: f"tg_new_{table}" for table in STORE_TABLES}
FOUND = "tg_found"


@dataclass(frozen=True, slots=True)
class Detection:
    """What one detection run did."""

    traces: int
    """Traces detected by this run (0: every trace was already detected)."""
    whole_store: bool
    """The run detected every trace again: the settings changed, it was asked to, or most traces were new."""


def settings_key(params: dict[str, Any]) -> str:
    """A hash of the per-trace detectors (their SQL and scans), the macros they call (a new signature rule makes
    new signatures) and the thresholds they read."""
    read = sorted(set().union(*(d.parameters() for d in PER_TRACE)))
    spec = {
        "detectors": [[d.name, d.sql, d.verdict, [s.sql for s in d.scans]] for d in PER_TRACE],
        "macros": macros(),
        "params": {name: params[name] for name in read},
    }
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def detect_ingested(store: Store) -> Detection:
    """Detect the traces not yet detected, with the thresholds of the last detection run (the defaults before one).

    Ingest calls this after its files are stored, in a transaction of its own, so that a detector failing on odd
    data costs the findings (which the next `mine failures` makes again, reporting the error), not the traces.
    """
    stored = store.con.execute("SELECT params FROM detection_settings").fetchall()
    params = MineConfig.model_validate_json(stored[0][0]) if stored else MineConfig()
    with store.transaction() as con:
        return detect_new_traces(con, params.model_dump())


def forget_traces(con: duckdb.DuckDBPyConnection, ids: str) -> None:
    """Make the traces in `ids` (a table or parenthesised SELECT of `trace_id`) pending detection again: their
    outcome or scores changed (`tracegym labels import`), which the verdict detectors and the cluster counts read.

    Their per-trace findings and `detected` rows go; the cluster parts are counted again from the findings left,
    as one part (each trace is in one, so the sums stay those of the detection runs). The next detection run
    detects them anew. Call inside a transaction.
    """
    con.execute(f"DELETE FROM detected WHERE trace_id IN (SELECT trace_id FROM {ids})")
    per_trace = quoted_list([d.name for d in PER_TRACE])
    con.execute(f"DELETE FROM failures WHERE detector IN ({per_trace}) "
                f"AND trace_id IN (SELECT trace_id FROM {ids})")
    _recount_parts(con)


def recount_after_removal(con: duckdb.DuckDBPyConnection) -> None:
    """After traces were removed or replaced with every row of theirs (`failures` and `detected` included):
    count the cluster parts again from the per-trace findings left, and, on a store that has clusters, the
    clusters from those parts and the store-wide findings left, as `mine failures` sums them (without running
    the store-wide detectors and rules again: a rule's `verdict` counts again at the next `mine failures`).
    No cluster then counts, or shows as its example, a trace that is gone. Call inside a transaction."""
    _recount_parts(con)
    if not con.execute("SELECT count(*) FROM clusters").fetchone()[0]:
        return
    per_trace = quoted_list([d.name for d in PER_TRACE])
    store_wide = f"(SELECT * FROM failures WHERE detector NOT IN ({per_trace}))"
    counted = parts_sql(store_wide, "failures", "traces", "scores", [d.name for d in DETECTORS if d.verdict])
    build_clusters(con, f"SELECT * FROM cluster_parts UNION ALL SELECT * FROM ({counted})")


def _recount_parts(con: duckdb.DuckDBPyConnection) -> None:
    """The cluster parts counted again from the per-trace findings, as one part (each trace is in one, so the
    sums stay those of the detection runs)."""
    per_trace = quoted_list([d.name for d in PER_TRACE])
    findings = f"(SELECT * FROM failures WHERE detector IN ({per_trace}))"
    counted = parts_sql(findings, findings, "traces", "scores", [d.name for d in PER_TRACE if d.verdict])
    con.execute("DELETE FROM cluster_parts")
    con.execute(f"INSERT INTO cluster_parts {counted}")


def detect_new_traces(con: duckdb.DuckDBPyConnection, params: dict[str, Any], redetect: bool = False,
                      timings: Timings | None = None) -> Detection:
    """Run the per-trace detectors on every trace not yet detected with these settings (all of them if `redetect`).

    Call inside a transaction: findings, parts and the `detected` rows are written together. `timings`, when
    given, receives the time of each scan and detector.
    """
    timings = {} if timings is None else timings
    key = settings_key(params)
    if redetect or con.execute("SELECT key FROM detection_settings").fetchall() != [(key,)]:
        return _detect_store(con, params, key, timings)
    # Each trace is detected once, and a removed trace takes its `detected` row with it, so equal counts mean
    # none is pending (and cost nothing to read, where the anti-join below reads every id).
    total, done = con.execute("SELECT (SELECT count(*) FROM traces), (SELECT count(*) FROM detected)").fetchone()
    if total == done:
        return Detection(0, whole_store=False)
    pending = con.execute("SELECT count(*) FROM traces ANTI JOIN detected USING (trace_id)").fetchone()[0]
    if 2 * pending > total:
        return _detect_store(con, params, key, timings)
    # Temporary tables made in a transaction vanish with it when it rolls back: dropped here on success only.
    con.execute("CREATE TEMP TABLE tg_new AS SELECT trace_id FROM traces ANTI JOIN detected USING (trace_id)")
    for table, copy in SCOPED.items():
        con.execute(f"CREATE TEMP TABLE {copy} AS SELECT * FROM {table} SEMI JOIN tg_new USING (trace_id)")
    _detect(con, params, SCOPED, timings)
    for copy in ("tg_new", *SCOPED.values()):
        con.execute(f"DROP TABLE {copy}")
    return Detection(pending, whole_store=False)


def _detect_store(con: duckdb.DuckDBPyConnection, params: dict[str, Any], key: str,
                  timings: Timings) -> Detection:
    con.execute(f"DELETE FROM failures WHERE detector IN ({quoted_list([d.name for d in PER_TRACE])})")
    for table in ("detected", "cluster_parts", "detection_settings"):
        con.execute(f"DELETE FROM {table}")
    con.execute("INSERT INTO detection_settings VALUES (?, ?)", [key, json.dumps(params)])
    _detect(con, params, STORE_TABLES, timings)
    return Detection(con.execute("SELECT count(*) FROM detected").fetchone()[0], whole_store=True)


def _detect(con: duckdb.DuckDBPyConnection, params: dict[str, Any], tables: dict[str, str],
            timings: Timings) -> None:
    """Findings, cluster parts and `detected` rows for the traces in `tables`."""
    install_macros(con)
    scans = list(dict.fromkeys(scan for det in PER_TRACE for scan in det.scans))
    con.execute(f"CREATE TEMP TABLE {FOUND} AS SELECT * FROM failures LIMIT 0")
    for scan in scans:
        with timed(timings, f"scan {scan.table}"):
            con.execute(f"CREATE OR REPLACE TEMP TABLE {scan.table} AS {scan.over(tables)}")
    for det in PER_TRACE:
        with timed(timings, det.name):
            insert_findings(con, det, params, FOUND, det.over(tables))
    verdicts = [d.name for d in PER_TRACE if d.verdict]
    with timed(timings, "cluster parts"):
        counted = parts_sql(FOUND, FOUND, tables["traces"], tables["scores"], verdicts)
        con.execute(f"INSERT INTO cluster_parts {counted}")
        con.execute(f"INSERT INTO failures SELECT * FROM {FOUND}")
        con.execute(
            f"""INSERT INTO detected
                SELECT t.trace_id, coalesce(t.format, '?'), coalesce(n.turns, 0), f.trace_id IS NOT NULL
                FROM {tables['traces']} t
                LEFT JOIN (SELECT trace_id, count(*) AS turns FROM {tables['messages']}
                           WHERE role = 'assistant' GROUP BY trace_id) n USING (trace_id)
                LEFT JOIN (SELECT DISTINCT trace_id FROM {FOUND}) f USING (trace_id)"""
        )
    for table in (FOUND, *(scan.table for scan in scans)):
        con.execute(f"DROP TABLE {table}")


def insert_findings(con: duckdb.DuckDBPyConnection, det: Detector, params: dict[str, Any], into: str,
                    sql: str) -> int:
    """Append the findings of `sql` (`det`'s query) to the table `into`; returns how many."""
    name = "'" + det.name.replace("'", "''") + "'"
    statement = f"""
        INSERT INTO {into} (trace_id, detector, signature, evidence, message_idx, cluster_id)
        SELECT trace_id, {name}, sig, evidence, message_idx, {cluster_id_sql(name, 'sig')}
        FROM (SELECT trace_id, message_idx, evidence, coalesce(nullif(signature, ''), '(empty)') AS sig
              FROM ({sql}) AS found
              WHERE trace_id IS NOT NULL)
    """
    try:
        row = con.execute(statement, {k: v for k, v in params.items() if k in det.parameters()}).fetchone()
    except duckdb.Error as e:
        if det.origin is not None:
            raise ConfigError(f"{det.origin}: rule {det.name!r} failed while running: {e}. "
                              "Fix: correct the SQL; try it with `tracegym sql`.") from None
        raise StoreError(f"The {det.name} detector failed on this store: {e}",
                         title="DuckDB raised an error while mining") from e
    return int(row[0]) if row else 0
