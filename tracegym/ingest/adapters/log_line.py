"""What an app writes on its own log line beside the call: session id, time, latency, user.

Apps that log their model calls write one JSON line per call, `{request, response}` with their own fields
beside them (`{"timestamp": ..., "session_id": ..., "latency_ms": ..., "user_id": ..., "request": ...,
"response": ...}`), or a conversation with such fields beside its `messages`. The API's request body has no
place for them, so they are read from the line itself, by the names loggers use (`SESSION_KEYS`, ...), or, for
the session id, from the field `tracegym ingest --session-key PATH` names. The OpenAI and Anthropic adapters
and the OpenAI SQL path all read them with `read_line`, so every path stores the same values.

A value of one of these names that cannot be read as what it names (a time that is no time, a latency that is
no number) is kept in the trace's metadata as written, never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tracegym.errors import ConfigError
from tracegym.ingest.field_paths import Path, get_path, parse_path
from tracegym.ingest.normalize import parse_ts

SESSION_KEYS = ("session_id", "conversation_id", "thread_id", "sessionId", "conversationId", "threadId")
TIME_KEYS = ("timestamp", "created_at", "createdAt", "time", "ts", "start_time", "startTime")
LATENCY_MS_KEYS = ("latency_ms", "duration_ms", "latencyMs", "durationMs", "elapsed_ms")
LATENCY_S_KEYS = ("latency_s", "duration_s", "elapsed_s")
USER_KEYS = ("user_id", "userId")
LINE_KEYS = (*SESSION_KEYS, *TIME_KEYS, *LATENCY_MS_KEYS, *LATENCY_S_KEYS, *USER_KEYS, "metadata")
"""Every top-level key `read_line` reads without a session key (the SQL path extracts exactly these)."""
EPOCH_FLOOR = 1e9
"""Numbers below this (2001-09-09 in epoch seconds) under a time key are durations or counters, not times."""


@dataclass(slots=True)
class LineFields:
    session_id: str | None = None
    ts: datetime | None = None
    latency_ms: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    """The user id (`user_id`), and any field above whose value could not be read, as written."""


def session_key(text: str | None) -> Path | None:
    """The `--session-key` path (`meta.conv`, `$.meta.conv`, `ids[0]`), or a ConfigError naming the fix."""
    if text is None:
        return None
    bare = text.strip()
    bare = bare[2:] if bare.startswith("$.") else bare[1:] if bare.startswith("$[") else bare
    try:
        if bare in ("", "$"):
            raise ValueError("it names the whole line, not a field of it")
        return parse_path(bare)
    except ValueError as e:
        raise ConfigError(f"--session-key {text!r}: {e}. Fix: name the field of each log line that holds the "
                          "session id, as a path such as `meta.conversation_id` or `$.meta.conversation_id`."
                          ) from None


def read_line(line: dict[str, Any], key: Path | None, request_metadata: dict[str, Any] | None = None) -> LineFields:
    """The app's fields of one log line. With `key`, the session id is the value there and nowhere else;
    without, the first of `SESSION_KEYS` on the line, in its `metadata`, or in the request's metadata."""
    out = LineFields()
    if key is not None:
        out.session_id = _id(get_path(line, key))
    else:
        metadata: dict[str, Any] = line["metadata"] if isinstance(line.get("metadata"), dict) else {}
        for where in (line, metadata, request_metadata or {}):
            out.session_id = next((v for k in SESSION_KEYS if (v := _id(where.get(k))) is not None), None)
            if out.session_id is not None:
                break
    _read_time(line, out)
    _read_latency(line, out)
    user = next((v for k in USER_KEYS if (v := _id(line.get(k))) is not None), None)
    if user is None and "request" in line:  # beside a request, `user` is the app's user, not the API field
        user = _id(line.get("user"))
    if user is not None:
        out.metadata["user_id"] = user
    return out


def _read_time(line: dict[str, Any], out: LineFields) -> None:
    key = next((k for k in TIME_KEYS if line.get(k) is not None), None)
    if key is None:
        return
    value = line[key]
    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) < EPOCH_FLOOR:
            raise ValueError("too small to be a time")
        out.ts = parse_ts(value)
    except (ValueError, OverflowError, OSError):
        out.metadata[key] = value


def _read_latency(line: dict[str, Any], out: LineFields) -> None:
    for keys, scale in ((LATENCY_MS_KEYS, 1.0), (LATENCY_S_KEYS, 1000.0)):
        key = next((k for k in keys if line.get(k) is not None), None)
        if key is None:
            continue
        value = _number(line[key])
        if value is None:
            out.metadata[key] = line[key]
        else:
            out.latency_ms = value * scale
        return


def _number(value: Any) -> float | None:
    """A finite, non-negative number, or a string that is one."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return number if 0 <= number < float("inf") else None


def _id(value: Any) -> str | None:
    """An id: a non-empty string, or an integer written as one."""
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None
