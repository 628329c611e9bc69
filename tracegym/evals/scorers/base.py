"""The one scorer interface: a trajectory in, a `ScoreResult` out, never an exception."""

from __future__ import annotations

import math
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from tracegym.errors import TracegymError
from tracegym.evals.scorers.trajectory import ScoreResult, Trajectory

T = TypeVar("T")


class StoreReader(Protocol):
    """What scorers read the store through: an open `Store`, or a view of one per thread
    (`tracegym.harnesses.taskrun.ThreadLocalStore`)."""

    def query(self, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        """The rows of `sql` as dicts."""


@dataclass
class ScorerContext:
    """What building a scorer may need beyond its definition."""

    evals_dir: Path
    """The folder of the evals.yaml (relative paths in it are resolved from here)."""
    store: StoreReader | None = None
    """An open `Store` (or a view of one), for `label` evals; None where no store is at hand."""


class Scorer(ABC):
    """Subclasses implement `_score`; callers use `score`, which records every failure as an error."""

    def __init__(self, name: str, timeout_s: float) -> None:
        self.name = name
        self.timeout_s = timeout_s

    @abstractmethod
    def _score(self, traj: Trajectory) -> Any:
        """A `ScoreResult`, a number, a bool, a (number, details) pair or a {"reward": …} dict."""

    def score(self, traj: Trajectory) -> ScoreResult:
        """Score `traj`; a raise, a timeout or a reward that is not a number in [0, 1] becomes an error."""
        try:
            raw = self._score(traj)
        except TracegymError:
            raise  # a configuration problem (a model that will not load): the user must fix it, once
        except ScorerTimeout as e:
            return ScoreResult.failed(f"{self.name}: timed out after {self.timeout_s:g}s{e.note}")
        except Exception as e:  # noqa: BLE001 - a failing scorer is recorded on the trajectory, not raised
            return ScoreResult.failed(f"{self.name}: {type(e).__name__}: {e}")
        return coerce_result(raw, self.name)


class ScorerTimeout(Exception):
    def __init__(self, note: str = "") -> None:
        super().__init__(note)
        self.note = note


def coerce_result(raw: Any, name: str) -> ScoreResult:
    """Turn what a scorer or an eval function returned into a `ScoreResult`, or an error saying why not."""
    if isinstance(raw, ScoreResult):
        return raw
    details: dict[str, Any] = {}
    value = raw
    if isinstance(raw, tuple) and len(raw) == 2 and isinstance(raw[1], dict):
        value, details = raw
    elif isinstance(raw, dict):
        key = next((k for k in ("reward", "score", "value") if k in raw), None)
        if key is None:
            return ScoreResult.failed(f"{name}: returned a dict without a reward/score/value key: {_short(raw)}")
        value, details = raw[key], {k: v for k, v in raw.items() if k != key}
    if isinstance(value, bool):
        return ScoreResult(float(value), details)
    if not isinstance(value, (int, float)):
        return ScoreResult.failed(f"{name}: returned {_short(value)} ({type(value).__name__}), not a number in [0, 1]")
    value = float(value)
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        return ScoreResult.failed(f"{name}: returned {value!r}, outside [0, 1]", details)
    return _with_components(ScoreResult(value, details), name)


def _with_components(result: ScoreResult, name: str) -> ScoreResult:
    """A `components` mapping of names to numbers among the details becomes the result's components."""
    parts = result.details.get("components")
    if not isinstance(parts, dict):
        return result
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in parts.values()):
        return ScoreResult.failed(f"{name}: returned components that are not all finite numbers: {_short(parts)}",
                                  result.details)
    details = {k: v for k, v in result.details.items() if k != "components"}
    return ScoreResult(result.reward, details, components={str(k): float(v) for k, v in parts.items()})


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def call_with_timeout(fn: Callable[[], T], timeout_s: float) -> T:
    """Run `fn` in a daemon thread; raise `ScorerTimeout` if it has not returned in time.

    A thread cannot be stopped, so a runaway call keeps running in the
    background; the `process` isolation of python evals kills it instead.
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread below
            box["error"] = e

    worker = threading.Thread(target=target, daemon=True, name="tracegym-scorer")
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise ScorerTimeout(" (it is still running in a background thread; isolation: process would kill it)")
    if "error" in box:
        raise box["error"]
    return box["value"]
