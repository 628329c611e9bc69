"""Messages as span-shaped formats record them: OpenAI-style dicts, LangChain serialized
messages, free-form inputs and outputs, all read into `Turn`s."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tracegym.ingest.normalize import normalize_role, opt_int, to_json


@dataclass(slots=True)
class CallPart:
    """A tool call requested by the model."""

    id: str | None
    name: str
    arguments: Any


@dataclass(slots=True)
class Turn:
    """One message as a span recorded it, before it joins the conversation."""

    role: str
    content: str | None
    tool_calls: list[CallPart] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool | None = None  # a tool result the format itself marks as failed
    input_tokens: int | None = None
    output_tokens: int | None = None


_LC_ROLES = {
    "HumanMessage": "user", "AIMessage": "assistant", "SystemMessage": "system",
    "ToolMessage": "tool", "FunctionMessage": "tool", "human": "user", "ai": "assistant",
    "system": "system", "tool": "tool", "function": "tool", "developer": "system",
}


def text_of(content: Any) -> str | None:
    """Text of a content value: a string, or the text parts of a part list."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, list):
        texts = [p if isinstance(p, str) else _part_text(p) for p in content]
        kept = [t for t in texts if t is not None]
        return "\n".join(kept) if kept else None
    return str(content)


def _part_text(part: Any) -> str | None:
    # Only text parts are conversation text; tool_use, image and reasoning parts are not.
    if not isinstance(part, dict) or part.get("type") not in (None, "text", "input_text", "output_text"):
        return None
    for key in ("text", "content"):
        if isinstance(part.get(key), str):
            return part[key]
    return None


def as_text(value: Any) -> str | None:
    """A tool result or other free value as text: strings as they are, the rest as JSON."""
    if value is None or isinstance(value, str):
        return value
    return to_json(value)


def message_turns(value: Any, default_role: str) -> list[Turn]:
    """Chat-like values to turns: a string, one message, a message list, or a request/response
    wrapper (`messages`, `choices`, LangChain `generations`). Messages may be OpenAI dicts,
    LangChain serialized messages (`{lc, type: constructor, id, kwargs}`) or `{type, data}`."""
    if value is None:
        return []
    if isinstance(value, str):
        return [Turn(default_role, value)]
    if isinstance(value, list):
        if value and all(isinstance(v, list) for v in value):  # LangChain batches: the first prompt
            value = value[0]
        return [t for v in value for t in message_turns(v, default_role)]
    if not isinstance(value, dict):
        raise ValueError(f"expected messages, got {type(value).__name__}")
    for key in ("messages", "generations"):
        if isinstance(value.get(key), list):
            return message_turns(value[key], default_role)
    if isinstance(value.get("choices"), list):
        first = value["choices"][0] if value["choices"] else {}
        return message_turns(first.get("message") if isinstance(first, dict) else None, default_role)
    if "message" in value and isinstance(value["message"], dict):  # a generation or choice
        return message_turns(value["message"], default_role)
    return [chat_turn(value, default_role)]


def io_turns(value: Any, role: str) -> list[Turn]:
    """A free-form input or output: messages when it holds them, else one turn of its text
    (objects as JSON, so a `{"question": ...}` input is kept, not read as an empty message)."""
    if value is None:
        return []
    if _looks_like_messages(value):
        return message_turns(value, role)
    return [Turn(role, as_text(value))]


def _looks_like_messages(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_looks_like_messages(v) for v in value)
    if not isinstance(value, dict):
        return False
    if any(isinstance(value.get(k), list) for k in ("messages", "choices", "generations")):
        return True
    return "role" in value or value.get("type") == "constructor" or isinstance(value.get("data"), dict)


def chat_turn(msg: dict[str, Any], default_role: str) -> Turn:
    """One OpenAI-style or LangChain message."""
    body, role = _lc_body(msg)
    if role is None:
        if body.get("role") is not None:
            role = normalize_role(body["role"])
        else:  # LangChain message dicts carry `type` (human/ai/...); a bare generation has none
            role = _LC_ROLES.get(body.get("type"), default_role)
    usage = body.get("usage_metadata") if isinstance(body.get("usage_metadata"), dict) else {}
    turn = Turn(
        role=role,
        content=text_of(body.get("content", body.get("text"))),
        tool_calls=_chat_tool_calls(body),
        tool_call_id=_opt_id(body.get("tool_call_id")),
        name=body.get("name") if isinstance(body.get("name"), str) else None,
        is_error=True if body.get("status") == "error" else None,  # LangChain ToolMessage.status
        input_tokens=opt_int(usage.get("input_tokens")),
        output_tokens=opt_int(usage.get("output_tokens")),
    )
    if role == "tool" and turn.tool_call_id is None:
        turn.tool_call_id = _opt_id(body.get("id"))  # OTel gen_ai.tool.message body names it `id`
    return turn


def _lc_body(msg: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    if msg.get("type") == "constructor" and isinstance(msg.get("kwargs"), dict):
        cls = str((msg.get("id") or ["?"])[-1]).removesuffix("Chunk")
        if cls == "ChatMessage":
            return msg["kwargs"], None
        if cls not in _LC_ROLES:
            raise ValueError(f"unknown LangChain message class {cls!r}")
        return msg["kwargs"], _LC_ROLES[cls]
    if isinstance(msg.get("data"), dict) and isinstance(msg.get("type"), str):
        role = _LC_ROLES.get(msg["type"])
        return msg["data"], role
    return msg, None


def _chat_tool_calls(body: dict[str, Any]) -> list[CallPart]:
    calls = body.get("tool_calls")
    if not calls and isinstance(body.get("additional_kwargs"), dict):
        calls = body["additional_kwargs"].get("tool_calls")
    if not calls:
        return []
    if not isinstance(calls, list):
        raise ValueError("tool_calls must be a list")
    out = []
    for call in calls:
        if not isinstance(call, dict):
            raise ValueError("a tool call must be an object")
        fn = call.get("function") if isinstance(call.get("function"), dict) else call
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError("a tool call has no name")
        args = fn.get("arguments", fn.get("args", fn.get("input")))
        out.append(CallPart(_opt_id(call.get("id")), name, args))
    return out


def _opt_id(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return str(value).strip()
    raise ValueError(f"an id must be a string, got {type(value).__name__}")
