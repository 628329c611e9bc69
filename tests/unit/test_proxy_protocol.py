"""The proxy's wire format and HTTP server: replies the `openai` types accept, requests it refuses, stitching
of calls whose history carries structured tool calls (behind a messages-only upstream endpoint)."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from tracegym.harnesses.policy import OpenAIPolicy, OpenAIPolicyConfig
from tracegym.harnesses.proxy.calls import ProxySession
from tracegym.harnesses.proxy.http_server import ProxyServer
from tracegym.harnesses.proxy.wire_chat import (
    ProxyError,
    assistant_reply,
    chat_completion,
    parse_request,
    same_message,
    stream_chunks,
)
from tracegym.harnesses.runner import EpisodeLimits
from tracegym.models.sampling import SamplingParams

openai_types = pytest.importorskip("openai.types.chat", reason="checks replies against the openai client's types")

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


class Upstream:
    """An OpenAI-compatible endpoint replaying canned assistant messages (the remote API boundary)."""

    def __init__(self, replies: list[dict]) -> None:
        self.replies, self.requests = list(replies), []
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                upstream.requests.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                choice = {"index": 0, "message": upstream.replies.pop(0), "finish_reason": "stop"}
                body = json.dumps({"choices": [choice]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def api_call(call_id: str, name: str, arguments: dict) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def request(**body):
    return parse_request({"model": "m", "messages": [{"role": "user", "content": "Oslo?"}], **body})


def test_tool_calls_in_the_text_come_back_structured_as_the_openai_client_reads_them():
    text = 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
    reply = assistant_reply(text, "stop", request(tools=[WEATHER]), "call_0")
    assert reply.finish_reason == "tool_calls" and reply.message["content"] == "Checking."
    assert reply.message["tool_calls"] == [{"id": "call_0_0", "type": "function", "function": {
        "name": "get_weather", "arguments": '{"city": "Oslo"}'}}]
    body = chat_completion("chatcmpl-1", "tracegym-policy", reply, 12, 7)
    parsed = openai_types.ChatCompletion.model_validate(body)
    assert parsed.choices[0].message.tool_calls[0].function.name == "get_weather"
    assert parsed.usage.total_tokens == 19
    chunks = [openai_types.ChatCompletionChunk.model_validate(c) for c in stream_chunks(body, include_usage=True)]
    assert chunks[0].choices[0].delta.tool_calls[0].index == 0 and chunks[1].choices[0].finish_reason == "tool_calls"
    assert chunks[2].usage.completion_tokens == 7 and chunks[2].choices == []

    unknown = assistant_reply('<tool_call>{"name": "book_taxi", "arguments": {}}</tool_call>', "stop",
                              request(tools=[WEATHER]), "call_1")
    assert "tool_calls" not in unknown.message and unknown.message["content"].startswith("<tool_call>")
    assert len(unknown.parsed.errors) == 1 and unknown.finish_reason == "stop"
    plain = assistant_reply('{"name": "get_weather", "arguments": {}}', "length", request(), "call_2")
    assert plain.message == {"role": "assistant", "content": '{"name": "get_weather", "arguments": {}}'}
    assert plain.finish_reason == "length"  # no tools offered: text stays text
    declined = assistant_reply(text, "stop", request(tools=[WEATHER], tool_choice="none"), "call_3")
    assert declined.message["content"] == text and "tool_calls" not in declined.message


def test_requests_the_proxy_refuses_and_what_it_reads():
    for body, code in [({"messages": []}, "invalid_messages"),
                       ({"messages": [{"role": "robot", "content": "x"}]}, "invalid_messages"),
                       ({"messages": [{"role": "user", "content": "x"}], "n": 2}, "unsupported_n"),
                       ({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, "invalid_max_tokens"),
                       ({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "x"}]}, "invalid_tools"),
                       ({"messages": [{"role": "user", "content": "x"}], "stop": ["a", ""]}, "invalid_stop"),
                       ({"messages": [{"role": "user", "content": "x"}], "stop": list("abcde")}, "invalid_stop"),
                       ({"messages": [{"role": "user", "content": "x"}], "stop": 3}, "invalid_stop")]:
        with pytest.raises(ProxyError) as e:
            parse_request(body)
        assert (e.value.status, e.value.code) == (400, code)
    read = request(max_completion_tokens=5, stream=True, stream_options={"include_usage": True}, temperature=0.1,
                   seed=3)
    assert (read.max_tokens, read.stream, read.include_usage, read.ignored) == (5, True, True, ("temperature", "seed"))
    assert request(stop="<end_code>").stop == ("<end_code>",) and request(stop=["a", "b"]).stop == ("a", "b")
    assert request().stop == () and "stop" not in request(stop="x").ignored  # honoured, not ignored


def test_an_echoed_message_matches_up_to_serialisation_only():
    ours = api_call("call_0_0", "get_weather", {"city": "Oslo", "days": 2})
    echoed = {"role": "assistant", "content": "", "refusal": None, "tool_calls": [
        {"id": "call_0_0", "type": "function", "function": {"name": "get_weather",
                                                            "arguments": '{"days":2,"city":"Oslo"}'}}]}
    assert same_message(echoed, ours)
    assert same_message({"role": "user", "content": [{"type": "text", "text": "Oslo?"}]},
                        {"role": "user", "content": "Oslo?"})
    assert not same_message({**echoed, "content": "I will check."}, ours)
    assert not same_message(api_call("call_0_0", "get_weather", {"city": "Bergen", "days": 2}), ours)


def test_the_server_stitches_calls_that_echo_tool_calls_and_answers_http_errors(tmp_path):
    upstream = Upstream([api_call("c1", "get_weather", {"city": "Oslo"}),
                           {"role": "assistant", "content": "Snow in Oslo."}])
    policy = OpenAIPolicy(OpenAIPolicyConfig(base_url=upstream.url, model="m", api_key_env=None, logprobs=False))
    session = ProxySession(policy, SamplingParams(max_new_tokens=8), EpisodeLimits(), 0, "tracegym-policy")
    messages = [{"role": "user", "content": "Weather in Oslo?"}]

    async def go() -> list[httpx.Response]:
        server = ProxyServer(session)
        await server.start(tmp_path / "proxy.sock")
        try:
            headers = {"Authorization": f"Bearer {server.api_key}"}  # the episode's key, as the agent sends it
            transport = httpx.AsyncHTTPTransport(uds=str(server.path))
            async with httpx.AsyncClient(base_url="http://proxy/v1", headers=headers, transport=transport) as client:
                first = await client.post("/chat/completions", json={"messages": messages, "tools": [WEATHER]})
                call = first.json()["choices"][0]["message"]
                follow = {"messages": [*messages, call, {"role": "tool", "tool_call_id": "c1", "content": "-3C"}],
                          "tools": [WEATHER]}
                data = json.dumps(follow).encode()

                async def chunked():  # a body sent with Transfer-Encoding: chunked
                    for i in range(0, len(data), 50):
                        yield data[i:i + 50]

                second = await client.post("/chat/completions", content=chunked())
                return [first, second, await client.get("/models"), await client.get("/embeddings"),
                        await client.post("/chat/completions", content=b"{not json")]
        finally:
            await server.close()
            await policy.aclose()

    try:
        first, second, models, missing, bad = asyncio.run(go())
    finally:
        upstream.close()
    assert first.status_code == 200 and first.json()["choices"][0]["finish_reason"] == "tool_calls"
    assert second.status_code == 200 and second.json()["choices"][0]["message"]["content"] == "Snow in Oslo."
    assert models.json()["data"][0]["id"] == "tracegym-policy"
    assert missing.status_code == 404 and bad.status_code == 400 and "not valid JSON" in bad.json()["error"]["message"]
    [segment] = session.segments  # the second call extended the first: one conversation
    assert [m["role"] for m in segment.messages] == ["user", "assistant", "tool", "assistant"]
    assert len(segment.turns) == 2 and session.counts.tool_calls == 1 and segment.token_record() is None
    assert upstream.requests[1]["messages"][1]["tool_calls"][0]["id"] == "c1"


def test_the_responses_api_is_read_as_chat_and_answered_as_output_items():
    from tracegym.harnesses.proxy.wire_responses import parse_responses_request, response_body, response_events

    responses = pytest.importorskip("openai.types.responses", reason="checks against the openai client's types")
    flat_tool = {"type": "function", "name": "get_weather", "parameters": WEATHER["function"]["parameters"]}
    first = parse_responses_request({"model": "m", "instructions": "Be brief.", "input": "Oslo?", "tools": [flat_tool],
                                     "max_output_tokens": 9, "temperature": 0.2, "stream": True})
    assert first.messages == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Oslo?"}]
    assert first.tools == [WEATHER] and (first.max_tokens, first.stream, first.ignored) == (9, True, ("temperature",))

    text = 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
    reply = assistant_reply(text, "stop", first, "call_0")
    body = response_body(chat_completion("chatcmpl-1", "tracegym-policy", reply, 12, 7))
    parsed = responses.Response.model_validate(body)
    message, call = parsed.output
    assert message.content[0].text == "Checking." and (call.name, call.call_id) == ("get_weather", "call_0_0")
    assert parsed.usage.input_tokens == 12 and parsed.usage.output_tokens == 7 and parsed.status == "completed"
    events = response_events(body)
    assert [e["type"] for e in events] == ["response.created", "response.output_item.added",
                                           "response.output_item.done", "response.output_item.added",
                                           "response.output_item.done", "response.completed"]
    assert responses.ResponseCompletedEvent.model_validate(events[-1]).response.id == body["id"]

    # The agent sends the output items back with the tool's output: the same assistant message, then a tool one.
    echoed = [*body["output"], {"type": "function_call_output", "call_id": "call_0_0", "output": "-3C"}]
    second = parse_responses_request({"instructions": "Be brief.", "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "Oslo?"}]}, *echoed], "tools": [flat_tool]})
    assert same_message(second.messages[2], reply.message) and len(second.messages) == 4
    assert second.messages[3] == {"role": "tool", "tool_call_id": "call_0_0", "content": "-3C"}
    for bad, code in [({"input": "x", "previous_response_id": "resp_1"}, "unsupported_parameter"),
                      ({"input": "x", "tools": [{"type": "web_search"}]}, "invalid_tools"),
                      ({"input": [{"type": "input_image", "image_url": "x"}]}, "unsupported_input")]:
        with pytest.raises(ProxyError) as e:
            parse_responses_request(bad)
        assert (e.value.status, e.value.code) == (400, code)
