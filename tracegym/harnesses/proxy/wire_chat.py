"""The OpenAI chat-completions wire format, as the proxy speaks it: requests in, replies and stream chunks out.

Only what an agent's client needs is read from a request (messages, tools, tool_choice, the token cap,
stop sequences, streaming); sampling parameters the agent sets (temperature, top_p, seed, ...) are not
honoured, since the run's own sampling is what the token record and the trainer assume, and their names
are reported instead.
A reply's tool calls are parsed from the model's text (`tracegym.harnesses.toolcalls`) and returned as
structured `tool_calls`, as an OpenAI endpoint returns them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tracegym.episodes.record import Message
from tracegym.harnesses.base import visible_text
from tracegym.harnesses.toolcalls import ParseResult, parse_tool_calls

_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
# Parameters an agent may send that change how tokens are drawn; the run's sampling overrides them.
SAMPLING_PARAMS = ("temperature", "top_p", "top_k", "seed", "presence_penalty", "frequency_penalty",
                   "logit_bias", "min_p", "repetition_penalty")
_MAX_STOPS = 4  # OpenAI's limit


class ProxyError(Exception):
    """A request the proxy answers with an OpenAI-style error body instead of a completion."""

    def __init__(self, status: int, message: str, code: str | None = None, kind: str = "invalid_request_error"):
        super().__init__(message)
        self.status, self.message, self.code, self.kind = status, message, code, kind

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": None, "code": self.code}}


@dataclass(frozen=True)
class ChatRequest:
    """What the proxy reads from one /v1/chat/completions body."""

    messages: list[Message]
    tools: list[dict[str, Any]] | None = None
    parse_tools: bool = True
    """False when tool_choice is 'none': the reply is returned as text."""
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    """Stop sequences: the reply ends before the first one the model writes (and its token record there)."""
    stream: bool = False
    include_usage: bool = False
    ignored: tuple[str, ...] = field(default_factory=tuple)
    """Sampling parameters the request set and the proxy did not honour."""


def parse_request(body: Any) -> ChatRequest:
    """Validate a request body; a `ProxyError` (HTTP 400) says what is wrong."""
    if not isinstance(body, dict):
        raise ProxyError(400, "the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ProxyError(400, "'messages' must be a non-empty list", "invalid_messages")
    for i, message in enumerate(messages):
        _check_message(i, message)
    if body.get("n", 1) != 1:
        raise ProxyError(400, "the proxy returns one choice per call; n must be 1", "unsupported_n")
    tools = body.get("tools") or None
    if tools is not None and (not isinstance(tools, list)
                              or any(not isinstance(t, dict) or t.get("type") != "function" for t in tools)):
        raise ProxyError(400, "'tools' must be a list of {\"type\": \"function\", ...} objects", "invalid_tools")
    cap = body.get("max_completion_tokens", body.get("max_tokens"))
    if cap is not None and (not isinstance(cap, int) or isinstance(cap, bool) or cap < 1):
        raise ProxyError(400, "max_tokens / max_completion_tokens must be a positive integer", "invalid_max_tokens")
    stop = body.get("stop")
    stops = (stop,) if isinstance(stop, str) else tuple(stop) if isinstance(stop, list) else None
    stops = () if stop is None else stops
    if stops is None or len(stops) > _MAX_STOPS or any(not isinstance(s, str) or not s for s in stops):
        raise ProxyError(400, f"'stop' must be a non-empty string or a list of at most {_MAX_STOPS} of them",
                         "invalid_stop")
    options = body.get("stream_options") or {}
    if not isinstance(options, dict):
        raise ProxyError(400, "'stream_options' must be an object", "invalid_stream_options")
    return ChatRequest(
        messages=messages, tools=tools, parse_tools=tools is not None and body.get("tool_choice") != "none",
        max_tokens=cap, stop=stops, stream=bool(body.get("stream")), include_usage=bool(options.get("include_usage")),
        ignored=tuple(p for p in SAMPLING_PARAMS if body.get(p) is not None),
    )


def _check_message(i: int, message: Any) -> None:
    """The shape the session reads a message in: a bad one is the agent's error (400), not a failed episode."""
    if not isinstance(message, dict) or message.get("role") not in _ROLES:
        raise ProxyError(400, f"messages[{i}] needs a role among {', '.join(sorted(_ROLES))}", "invalid_messages")
    content = message.get("content")
    if not (content is None or isinstance(content, str)
            or (isinstance(content, list) and all(isinstance(p, dict) for p in content))):
        raise ProxyError(400, f"messages[{i}].content must be a string, a list of content parts or null",
                         "invalid_messages")
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list) or not all(isinstance(c, dict) and isinstance(c.get("function") or {}, dict)
                                              for c in calls):
        raise ProxyError(400, f"messages[{i}].tool_calls must be a list of {{\"function\": {{...}}}} objects",
                         "invalid_messages")


