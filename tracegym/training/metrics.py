"""A run in the store: its `runs` row, per-step `metrics` (long format), `checkpoints`, and its rollouts.

The store is opened for each write and closed again, so other processes (`tracegym sql`, a notebook)
can read it while a run goes on. Each step's metrics and rollouts go in one transaction. On resume,
whatever a killed run wrote after its last checkpoint is deleted first: the resumed run writes those
steps again.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from tracegym.store import open_store

if TYPE_CHECKING:
    from tracegym.episodes.record import Episode
    from tracegym.store.connection import Store
    from tracegym.training.hack_monitor import HackWarning
    from tracegym.training.pools.quarantine import Verdict


class RunRecorder:
    """Writes one run's rows; `store_path` None means the default store."""

    def __init__(self, store_path: Path | None, run_id: str) -> None:
        self.store_path = store_path
        self.run_id = run_id

    @contextmanager
    def _store(self) -> Iterator[Store]:
        store = open_store(self.store_path)
        try:
            yield store
        finally:
            store.close()

    def start(self, config: Mapping[str, Any], run_dir: Path, base_model: str, task_set_id: str | None) -> None:
        """Insert the run (or mark a resumed one running again)."""
        now = datetime.now()
        with self._store() as store, store.transaction() as con:
            con.execute("DELETE FROM runs WHERE run_id = ?", [self.run_id])
            con.execute(
                "INSERT INTO runs (run_id, config, status, started_at, updated_at, run_dir, base_model, task_set_id) "
                "VALUES (?, ?, 'running', ?, ?, ?, ?, ?)",
                [self.run_id, orjson.dumps(config).decode(), now, now, str(run_dir.resolve()), base_model,
                 task_set_id],
            )

    def completed_steps(self) -> int:
        """The run's last step with stored metrics (0: none)."""
        with self._store() as store:
            return int(store.scalar("SELECT coalesce(max(step), 0) FROM metrics WHERE run_id = ?", [self.run_id]))

    def forget(self) -> None:
        """Delete the run from the store: a failed start, replaced by a new run in its folder."""
        self.forget_after(-1)
        with self._store() as store:
            store.con.execute("DELETE FROM runs WHERE run_id = ?", [self.run_id])

    def forget_after(self, step: int) -> None:
        """Delete what a killed run wrote after `step` (its last checkpoint): those steps run again."""
        with self._store() as store, store.transaction() as con:
            con.execute("DELETE FROM metrics WHERE run_id = ? AND step > ?", [self.run_id, step])
            con.execute("DELETE FROM checkpoints WHERE run_id = ? AND step > ?", [self.run_id, step])
            con.execute("DELETE FROM pool_quarantines WHERE run_id = ? AND step > ?", [self.run_id, step])
            con.execute("DELETE FROM hack_warnings WHERE run_id = ? AND step > ?", [self.run_id, step])
            # A rollout taken by a later step belongs to the steps that run again; rows stored before the
            # train_step column only say which weights sampled them: newer than the checkpoint's, then.
            con.execute("DELETE FROM rollouts WHERE run_id = ? AND (train_step > ? OR (train_step IS NULL "
                        "AND policy_version >= ?))", [self.run_id, step, step])

    def log(self, step: int, metrics: Mapping[str, float], episodes: Sequence[Episode] = ()) -> None:
        """One step's metrics (non-finite values are stored as NULL) and every episode it took, each marked with
        what the step did with it (`Episode.train_use`)."""
        from tracegym.episodes.rollout_table import write_rollouts

        rows = [[self.run_id, step, key, _finite(value)] for key, value in sorted(metrics.items())]
        with self._store() as store:
            with store.transaction() as con:
                con.executemany("INSERT INTO metrics (run_id, step, key, value) VALUES (?, ?, ?, ?)", rows)
                con.execute("UPDATE runs SET updated_at = ? WHERE run_id = ?", [datetime.now(), self.run_id])
            if episodes:
                write_rollouts(store, episodes, self.run_id)

    def quarantine(self, verdict: Verdict) -> None:
        """A sampler pool quarantined after `verdict.step`: its limit and the evidence."""
        v = verdict
        with self._store() as store, store.transaction() as con:
            con.execute("INSERT INTO pool_quarantines (run_id, step, pool, cause, value, limit_value, first_step, "
                        "last_step, evidence, evidence_unit, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [self.run_id, v.step, v.pool, v.cause, v.value, v.limit, v.first_step, v.last_step,
                         v.evidence, v.unit, datetime.now()])

    def hack_warning(self, warning: HackWarning) -> None:
        """A cluster whose reward and share of hollow replies rose together (tracegym/training/hack_monitor.py)."""
        w = warning
        with self._store() as store, store.transaction() as con:
            con.execute("INSERT INTO hack_warnings (run_id, step, cluster_id, first_step, split_step, reward_before, "
                        "reward_after, hollow_before, hollow_after, episodes_before, episodes_after, p_value, "
                        f"detector, example_rollout_id, created_at) VALUES ({', '.join('?' * 15)})",
                        [self.run_id, w.step, w.cluster, w.first_step, w.split_step, w.reward_before, w.reward_after,
                         w.hollow_before, w.hollow_after, w.episodes_before, w.episodes_after, w.p_value, w.detector,
                         w.example, datetime.now()])

    def checkpoint(self, step: int, path: Path, policy_version: int) -> None:
        with self._store() as store, store.transaction() as con:
            con.execute("DELETE FROM checkpoints WHERE run_id = ? AND step = ?", [self.run_id, step])
            con.execute(
                "INSERT INTO checkpoints (run_id, step, path, policy_version, created_at) VALUES (?, ?, ?, ?, ?)",
                [self.run_id, step, str(path.resolve()), policy_version, datetime.now()],
            )

    def finish(self, status: str) -> None:
        with self._store() as store:
            store.con.execute("UPDATE runs SET status = ?, updated_at = ? WHERE run_id = ?",
                              [status, datetime.now(), self.run_id])


