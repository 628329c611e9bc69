"""SWE-bench evaluation companions: per-instance reports, run summaries, predictions.

These files are not traces. The mini-swe-agent and SWE-agent adapters read
them to set a trajectory's outcome (`resolved`), and `SweBenchCompanionAdapter`
claims them so that ingesting a whole run folder does not count them as bad
records. Layouts read (both seen in published runs):

- `reports/<instance_id>.report.json`: the harness's per-instance report, either
  flat `{resolved, tests_status, ...}` or keyed by instance id `{<id>: {...}}`;
  `<instance_id>/report.json` (the harness's own log layout) is read the same way;
- `results_summary.json`: `{instances: [{instance_id, resolved, patch_applied}]}`;
- predictions (`all_preds.jsonl`, `preds.json`): `{instance_id, model_patch, ...}`,
  which carry no resolution and are only claimed as companions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from tracegym.ingest.adapters.base import Adapter, SourceFile
from tracegym.ingest.reading import Sample
from tracegym.ingest.records import RawRecord, Score, Trace

TEST_GROUPS = ("FAIL_TO_PASS", "PASS_TO_PASS", "FAIL_TO_FAIL", "PASS_TO_FAIL")


@dataclass(frozen=True, slots=True)
class Resolution:
    """What a SWE-bench evaluation said about one instance."""

    resolved: bool
    source: str  # the companion file it came from
    tests_status: dict[str, Any] | None = None  # {FAIL_TO_PASS: {success: [...], failure: [...]}, ...}
    patch_applied: bool | None = None


def find_resolution(traj_path: Path, instance_id: str) -> Resolution | None:
    """The resolution of `instance_id` from companions beside the trajectory or one folder up."""
    folders = [traj_path.parent, traj_path.parent.parent]
    for folder in folders:
        for report in (folder / "reports" / f"{instance_id}.report.json", folder / instance_id / "report.json"):
            found = _from_report(report, instance_id)
            if found is not None:
                return found
    for folder in folders:
        found = _from_summary(folder / "results_summary.json", instance_id)
        if found is not None:
            return found
    return None


def resolution_scores(res: Resolution) -> list[Score]:
    """`resolved` plus the pass rate of each test group the report lists."""
    scores = [Score("resolved", 1.0 if res.resolved else 0.0, kind="environment")]
    for group in TEST_GROUPS:
        status = (res.tests_status or {}).get(group)
        if not isinstance(status, dict):
            continue
        passed, failed = len(status.get("success") or []), len(status.get("failure") or [])
        if passed + failed:
            scores.append(Score(f"{group.lower()}_pass_rate", passed / (passed + failed), kind="environment",
                                comment=f"{passed}/{passed + failed} tests passed"))
    return scores


def _from_report(path: Path, instance_id: str) -> Resolution | None:
    entry = report_entry(_read_json(path), instance_id)
    if entry is None:
        return None
    tests = entry.get("tests_status") if isinstance(entry.get("tests_status"), dict) else None
    applied = entry.get("patch_successfully_applied")
    return Resolution(entry["resolved"], str(path), tests, applied if isinstance(applied, bool) else None)


def _from_summary(path: Path, instance_id: str) -> Resolution | None:
    summary = _read_json(path)
    instances = summary.get("instances") if isinstance(summary, dict) else None
    for item in instances if isinstance(instances, list) else []:
        if isinstance(item, dict) and item.get("instance_id") == instance_id and isinstance(item.get("resolved"), bool):
            applied = item.get("patch_applied")
            return Resolution(item["resolved"], str(path), None, applied if isinstance(applied, bool) else None)
    return None


def report_entry(report: Any, instance_id: str | None = None) -> dict[str, Any] | None:
    """The `{resolved, tests_status}` part of a per-instance report, flat or keyed by id."""
    if not isinstance(report, dict):
        return None
    if isinstance(report.get("resolved"), bool):
        return report
    keyed = report.get(instance_id) if instance_id else next(iter(report.values()), None) if len(report) == 1 else None
    if isinstance(keyed, dict) and isinstance(keyed.get("resolved"), bool):
        return keyed
    return None


def _read_json(path: Path) -> Any:
    """A companion's parsed JSON, or None when it is absent or unreadable (the outcome then stays unknown)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return _read_json_cached(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _read_json_cached(path: str, mtime_ns: int, size: int) -> Any:
    # mtime and size are in the key so that a rewritten companion is read again.
    try:
        return orjson.loads(Path(path).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


class SweBenchCompanionAdapter(Adapter):
    """Claims SWE-bench reports, summaries and predictions; they hold no traces of their own."""

    name = "swe-bench-companion"
    description = "SWE-bench reports/results_summary/predictions (read by the trajectory adapters, no traces)"
    companion_only = True

    def sniff(self, sample: Sample) -> bool:
        value = sample.top if sample.top is not None else sample.first
        return _is_report(value) or _is_summary(value) or _is_prediction(value, sample.jsonl)

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        # The pipeline never splits a companion into records; its content reaches
        # traces through find_resolution when the trajectories are ingested.
        return ()


def _is_report(value: Any) -> bool:
    entry = report_entry(value)
    return entry is not None and isinstance(entry.get("tests_status"), dict)


def _is_summary(value: Any) -> bool:
    if not isinstance(value, dict) or not isinstance(value.get("instances"), list) or not value["instances"]:
        return False
    first = value["instances"][0]
    return isinstance(first, dict) and {"instance_id", "resolved"} <= first.keys()


def _is_prediction(value: Any, jsonl: bool) -> bool:
    if isinstance(value, dict) and not jsonl and "model_patch" not in value and len(value) >= 1:
        value = next(iter(value.values()))  # preds.json: {instance_id: prediction}
    return isinstance(value, dict) and {"instance_id", "model_patch"} <= value.keys()
