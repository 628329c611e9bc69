"""A scripted OpenAI-compatible chat server on 127.0.0.1, for driving real telemetry libraries in tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CALL_ARGS = {"city": "Paris"}
TOOL_RESULT = "18C and sunny"
FINAL_TEXT = "It is 18C and sunny in Paris."
USAGE = [(31, 12), (58, 9)]  # (prompt, completion) tokens of the first and second reply


def _reply(n: int, model: str) -> dict[str, Any]:
    prompt, completion = USAGE[min(n, 1)]
    if n == 0:
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call_weather_1", "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps(CALL_ARGS)}}]}
        finish = "tool_calls"
    else:
        message, finish = {"role": "assistant", "content": FINAL_TEXT}, "stop"
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1735725600 + n, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}}


@contextmanager
def fake_openai() -> Iterator[str]:
    """Serve /v1/chat/completions: a get_weather tool call, then the final answer (per conversation length)."""
    requests: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            requests.append(body)
            n = sum(1 for m in body.get("messages", []) if m.get("role") == "tool")
            data = json.dumps(_reply(n, body.get("model", "gpt-test"))).encode()
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