def _finite(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def read_metrics(store: Store, run_id: str) -> dict[str, dict[int, float | None]]:
    """key -> {step: value} for one run."""
    out: dict[str, dict[int, float | None]] = {}
    for row in store.query("SELECT step, key, value FROM metrics WHERE run_id = ? ORDER BY key, step", [run_id]):
        out.setdefault(row["key"], {})[row["step"]] = row["value"]
    return out


class PoolSync:
    """Each pool's weight syncs per step, from the rollout source's running totals per pool (`pool_figures()`):
    `sync/POOL/bytes`, the bytes of weights its samplers read since the step before (on the wire, for a pool reading
    over the network), and `sync/POOL/latency_s`, the mean sync latency (the trainer beginning to publish a version to
    a sampler's engine holding it) of the versions they loaded since then, absent in a step where none was loaded."""

    def __init__(self) -> None:
        self._last: dict[str, Mapping[str, float]] = {}

    def metrics(self, pools: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
        out: dict[str, float] = {}
        for pool, now in pools.items():
            before = self._last.get(pool, {})
            out[f"sync/{pool}/bytes"] = now["sync_bytes"] - before.get("sync_bytes", 0.0)
            syncs = now["syncs"] - before.get("syncs", 0.0)
            if syncs > 0:
                out[f"sync/{pool}/latency_s"] = (now["sync_latency_s"] - before.get("sync_latency_s", 0.0)) / syncs
            self._last[pool] = dict(now)
        return out
def read_quarantines(store: Store, run_id: str, up_to: int | None = None) -> list[dict[str, Any]]:
    """The run's quarantined pools (`pool_quarantines` rows), by step; with `up_to`, those of steps <= it."""
    return store.query("SELECT step, pool, cause, value, limit_value, first_step, last_step, evidence, evidence_unit "
                       "FROM pool_quarantines WHERE run_id = ? AND step <= coalesce(?, step) ORDER BY step, pool",
                       [run_id, up_to])


def read_hack_warnings(store: Store, run_id: str) -> list[dict[str, Any]]:
    """The run's warnings of possible reward hacking (`hack_warnings` rows), by step and cluster."""
    return store.query("SELECT step, cluster_id, first_step, split_step, reward_before, reward_after, hollow_before, "
                       "hollow_after, episodes_before, episodes_after, p_value, detector, example_rollout_id "
                       "FROM hack_warnings WHERE run_id = ? ORDER BY step, cluster_id", [run_id])
