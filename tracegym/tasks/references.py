"""`tasks generate --references FILE`: reference replies a team writes for failures whose recording holds none.

A file is JSON Lines (`.jsonl`, `.json`) or CSV (`.csv`); each row names what it serves by exactly one of
`trace_id` (a task's source trace, or a trace merged into it), `session_id` (a source trace's session) or
`cluster_id` (every task of that failure cluster), and gives the `reply` (text) and optionally `tool_calls` (a
JSON list of calls, OpenAI's `{"function": {"name", "arguments"}}` or a flat `{"name", "arguments"}`). A task
takes the row of its trace, else of its session, else of its cluster.

The whole file is checked before anything runs: every bad row is reported at once, by line, and nothing is
written. Rows are data, never code or paths: ids are only compared with the store's.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracegym.errors import ConfigError, did_you_mean
from tracegym.tasks.spec import ChatMessage, FunctionCall, Reference, TaskSpec, ToolCallMessage

if TYPE_CHECKING:
    from tracegym.store import Store

KEYS = ("trace_id", "session_id", "cluster_id")
COLUMNS = (*KEYS, "reply", "tool_calls")
_SHOWN_ERRORS = 20
_FIX = ("Fix: give each row exactly one of trace_id, session_id or cluster_id, a reply (text), and optionally "
        "tool_calls as a JSON list of {\"name\": ..., \"arguments\": {...}}; see docs/reward-gates.md.")


@dataclass(frozen=True)
class ReferenceRow:
    """One row of a references file."""

    line: int
    key: str
    """The column that names what the row serves: trace_id, session_id or cluster_id."""
    value: str
    reply: ChatMessage

    def reference(self, source: str) -> Reference:
        return Reference(source=source, detail=f"line {self.line}, {self.key} {self.value}", replies=[self.reply])


@dataclass
class ReferenceMatch:
    """Which rows serve which drafted tasks, and the rows that serve none."""

    references: dict[str, Reference]
    """By task id."""
    rows: int
    unmatched: list[ReferenceRow] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {"rows": self.rows, "tasks": len(self.references), "unmatched_rows": len(self.unmatched),
                "unmatched": [f"{r.key} {r.value} (line {r.line})" for r in self.unmatched[:10]]}


@dataclass
class ReferenceFile:
    path: Path
    rows: list[ReferenceRow]

    @property
    def source(self) -> str:
        return f"file:{self.path}"

    def match(self, specs: Sequence[TaskSpec], sessions: dict[str, str]) -> ReferenceMatch:
        """Each task's row: its trace's (or a merged duplicate's), else its session's, else its cluster's;
        `sessions` maps trace ids to session ids."""
        by_key = {(r.key, r.value): r for r in self.rows}
        used: set[int] = set()
        found: dict[str, Reference] = {}
        for spec in specs:
            row = _row_for(spec, by_key, sessions)
            if row is not None:
                found[spec.task_id] = row.reference(self.source)
                used.add(row.line)
        return ReferenceMatch(found, len(self.rows), [r for r in self.rows if r.line not in used])


def _row_for(spec: TaskSpec, by_key: dict[tuple[str, str], ReferenceRow],
             sessions: dict[str, str]) -> ReferenceRow | None:
    traces = [spec.provenance.trace_id, *(d.trace_id for d in spec.provenance.duplicates)]
    clusters = [spec.provenance.cluster_id, *(d.cluster_id for d in spec.provenance.duplicates)]
    keys = ([("trace_id", t) for t in traces] + [("session_id", sessions[t]) for t in traces if t in sessions]
            + [("cluster_id", c) for c in clusters if c is not None])
    return next((by_key[k] for k in keys if k in by_key), None)


def with_reference(task: TaskSpec, reference: Reference | None) -> TaskSpec:
    """`task` with `reference` as its supplied reference (`provenance.reference`)."""
    provenance = task.provenance.model_copy(update={"reference": reference})
    return task.model_copy(update={"provenance": provenance})


def session_ids(store: Store, specs: Iterable[TaskSpec]) -> dict[str, str]:
    """The session id of each source trace (and merged duplicate) of `specs` that has one."""
    ids = sorted({t for s in specs for t in [s.provenance.trace_id, *(d.trace_id for d in s.provenance.duplicates)]})
    rows = store.query("SELECT trace_id, session_id FROM traces WHERE trace_id IN (SELECT unnest(?)) "
                       "AND session_id IS NOT NULL", [ids])
    return {r["trace_id"]: str(r["session_id"]) for r in rows}


def read_references(path: Path) -> ReferenceFile:
    """Read and check a references file; one `ConfigError` lists every bad row by line."""
    if not path.is_file():
        raise ConfigError(f"--references {path}: no such file. Fix: pass a .jsonl or .csv file of reference replies.")
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".json", ".csv"):
        raise ConfigError(f"--references {path}: unknown file type {suffix or '(none)'}. Fix: name it .jsonl (one "
                          "JSON object per line) or .csv (a header row, then one row per reference).")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigError(f"--references {path}: not UTF-8 text ({e.reason} at byte {e.start}). "
                          "Fix: save it as UTF-8.") from None
    records = _csv_records(path, text) if suffix == ".csv" else _jsonl_records(text)
    rows, errors = [], []
    for line, record in records:
        try:
            rows.append(_row(line, record))
        except ValueError as e:
            errors.append(f"line {line}: {e}")
    errors += _duplicates(rows)
    if not rows and not errors:
        errors.append("no rows")
    if errors:
        shown = "\n  ".join(errors[:_SHOWN_ERRORS])
        more = f"\n  ... and {len(errors) - _SHOWN_ERRORS} more" if len(errors) > _SHOWN_ERRORS else ""
        raise ConfigError(f"--references {path}: {len(errors)} bad row{'s' if len(errors) > 1 else ''}, nothing "
                          f"was generated:\n  {shown}{more}\n{_FIX}")
    return ReferenceFile(path, rows)


def _jsonl_records(text: str) -> list[tuple[int, dict[str, Any] | str]]:
    """(line, object) per non-blank line; a line that is not a JSON object gives the reason instead."""
    out: list[tuple[int, dict[str, Any] | str]] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError as e:
            out.append((n, f"not JSON ({e})"))
            continue
        out.append((n, value if isinstance(value, dict) else f"a JSON {type(value).__name__}, not an object"))
    return out


def _csv_records(path: Path, text: str) -> list[tuple[int, dict[str, Any] | str]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [h.strip() for h in reader.fieldnames or []]
    missing = [c for c in ("reply",) if c not in header]
    if not any(k in header for k in KEYS):
        missing.insert(0, " or ".join(KEYS))
    unknown = [h for h in header if h not in COLUMNS]
    if missing or unknown:
        problems = [f"no {m} column" for m in missing]
        problems += [_unknown("column", h) for h in unknown]
        raise ConfigError(f"--references {path}: line 1 (the header): {'; '.join(problems)}. Fix: the header names "
                          f"{', '.join(COLUMNS[:3])} (one per row, the others empty), reply and optionally "
                          "tool_calls.")
    out: list[tuple[int, dict[str, Any] | str]] = []
    start = reader.line_num + 1
    try:
        for record in reader:
            if None in record:
                out.append((start, f"more cells than the header's {len(header)} columns"))
            else:
                out.append((start, {k.strip(): v for k, v in record.items() if v not in (None, "")}))
            start = reader.line_num + 1
    except csv.Error as e:
        out.append((start, f"not CSV ({e})"))
    return out


def _unknown(what: str, name: str) -> str:
    hint = did_you_mean(name, COLUMNS).strip()
    return f"unknown {what} {name!r}" + (f" ({hint})" if hint else "")


def _row(line: int, record: dict[str, Any] | str) -> ReferenceRow:
    if isinstance(record, str):
        raise ValueError(record)
    unknown = [k for k in record if k not in COLUMNS]
    if unknown:
        raise ValueError(_unknown("field", unknown[0]))
    keys = [k for k in KEYS if record.get(k) not in (None, "")]
    if len(keys) != 1:
        raise ValueError("names none of trace_id, session_id, cluster_id" if not keys
                         else f"names both {keys[0]} and {keys[1]}; give one per row")
    value = record[keys[0]]
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise ValueError(f"{keys[0]} is a JSON {type(value).__name__}, not text")
    reply = record.get("reply", "")
    if "reply" not in record and "tool_calls" not in record:
        raise ValueError("no reply")
    if not isinstance(reply, str):
        raise ValueError(f"reply is a JSON {type(reply).__name__}, not text")
    calls = _tool_calls(record.get("tool_calls"), line)
    if not reply.strip() and not calls:
        raise ValueError("an empty reply without tool calls (the gates' empty probe; it can never be a reference)")
    message = ChatMessage(role="assistant", content=reply or None, tool_calls=calls or None)
    return ReferenceRow(line, keys[0], str(value).strip(), message)


def _tool_calls(raw: Any, line: int) -> list[ToolCallMessage]:
    if raw in (None, ""):
        return []
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError as e:
            raise ValueError(f"tool_calls is not JSON ({e})") from None
    if not isinstance(raw, list):
        raise ValueError(f"tool_calls is a JSON {type(raw).__name__}, not a list of calls")
    return [_tool_call(item, f"ref_{line}_{i}", i) for i, item in enumerate(raw)]


def _tool_call(item: Any, default_id: str, i: int) -> ToolCallMessage:
    if not isinstance(item, dict):
        raise ValueError(f"tool_calls[{i}] is not an object")
    function = item.get("function", item)
    name, arguments = (function.get("name"), function.get("arguments", {})) if isinstance(function, dict) else (
        None, None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"tool_calls[{i}] has no name")
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError as e:
            raise ValueError(f"tool_calls[{i}].arguments is not JSON ({e})") from None
    else:
        parsed = arguments
    if not isinstance(parsed, dict):
        raise ValueError(f"tool_calls[{i}].arguments is not a JSON object")
    call_id = item.get("id")
    return ToolCallMessage(id=call_id if isinstance(call_id, str) and call_id else default_id,
                           function=FunctionCall(name=name, arguments=json.dumps(parsed, ensure_ascii=False)))


def _duplicates(rows: list[ReferenceRow]) -> list[str]:
    first: dict[tuple[str, str], int] = {}
    errors = []
    for row in rows:
        seen = first.setdefault((row.key, row.value), row.line)
        if seen != row.line:
            errors.append(f"line {row.line}: {row.key} {row.value!r} again (line {seen} gives it already); "
                          "give one reference per trace, session or cluster")
    return errors
