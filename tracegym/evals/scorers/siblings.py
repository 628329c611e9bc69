"""Successful steps recorded by other attempts at the same source task: as references, with how much each argument
of their calls counts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tracegym.evals.scorers.call_match import value_key
from tracegym.evals.scorers.points import (
    assistant_turns,
    clean,
    message_at,
    point_at,
    same_point,
    shown_prompt,
    state_before,
)
from tracegym.evals.scorers.recorded import RecordedTrace
from tracegym.evals.scorers.trajectory import Reference, ReferenceCall, parse_arguments


def argument_weights(name: str, arguments: Any, others: Sequence[RecordedTrace]) -> dict[str, float]:
    """Per argument of a call: (1 + the successful attempts whose own successful calls of this tool used this value)
    / (1 + the attempts that called it), counting the call itself once. Only arguments weighing less than 1 are
    listed: one every other attempt agreed on, or that no other attempt's call shows, weighs 1."""
    callers = [[c.arguments for c in t.calls if c.name == name and not c.is_error and isinstance(c.arguments, dict)]
               for t in others]
    callers = [calls for calls in callers if calls]
    if not isinstance(arguments, dict) or not callers:
        return {}
    weights = {}
    for key, value in arguments.items():
        want = value_key(value)
        agree = sum(any(key in args and value_key(args[key]) == want for args in calls) for calls in callers)
        if agree < len(callers):
            weights[str(key)] = round((1 + agree) / (1 + len(callers)), 4)
    return weights


def reference_of(message: dict[str, Any], source: str, trace_id: str | None,
                 others: Sequence[RecordedTrace]) -> Reference:
    """A recorded assistant message (OpenAI form) as a reference, its calls' arguments weighed against the
    successful attempts `others` (the one that recorded it left out)."""
    judges = [t for t in others if t.trace_id != trace_id]
    calls = []
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        name, arguments = str(fn.get("name")), parse_arguments(fn.get("arguments"))
        calls.append(ReferenceCall(name, arguments, argument_weights(name, arguments, judges)))
    return Reference(source, message.get("content") or "", tuple(calls), trace_id)


def full_prompt(trace: RecordedTrace, turn: int) -> str:
    """Everything before assistant message `turn`, as `shown_prompt` compares it."""
    pos = next(p for p, m in enumerate(trace.messages) if m["idx"] == turn)
    messages = trace.openai_messages(upto=pos)
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else None
    return shown_prompt(system, messages[1:] if system is not None else messages)


def sibling_references(trace: RecordedTrace, turn: int,
                       siblings: Sequence[tuple[RecordedTrace, set[int]]]) -> list[Reference]:
    """The turns of successful attempts (each with the messages its findings point at) that stood where `trace`
    stands before `turn` (`same_point`, on the whole conversation), drew no finding and said or called something."""
    here = point_at(trace, turn, full_prompt(trace, turn))
    others = [t for t, _ in siblings]
    found = []
    for sibling, findings in siblings:
        turns = assistant_turns(sibling)
        for at in turns:
            if (state_before(sibling, at) != here.state or not clean(at, turns, findings)
                    or not same_point(here, point_at(sibling, at, full_prompt(sibling, at)))):
                continue
            message = message_at(sibling, at)
            if (message.get("content") or "").strip() or message.get("tool_calls"):
                found.append(reference_of(message, "sibling_turn", sibling.trace_id, others))
    return found
