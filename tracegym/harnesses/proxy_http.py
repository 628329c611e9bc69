"""The proxy's HTTP side: a small HTTP/1.1 server on 127.0.0.1 (asyncio streams only) for one episode.

Routes: POST /v1/chat/completions (JSON, or server-sent events with `"stream": true`) and GET /v1/models;
the same paths without /v1 work too, for clients configured with the bare host. Each response closes its
connection, so the only bytes a client sends after its request are none at all: reading end-of-file while
the reply is being generated means the client disconnected mid-request. That call is cancelled and the
handler told (`ChatHandler.disconnected`); the episode it belongs to ends with the error recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import Any, Protocol

from tracegym.harnesses.proxy_openai import ChatRequest, ProxyError, models_list, parse_request, stream_chunks

_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 413: "Payload Too Large",
            500: "Internal Server Error"}
_CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
_MODELS_PATHS = ("/v1/models", "/models")
_HEAD_LIMIT = 1 << 20  # bytes of request line + headers


class ChatHandler(Protocol):
    """What answers the calls (`tracegym.harnesses.proxy_session.ProxySession`)."""

    model_name: str

    async def complete(self, request: ChatRequest) -> dict[str, Any]:
        """The chat.completion body; raises `ProxyError` for an error the client should get."""

    def disconnected(self, detail: str) -> None:
        """The client went away before its reply was delivered."""

    def crashed(self, error: BaseException) -> None:
        """Answering a call raised something other than a `ProxyError`."""


@dataclass(frozen=True)
class _Request:
    method: str
    path: str
    body: bytes


class ProxyServer:
    """Serves one handler on a free port of 127.0.0.1 until closed."""

    def __init__(self, handler: ChatHandler, max_body_bytes: int = 64 << 20) -> None:
        self.handler = handler
        self.max_body_bytes = max_body_bytes
        self.port: int | None = None
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def base_url(self) -> str:
        """The OpenAI base URL to give the agent (OPENAI_BASE_URL)."""
        if self.port is None:
            raise RuntimeError("the proxy server is not started")
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0, limit=_HEAD_LIMIT)
        self.port = int(self._server.sockets[0].getsockname()[1])

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
            try:
                request = await _read_request(reader, writer, self.max_body_bytes)
            except ProxyError as e:
                await _send_json(writer, e.status, e.body())
                return
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                return  # the client left before a whole request arrived: there was no call to answer
            await self._route(request, reader, writer)
        except ConnectionError:
            pass  # the client closed its side while the answer was being written; handled where it matters
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()

    async def _route(self, request: _Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if request.path in _MODELS_PATHS:
            if request.method != "GET":
                await _send_json(writer, 405, ProxyError(405, f"{request.path} takes GET").body())
                return
            await _send_json(writer, 200, models_list(self.handler.model_name))
            return
        if request.path not in _CHAT_PATHS:
            message = f"no route {request.path}; the proxy serves POST /v1/chat/completions and GET /v1/models"
            await _send_json(writer, 404, ProxyError(404, message, "not_found").body())
            return
        if request.method != "POST":
            await _send_json(writer, 405, ProxyError(405, f"{request.path} takes POST").body())
            return
        try:
            chat = parse_request(_json_body(request.body))
        except ProxyError as e:
            await _send_json(writer, e.status, e.body())
            return
        await self._complete(chat, reader, writer)

    async def _complete(self, chat: ChatRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
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
            await _send_json(writer, e.status, e.body())
            return
        except Exception as e:  # noqa: BLE001 - a bug answering one call fails its episode, not the server
            self.handler.crashed(e)
            await _send_json(writer, 500, ProxyError(500, f"{type(e).__name__}: {e}", None, "server_error").body())
            return
        try:
            if chat.stream:
                await _send_events(writer, stream_chunks(completion, chat.include_usage))
            else:
                await _send_json(writer, 200, completion)
        except ConnectionError:
            self.handler.disconnected("the agent's client disconnected before its reply was delivered")


def _closed(watch: asyncio.Future[bytes]) -> bool:
    """Whether the read watching a connection saw it close (end-of-file or a reset)."""
    if not watch.done():
        return False
    return watch.exception() is not None or watch.result() == b""


def _json_body(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError as e:
        raise ProxyError(400, f"the request body is not valid JSON: {e}") from None


async def _read_request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, max_body: int) -> _Request:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    request_line, *header_lines = head.split("\r\n")
    parts = request_line.split(" ")
    if len(parts) != 3:
        raise ProxyError(400, f"malformed request line {request_line[:100]!r}")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await writer.drain()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = await _read_chunked(reader, max_body)
    else:
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            raise ProxyError(400, "the Content-Length header is not a number") from None
        if length > max_body:
            raise ProxyError(413, f"the request body ({length} bytes) is over the proxy's {max_body} bytes")
        body = await reader.readexactly(length)
    return _Request(parts[0].upper(), parts[1].split("?", 1)[0], body)


async def _read_chunked(reader: asyncio.StreamReader, max_body: int) -> bytes:
    body = bytearray()
    while True:
        line = await reader.readline()
        try:
            size = int(line.split(b";")[0].strip() or b"0", 16)
        except ValueError:
            raise ProxyError(400, "malformed chunked request body") from None
        if size == 0:
            while (await reader.readline()).strip():
                pass  # trailers
            return bytes(body)
        if len(body) + size > max_body:
            raise ProxyError(413, f"the request body is over the proxy's {max_body} bytes")
        body += await reader.readexactly(size)
        await reader.readexactly(2)


def _head(status: int, content_type: str, length: int | None) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}", f"Content-Type: {content_type}",
             "Connection: close"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    else:
        lines.append("Cache-Control: no-cache")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _send_json(writer: asyncio.StreamWriter, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body, ensure_ascii=False).encode()
    writer.write(_head(status, "application/json", len(data)) + data)
    await writer.drain()


async def _send_events(writer: asyncio.StreamWriter, chunks: list[dict[str, Any]]) -> None:
    """Server-sent events, ended by `data: [DONE]`; the closed connection ends the body."""
    events = b"".join(b"data: " + json.dumps(c, ensure_ascii=False).encode() + b"\n\n" for c in chunks)
    writer.write(_head(200, "text/event-stream", None) + events + b"data: [DONE]\n\n")
    await writer.drain()
