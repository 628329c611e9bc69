"""Mining: new traces detected, store-wide detectors and rules run, clusters ranked, in one transaction."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracegym.errors import StoreError
from tracegym.mining.clusters import (
    Cluster,
    build_clusters,
    parts_sql,
    quoted_list,
    ranked_clusters,
)
from tracegym.mining.config import MineConfig
from tracegym.mining.detection import Detection, detect_new_traces, insert_findings
from tracegym.mining.detectors import DETECTORS, PER_TRACE, Detector
from tracegym.mining.feed import record_run
from tracegym.mining.rule_files import load_rules, prepare_rules
from tracegym.mining.signature import install_macros
from tracegym.mining.timing import Timings, clock, since, timed
from tracegym.store.connection import Store


@dataclass(slots=True)
class MineSummary:
    """What one mining run found; `clusters` are ranked, most important first."""

    traces: int
    traces_with_findings: int
    findings: int
    by_detector: dict[str, int]
    detection: Detection
    """The per-trace detection this run did: none when ingest had detected every trace."""
    clusters: list[Cluster] = field(default_factory=list)
    run_id: str = ""
    """This run in `mining_runs` (tracegym/mining/feed.py); not in `to_dict`, as `timings`."""
    timings: Timings = field(default_factory=dict)
    """Per step, in order: each shared scan and per-trace detector (when traces were detected), deleting the
    store-wide findings, each store-wide detector and rule, clustering, the commit, reading the summary back.
    Not in `to_dict`, so the CLI's JSON output stays the same from run to run."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "traces": self.traces,
            "traces_with_findings": self.traces_with_findings,
            "findings": self.findings,
            "by_detector": self.by_detector,
            "clusters": [c.to_dict() for c in self.clusters],
        }


def mine_failures(store: Store, config: MineConfig | None = None, rules: Path | None = None,
                  redetect: bool = False) -> MineSummary:
    """Bring the findings up to date and rank the clusters.

    Traces no detection run has covered are detected (every trace, when the thresholds changed or `redetect`);
    findings of the detectors that compare traces (runaway_turns) and of the rules in `rules` are made again.
    """
    if store.read_only:
        raise StoreError(f"The store at {store.path} is open read-only; mining writes the failures and clusters "
                         "tables. Fix: open it writable.")
    params = (config or MineConfig()).model_dump()
    ruled = []
    if rules is not None:
        install_macros(store.con)  # rules may call them; detection installs them for itself
        # Checked before the transaction: a bad rule stops the run with the store untouched.
        ruled = prepare_rules(store.con, load_rules(rules), params)
    store_wide = [d for d in DETECTORS if not d.per_trace] + ruled
    timings: Timings = {}
    with store.transaction() as con:
        detection = detect_new_traces(con, params, redetect, timings)
        with timed(timings, "delete"):
            con.execute(f"DELETE FROM failures WHERE detector NOT IN ({quoted_list([d.name for d in PER_TRACE])})")
        found = {}
        for det in store_wide:
            with timed(timings, det.name):
                found[det.name] = insert_findings(con, det, params, "failures", det.sql)
        with timed(timings, "clusters"):
            build_clusters(con, _parts(store_wide, found))
            run_id = record_run(con, params)
        committing = clock()
    timings["commit"] = since(committing)
    with timed(timings, "summary"):
        clusters = ranked_clusters(store.con)
        by_detector = {d.name: 0 for d in (*DETECTORS, *ruled)}
        for cluster in clusters:  # every finding is in one cluster
            by_detector[cluster.detector] += cluster.n_findings
        summary = MineSummary(
            traces=store.scalar("SELECT count(*) FROM traces"),
            traces_with_findings=_traces_with_findings(store, store_wide, found),
            findings=sum(by_detector.values()),
            by_detector=by_detector,
            detection=detection,
            clusters=clusters,
            run_id=run_id,
            timings=timings,
        )
    return summary


def _parts(store_wide: list[Detector], found: dict[str, int]) -> str:
    """SQL for the cluster parts to sum: those stored by detection, and those of this run's store-wide findings.

    A verdict rule can make a trace failed after its per-trace parts were counted, so with one every cluster is
    counted again from the findings.
    """
    verdicts = [d.name for d in (*PER_TRACE, *store_wide) if d.verdict]
    if any(d.verdict for d in store_wide):
        return parts_sql("failures", "failures", "traces", "scores", verdicts)
    if not any(found.values()):
        return "SELECT * FROM cluster_parts"
    findings = f"(SELECT * FROM failures WHERE detector IN ({quoted_list([d.name for d in store_wide])}))"
    counted = parts_sql(findings, "failures", "traces", "scores", verdicts)
    return f"SELECT * FROM cluster_parts UNION ALL SELECT * FROM ({counted})"


def _traces_with_findings(store: Store, store_wide: list[Detector], found: dict[str, int]) -> int:
    """Traces with any finding: those detection marked, and those only the store-wide detectors found."""
    marked = store.scalar("SELECT count(*) FROM detected WHERE has_findings")
    if not any(found.values()):
        return marked
    return marked + store.scalar(
        f"""SELECT count(DISTINCT trace_id) FROM failures
            ANTI JOIN (SELECT trace_id FROM detected WHERE has_findings) USING (trace_id)
            WHERE detector IN ({quoted_list([d.name for d in store_wide])})"""
    )
