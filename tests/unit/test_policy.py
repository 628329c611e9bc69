"""Policy clients: the batching HF client over the engine, and the OpenAI-compatible client against a local server."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import torch
from pydantic import TypeAdapter, ValidationError

from tracegym.errors import ModelError
from tracegym.harnesses.chat_template import ChatRenderer
from tracegym.harnesses.policy import (
    HFPolicy,
    HFPolicyConfig,
    OpenAIPolicy,
    OpenAIPolicyConfig,
    PolicyConfig,
    PolicyRequest,
    make_policy,
)
from tracegym.harnesses.toolcalls import parse_tool_calls
from tracegym.models.sampling import SamplingEngine, SamplingParams
from tracegym.models.tiny import tiny_policy

PARAMS = SamplingParams(top_p=0.9, max_new_tokens=12)


@pytest.fixture(scope="module")
def policy():
    return tiny_policy(seed=0)


def hf_client(policy, **kwargs) -> HFPolicy:
    model, tokenizer = policy
    return HFPolicy(SamplingEngine(model, eos_token_ids=[tokenizer.eos_token_id], **kwargs), tokenizer)


def chat_ids(tokenizer, text: str) -> list[int]:
    return ChatRenderer(tokenizer).ids([{"role": "user", "content": text}])


def test_concurrent_episodes_are_batched_and_keep_the_exact_record(policy):
    model, tokenizer = policy
    prompts = [chat_ids(tokenizer, f"Question number {i}?" + " more" * i) for i in range(6)]

    async def episodes(client: HFPolicy):
        # Six episodes asking at the same time, one request each, as a harness would.
        results = await asyncio.gather(
            *(client.generate([PolicyRequest(PARAMS, prompt_ids=p, seed=i)]) for i, p in enumerate(prompts))
        )
        await client.aclose()
        return [r[0] for r in results]

    client = hf_client(policy, sampler_id="hf-test", policy_version=3)
    completions = asyncio.run(episodes(client))
    assert client.batches_run < len(prompts)
    direct = SamplingEngine(model, eos_token_ids=[tokenizer.eos_token_id]).generate(prompts, PARAMS, seeds=range(6))
    for completion, seq in zip(completions, direct, strict=True):
        assert completion.prompt_ids == seq.prompt_ids and completion.completion_ids == seq.completion_ids
        torch.testing.assert_close(completion.logprobs, seq.logprobs, atol=2e-4, rtol=0)
        assert completion.support.ids.tolist() == seq.support.ids.tolist()
        assert (completion.sampler_id, completion.policy_version) == ("hf-test", 3)
        assert completion.text == tokenizer.decode(seq.completion_ids, skip_special_tokens=False)


def test_messages_are_rendered_with_the_chat_template_and_params_grouped(policy):
    _, tokenizer = policy
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    requests = [
        PolicyRequest(PARAMS, messages=messages, seed=1),
        PolicyRequest(SamplingParams(top_k=3, max_new_tokens=5), messages=messages, seed=1),
    ]

    async def run(client: HFPolicy):
        out = await client.generate(requests)
        await client.aclose()
        return out

    client = hf_client(policy)
    first, second = asyncio.run(run(client))
    assert first.prompt_ids == second.prompt_ids == ChatRenderer(tokenizer).ids(messages)
    assert len(second.completion_ids) == 5 and int(second.support.sizes.max()) <= 3
    assert client.batches_run == 2


def test_engine_errors_reach_the_caller_and_the_batcher_keeps_serving(policy):
    async def run(client: HFPolicy):
        with pytest.raises(ModelError, match="outside the vocabulary"):
            await client.generate([PolicyRequest(PARAMS, prompt_ids=[1, 10**7])])
        ok = await client.generate([PolicyRequest(PARAMS, prompt_ids=[1, 2, 3], seed=0)])
        await client.aclose()
        return ok

    assert len(asyncio.run(run(hf_client(policy)))[0].completion_ids) > 0


def test_the_event_loop_stays_free_while_the_model_decodes(policy):
    async def run(client: HFPolicy):
        ticks = 0
        done = asyncio.Event()

        async def ticker():
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.001)

        task = asyncio.create_task(ticker())
        request = PolicyRequest(SamplingParams(top_k=5, max_new_tokens=200), prompt_ids=[1, 2, 3], seed=0)
        await client.generate([request] * 8)
        done.set()
        await task
        await client.aclose()
        return ticks

    assert asyncio.run(run(hf_client(policy))) > 5


class _Server:
    """A tiny OpenAI-compatible endpoint on 127.0.0.1 that replays canned replies and records requests."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict, dict]] = []
        self.replies: list[tuple[int, dict | str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append((body, dict(self.headers)))
                status, reply = server.replies.pop(0)
                data = (reply if isinstance(reply, str) else json.dumps(reply)).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def server():
    s = _Server()
    yield s
    s.close()


def reply(content: str | None, tool_calls: list | None = None, logprobs: list | None = None) -> dict:
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": content, "tool_calls": tool_calls},
        "finish_reason": "tool_calls" if tool_calls else "stop",
        "logprobs": {"content": logprobs} if logprobs else None,
    }
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "m", "choices": [choice]}


