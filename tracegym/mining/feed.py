"""The daily feed: what changed in the failure clusters since an earlier mining run.

Every `mine failures` run is recorded with the clusters it ranked (`mining_runs`, `mining_run_clusters`). A run is
compared with a baseline: by default the run before it, or with `--since` the last run at or before a time (`1d`
ago, `2026-12-01`), so a team that ingests each day's export and mines sees what is new. A cluster is new when
the baseline did not have it; it grew when its share of the store's traces went up. With no run to compare with,
every cluster is new.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import datetime, timedelta
from typing import Any

import duckdb

from tracegym.errors import ConfigError
from tracegym.store.connection import Store

_DURATION = re.compile(r"(\d+)\s*([mhdw])")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_EPS = 1e-12


def record_run(con: duckdb.DuckDBPyConnection, params: dict[str, Any]) -> str:
    """Record this run and the clusters table it just built; returns the run's id. Call inside its transaction."""
    run_id = uuid.uuid4().hex[:12]
    con.execute("INSERT INTO mining_runs VALUES "
                "(?, ?, (SELECT count(*) FROM traces), (SELECT count(*) FROM clusters), ?)",
                [run_id, datetime.now(), json.dumps(params)])
    con.execute("INSERT INTO mining_run_clusters SELECT ?, cluster_id, detector, signature, n_traces, n_failed, "
                "n_known, rank FROM clusters", [run_id])
    return run_id


def parse_since(text: str, now: datetime) -> datetime:
    """`1d`, `12h`, `30m`, `2w` before `now`, or an ISO date or time (`2026-12-01`, `2026-12-01T08:00`)."""
    match = _DURATION.fullmatch(text.strip().lower())
    if match:
        return now - timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
    try:
        return datetime.fromisoformat(text.strip()).replace(tzinfo=None)
    except ValueError:
        raise ConfigError(f"--since {text!r}: give a window such as 1d, 12h or 2w, or a date such as 2026-12-01."
                          ) from None


def changes(store: Store, run_id: str, since: str | None = None, now: datetime | None = None) -> dict[str, Any]:
    """What changed between the baseline run (see the module doc) and `run_id`."""
    current = _run(store, "run_id = ?", [run_id])
    if current is None:
        raise ConfigError(f"No mining run {run_id!r} is recorded in {store.path}.")
    cutoff = None if since is None else parse_since(since, now or datetime.now())
    where, params = "run_id <> ? AND mined_at <= ?", [run_id, cutoff or current["mined_at"]]
    base = _run(store, where, params)
    base_id, base_traces = (base["run_id"], base["n_traces"]) if base else (None, 0)
    share = "n_traces::DOUBLE / nullif(?, 0)"
    new = store.query(
        f"""SELECT cluster_id, detector, signature, n_traces, {share} AS share, rank
            FROM mining_run_clusters WHERE run_id = ?
              AND cluster_id NOT IN (SELECT cluster_id FROM mining_run_clusters WHERE run_id = ?)
            ORDER BY rank""", [current["n_traces"], run_id, base_id or ""])
    grew = store.query(
        f"""SELECT c.cluster_id, c.detector, c.signature, b.n_traces AS n_traces_before, c.n_traces,
                   b.n_traces::DOUBLE / nullif(?, 0) AS share_before, c.{share} AS share, c.rank
            FROM mining_run_clusters c JOIN mining_run_clusters b USING (cluster_id)
            WHERE c.run_id = ? AND b.run_id = ? AND c.n_traces > b.n_traces
              AND c.n_traces::DOUBLE / nullif(?, 0) > b.n_traces::DOUBLE / nullif(?, 0) + {_EPS}
            ORDER BY share - share_before DESC, c.rank""",
        [base_traces, current["n_traces"], run_id, base_id or "", current["n_traces"], base_traces])
    return {
        "since": since or "the previous mining run",
        "cutoff": cutoff,
        "baseline_run": base_id,
        "baseline_mined_at": base["mined_at"] if base else None,
        "new_traces": current["n_traces"] - base_traces,
        "new_clusters": new,
        "grown_clusters": grew,
    }


def _run(store: Store, where: str, params: list[Any]) -> dict[str, Any] | None:
    rows = store.query(f"SELECT run_id, mined_at, n_traces FROM mining_runs WHERE {where} "
                       "ORDER BY mined_at DESC, run_id LIMIT 1", params)
    return rows[0] if rows else None
