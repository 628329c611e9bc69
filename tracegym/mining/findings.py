"""Reading mined failures back: one cluster with its evidence, or a filtered list of findings."""

from __future__ import annotations

from typing import Any

from tracegym.errors import NotFoundError
from tracegym.mining.clusters import Cluster
from tracegym.mining.detectors import DETECTORS
from tracegym.store.connection import Store


def get_cluster(store: Store, cluster: str) -> Cluster:
    """The cluster with this id, or the only one whose id starts with it."""
    rows = store.query("SELECT * FROM clusters WHERE cluster_id = ?", [cluster])
    if not rows:
        rows = store.query("SELECT * FROM clusters WHERE starts_with(cluster_id, ?) ORDER BY rank", [cluster])
    if len(rows) == 1:
        return Cluster.from_row(rows[0])
    if len(rows) > 1:
        ids = ", ".join(r["cluster_id"] for r in rows[:5])
        raise NotFoundError(f"{cluster!r} is the start of {len(rows)} cluster ids ({ids}). Fix: give more of the id.")
    if not store.scalar("SELECT count(*) FROM clusters"):
        raise NotFoundError("The store has no clusters yet. Fix: run `tracegym mine failures` first.")
    close = store.query(
        "SELECT cluster_id FROM clusters WHERE jaro_winkler_similarity(cluster_id, ?) >= 0.8 "
        "ORDER BY jaro_winkler_similarity(cluster_id, ?) DESC LIMIT 1", [cluster, cluster]
    )
    hint = f" Did you mean {close[0]['cluster_id']!r}?" if close else ""
    raise NotFoundError(f"No cluster {cluster!r} in the store.{hint} `tracegym mine failures` lists them.")


def describe_detector(name: str) -> dict[str, Any]:
    """Name, category and description of a built-in detector; user rules are described as such."""
    for det in DETECTORS:
        if det.name == name:
            return {"name": det.name, "category": det.category, "description": det.description}
    return {"name": name, "category": "rule", "description": "A user rule from a --rules file."}


def cluster_evidence(store: Store, cluster_id: str, traces: int) -> list[dict[str, Any]]:
    """The first finding of each of up to `traces` traces, failed traces first."""
    return store.query(
        """
        SELECT f.trace_id, t.outcome, f.message_idx, f.evidence, n AS findings_in_trace
        FROM (SELECT *, row_number() OVER (PARTITION BY trace_id ORDER BY message_idx NULLS FIRST) AS nth,
                     count(*) OVER (PARTITION BY trace_id) AS n
              FROM failures WHERE cluster_id = ?) f
        LEFT JOIN traces t USING (trace_id)
        WHERE nth = 1
        ORDER BY (t.outcome = 'failure') DESC NULLS LAST, n DESC, f.trace_id
        LIMIT ?
        """,
        [cluster_id, traces],
    )


def list_findings(store: Store, detector: str | None, trace_id: str | None, cluster_id: str | None,
                  limit: int) -> list[dict[str, Any]]:
    where, params = [], []
    for col, value in (("detector", detector), ("trace_id", trace_id), ("cluster_id", cluster_id)):
        if value is not None:
            where.append(f"{col} = ?")
            params.append(value)
    return store.query(
        f"""SELECT cluster_id, detector, trace_id, message_idx, signature, evidence FROM failures
            {'WHERE ' + ' AND '.join(where) if where else ''}
            ORDER BY detector, trace_id, message_idx NULLS FIRST LIMIT ?""",
        params + [limit],
    )