def call_openai(config: OpenAIPolicyConfig, requests: list[PolicyRequest]):
    async def run():
        client = OpenAIPolicy(config)
        try:
            return await client.generate(requests)
        finally:
            await client.aclose()

    return asyncio.run(run())


def test_openai_request_body_and_reply_with_tool_calls(server, monkeypatch):
    monkeypatch.setenv("TEST_API_KEY", "sk-test")
    tool_call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    server.replies.append((200, reply(None, tool_calls=[tool_call])))
    config = OpenAIPolicyConfig(
        base_url=server.url, model="gpt-x", api_key_env="TEST_API_KEY", top_logprobs=2, extra_body={"user": "t"}
    )
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    params = SamplingParams(temperature=0.5, top_p=0.9, max_new_tokens=50)
    [completion] = call_openai(config, [PolicyRequest(params, messages=messages, tools=tools, seed=7)])
    body, headers = server.requests[0]
    assert body == {
        "model": "gpt-x",
        "messages": messages,
        "temperature": 0.5,
        "top_p": 0.9,
        "max_tokens": 50,
        "tools": tools,
        "seed": 7,
        "logprobs": True,
        "top_logprobs": 2,
        "user": "t",
    }
    assert headers["Authorization"] == "Bearer sk-test"
    assert completion.text == "" and completion.finish_reason == "tool_calls" and completion.completion_ids is None
    assert [c.arguments for c in parse_tool_calls(completion.text, completion.tool_calls).calls] == [{"city": "Paris"}]


def test_openai_logprobs_and_token_ids_when_the_server_sends_them(server):
    entries = [
        {
            "token": "token_id:17",
            "logprob": -0.1,
            "top_logprobs": [{"token": "token_id:17", "logprob": -0.1}, {"token": "token_id:4", "logprob": -2.5}],
        },
        {
            "token": "token_id:2",
            "logprob": -0.3,
            "top_logprobs": [{"token": "token_id:2", "logprob": -0.3}, {"token": "token_id:9", "logprob": -1.5}],
        },
    ]
    body = reply("Hi", logprobs=entries) | {"prompt_token_ids": [1, 5, 6]}
    server.replies.append((200, body))
    [c] = call_openai(
        OpenAIPolicyConfig(base_url=server.url, model="m", api_key_env=None, top_logprobs=2),
        [PolicyRequest(messages=[{"role": "user", "content": "hi"}])],
    )
    assert "Authorization" not in server.requests[0][1]
    assert (c.text, c.prompt_ids, c.completion_ids) == ("Hi", [1, 5, 6], [17, 2])
    torch.testing.assert_close(c.logprobs, torch.tensor([-0.1, -0.3]))
    assert c.support.kind == "head" and c.support.ids.tolist() == [17, 4, 2, 9]
    assert c.support.offsets.tolist() == [0, 2, 4]


def test_openai_plain_text_logprobs_have_no_ids(server):
    entries = [{"token": "Hi", "logprob": -0.2, "top_logprobs": [{"token": "Hi", "logprob": -0.2}]}]
    server.replies.append((200, reply("Hi", logprobs=entries)))
    [c] = call_openai(
        OpenAIPolicyConfig(base_url=server.url, model="m", api_key_env=None),
        [PolicyRequest(messages=[{"role": "user", "content": "hi"}])],
    )
    assert c.completion_ids is None and c.support is None
    torch.testing.assert_close(c.logprobs, torch.tensor([-0.2]))


def test_openai_retries_server_errors_but_not_client_errors(server):
    server.replies += [(503, {"error": "busy"}), (200, reply("ok"))]
    config = OpenAIPolicyConfig(base_url=server.url, model="m", api_key_env=None, max_retries=1)
    request = PolicyRequest(messages=[{"role": "user", "content": "hi"}])
    assert call_openai(config, [request])[0].text == "ok" and len(server.requests) == 2
    server.replies.append((400, {"error": {"message": "bad top_k"}}))
    with pytest.raises(ModelError, match="HTTP 400.*bad top_k"):
        call_openai(config, [request])
    assert len(server.requests) == 3


def test_openai_unreachable_endpoint_and_token_only_requests_are_errors():
    with socket.socket() as sock:  # a port that was free a moment ago and has nobody listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = OpenAIPolicyConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m", api_key_env=None, max_retries=0)
    with pytest.raises(ModelError, match="could not reach"):
        call_openai(config, [PolicyRequest(messages=[{"role": "user", "content": "hi"}])])
    with pytest.raises(ModelError, match="needs messages"):
        call_openai(config, [PolicyRequest(prompt_ids=[1, 2])])


def test_policy_configs_are_a_discriminated_union():
    adapter = TypeAdapter(PolicyConfig)
    config = adapter.validate_python({"type": "openai", "model": "m", "base_url": "http://127.0.0.1:1/v1"})
    client = make_policy(config)
    assert isinstance(config, OpenAIPolicyConfig) and isinstance(client, OpenAIPolicy)
    asyncio.run(client.aclose())
    assert isinstance(adapter.validate_python({"type": "hf"}), HFPolicyConfig)
    with pytest.raises(ValidationError):
        adapter.validate_python({"type": "hf", "modle": "x"})
