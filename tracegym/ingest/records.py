"""The normalized records every adapter produces, whatever the source format."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]
Outcome = Literal["success", "failure"]
ScoreKind = Literal["eval", "human", "environment"]


@dataclass(slots=True)
class Message:
    role: str
    content: str | None
    tool_call_id: str | None = None
    name: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_ms: float | None = None
    ts: datetime | None = None


@dataclass(slots=True)
class ToolCall:
    message_idx: int
    call_id: str | None
    name: str
    arguments: Any  # a dict/list, or the raw string when it is not valid JSON
    result: str | None = None
    result_message_idx: int | None = None
    is_error: bool | None = None
    exit_code: int | None = None


@dataclass(slots=True)
class Score:
    name: str
    value: float | None
    label: str | None = None
    kind: str = "eval"
    comment: str | None = None


@dataclass(slots=True)
class Trace:
    trace_id: str
    format: str
    messages: list[Message] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    scores: list[Score] = field(default_factory=list)
    session_id: str | None = None
    model: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    outcome: str | None = None
    tools: list[dict[str, Any]] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class RawRecord:
    """One unit of a source file that becomes zero or more traces."""

    locator: str  # where in the file: 'line 12', '$[3]', 'trace 0af7…'
    value: Any  # the parsed JSON (or grouped spans, rows, …)
    raw: str | None = None  # the original text when cheaply available


@dataclass(slots=True)
class BadRecord:
    """Something in a source file that could not become a trace."""

    locator: str
    error: str
    raw: str
