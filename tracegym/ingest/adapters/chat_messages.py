"""OpenAI-style chat message lists, which many formats embed (τ-bench, mini-swe-agent, Langfuse)."""

from __future__ import annotations

from typing import Any

from tracegym.ingest.normalize import content_text, normalize_role, opt_int, parse_arguments
from tracegym.ingest.records import Message, ToolCall, Trace


def append_openai_messages(trace: Trace, messages: Any, where: str = "messages") -> None:
    """Append OpenAI Chat Completions messages (with `tool_calls`) to `trace`."""
    if not isinstance(messages, list):
        raise ValueError(f"{where} must be a list, got {type(messages).__name__}")
    for i, raw in enumerate(messages):
        if not isinstance(raw, dict):
            raise ValueError(f"{where}[{i}] must be an object, got {type(raw).__name__}")
        append_openai_message(trace, raw, f"{where}[{i}]")


def append_openai_message(trace: Trace, raw: dict[str, Any], where: str) -> Message:
    role = normalize_role(raw.get("role"))
    content = content_text(raw.get("content"))
    if content is None and isinstance(raw.get("refusal"), str):
        content = raw["refusal"]
    usage = raw.get("usage") if isinstance(raw.get("usage"), dict) else {}
    msg = Message(
        role=role,
        content=content,
        tool_call_id=_opt_str(raw.get("tool_call_id"), f"{where}.tool_call_id"),
        name=_opt_str(raw.get("name"), f"{where}.name"),
        input_tokens=opt_int(usage.get("prompt_tokens", usage.get("input_tokens"))),
        output_tokens=opt_int(usage.get("completion_tokens", usage.get("output_tokens"))),
    )
    idx = len(trace.messages)
    trace.messages.append(msg)
    calls = raw.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise ValueError(f"{where}.tool_calls must be a list")
        for j, call in enumerate(calls):
            trace.tool_calls.append(openai_tool_call(call, idx, f"{where}.tool_calls[{j}]"))
    legacy = raw.get("function_call")
    if isinstance(legacy, dict):
        trace.tool_calls.append(openai_tool_call({"function": legacy}, idx, f"{where}.function_call"))
    return msg


def openai_tool_call(call: Any, message_idx: int, where: str) -> ToolCall:
    """`{id, type, function: {name, arguments}}`, or the flat `{id, name, arguments}` variant."""
    if not isinstance(call, dict):
        raise ValueError(f"{where} must be an object")
    fn = call.get("function") if isinstance(call.get("function"), dict) else call
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where} has no function name")
    return ToolCall(
        message_idx=message_idx,
        call_id=_opt_str(call.get("id"), f"{where}.id"),
        name=name,
        arguments=parse_arguments(fn.get("arguments", fn.get("input"))),
    )


def _opt_str(value: Any, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"{where} must be a string, got {type(value).__name__}")
