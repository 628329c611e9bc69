"""Helpers adapters share: roles, content flattening, times, tool-error detection."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import orjson

from tracegym import exact_json
from tracegym.ingest import reading
from tracegym.ingest.records import ToolCall, Trace
from tracegym.mining.json_errors import json_error

ROLE_ALIASES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "agent": "assistant",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
    "observation": "tool",
    "environment": "tool",
}

_TRACEBACK = re.compile(r"Traceback \(most recent call last\)|^\w+(Error|Exception): ", re.M)


def normalize_role(role: Any) -> str:
    """Map a format's role name onto system|user|assistant|tool."""
    if not isinstance(role, str):
        raise ValueError(f"role must be a string, got {type(role).__name__}")
    key = role.strip().lower()
    if key not in ROLE_ALIASES:
        raise ValueError(f"unknown role {role!r}")
    return ROLE_ALIASES[key]


def content_text(content: Any) -> str | None:
    """Flatten str / content-part lists / dicts into text (tool parts as JSON)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [_part_text(p) for p in content]
        return "\n".join(p for p in parts if p is not None)
    if isinstance(content, dict):
        return _part_text(content)
    if isinstance(content, (int, float, bool)):
        return str(content)
    raise ValueError(f"content must be text or parts, got {type(content).__name__}")


def _part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return str(part)
    for key in ("text", "content", "output_text", "input_text"):
        if isinstance(part.get(key), str):
            return part[key]
    if isinstance(part.get("content"), list):
        return content_text(part["content"])
    return to_json(part)


def to_json(value: Any) -> str:
    """Compact JSON with sorted keys, as the store keeps it (integers beyond 64 bits digit for digit)."""
    return exact_json.dumps(value)


def parse_arguments(arguments: Any) -> Any:
    """Tool-call arguments as a JSON value; an unparseable string stays a string."""
    if isinstance(arguments, str):
        try:
            return exact_json.loads(arguments) if arguments.strip() else {}
        except orjson.JSONDecodeError:
            return arguments
    return {} if arguments is None else arguments


def parse_ts(value: Any) -> datetime | None:
    """ISO-8601 strings or epoch seconds/ms/µs/ns to a naive UTC datetime."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError("timestamp must not be a boolean")
    if isinstance(value, (int, float)):
        seconds = float(value)
        while seconds > 1e11:  # ms, µs or ns since the epoch
            seconds /= 1000
        return datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None)
    if isinstance(value, str):
        text = value.strip().replace("Z", "+00:00")
        dt = datetime.fromisoformat(text)
        return dt.astimezone(UTC).replace(tzinfo=None) if dt.tzinfo else dt
    raise ValueError(f"timestamp must be a string or a number, got {type(value).__name__}")


def opt_int(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"expected a number, got {type(value).__name__}")
    return int(value)


def looks_like_error(text: str | None) -> bool:
    """Results that begin with 'Error:', carry a Python traceback or are a backend's JSON error response
    (`tracegym.mining.json_errors`: the tool_error detector reads the same ones)."""
    if not text:
        return False
    head = text.lstrip()[:200].lower()
    return (head.startswith("error:") or head.startswith("error ") or bool(_TRACEBACK.search(text))
            or json_error(text) is not None)


INT32 = (-(2**31), 2**31 - 1)


def check_storable(trace: Trace) -> None:
    """Raise ValueError for values the store cannot hold: integers beyond 32 bits, text too large for one value.

    Called at the record boundary, so such a trace becomes one bad record instead
    of failing the Arrow conversion or the insert of the whole batch later.
    """
    fields = [(f"messages[{i}].{name}", getattr(m, name)) for i, m in enumerate(trace.messages)
              for name in ("input_tokens", "output_tokens")]
    fields += [(f"tool_calls[{i}].exit_code", c.exit_code) for i, c in enumerate(trace.tool_calls)]
    for where, value in fields:
        if value is not None and not INT32[0] <= value <= INT32[1]:
            raise ValueError(f"{where} = {value} does not fit a 32-bit integer")
    for i, m in enumerate(trace.messages):
        if m.content is not None and len(m.content) > reading.MAX_RECORD_BYTES:
            raise ValueError(f"messages[{i}].content has {len(m.content)} characters, more than the "
                             f"{reading.MAX_RECORD_BYTES >> 20} MB one value may hold")


def link_tool_results(trace: Trace) -> None:
    """Attach each tool message to the call it answers, and flag errors.

    Calls are matched by id, preferring the oldest unanswered call with that id
    (some traces reuse ids); a tool message without an id answers the oldest
    unanswered call of the same name (older formats do not carry ids).
    """
    by_id = {c.call_id: c for c in trace.tool_calls if c.call_id}
    pending: list[ToolCall] = []
    for idx, msg in enumerate(trace.messages):
        pending.extend(c for c in trace.tool_calls if c.message_idx == idx)
        if msg.role != "tool":
            continue
        call = None
        if msg.tool_call_id:
            call = next((c for c in pending if c.call_id == msg.tool_call_id and c.result_message_idx is None), None)
            call = call or by_id.get(msg.tool_call_id)
        if call is None:
            call = next((c for c in pending if c.name == msg.name), None) if msg.name else None
        if call is None or call.result_message_idx is not None:
            continue
        call.result = msg.content
        call.result_message_idx = idx
        if call in pending:
            pending.remove(call)
    for call in trace.tool_calls:
        flagged = call.is_error or (call.exit_code not in (None, 0))
        call.is_error = bool(flagged or looks_like_error(call.result))

