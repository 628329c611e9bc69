"""Issue 24, finding 9: the proxy's HTTP server facing an untrusted agent program and other local processes.

Every test drives a real `ProxyServer` on its Unix socket over real connections: raw bytes for malformed
and slow requests, the `openai` client for the key. The policy behind it is a real messages-level client whose
endpoint refuses connections: none of these requests may reach it, and if one did, the episode would record
a policy failure the tests check is absent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tracegym.harnesses.policy import OpenAIPolicy, OpenAIPolicyConfig
from tracegym.harnesses.proxy.calls import ProxySession
from tracegym.harnesses.proxy.harness import ProxyConfig, ProxyHarness
from tracegym.harnesses.proxy.http_request import json_body
from tracegym.harnesses.proxy.http_server import ProxyServer, ProxyServerConfig
from tracegym.harnesses.runner import EpisodeJob, EpisodeLimits
from tracegym.harnesses.sandbox import SandboxProvider, Workspaces, bwrap_problem
from tracegym.models.sampling import SamplingParams
from tracegym.tasks.spec import TaskSpec

openai = pytest.importorskip("openai", reason="the agent side of these tests is the openai client (the dev extra)")

CHAT = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
MODELS = b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n"


def refusing_policy() -> OpenAIPolicy:
    """A real OpenAI-compatible client pointed at a port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return OpenAIPolicy(OpenAIPolicyConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m", api_key_env=None,
                                           logprobs=False, max_retries=0))


@contextlib.asynccontextmanager
async def serving(**config: float) -> AsyncIterator[tuple[ProxyServer, ProxySession]]:
    policy = refusing_policy()
    session = ProxySession(policy, SamplingParams(max_new_tokens=8), EpisodeLimits(), 0, "tracegym-policy")
    server = ProxyServer(session, ProxyServerConfig(**config))
    with tempfile.TemporaryDirectory(prefix="tracegym-test-proxy-") as folder:
        await server.start(Path(folder) / "proxy.sock")
        try:
            yield server, session
        finally:
            await server.close()
            await policy.aclose()


async def connect(server: ProxyServer) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_unix_connection(server.path)


def key(server: ProxyServer) -> bytes:
    return f"Authorization: Bearer {server.api_key}\r\n".encode()


def post(server: ProxyServer, body: bytes) -> bytes:
    return CHAT + key(server) + b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body


async def read_all(reader: asyncio.StreamReader, seconds: float) -> bytes:
    """What the server sent before it closed the connection (or `seconds` passed)."""
    data = b""
    with contextlib.suppress(ConnectionError, TimeoutError):
        async with asyncio.timeout(seconds):
            while chunk := await reader.read(1 << 16):
                data += chunk
    return data


async def exchange(server: ProxyServer, request: bytes, seconds: float = 5.0) -> tuple[int | None, dict | None]:
    reader, writer = await connect(server)
    writer.write(request)
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    response = await read_all(reader, seconds)
    writer.close()
    return status_and_body(response)


def status_and_body(response: bytes) -> tuple[int | None, dict | None]:
    """(None, None) when the server answered nothing."""
    if not response:
        return None, None
    head, _, body = response.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(body)


def assert_openai_error(status: int | None, body: dict | None, expected: int) -> None:
    assert status == expected, (status, body)
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert body["error"]["type"] in ("invalid_request_error", "server_error")


def test_a_lone_surrogate_is_the_agents_bad_request_not_a_policy_failure():
    lone = b'{"messages": [{"role": "user", "content": "caf\\ud800"}]}'
    in_a_key = b'{"messages": [{"role": "user", "content": "x"}], "metadata": {"\\udfff": 1}}'

    async def go() -> tuple[list[tuple[int | None, dict | None]], ProxySession]:
        async with serving() as (server, session):
            return [await exchange(server, post(server, body)) for body in (lone, in_a_key)], session

    answers, session = asyncio.run(go())
    for status, body in answers:
        assert_openai_error(status, body, 400)
        assert body["error"]["code"] == "invalid_unicode" and "surrogate" in body["error"]["message"]
    assert session.failure is None and session.calls == 0  # nothing reached the policy; the episode goes on
    assert json_body(b'"\\ud83d\\ude00"') == "\U0001f600"  # a surrogate pair is one character, and is fine


