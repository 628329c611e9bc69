"""Where a recorded conversation stands before an assistant turn, and whether two traces stood at the same point.

Task generation (`tracegym.tasks.probes`) and the `reference` scorer both look for other traces that stood
where a task stands: successful attempts at the same source task whose next turn shows what a good step was.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tracegym.evals.scorers.recorded import RecordedTrace
from tracegym.evals.scorers.tool_calls import canonical


@dataclass(frozen=True)
class Point:
    """Where a conversation stands before an assistant turn, as far as the recording can tell."""

    state: tuple[tuple[str, str], ...]
    """The successful tool calls made before (name, arguments), in order: what the tools' world has seen."""
    exchange: tuple[tuple[str, str, str | None], ...]
    """The calls made since the last user message (name, arguments, result): the failing call context."""
    shown: str
    """The prompt as the agent was shown it (system prompt and messages, call ids left out)."""


def point_at(trace: RecordedTrace, turn: int, shown: str) -> Point:
    """The point before assistant message `turn`, with the prompt as shown (see `shown_prompt`)."""
    before = [m["idx"] for m in trace.messages if m["role"] == "user" and m["idx"] < turn]
    since = before[-1] if before else -1
    return Point(state_before(trace, turn),
                 tuple((c.name, canonical_arguments(c.arguments), c.result) for c in trace.calls
                       if since < c.message_idx < turn),
                 shown)


def shown_prompt(system: str | None, messages: Iterable[dict[str, Any]]) -> str:
    """A prompt (OpenAI chat messages after the system prompt) as comparable text: roles, words and calls,
    call ids left out."""
    shown: list[Any] = [system]
    for m in messages:
        functions = [c.get("function") or {} for c in m.get("tool_calls") or []]
        calls = [(f.get("name"), canonical_arguments(f.get("arguments"))) for f in functions]
        shown.append([m.get("role"), m.get("content"), calls])
    return json.dumps(shown, ensure_ascii=False)


def state_before(trace: RecordedTrace, turn: int) -> tuple[tuple[str, str], ...]:
    """The successful calls made before message `turn`, in order."""
    return tuple((c.name, canonical_arguments(c.arguments)) for c in trace.calls
                 if c.message_idx < turn and not c.is_error)


def same_point(task: Point, other: Point) -> bool:
    """Whether another trace stood where the task stands: the same world (the same successful calls before),
    and either the same prompt as the task shows it, or the same calls since the last user message with the
    same results (the same failing call and its error), the user's own words aside: trials of one τ-bench task
    seldom word a request alike, but hit the same error in the same state."""
    return task.state == other.state and (task.shown == other.shown or (bool(task.exchange)
                                                                          and task.exchange == other.exchange))


def assistant_turns(trace: RecordedTrace) -> list[int]:
    """The message indices of the trace's assistant turns, in order."""
    return [m["idx"] for m in trace.messages if m["role"] == "assistant"]


def clean(turn: int, turns: list[int], findings: Iterable[int]) -> bool:
    """No finding between this assistant turn and the next one (the turn, its tool results, the feedback it
    drew)."""
    pos = bisect_right(turns, turn)
    end = turns[pos] if pos < len(turns) else float("inf")
    return not any(turn <= f < end for f in findings)


def message_at(trace: RecordedTrace, idx: int) -> dict[str, Any]:
    """Message `idx` of the trace in OpenAI form (an assistant turn with its tool calls)."""
    pos = next(p for p, m in enumerate(trace.messages) if m["idx"] == idx)
    return trace.openai_messages(upto=pos + 1)[pos]


def canonical_arguments(value: Any) -> str:
    """Arguments as comparable text: a JSON string parsed, 250 and 250.0 alike (as the tool_calls scorer sees)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(canonical(value), sort_keys=True, default=str)
