"""Reading a labels file (CSV or JSONL) into rows of (key, outcome, score), and the rows that could not be read.

A file the tool cannot use at all (missing, not UTF-8, no header, no such column, not one readable row) is a
`ConfigError`: exit 2, nothing written. A row that cannot be used (no key, a value the mapping does not know, a
score that is not a number in [0, 1], a line that is not JSON) is kept aside with its reason and location, and
the good rows beside it are used.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tracegym.errors import ConfigError, did_you_mean
from tracegym.ingest.field_paths import get_path, parse_path

Verdict = Literal["success", "failure", "skip"]

# Values every import understands, compared case-insensitively after trimming; `--map` adds to them.
DEFAULT_VALUES: dict[str, Verdict] = {
    **dict.fromkeys(("success", "succeeded", "successful", "pass", "passed", "true", "yes", "1"), "success"),
    **dict.fromkeys(("failure", "failed", "fail", "false", "no", "0"), "failure"),
}


class LabelSpec(BaseModel):
    """Which columns of a labels file hold what, and how outcome values read."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    key: str
    """The column (a field path in JSONL) holding a trace id or a session/conversation id."""
    outcome: str | None = None
    """The column holding the outcome value; None when only a score is imported."""
    score: str | None = None
    """The column holding a score in [0, 1] (stored as a human score under this column's name)."""
    mapping: dict[str, Verdict] = Field(default_factory=dict)
    """Outcome values (lower-cased) -> success | failure | skip, on top of `DEFAULT_VALUES`."""

    def verdict(self, value: str) -> Verdict | None:
        text = value.strip().lower()
        return self.mapping.get(text) or DEFAULT_VALUES.get(text)


@dataclass(frozen=True, slots=True)
class LabelRow:
    locator: str
    """'line 3' (JSONL) or 'row 3' (CSV, the header is row 1)."""
    key: str
    value: str | None
    """The outcome value as written in the file."""
    outcome: Literal["success", "failure"] | None
    score: float | None


@dataclass(frozen=True, slots=True)
class BadRow:
    locator: str
    reason: str


@dataclass(slots=True)
class LabelFile:
    rows: list[LabelRow] = field(default_factory=list)
    bad: list[BadRow] = field(default_factory=list)
    skipped: int = 0
    """Rows whose outcome value maps to `skip`, or that carry neither an outcome nor a score."""
    total: int = 0


def parse_map(items: list[str]) -> dict[str, Verdict]:
    """`['resolved=success', 'escalated=failure']` -> a mapping; a malformed item is a ConfigError."""
    mapping: dict[str, Verdict] = {}
    for item in items:
        value, sep, verdict = item.rpartition("=")
        verdict = verdict.strip().lower()
        if not sep or not value.strip() or verdict not in ("success", "failure", "skip"):
            raise ConfigError(f"--map {item!r}: write VALUE=success, VALUE=failure or VALUE=skip, "
                              "e.g. --map resolved=success.")
        mapping[value.strip().lower()] = verdict  # type: ignore[assignment]
    return mapping


def read_labels(path: Path, spec: LabelSpec) -> LabelFile:
    """Every row of `path` (.csv, or .jsonl / .ndjson), read with `spec`."""
    if not path.is_file():
        raise ConfigError(f"Labels file {path} does not exist.")
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".ndjson"):
        raise ConfigError(f"Labels file {path}: name it .csv or .jsonl so its format is known (got {suffix!r}).")
    records = _csv_records(path, spec) if suffix == ".csv" else _jsonl_records(path, spec)
    result = LabelFile()
    try:
        for locator, record in records:
            result.total += 1
            _add(result, locator, record, spec)
    except UnicodeDecodeError as e:
        raise ConfigError(f"Labels file {path} is not UTF-8 text ({e.reason} at byte {e.start}).") from None
    if result.total == 0:
        raise ConfigError(f"Labels file {path} has no data rows.")
    if not result.rows and not result.skipped:
        first = result.bad[0]
        raise ConfigError(f"Labels file {path} has no usable row ({len(result.bad)} of {result.total} rows "
                          f"are bad); the first: {first.locator}: {first.reason}.")
    return result


Record = dict[str, Any] | BadRow


def _csv_records(path: Path, spec: LabelSpec) -> Iterator[tuple[str, Record]]:
    with path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        if not header:
            raise ConfigError(f"Labels file {path} is empty: a CSV needs a header row naming its columns.")
        for name in _columns(spec):
            if name not in header:
                raise ConfigError(f"Labels file {path} has no column {name!r}.{did_you_mean(name, header)} "
                                  f"Its columns: {', '.join(header)}.")
        # Row numbers as a spreadsheet shows them: the header is row 1 (a quoted cell may span lines).
        for row, record in enumerate(reader, 2):
            yield f"row {row}", {name: record.get(name) for name in _columns(spec)}


def _jsonl_records(path: Path, spec: LabelSpec) -> Iterator[tuple[str, Record]]:
    try:
        paths = {name: parse_path(name) for name in _columns(spec)}
    except ValueError as e:
        raise ConfigError(f"Labels file {path}: {e}") from None
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError as e:
                yield f"line {lineno}", BadRow(f"line {lineno}", f"not JSON ({e})")
                continue
            if not isinstance(value, dict):
                yield f"line {lineno}", BadRow(f"line {lineno}", f"not a JSON object ({type(value).__name__})")
                continue
            yield f"line {lineno}", {name: _text(get_path(value, p)) for name, p in paths.items()}


def _columns(spec: LabelSpec) -> list[str]:
    return [name for name in (spec.key, spec.outcome, spec.score) if name is not None]


def _text(value: Any) -> str | None:
    """A JSON value as the text a CSV would hold: 1.0 as '1', true as 'true'; objects as JSON."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, sort_keys=True)


def _add(result: LabelFile, locator: str, record: Record, spec: LabelSpec) -> None:
    if isinstance(record, BadRow):
        result.bad.append(record)
        return
    key = (record.get(spec.key) or "").strip()
    if not key:
        result.bad.append(BadRow(locator, f"no key in {spec.key!r}"))
        return
    value = record.get(spec.outcome) if spec.outcome else None
    raw_score = record.get(spec.score) if spec.score else None
    verdict = spec.verdict(value) if value is not None and value.strip() else None
    if value is not None and value.strip() and verdict is None:
        result.bad.append(BadRow(locator, f"{key}: outcome value {value.strip()!r} is not mapped "
                                          "(add --map VALUE=success|failure|skip)"))
        return
    score, problem = _score(raw_score)
    if problem is not None:
        result.bad.append(BadRow(locator, f"{key}: {problem}"))
        return
    if verdict == "skip" or (verdict is None and score is None):
        result.skipped += 1
        return
    result.rows.append(LabelRow(locator, key, value, verdict, score))


def _score(raw: str | None) -> tuple[float | None, str | None]:
    if raw is None or not raw.strip():
        return None, None
    try:
        score = float(raw)
    except ValueError:
        return None, f"score {raw.strip()!r} is not a number"
    if not math.isfinite(score) or not 0.0 <= score <= 1.0:
        return None, (f"score {raw.strip()} is outside [0, 1] (mining compares scores with --score-threshold "
                      "on that scale: rescale the column first)")
    return score, None