def sized(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


MALFORMED = {
    "negative Content-Length": b"Content-Length: -1\r\n\r\n",
    "negative chunk size": b"Transfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n",
    "chunk longer than its size": b"Transfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n",
    "over-long chunk-size line": b"Transfer-Encoding: chunked\r\n\r\n" + b"0" * (1 << 20) + b"1\r\nx\r\n0\r\n\r\n",
    "over-long trailer": b"Transfer-Encoding: chunked\r\n\r\n0\r\nX-T: " + b"t" * (1 << 20) + b"\r\n\r\n",
    "JSON past the parser's recursion": sized(b"[" * 100_000 + b"]" * 100_000),
    "JSON past the depth limit": sized(b'{"messages": [{"role": "user", "content": "x"}], "metadata": '
                                       + b"[" * 150 + b"]" * 150 + b"}"),
    "stream_options not an object": sized(b'{"messages": [{"role": "user", "content": "x"}], "stream_options": [1]}'),
}


@pytest.mark.parametrize(("framing", "expected"), [
    *[(name, 400) for name in MALFORMED if name != "over-long trailer"], ("over-long trailer", 431)])
def test_malformed_requests_get_a_4xx_error_body_and_the_server_keeps_serving(framing, expected):
    async def go() -> tuple[tuple[int | None, dict | None], int | None, ProxySession]:
        async with serving() as (server, session):
            answer = await exchange(server, CHAT + key(server) + MALFORMED[framing])
            after, _ = await exchange(server, MODELS + key(server) + b"\r\n")
            return answer, after, session

    (status, body), after, session = asyncio.run(go())
    assert_openai_error(status, body, expected)
    assert after == 200
    assert session.failure is None and session.calls == 0


def test_request_heads_over_the_limit_get_431():
    async def go() -> tuple[int | None, dict | None]:
        async with serving() as (server, _):
            return await exchange(server, MODELS + key(server) + b"X-Pad: " + b"p" * (1 << 20) + b"\r\n\r\n")

    assert_openai_error(*asyncio.run(go()), 431)


@pytest.mark.parametrize("part", ["head", "body"])
def test_a_client_trickling_its_request_is_cut_off_by_a_total_deadline(part):
    start = MODELS + b"X-Slow: " if part == "head" else None

    async def go() -> bytes:
        async with serving(transfer_seconds=1.0) as (server, _):
            reader, writer = await connect(server)
            writer.write(start or CHAT + key(server) + b"Content-Length: 1000\r\n\r\n")
            deadline, response = time.monotonic() + 60, b""  # a hang guard, not a measure
            # A byte every 0.2 s is never idle for long: only a deadline on the whole request ends it, while the
            # client is still sending (without one, it would trickle on to the guard and hear nothing).
            while not response and time.monotonic() < deadline:
                with contextlib.suppress(ConnectionError):
                    writer.write(b"a")
                    await writer.drain()
                response = await read_all(reader, 0.2)
            writer.close()
            return response

    status, body = status_and_body(asyncio.run(go()))
    assert_openai_error(status, body, 408)


def test_connections_are_capped_and_silent_ones_are_dropped():
    async def go() -> tuple[int | None, list[int | None], int | None]:
        # The silent ones are dropped 2 s after they were taken in; the one over the cap comes right after that.
        async with serving(transfer_seconds=2.0, max_connections=3) as (server, _):
            silent = [await connect(server) for _ in range(3)]
            deadline = time.monotonic() + 60  # a hang guard, not a measure
            while len(server._connections) < 3:  # the server has taken them in
                assert time.monotonic() < deadline, "the server never took in the silent connections"
                await asyncio.sleep(0.01)
            over, _ = await exchange(server, MODELS + key(server) + b"\r\n")
            dropped = [status_and_body(await read_all(reader, 60))[0] for reader, _ in silent]
            for _, writer in silent:
                writer.close()
            again, _ = await exchange(server, MODELS + key(server) + b"\r\n")
            return over, dropped, again

    over, dropped, again = asyncio.run(go())
    assert over == 503
    assert dropped == [408, 408, 408]
    assert again == 200


def test_only_the_episodes_key_drives_the_proxy():
    message = [{"role": "user", "content": "Oslo?"}]

    async def go() -> tuple[list[str], list[tuple[int | None, dict | None]], ProxySession]:
        async with serving() as (server, session):
            def client(api_key: str) -> openai.OpenAI:
                transport = httpx.HTTPTransport(uds=str(server.path))
                return openai.OpenAI(base_url="http://proxy/v1", api_key=api_key, max_retries=0, timeout=10,
                                     http_client=httpx.Client(transport=transport))

            listed = await asyncio.to_thread(lambda: client(server.api_key).models.list())
            assert listed.data[0].id == "tracegym-policy"
            other_episode = ProxyServer(session).api_key
            refused = []
            for wrong in ("tracegym-proxy", server.api_key[:-1], server.api_key + "x", other_episode):
                for call in (lambda c: c.models.list(), lambda c: c.chat.completions.create(model="m",
                                                                                           messages=message)):
                    with pytest.raises(openai.AuthenticationError) as e:
                        await asyncio.to_thread(call, client(wrong))
                    refused.append(e.value.code)
            raw = [await exchange(server, CHAT + b"Content-Length: 2\r\n\r\n{}"),
                   # refused on its head: a body that never comes is not waited for
                   await exchange(server, CHAT + b"Authorization: Bearer x\r\nContent-Length: 100000\r\n\r\n", 2)]
            return refused, raw, session

    refused, raw, session = asyncio.run(go())
    assert refused == ["invalid_api_key"] * 8
    for status, body in raw:
        assert_openai_error(status, body, 401)
    assert session.calls == 0 and session.segments == [] and session.failure is None


AGENT = """
import openai
from openai import OpenAI

assert OpenAI().models.list().data[0].id == "tracegym-policy"  # the key the harness gave this program
try:
    OpenAI(api_key="tracegym-proxy", max_retries=0).models.list()
except openai.AuthenticationError:
    print("refused")
else:
    raise SystemExit("a call without the episode's key was answered")
"""


def test_the_harness_gives_the_agent_its_episodes_key(tmp_path: Path):
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"the agent runs in bubblewrap, which cannot run here: {problem}")
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "agent.py").write_text(AGENT)
    config = ProxyConfig(command='python "$TRACEGYM_AGENT_DIR/agent.py"', agent_dir="agent", wall_seconds=60)
    harness = ProxyHarness(config, Workspaces(tmp_path / "ws"), "ep-0", tmp_path, SandboxProvider(config))
    task = TaskSpec.model_validate({
        "task_id": "key", "split": "train", "harness": "chat",
        "prompt": {"messages": [{"role": "user", "content": "Oslo?"}]}, "scorer": {"evals": [{"name": "done"}]},
        "provenance": {"trace_id": "tr-key", "format": "openai-chat", "source_task": "s", "cut_message_idx": 1},
    })
    policy = refusing_policy()

    async def go():
        try:
            return await harness.run_episode(policy, EpisodeJob(task), SamplingParams(max_new_tokens=8),
                                             EpisodeLimits(), None, "m", "r-0")
        finally:
            await policy.aclose()

    episode = asyncio.run(go())
    assert episode.harness_error is None, episode.metrics.get("proxy/stderr_tail")
    assert episode.stop_reason == "env_done" and episode.metrics["proxy/exit_code"] == 0
