"""The OpenAI Responses API (`POST /v1/responses`, the Agents SDK's default), as the proxy speaks it.

A Responses request is read as the chat request it amounts to (`instructions` become the system message;
`input` items become chat messages: a `function_call` joins the assistant message before it as a tool call,
a `function_call_output` becomes a tool message; `reasoning` items are dropped), so the session answers it as
any other call, with the same stitching and token record. The reply's chat message is written back as
output items: a `message` with its text (when it has any), then one `function_call` per tool call, whose
`call_id` is the chat tool call's id: when the agent sends those items back, they read as the very message
the conversation holds, and the call extends it.

The proxy keeps no responses: a request naming `previous_response_id` or a `conversation` is refused
(the client must send the whole input, as the Agents SDK does by default).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from tracegym.episodes.record import Message
from tracegym.harnesses.proxy.wire_chat import ChatRequest, ProxyError, parse_request

_TEXT_PARTS = frozenset({"input_text", "output_text", "text", "refusal"})
_PASSED_ON = ("tool_choice", "temperature", "top_p", "seed")


def parse_responses_request(body: Any) -> ChatRequest:
    """A /v1/responses body as a chat request; a `ProxyError` (400) says what cannot be served."""
    if not isinstance(body, dict):
        raise ProxyError(400, "the request body must be a JSON object")
    for key in ("previous_response_id", "conversation"):
        if body.get(key):
            raise ProxyError(400, f"the proxy keeps no responses, so '{key}' cannot be served: send the whole "
                                  "conversation as input (the Agents SDK does unless told otherwise)",
                             "unsupported_parameter")
    messages = [{"role": "system", "content": body["instructions"]}] if body.get("instructions") else []
    messages += _messages(body.get("input"))
    chat: dict[str, Any] = {"messages": messages, **{k: body[k] for k in _PASSED_ON if k in body}}
    if body.get("tools"):
        chat["tools"] = [_tool(t) for t in body["tools"]]
    if body.get("max_output_tokens") is not None:
        chat["max_tokens"] = body["max_output_tokens"]
    request = parse_request(chat)
    return ChatRequest(request.messages, request.tools, request.parse_tools, request.max_tokens, request.stop,
                       bool(body.get("stream")), False, request.ignored)


def _messages(items: Any) -> list[Message]:
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    if not isinstance(items, list):
        raise ProxyError(400, "'input' must be a string or a list of items", "invalid_input")
    out: list[Message] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise ProxyError(400, f"input[{i}] must be an object", "invalid_input")
        kind = item.get("type", "message")
        if kind == "message":
            out.append({"role": item.get("role"), "content": _text(i, item.get("content"))})
        elif kind == "function_call":
            call = {"id": item.get("call_id"), "type": "function",
                    "function": {"name": item.get("name"), "arguments": item.get("arguments")}}
            if out and out[-1].get("role") == "assistant" and _joinable(items, i):
                out[-1].setdefault("tool_calls", []).append(call)
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            out.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": _text(i, item.get("output"))})
        elif kind != "reasoning":  # reasoning items carry no text the model is shown again
            raise ProxyError(400, f"input[{i}] is a {kind!r} item; the proxy serves messages, function calls and "
                                  "their outputs", "unsupported_input")
    return out


def _joinable(items: list[Any], i: int) -> bool:
    """Whether the function call at `i` follows the assistant message (or call) it belongs with."""
    before = items[i - 1] if i else None
    return isinstance(before, dict) and (before.get("type") == "function_call"
                                         or (before.get("type", "message") == "message"
                                             and before.get("role") == "assistant"))


def _text(i: int, content: Any) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):
        kinds = {p.get("type") for p in content} - _TEXT_PARTS
        if not kinds:
            return "".join(p.get("text") or p.get("refusal") or "" for p in content)
    raise ProxyError(400, f"input[{i}] holds content other than text; the proxy serves text", "unsupported_input")


def _tool(tool: Any) -> dict[str, Any]:
    if not isinstance(tool, dict) or tool.get("type") != "function":
        kind = tool.get("type") if isinstance(tool, dict) else type(tool).__name__
        raise ProxyError(400, f"a {kind!r} tool cannot be served: the proxy's model calls function tools only",
                         "invalid_tools")
    function = {k: tool[k] for k in ("name", "description", "parameters", "strict") if k in tool}
    return {"type": "function", "function": function}


def response_body(completion: dict[str, Any]) -> dict[str, Any]:
    """The `response` object for a chat.completion body."""
    choice = completion["choices"][0]
    message = choice["message"]
    output: list[dict[str, Any]] = []
    if message.get("content"):
        output.append({"id": f"msg_{uuid.uuid4().hex}", "type": "message", "role": "assistant",
                       "status": "completed",
                       "content": [{"type": "output_text", "text": message["content"], "annotations": []}]})
    for call in message.get("tool_calls") or []:
        output.append({"id": f"fc_{call['id']}", "type": "function_call", "call_id": call["id"],
                       "name": call["function"]["name"], "arguments": call["function"]["arguments"],
                       "status": "completed"})
    usage = completion["usage"]
    cut = choice["finish_reason"] == "length"
    return {
        "id": f"resp_{uuid.uuid4().hex}", "object": "response", "created_at": int(time.time()),
        "model": completion["model"], "status": "incomplete" if cut else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None, "error": None,
        "instructions": None, "metadata": {}, "output": output, "parallel_tool_calls": True,
        "temperature": None, "top_p": None, "tool_choice": "auto", "tools": [],
        "usage": {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"],
                  "total_tokens": usage["total_tokens"],
                  "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    }


def response_events(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The server-sent events that stream `response`: created, each output item added and done, completed."""
    started = {**response, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": started}]
    for index, item in enumerate(response["output"]):
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    done = "response.completed" if response["status"] == "completed" else "response.incomplete"
    events.append({"type": done, "response": response})
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]
