"""The gold-actions verdict on each real τ-bench run, recomputed straight from the raw file, sharing no code with
tracegym: whether a run's accepted booking writes are exactly the gold ones, and whether its reward is 1."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

WRITES = {"book_reservation", "cancel_reservation", "update_reservation_flights", "update_reservation_baggages",
          "update_reservation_passengers", "send_certificate"}


def _norm(v: Any) -> Any:
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    return [_norm(x) for x in v] if isinstance(v, list) else v


def _key(name: str, args: Any) -> str:
    return json.dumps([name, _norm(args)], sort_keys=True)


def gold_verdicts(traces_dir: Path) -> dict[str, tuple[bool, bool]]:
    """Trace id -> (the writes match the gold actions, the recorded reward is 1)."""
    runs = json.loads((traces_dir / "tau-bench" / "gpt-4o-airline.json").read_text())
    verdicts = {}
    for run in runs:
        gold = Counter(_key(a["name"], a["kwargs"]) for a in run["info"]["task"]["actions"] if a["name"] in WRITES)
        made: Counter = Counter()
        for i, m in enumerate(run["traj"]):
            for c in m.get("tool_calls") or []:
                # In these runs each call is answered by the very next message; a rejected write changed nothing.
                rejected = (run["traj"][i + 1].get("content") or "").startswith("Error")
                if c["function"]["name"] in WRITES and not rejected:
                    made[_key(c["function"]["name"], json.loads(c["function"]["arguments"]))] += 1
        trace_id = f"tau-bench:gpt-4o-airline:task-{run['task_id']}:trial-{run['trial']}"
        verdicts[trace_id] = (gold == made, run["reward"] == 1.0)
    return verdicts
