"""Reading one HTTP/1.1 request off an agent's connection, strictly: whatever the client sends ends in a
request, a `ProxyError` carrying the status to answer (400, 413, 431), or `asyncio.IncompleteReadError`
when the client left before a whole request arrived. The agent program is untrusted, so no number it sends
is used before it is checked: lengths and chunk sizes must be plain digits within the body limit.

The head is read first (`read_head`) so the server can check the caller's key before it reads or invites
a body (`read_body`). The body's JSON (`json_body`) is refused past a nesting depth and when a string holds
a lone UTF-16 surrogate: `json` accepts an escape such as "\\ud800", but no tokenizer, HTTP client or UTF-8
encoder downstream does, and that is the agent's bad input, not a policy failure.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any

from tracegym.harnesses.proxy.wire_chat import ProxyError

STREAM_LIMIT = 1 << 20
"""Bytes of request line + headers, and of any one line the reader buffers (the server's stream limit)."""
_CHUNK_LINE_LIMIT = 1024  # a chunk-size line is a hex number and, rarely, a short extension
_MAX_DEPTH = 100  # far beyond any chat request (tool schemas included); recursive code downstream stays safe
_DECIMAL = re.compile(r"[0-9]+")
_HEX = re.compile(rb"[0-9A-Fa-f]+")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class RequestHead:
    method: str
    path: str
    """Without the query string."""
    headers: dict[str, str]
    """Lower-cased names; the last value wins."""


async def read_head(reader: asyncio.StreamReader) -> RequestHead:
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError:
        raise ProxyError(431, f"the request line and headers are over the proxy's {STREAM_LIMIT} bytes",
                         "headers_too_large") from None
    request_line, *header_lines = raw.decode("latin-1").split("\r\n")
    parts = request_line.split(" ")
    if len(parts) != 3:
        raise ProxyError(400, f"malformed request line {request_line[:100]!r}")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return RequestHead(parts[0].upper(), parts[1].split("?", 1)[0], headers)


async def read_body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: RequestHead,
                    max_body: int) -> bytes:
    if head.headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await writer.drain()
    if "chunked" in head.headers.get("transfer-encoding", "").lower():
        return await _read_chunked(reader, max_body)
    length = head.headers.get("content-length", "0")
    if not _DECIMAL.fullmatch(length):
        raise ProxyError(400, f"the Content-Length header {length[:40]!r} is not a number of bytes")
    # int() refuses decimal strings past 4300 digits; anything past 18 is over any limit anyway.
    if len(length) > 18 or int(length) > max_body:
        raise ProxyError(413, f"the request body ({length} bytes) is over the proxy's {max_body} bytes",
                         "body_too_large")
    return await reader.readexactly(int(length))


async def _read_chunked(reader: asyncio.StreamReader, max_body: int) -> bytes:
    body = bytearray()
    while True:
        digits = await _chunk_digits(reader)
        size = int(digits, 16)
        if len(body) + size > max_body:
            raise ProxyError(413, f"the request body is over the proxy's {max_body} bytes", "body_too_large")
        if size == 0:
            await _skip_trailers(reader)
            return bytes(body)
        body += await reader.readexactly(size)
        if await reader.readexactly(2) != b"\r\n":
            raise ProxyError(400, "malformed chunked request body: a chunk is longer than its size says")


async def _chunk_digits(reader: asyncio.StreamReader) -> bytes:
    line = await _line(reader, _CHUNK_LINE_LIMIT)
    if line is None:
        raise ProxyError(400, f"malformed chunked request body: a chunk-size line is over {_CHUNK_LINE_LIMIT} bytes")
    digits = line.split(b";", 1)[0].strip()
    if not _HEX.fullmatch(digits):
        shown = digits[:40].decode("latin-1")
        raise ProxyError(400, f"malformed chunked request body: chunk size {shown!r} is not a hex number")
    return digits


async def _skip_trailers(reader: asyncio.StreamReader) -> None:
    room = STREAM_LIMIT
    while (line := await _line(reader, room)) != b"\r\n":
        if line is None:
            raise ProxyError(431, f"the chunked body's trailers are over the proxy's {STREAM_LIMIT} bytes",
                             "headers_too_large")
        room -= len(line)


async def _line(reader: asyncio.StreamReader, limit: int) -> bytes | None:
    """The next CRLF-ended line, or None when it is over `limit` bytes."""
    try:
        line = await reader.readuntil(b"\r\n")
    except asyncio.LimitOverrunError:
        return None
    return line if len(line) <= limit else None


def json_body(raw: bytes) -> Any:
    """The request body as JSON; a `ProxyError` (400) when it is not JSON a chat request can hold."""
    try:
        body = json.loads(raw)
    except RecursionError:
        raise ProxyError(400, f"the request body nests deeper than {_MAX_DEPTH} levels", "too_deep") from None
    except ValueError as e:
        raise ProxyError(400, f"the request body is not valid JSON: {e}") from None
    _check_values(body)
    return body


def _check_values(body: Any) -> None:
    """Depth and strings, walked with a stack: recursion is what a deep body would exhaust."""
    stack = [(body, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            _check_text(value)
            continue
        if not isinstance(value, (dict, list)):
            continue
        if depth > _MAX_DEPTH:
            raise ProxyError(400, f"the request body nests deeper than {_MAX_DEPTH} levels", "too_deep")
        if isinstance(value, dict):
            for key in value:
                _check_text(key)
            value = list(value.values())
        stack.extend((item, depth + 1) for item in value)


def _check_text(text: str) -> None:
    found = _SURROGATE.search(text)
    if found is not None:
        raise ProxyError(400, f"a string in the request body holds a lone surrogate (\\u{ord(found.group()):04x}): "
                              "JSON text must be valid Unicode; escape a character outside the BMP as a surrogate "
                              "pair, or send it as UTF-8", "invalid_unicode")