@dataclass(frozen=True)
class AssistantReply:
    """The model's reply as an OpenAI assistant message, and what parsing it found."""

    message: Message
    finish_reason: str
    parsed: ParseResult


def assistant_reply(text: str, finish_reason: str, request: ChatRequest, call_prefix: str,
                    structured_calls: Sequence[dict[str, Any]] = ()) -> AssistantReply:
    """The assistant message for `text`: tool calls structured when the request offered tools.

    A malformed call leaves the raw text as the content (the agent sees what the model wrote); calls from an
    endpoint that returned them structured are kept as they came.
    """
    if not request.parse_tools:
        return AssistantReply({"role": "assistant", "content": text}, _finish(finish_reason), ParseResult())
    parsed = parse_tool_calls(text, list(structured_calls), request.tools)
    content = text if parsed.errors or not parsed.calls else visible_text(text, parsed)
    message: Message = {"role": "assistant", "content": content}
    if parsed.calls:
        message["tool_calls"] = [
            {"id": call.id or f"{call_prefix}_{i}", "type": "function",
             "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)}}
            for i, call in enumerate(parsed.calls)
        ]
        return AssistantReply(message, "tool_calls", parsed)
    return AssistantReply(message, _finish(finish_reason), parsed)


def _finish(reason: str) -> str:
    return "length" if reason == "length" else "stop"


def chat_completion(completion_id: str, model: str, reply: AssistantReply, prompt_tokens: int,
                    completion_tokens: int) -> dict[str, Any]:
    """A `chat.completion` response body."""
    return {
        "id": completion_id, "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": reply.message, "finish_reason": reply.finish_reason, "logprobs": None}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def stream_chunks(completion: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """The `chat.completion.chunk` events that stream `completion`: the whole message in one delta, then the
    finish reason, then (when asked) the usage."""
    head = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    choice = completion["choices"][0]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
    chunks = [
        {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None, "logprobs": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"], "logprobs": None}]},
    ]
    if include_usage:
        chunks.append({**head, "choices": [], "usage": completion["usage"]})
    return chunks


def models_list(model: str) -> dict[str, Any]:
    """The GET /v1/models body: the one model the proxy serves."""
    return {"object": "list", "data": [{"id": model, "object": "model", "created": 0, "owned_by": "tracegym"}]}


def same_message(sent: Message, known: Message) -> bool:
    """Whether a message the agent sent is one the conversation already holds, up to serialisation.

    Clients re-send what they were given in their own form: content None or "", content parts, extra null
    fields (refusal, audio), tool-call arguments re-encoded. Those do not count as a rewrite; anything
    else (another text, another call, another role) does.
    """
    return _canonical(sent) == _canonical(known)


def _canonical(message: Message) -> tuple[Any, ...]:
    calls = tuple(
        (c.get("id"), (c.get("function") or {}).get("name"), _arguments((c.get("function") or {}).get("arguments")))
        for c in message.get("tool_calls") or []
    )
    return message.get("role"), _text(message.get("content")), calls, message.get("tool_call_id")


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def _arguments(raw: Any) -> str:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return raw
    return json.dumps(raw, sort_keys=True)
