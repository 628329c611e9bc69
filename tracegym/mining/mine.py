"""Running the detectors: findings into `failures`, then `clusters`, in one transaction."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
from pydantic import BaseModel, ConfigDict, Field

from tracegym.errors import ConfigError, StoreError
from tracegym.mining.clusters import Cluster, build_clusters, cluster_id_sql, ranked_clusters
from tracegym.mining.detectors import DETECTORS, Detector
from tracegym.mining.rules import load_rules, prepare_rules
from tracegym.mining.signature import install_macros
from tracegym.store.connection import Store


class MineConfig(BaseModel):
    """The thresholds the detectors read (as `$name` parameters in their SQL)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    score_threshold: float = 0.5
    """Eval and human-feedback scores below this are failures (low_score, negative_feedback); scores in [0, 1]."""
    min_repeats: int = Field(3, ge=2)
    """An identical tool call with an identical result made this many times in one trace is a loop."""
    max_turns: int | None = Field(None, ge=1)
    """More assistant turns than this is a runaway; None: three times the median of the trace's format."""


@dataclass(frozen=True, slots=True)
class StepTime:
    """Time one step of a mining run took: wall clock, and CPU of this process (all DuckDB threads)."""

    wall_s: float
    cpu_s: float


@dataclass(slots=True)
class MineSummary:
    """What one mining run found; `clusters` are ranked, most important first."""

    traces: int
    traces_with_findings: int
    findings: int
    by_detector: dict[str, int]
    clusters: list[Cluster] = field(default_factory=list)
    timings: dict[str, StepTime] = field(default_factory=dict)
    """Per step, in order: deleting earlier findings, each shared scan, each detector, clustering, the commit,
    reading the summary back.
    Not in `to_dict`, so the CLI's JSON output stays the same from run to run."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "traces": self.traces,
            "traces_with_findings": self.traces_with_findings,
            "findings": self.findings,
            "by_detector": self.by_detector,
            "clusters": [c.to_dict() for c in self.clusters],
        }


def mine_failures(store: Store, config: MineConfig | None = None, rules: Path | None = None) -> MineSummary:
    """Run every built-in detector (and the rules in `rules`), replacing earlier findings and clusters."""
    if store.read_only:
        raise StoreError(f"The store at {store.path} is open read-only; mining writes the failures and clusters "
                         "tables. Fix: open it writable.")
    config = config or MineConfig()
    params = config.model_dump()
    install_macros(store.con)
    detectors = list(DETECTORS)
    if rules is not None:
        # Checked before the transaction: a bad rule stops the run with the store untouched.
        detectors += prepare_rules(store.con, load_rules(rules), params)
    timings: dict[str, StepTime] = {}
    with store.transaction() as con:
        with timed(timings, "delete"):
            con.execute("DELETE FROM failures")
        scans = list(dict.fromkeys(scan for det in detectors for scan in det.scans))
        for scan in scans:
            with timed(timings, f"scan {scan.table}"):
                con.execute(f"CREATE OR REPLACE TEMP TABLE {scan.table} AS {scan.sql}")
        by_detector = {}
        for det in detectors:
            with timed(timings, det.name):
                by_detector[det.name] = insert_findings(con, det, params)
        for scan in scans:
            con.execute(f"DROP TABLE {scan.table}")
        with timed(timings, "clusters"):
            build_clusters(con, [det.name for det in detectors if det.verdict])
        committing = _clock()
    timings["commit"] = _since(committing)
    with timed(timings, "summary"):
        summary = MineSummary(
            traces=store.scalar("SELECT count(*) FROM traces"),
            traces_with_findings=store.scalar("SELECT count(DISTINCT trace_id) FROM failures"),
            findings=sum(by_detector.values()),
            by_detector=by_detector,
            clusters=ranked_clusters(store.con),
            timings=timings,
        )
    return summary


def _clock() -> StepTime:
    return StepTime(time.perf_counter(), time.process_time())


def _since(start: StepTime) -> StepTime:
    now = _clock()
    return StepTime(now.wall_s - start.wall_s, now.cpu_s - start.cpu_s)


@contextmanager
def timed(timings: dict[str, StepTime], step: str) -> Iterator[None]:
    """Record the wall-clock and process CPU time of the block as `timings[step]`."""
    start = _clock()
    yield
    timings[step] = _since(start)


def insert_findings(con: duckdb.DuckDBPyConnection, det: Detector, params: dict[str, Any]) -> int:
    """Append `det`'s findings to `failures`; returns how many."""
    name = "'" + det.name.replace("'", "''") + "'"
    sql = f"""
        INSERT INTO failures (trace_id, detector, signature, evidence, message_idx, cluster_id)
        SELECT trace_id, {name}, sig, evidence, message_idx, {cluster_id_sql(name, 'sig')}
        FROM (SELECT trace_id, message_idx, evidence, coalesce(nullif(signature, ''), '(empty)') AS sig
              FROM ({det.sql}) AS found
              WHERE trace_id IS NOT NULL)
    """
    try:
        row = con.execute(sql, {k: v for k, v in params.items() if k in det.parameters()}).fetchone()
    except duckdb.Error as e:
        if det.origin is not None:
            raise ConfigError(f"{det.origin}: rule {det.name!r} failed while running: {e}. "
                              "Fix: correct the SQL; try it with `tracegym sql`.") from None
        raise StoreError(f"The {det.name} detector failed on this store: {e}",
                         title="DuckDB raised an error while mining") from e
    return int(row[0]) if row else 0
