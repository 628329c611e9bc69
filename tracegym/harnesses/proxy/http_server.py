"""The proxy's HTTP side: a small HTTP/1.1 server on a Unix socket (asyncio streams only) for one episode.

The socket lies in the episode's own folder, which the agent's sandbox sees read-only; a forwarder inside
the sandbox (`tracegym.harnesses.sandbox.forwarder`) gives the agent a loopback port that leads here. No
TCP port is opened on the host.

Routes: POST /v1/chat/completions (JSON, or server-sent events with `"stream": true`), POST /v1/responses
(the Responses API, `tracegym.harnesses.proxy.wire_responses`) and GET /v1/models; the same paths without /v1 work
too, for clients configured with the bare host. Each response closes its
connection, so the only bytes a client sends after its request are none at all: reading end-of-file while
the reply is being generated means the client disconnected mid-request. That call is cancelled and the
handler told (`ChatHandler.disconnected`); the episode it belongs to ends with the error recorded.

The agent program, and anything else on the host that can open the socket, are untrusted. Every request must
carry the server's own key (401 without it, before its body is read); a request must arrive whole within a
deadline, its reply be taken in within another (`ProxyServerConfig.transfer_seconds`), and the connections
open at once are capped, so no client can hold the server's connections or memory. Malformed requests get
an OpenAI-style error body with a 4xx status (`tracegym.harnesses.proxy.http_request`) and never reach the handler.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import secrets
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from tracegym.harnesses.proxy.http_request import STREAM_LIMIT, RequestHead, json_body, read_body, read_head
from tracegym.harnesses.proxy.wire_chat import ChatRequest, ProxyError, models_list, parse_request, stream_chunks
from tracegym.harnesses.proxy.wire_responses import parse_responses_request, response_body, response_events

_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed",
            408: "Request Timeout", 413: "Payload Too Large", 431: "Request Header Fields Too Large",
            500: "Internal Server Error", 503: "Service Unavailable"}
_CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
_MODELS_PATHS = ("/v1/models", "/models")
_RESPONSES_PATHS = ("/v1/responses", "/responses")


class ProxyServerConfig(BaseModel):
    """What the proxy's HTTP server allows an agent program (untrusted) to hold and send."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    transfer_seconds: float = Field(30.0, gt=0)
    """Total seconds a client has to send one whole request (head and body), and again to take in its reply;
    a client still sending is answered 408 and disconnected, however steadily it trickles bytes. The time the
    policy spends generating the reply is not counted."""
    max_connections: int = Field(32, ge=1)
    """Connections open at once; one more is answered 503 (clients retry that) and closed."""
    max_body_bytes: int = Field(16 << 20, ge=1 << 10)
    """The largest request body accepted (413 beyond); a 128k-token conversation is well under 1 MiB."""


class ChatHandler(Protocol):
    """What answers the calls (`tracegym.harnesses.proxy.calls.ProxySession`)."""

    model_name: str

    async def complete(self, request: ChatRequest) -> dict[str, Any]:
        """The chat.completion body; raises `ProxyError` for an error the client should get."""

    def disconnected(self, detail: str) -> None:
        """The client went away before its reply was delivered."""

    def crashed(self, error: BaseException) -> None:
        """Answering a call raised something other than a `ProxyError`."""


