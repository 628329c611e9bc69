"""A scripted model server on 127.0.0.1 (OpenAI chat and Responses, Anthropic Messages), for driving real
client and telemetry libraries in tests.

Its script: a conversation whose last message is the user's gets a get_weather call for the city the user
named last (the last word of their text); one whose last message is a tool result gets the final answer.
`refund_chat` is a second chat script, of three calls: lookup_order, issue_refund, then an answer that says
whether the refund went through.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CALL_ARGS = {"city": "Paris"}
TOOL_RESULT = "18C and sunny"
FINAL_TEXT = "It is 18C and sunny in Paris."
USAGE = [(31, 12), (58, 9)]  # (prompt, completion) tokens of a tool-call reply and of a final answer
CHECKING = "Let me check."  # the text a Responses reply gives beside its call


def final_text(city: str) -> str:
    return f"Here is the weather in {city}." if city != "Paris" else FINAL_TEXT


def _city(text: str) -> str:
    return text.split()[-1].strip("?!.")


def _chat(n: int, body: dict[str, Any]) -> dict[str, Any]:
    messages = body.get("messages", [])
    calls = sum(1 for m in messages if m.get("role") == "tool")
    if messages and messages[-1].get("role") == "user":
        prompt, completion = USAGE[0]
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_weather_{calls + 1}", "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": _city(messages[-1]["content"])})}}]}
        finish = "tool_calls"
    else:
        prompt, completion = USAGE[1]
        user = next(m["content"] for m in reversed(messages) if m.get("role") == "user")
        message, finish = {"role": "assistant", "content": final_text(_city(user))}, "stop"
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1735725600 + n,
            "model": body.get("model", "gpt-test"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}}


ORDER_ARGS = {"order_id": "A-17"}
ORDER_RESULT = '{"order_id": "A-17", "status": "delivered", "total": 42.5}'
REFUND_ARGS = {"order_id": "A-17", "amount": 42.5}
REFUND_USAGE = [(64, 15), (96, 21), (131, 17)]  # (prompt, completion) tokens of the refund script's three calls
REFUNDED = "Order A-17 is refunded: 42.50 is on its way."
NOT_REFUNDED = "I could not refund order A-17: the refund service timed out. Please try again later."


def refund_chat(n: int, body: dict[str, Any]) -> dict[str, Any]:
    """The refund script: the user's request gets lookup_order, its result issue_refund, and issue_refund's
    result the answer (NOT_REFUNDED when that result is not the tool's success, `{"refunded": ...}`)."""
    messages = body.get("messages", [])
    step = sum(1 for m in messages if m.get("role") == "tool")
    (prompt, completion), finish = REFUND_USAGE[min(step, 2)], "tool_calls"
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if step < 2:
        name, args = ("lookup_order", ORDER_ARGS) if step == 0 else ("issue_refund", REFUND_ARGS)
        message["tool_calls"] = [{"id": f"call_{name}_{step + 1}", "type": "function",
                                  "function": {"name": name, "arguments": json.dumps(args)}}]
    else:
        refunded = str(messages[-1].get("content")).startswith('{"refunded"')
        message["content"], finish = REFUNDED if refunded else NOT_REFUNDED, "stop"
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1735725600 + n,
            "model": body.get("model", "gpt-test"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}}


def _user_text(content: Any) -> str | None:
    """An Anthropic user turn's text, None for a turn of tool results."""
    if isinstance(content, str):
        return content
    texts = [b["text"] for b in content if b.get("type") == "text"]
    return texts[-1] if texts and not any(b.get("type") == "tool_result" for b in content) else None


def _messages(n: int, body: dict[str, Any]) -> dict[str, Any]:
    messages = body["messages"]
    users = [t for m in messages if m["role"] == "user" and (t := _user_text(m["content"])) is not None]
    calls = sum(1 for m in messages if m["role"] == "assistant" for b in m["content"] if b.get("type") == "tool_use")
    if messages[-1]["role"] == "user" and _user_text(messages[-1]["content"]) is not None:
        (prompt, completion), stop = USAGE[0], "tool_use"
        content = [{"type": "tool_use", "id": f"toolu_{calls + 1}", "name": "get_weather",
                    "input": {"city": _city(users[-1])}}]
    else:
        (prompt, completion), stop = USAGE[1], "end_turn"
        content = [{"type": "text", "text": final_text(_city(users[-1]))}]
    return {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": body.get("model", "claude-test"),
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": prompt, "output_tokens": completion}}


def _responses(n: int, body: dict[str, Any]) -> dict[str, Any]:
    items = body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}]
    users = [i["content"] for i in items if i.get("role") == "user"]
    if items[-1].get("role") == "user":
        (prompt, completion), calls = USAGE[0], sum(1 for i in items if i.get("type") == "function_call")
        output = [_output_text(n, CHECKING), {
            "type": "function_call", "id": f"fc_{n}", "call_id": f"call_weather_{calls + 1}", "name": "get_weather",
            "arguments": json.dumps({"city": _city(users[-1])}), "status": "completed"}]
    else:
        (prompt, completion), output = USAGE[1], [_output_text(n, final_text(_city(users[-1])))]
    return {"id": f"resp_{n}", "object": "response", "created_at": 1735725600 + n, "status": "completed",
            "model": body.get("model", "gpt-test"), "output": output, "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": body.get("tools", []), "error": None, "incomplete_details": None,
            "instructions": body.get("instructions"), "metadata": {}, "temperature": 1.0, "top_p": 1.0,
            "text": {"format": {"type": "text"}},
            "usage": {"input_tokens": prompt, "output_tokens": completion, "total_tokens": prompt + completion,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}


def _output_text(n: int, text: str) -> dict[str, Any]:
    return {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


ROUTES = {"/chat/completions": _chat, "/messages": _messages, "/responses": _responses}


@contextmanager
def fake_openai(chat: Callable[[int, dict[str, Any]], dict[str, Any]] | None = None) -> Iterator[str]:
    """Serve the script above at {url}/chat/completions, {url}/responses and {url}/messages (the url ends in
    /v1); reply ids count the server's calls. `chat` replaces the chat script: it gets the call's number and
    request body, and returns the response body."""
    routes = {**ROUTES, **({"/chat/completions": chat} if chat is not None else {})}
    requests: list[dict[str, Any]] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            route = next(f for path, f in routes.items() if self.path.split("?")[0].endswith(path))
            with lock:
                n = len(requests)
                requests.append(body)
            data = json.dumps(route(n, body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
