"""Grouping findings into clusters and ranking them.

A cluster is every finding with the same detector and signature. Its id is a
hash of the two, so the same failure keeps its id when the store is mined
again (tasks and eval results refer to clusters by id).

Ranking. Two things make a cluster matter: how many traces show it, and how
reliably the traces that show it fail. A trace failed when a verdict detector
(outcome, low_score, failing_tests, negative_feedback) flagged it or its
outcome is 'failure'; its outcome is known when it has an outcome, a score, or
failed. `failure_rate` = failed / known traces of the cluster. The ranking key
is `score = n_traces × wilson_lower(failure_rate, n_known)`, the 95% Wilson
lower bound, which discounts rates measured on few traces: 2 of 2 failed
(lower bound 0.34) ranks below 40 of 50 (0.66). Clusters whose traces have no
known outcome score 0 and rank by size after the others. Ties go to the
larger cluster, then by detector and signature, so the order is deterministic.

Catch-alls last. The clusters of the catch-all detectors (outcome, low_score,
failing_tests, negative_feedback) say that traces failed, not where: they
often hold the most traces and fail by definition, so by score alone they
would top every list, above the specific clusters that name what to fix. They
rank after every specific cluster, among themselves by the same key.

Counting. Every count above adds up over disjoint sets of traces, so clusters
are counted in parts: each detection run stores the counts over the traces it
saw (`cluster_parts`), and mining sums the parts with the counts of the
store-wide findings it has just made. The example trace merges the same way
(failed first, then most findings, then the smallest id).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb

from tracegym.mining.detectors import DETECTORS

WILSON_Z = 1.96
CATCH_ALL = tuple(d.name for d in DETECTORS if d.catch_all)


@dataclass(frozen=True, slots=True)
class Cluster:
    cluster_id: str
    detector: str
    signature: str
    n_traces: int
    n_findings: int
    n_failed: int
    n_known: int
    failure_rate: float | None
    score: float
    rank: int
    example_trace_id: str
    catch_all: bool
    """Its detector says that traces failed, not where (see the module doc); it ranks after the specific ones."""

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Cluster:
        return cls(**{name: row[name] for name in cls.__slots__ if name != "catch_all"},
                   catch_all=row["detector"] in CATCH_ALL)

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


def cluster_id_sql(detector: str, signature: str) -> str:
    """SQL for the id of the cluster of (detector, signature): stable across runs and stores."""
    return f"left(md5({detector} || chr(31) || {signature}), 10)"


def wilson_lower_sql(successes: str, n: str, z: float = WILSON_Z) -> str:
    """SQL for the Wilson score interval's lower bound of successes/n (0 when n is 0)."""
    p = f"({successes}::DOUBLE / {n})"
    z2 = z * z
    return (
        f"CASE WHEN {n} = 0 THEN 0.0 ELSE "
        f"({p} + {z2 / 2} / {n} - {z} * sqrt({p} * (1 - {p}) / {n} + {z2 / 4} / ({n} * {n}))) / (1 + {z2} / {n}) END"
    )


def quoted_list(names: list[str]) -> str:
    """SQL for a list of names, usable after IN (NULL when empty: IN (NULL) matches nothing)."""
    return ", ".join("'" + name.replace("'", "''") + "'" for name in names) or "NULL"


def parts_sql(findings: str, flagged: str, traces: str, scores: str, verdicts: list[str]) -> str:
    """SQL for each cluster's counts over the rows of `findings`, shaped like the `cluster_parts` table.

    A trace failed when a verdict finding in `flagged` names it or `traces` gives it the outcome 'failure';
    its outcome is known when it has one, was flagged, or has a row in `scores`. Every argument is a table
    name or a parenthesised SELECT.
    """
    return f"""
        WITH per_trace AS (
            SELECT cluster_id, detector, signature, trace_id, count(*) AS n
            FROM {findings} GROUP BY ALL
        ), found AS (
            SELECT DISTINCT trace_id FROM per_trace
        ), flagged AS (
            -- Read only for the traces found: mining an ingested store counts the parts of few findings.
            SELECT DISTINCT trace_id FROM {flagged} SEMI JOIN found USING (trace_id)
            WHERE detector IN ({quoted_list(verdicts)})
        ), scored AS (
            SELECT DISTINCT trace_id FROM {scores} SEMI JOIN found USING (trace_id)
        ), status AS (
            SELECT p.trace_id,
                   coalesce(t.outcome = 'failure', false) OR f.trace_id IS NOT NULL AS failed,
                   t.outcome IS NOT NULL OR f.trace_id IS NOT NULL OR s.trace_id IS NOT NULL AS known
            FROM found p
            LEFT JOIN {traces} t USING (trace_id)
            LEFT JOIN flagged f USING (trace_id)
            LEFT JOIN scored s USING (trace_id)
        )
        SELECT cluster_id, detector, signature,
               count(*) AS n_traces, sum(n) AS n_findings,
               count(*) FILTER (failed) AS n_failed, count(*) FILTER (known) AS n_known,
               arg_min(trace_id, (NOT failed, -n, trace_id)) AS example_trace_id,
               arg_min(failed, (NOT failed, -n, trace_id)) AS example_failed,
               arg_min(n, (NOT failed, -n, trace_id)) AS example_findings
        FROM per_trace JOIN status USING (trace_id)
        GROUP BY cluster_id, detector, signature
    """


def build_clusters(con: duckdb.DuckDBPyConnection, parts: str) -> None:
    """Replace the clusters table with the sums of `parts` (rows shaped like `cluster_parts`), ranked.

    Each trace's findings must lie in one part of a cluster: the parts' trace counts are added.
    """
    con.execute("DELETE FROM clusters")
    con.execute(
        f"""
        INSERT INTO clusters
        WITH grouped AS (
            SELECT cluster_id, any_value(detector) AS detector, any_value(signature) AS signature,
                   sum(n_traces) AS n_traces, sum(n_findings) AS n_findings,
                   sum(n_failed) AS n_failed, sum(n_known) AS n_known,
                   arg_min(example_trace_id, (NOT example_failed, -example_findings, example_trace_id))
                       AS example_trace_id
            FROM ({parts})
            GROUP BY cluster_id
        ), ranked AS (
            SELECT *, n_failed / nullif(n_known, 0) AS failure_rate,
                   n_traces * ({wilson_lower_sql('n_failed', 'n_known')}) AS score
            FROM grouped
        )
        SELECT cluster_id, detector, signature, n_traces, n_findings, n_failed, n_known, failure_rate, score,
               row_number() OVER (ORDER BY detector IN ({quoted_list(list(CATCH_ALL))}), score DESC, n_traces DESC,
                                        detector, signature) AS rank,
               example_trace_id
        FROM ranked
        """
    )


def ranked_clusters(con: duckdb.DuckDBPyConnection, limit: int | None = None) -> list[Cluster]:
    cur = con.execute("SELECT * FROM clusters ORDER BY rank" + (" LIMIT ?" if limit is not None else ""),
                      [limit] if limit is not None else [])
    cols = [d[0] for d in cur.description]
    return [Cluster.from_row(dict(zip(cols, row, strict=True))) for row in cur.fetchall()]
