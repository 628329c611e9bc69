"""Reading a labels file (CSV or JSONL) into rows of (key, outcome, score), and the rows that could not be read.

A file the tool cannot use at all (missing, not UTF-8, no header, no such column, not one readable row, a score
column on another scale than [0, 1] read without `--score-range`) is a `ConfigError`: exit 2, nothing written. A
row that cannot be used (no key, a value the mapping does not know, a score that is not a number or lies outside
the given range, a line that is not JSON) is kept aside with its reason and location, and the good rows beside it
are used.
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
    """The column holding a score (stored in [0, 1] as a human score under this column's name)."""
    score_range: tuple[float, float] | None = None
    """The score column's scale (LOW, HIGH), mapped linearly onto [0, 1]: (1, 5) stores 1 star as 0.0, 3 as 0.5
    and 5 as 1.0. None: the column is on [0, 1] already, and a value outside it fails the whole file."""
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
    """On [0, 1]: the file's value mapped from `score_range`, or as written when there is none."""
    raw_score: float | None
    """The score as written in the file."""


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


def check_score_range(low: float, high: float) -> tuple[float, float]:
    """`--score-range LOW HIGH` as given, or a ConfigError for a range no score can be mapped from."""
    if not (math.isfinite(low) and math.isfinite(high)) or low >= high:
        raise ConfigError(f"--score-range {low:g} {high:g}: give the lowest and the highest value of the score "
                          "column's scale, lowest first, e.g. --score-range 1 5 for 1-5 stars.")
    return low, high


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
    """Every row of `path` (.csv, or .jsonl / .ndjson), read with `spec`, scores mapped onto [0, 1]."""
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
    if spec.score_range is None:
        _check_unit_scale(path, spec, result)
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
        yield from _csv_rows(reader, spec)


CELL_LIMIT = 131_072
"""The most characters a label cell may hold (Python's csv default field limit): a longer one makes its row bad."""
_READ_LIMIT = 1 << 26
"""The field limit the reader runs with, so that a long cell is read whole and the rows after it stay aligned; a
cell beyond even this is reported by the csv module, and its row is bad."""


def _csv_rows(reader: csv.DictReader[str], spec: LabelSpec) -> Iterator[tuple[str, Record]]:
    previous = csv.field_size_limit(_READ_LIMIT)
    try:
        row = 1
        while True:
            row += 1
            try:
                record = next(reader)
            except StopIteration:
                return
            except csv.Error as e:  # the reader resumes at the next line
                yield f"row {row}", BadRow(f"row {row}", f"not readable as CSV ({e})")
                continue
            long = [name for name, value in record.items() if isinstance(value, str) and len(value) > CELL_LIMIT]
            if long:
                yield f"row {row}", BadRow(f"row {row}", f"column {long[0]!r} holds more than {CELL_LIMIT:,} "
                                                          "characters")
                continue
            yield f"row {row}", {name: record.get(name) for name in _columns(spec)}
    finally:
        csv.field_size_limit(previous)


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
    raw, problem = _score(raw_score, spec.score_range)
    if problem is not None:
        result.bad.append(BadRow(locator, f"{key}: {problem}"))
        return
    if verdict == "skip" or (verdict is None and raw is None):
        result.skipped += 1
        return
    result.rows.append(LabelRow(locator, key, value, verdict, _scaled(raw, spec.score_range), raw))


def _score(raw: str | None, scale: tuple[float, float] | None) -> tuple[float | None, str | None]:
    """The number written in a score cell (None for an empty cell), or why it is not one."""
    if raw is None or not raw.strip():
        return None, None
    try:
        score = float(raw)
    except ValueError:
        return None, f"score {raw.strip()!r} is not a number"
    if not math.isfinite(score):
        return None, f"score {raw.strip()!r} is not a finite number"
    if scale is not None and not scale[0] <= score <= scale[1]:
        return None, f"score {raw.strip()} is outside --score-range {scale[0]:g} {scale[1]:g}"
    return score, None


def _scaled(raw: float | None, scale: tuple[float, float] | None) -> float | None:
    if raw is None or scale is None:
        return raw
    low, high = scale
    return (raw - low) / (high - low)


def _check_unit_scale(path: Path, spec: LabelSpec, result: LabelFile) -> None:
    """Without `--score-range`, a score column with any value outside [0, 1] is on another scale: storing the
    values that happen to lie in [0, 1] would store 1 of 1-5 stars as the best score, so nothing is stored."""
    scores = [r.raw_score for r in result.rows if r.raw_score is not None]
    if not scores or (min(scores) >= 0.0 and max(scores) <= 1.0):
        return
    low, high = min(scores), max(scores)
    outside = sum(not 0.0 <= s <= 1.0 for s in scores)
    raise ConfigError(
        f"Labels file {path}: the score column {spec.score!r} holds values from {low:g} to {high:g} ({outside} of "
        f"{len(scores)} outside [0, 1]), and scores are stored on [0, 1]. Pass --score-range LOW HIGH with the "
        f"column's scale to map it onto [0, 1] (e.g. --score-range 1 5 for 1-5 stars: 1 -> 0.0, 3 -> 0.5, "
        "5 -> 1.0). Nothing was stored.")