class ProxyServer:
    """Serves one handler on a Unix socket until closed, to callers that hold its `api_key`."""

    def __init__(self, handler: ChatHandler, config: ProxyServerConfig | None = None) -> None:
        self.handler = handler
        self.config = config or ProxyServerConfig()
        self.api_key = f"tracegym-{secrets.token_urlsafe(32)}"
        """The key a caller sends as `Authorization: Bearer <key>` (give the agent OPENAI_API_KEY=<key>): a
        process that can reach the socket still needs it, and only the episode's agent has it."""
        self.path: Path | None = None
        """The socket, once started."""
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    async def start(self, path: Path) -> None:
        """Listen on a new Unix socket at `path`: its folder decides who may connect (the episode's own, 0700)."""
        self._server = await asyncio.start_unix_server(self._connection, path, limit=STREAM_LIMIT)
        self.path = path

    async def close(self) -> None:
        """Stop listening and drop the connections still open (their calls are cancelled)."""
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            if len(self._connections) > self.config.max_connections:
                message = f"the proxy serves {self.config.max_connections} connections at once; retry shortly"
                await self._refuse(writer, ProxyError(503, message, "too_many_connections", "server_error"))
            else:
                await self._serve(reader, writer)
        except (ConnectionError, TimeoutError):
            pass  # the client closed its side, or took too long, while the answer was written; handled where it matters
        except Exception as e:  # noqa: BLE001 - a bug answering one connection fails its episode, not the server
            self.handler.crashed(e)
            with contextlib.suppress(ConnectionError, TimeoutError):
                await self._refuse(writer, ProxyError(500, f"{type(e).__name__}: {e}", None, "server_error"))
        finally:
            self._connections.discard(task)
            await self._hang_up(writer)

    async def _hang_up(self, writer: asyncio.StreamWriter) -> None:
        """Close the connection, dropping it when the client does not take in what is left to send."""
        writer.close()
        try:
            await asyncio.wait_for(writer.wait_closed(), self.config.transfer_seconds)
        except TimeoutError:
            writer.transport.abort()
        except (ConnectionError, asyncio.CancelledError):
            pass

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(self.config.transfer_seconds):
                head = await read_head(reader)
                self._authorize(head)
                body = await read_body(reader, writer, head, self.config.max_body_bytes)
        except ProxyError as e:
            await self._refuse(writer, e)
            return
        except TimeoutError:
            message = f"the request did not arrive whole within {self.config.transfer_seconds:g} seconds"
            await self._refuse(writer, ProxyError(408, message, "request_timeout"))
            return
        except asyncio.IncompleteReadError:
            return  # the client left before a whole request arrived: there was no call to answer
        await self._route(head, body, reader, writer)

    def _authorize(self, head: RequestHead) -> None:
        scheme, _, key = head.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(key.strip().encode("latin-1"), self.api_key.encode()):
            raise ProxyError(401, "the request carries no valid API key: this proxy answers only its episode's agent, "
                                  "which finds the key in OPENAI_API_KEY (sent as `Authorization: Bearer <key>`)",
                             "invalid_api_key")

    async def _route(self, head: RequestHead, body: bytes, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> None:
        if head.path in _MODELS_PATHS:
            if head.method != "GET":
                await self._refuse(writer, ProxyError(405, f"{head.path} takes GET"))
                return
            await self._send(writer, 200, models_list(self.handler.model_name))
            return
        responses = head.path in _RESPONSES_PATHS
        if head.path not in _CHAT_PATHS and not responses:
            message = (f"no route {head.path}; the proxy serves POST /v1/chat/completions, POST /v1/responses and "
                       "GET /v1/models")
            await self._refuse(writer, ProxyError(404, message, "not_found"))
            return
        if head.method != "POST":
            await self._refuse(writer, ProxyError(405, f"{head.path} takes POST"))
            return
        try:
            chat = (parse_responses_request if responses else parse_request)(json_body(body))
        except ProxyError as e:
            await self._refuse(writer, e)
            return
        await self._complete(chat, reader, writer, responses)

    async def _complete(self, chat: ChatRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                        responses: bool = False) -> None:
        work = asyncio.ensure_future(self.handler.complete(chat))
        watch = asyncio.ensure_future(reader.read(1))
        try:
            await asyncio.wait({work, watch}, return_when=asyncio.FIRST_COMPLETED)
            if not work.done() and _closed(watch):
                work.cancel()
                self.handler.disconnected("the agent's client disconnected while its reply was being generated")
                return
            await asyncio.wait({work})
        finally:
            watch.cancel()
            work.cancel()  # a no-op once done; cancels the call when this connection itself is cancelled
        try:
            completion = work.result()
        except ProxyError as e:
            await self._refuse(writer, e)
            return
        except Exception as e:  # noqa: BLE001 - a bug answering one call fails its episode, not the server
            self.handler.crashed(e)
            await self._refuse(writer, ProxyError(500, f"{type(e).__name__}: {e}", None, "server_error"))
            return
        body = response_body(completion) if responses else completion
        try:
            if chat.stream:
                events = response_events(body) if responses else stream_chunks(completion, chat.include_usage)
                await self._send_events(writer, events)
            else:
                await self._send(writer, 200, body)
        except ConnectionError:
            self.handler.disconnected("the agent's client disconnected before its reply was delivered")
        except TimeoutError:
            self.handler.disconnected(f"the agent's client did not take its reply within "
                                      f"{self.config.transfer_seconds:g} seconds")

    async def _refuse(self, writer: asyncio.StreamWriter, error: ProxyError) -> None:
        await self._send(writer, error.status, error.body())

    async def _send(self, writer: asyncio.StreamWriter, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body, ensure_ascii=False).encode()
        await self._write(writer, _head(status, "application/json", len(data)) + data)

    async def _send_events(self, writer: asyncio.StreamWriter, chunks: list[dict[str, Any]]) -> None:
        """Server-sent events, ended by `data: [DONE]`; the closed connection ends the body."""
        events = b"".join(b"data: " + json.dumps(c, ensure_ascii=False).encode() + b"\n\n" for c in chunks)
        await self._write(writer, _head(200, "text/event-stream", None) + events + b"data: [DONE]\n\n")

    async def _write(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        writer.write(data)
        async with asyncio.timeout(self.config.transfer_seconds):
            await writer.drain()


def _closed(watch: asyncio.Future[bytes]) -> bool:
    """Whether the read watching a connection saw it close (end-of-file or a reset)."""
    if not watch.done():
        return False
    return watch.exception() is not None or watch.result() == b""


def _head(status: int, content_type: str, length: int | None) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}", f"Content-Type: {content_type}",
             "Connection: close"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    else:
        lines.append("Cache-Control: no-cache")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
