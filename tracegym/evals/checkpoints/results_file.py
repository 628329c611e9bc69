"""Results scored by another trainer, read line by line: what `tracegym rollouts import` and `tracegym eval
--from-results` bring back.

Two formats, each one JSON object a line:

- `verifiers`: the `results.jsonl` that `vf-eval` (and `Environment.evaluate(save_results=True)`) writes: `prompt`
  and `completion` as chat messages (tool calls flat, `{"id", "name", "arguments"}`), `reward`, `error`, `info`
  (an object, or its JSON text) holding the `task_id` the export put there, `is_truncated`.
- `trl`: prompt, completion and reward with the exported `task_id` column beside them (TRL passes the dataset's
  columns to reward functions, and a run's logged samples keep them): `prompt` and `completion` conversational
  (lists of messages) or plain text.

A line that cannot be read is named with its number and reason and left out; the rest are read.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tracegym.episodes.record import Message
from tracegym.errors import NotFoundError

ResultFormat = Literal["verifiers", "trl"]
RESULT_FORMATS: tuple[str, ...] = ("verifiers", "trl")


@dataclass(frozen=True)
class ResultRow:
    """One scored sample of the file."""

    line: int
    task_id: str
    prompt: list[Message]
    completion: list[Message]
    reward: float | None
    """None when the trainer recorded an error for the sample instead of a score."""
    error: str | None = None
    truncated: bool = False


@dataclass
class ResultsFile:
    """The readable rows of a file and why each other line was left out."""

    path: Path
    rows: list[ResultRow] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)
    """'line N: why', in line order."""


class _Bad(ValueError):
    """A line that cannot be read; its message says why."""


def read_results(path: Path, fmt: ResultFormat) -> ResultsFile:
    """Every line of `path` read as a sample in `fmt`."""
    if not path.is_file():
        raise NotFoundError(f"No results file {path}. Fix: give the JSONL the other trainer wrote (`vf-eval` "
                            "writes results.jsonl under outputs/evals/).")
    out = ResultsFile(path)
    with path.open(encoding="utf-8", errors="replace") as f:
        for n, text in enumerate(f, start=1):
            if not text.strip():
                continue
            try:
                out.rows.append(_row(n, text, fmt))
            except _Bad as e:
                out.bad.append(f"line {n}: {e}")
    return out


def _row(n: int, text: str, fmt: ResultFormat) -> ResultRow:
    try:
        data = json.loads(text)
    except ValueError as e:
        raise _Bad(f"not JSON ({e})") from e
    if not isinstance(data, dict):
        raise _Bad("not a JSON object")
    task_id = _task_id(data, fmt)
    error = data.get("error") if fmt == "verifiers" else None
    reward = None if error else _reward(data.get("reward"))
    return ResultRow(n, task_id, _messages(data.get("prompt"), "user", "prompt"),
                     _messages(data.get("completion"), "assistant", "completion"), reward,
                     _error_text(error) if error else None, data.get("is_truncated") is True)


def _task_id(data: dict[str, Any], fmt: ResultFormat) -> str:
    info = data.get("info")
    if isinstance(info, str):  # older verifiers versions kept info as JSON text
        try:
            info = json.loads(info)
        except ValueError:
            info = None
    from_info = info.get("task_id") if isinstance(info, dict) else None
    task_id = data.get("task_id") if fmt == "trl" else from_info
    task_id = task_id if task_id is not None else from_info if fmt == "trl" else data.get("task_id")
    if not isinstance(task_id, str) or not task_id:
        where = "info.task_id" if fmt == "verifiers" else "a task_id column"
        raise _Bad(f"no task id ({where}): was the sample from an environment `tracegym tasks export` wrote?")
    return task_id


def _reward(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _Bad(f"reward {value!r} is not a finite number")
    return float(value)


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error.get("error") or json.dumps(error))[:2000]
    return str(error)[:2000]


def _messages(value: Any, role: str, name: str) -> list[Message]:
    """Chat messages in OpenAI form; plain text is one message of `role`."""
    if isinstance(value, str):
        return [{"role": role, "content": value}]
    if not isinstance(value, list):
        raise _Bad(f"{name} is neither text nor a list of messages")
    out = []
    for i, m in enumerate(value):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise _Bad(f"{name}[{i}] is not a chat message with a role")
        message = dict(m)
        if message.get("tool_calls"):
            message["tool_calls"] = [_openai_call(c, f"{name}[{i}]") for c in message["tool_calls"]]
        out.append(message)
    return out


def _openai_call(call: Any, where: str) -> dict[str, Any]:
    """A tool call in OpenAI form ({"id", "type", "function": {"name", "arguments"}}); verifiers writes them flat."""
    if not isinstance(call, dict):
        raise _Bad(f"{where} has a tool call that is not an object")
    nested = call.get("function")
    function: dict[str, Any] = nested if isinstance(nested, dict) else call
    name, arguments = function.get("name"), function.get("arguments")
    if not isinstance(name, str):
        raise _Bad(f"{where} has a tool call without a name")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
    return {"id": call.get("id"), "type": "function", "function": {"name": name, "arguments": arguments}}
