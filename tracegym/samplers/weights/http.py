"""The trainer's weight versions over HTTP, for samplers that cannot read its folder (on another machine, or a team's
own inference server): a read-only server over the broadcast folder, and `HttpVersions`, the `VersionSource` that
reads it.

    GET /versions                        {"versions": [{"version": 12, "files": {"bf16.safetensors": 4242}}, ...]}
                                         the complete versions (those marked STABLE), oldest first, with the size of
                                         each version file
    GET /versions/12/bf16.safetensors    a version file's bytes (whole weights, `bf16.delta.safetensors`, or a
                                         LoRA adapter alone, `bf16.adapter.safetensors`)

Nothing else is served (404). A request's path is matched whole against these two patterns and the file opened by
a name built from the match (a version number and a precision name), never by joining the request's path to the
folder: no other file on disk (the tokenizer beside the versions, the run folder, `..`) can be reached. There is no
authentication and no TLS: the server binds 127.0.0.1 unless told otherwise; on another address, whoever reaches the
port can read the weights, so keep it on a private network or behind an SSH tunnel.

Each version file carries the checksum of its version (with `async.weight_delta`) and the time the trainer began
publishing it (`tracegym.samplers.weights.folder`), so a reader over HTTP verifies what it rebuilt and measures its sync
latency exactly as a reader of the folder does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import threading
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tracegym.errors import ConfigError
from tracegym.models.load import DTYPES
from tracegym.samplers.weights.folder import DELTA_SUFFIX, STABLE, stable_versions
from tracegym.samplers.weights.lora_adapters import ADAPTER_SUFFIX

_NAME = rf"(?:{'|'.join(DTYPES)})(?:{re.escape(DELTA_SUFFIX)}|{re.escape(ADAPTER_SUFFIX)}|\.safetensors)"
_FILE = re.compile(rf"^/versions/(\d{{1,12}})/({_NAME})$")
_LISTING = "/versions"
_CHUNK = 1 << 20


def version_files(folder: Path) -> dict[str, int]:
    """The version files in one `step_N` folder and their sizes (a folder deleted meanwhile: none)."""
    out: dict[str, int] = {}
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return out
    for entry in entries:
        if re.fullmatch(_NAME, entry.name) and entry.is_file(follow_symlinks=False):
            try:
                out[entry.name] = entry.stat(follow_symlinks=False).st_size
            except FileNotFoundError:
                continue
    return out


def listing(root: Path) -> dict[str, Any]:
    """What `GET /versions` answers."""
    versions = []
    for version in sorted(stable_versions(root)):
        files = version_files(root / f"step_{version}")
        if files:
            versions.append({"version": version, "files": dict(sorted(files.items()))})
    return {"versions": versions}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: a sampler polls the listing many times a second
    server_version = "tracegym-weights"
    timeout = 60  # an idle or stalled client's thread ends after this many seconds

    def __init__(self, root: Path, *args: Any) -> None:
        self.root = root
        super().__init__(*args)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._answer(body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(body=False)

    def _answer(self, body: bool) -> None:
        path = urlsplit(self.path).path
        if path == _LISTING:
            data = json.dumps(listing(self.root)).encode()
            self._headers(200, "application/json", len(data))
            if body:
                self.wfile.write(data)
            return
        match = _FILE.match(path)
        folder = self.root / f"step_{int(match.group(1))}" if match else None
        if match is None or folder is None or not (folder / STABLE).is_file():
            self._not_found(body)
            return
        try:  # the name is one of the pattern's own (a precision and a suffix); never follow a link
            fd = os.open(folder / match.group(2), os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:  # gone (deleted as newer versions came) or not a plain file
            self._not_found(body)
            return
        with os.fdopen(fd, "rb") as f:
            self._headers(200, "application/octet-stream", os.fstat(f.fileno()).st_size)
            if body:
                shutil.copyfileobj(f, self.wfile, _CHUNK)  # an open file survives its deletion meanwhile

    def _not_found(self, body: bool) -> None:
        data = b"not found\n"
        self._headers(404, "text/plain", len(data))
        if body:
            self.wfile.write(data)

    def _headers(self, status: int, kind: str, length: int) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(length))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        """Requests are not logged: samplers poll many times a second, and the trainer's display owns the terminal."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-answer (a sampler stopped or restarted) is no error of the trainer's."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class WeightServer:
    """Serves a broadcast folder read-only over HTTP from a background thread; see the module doc."""

    def __init__(self, root: Path, host: str = "127.0.0.1", port: int = 0) -> None:
        self.root = Path(root)
        try:
            self._server = _Server((host, port), partial(_Handler, self.root))
        except OSError as e:
            raise ConfigError(f"cannot serve weights on {host}:{port} ({e}). Fix: set async.weights_http.port to a "
                              "free port, or 0 to take any free one.") from e
        self.host, self.port = host, int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="tracegym-weights-http", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """The address samplers on this machine read from (a wildcard bind is reached through loopback)."""
        host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(self.host, self.host)
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> WeightServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class HttpVersions:
    """A `VersionSource` over a `WeightServer` (the trainer's `async.weights_http`): `versions()` reads the listing,
    which `has()` then answers from; `read()` fetches a file, FileNotFoundError when it is gone. Picklable (a
    sampler's spec crosses a process start); the connection is opened in the process that uses it."""

    def __init__(self, url: str, timeout_s: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self._files: dict[int, dict[str, int]] = {}
        self._client: Any = None

    def __str__(self) -> str:
        return self.url

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_client": None, "_files": {}}

    def _get(self, path: str) -> Any:
        import httpx

        if self._client is None:
            # retries: connection attempts only (a trainer busy starting), never a request half answered
            self._client = httpx.Client(timeout=self.timeout_s, transport=httpx.HTTPTransport(retries=2),
                                        trust_env=False)  # straight to the trainer: no proxy from the environment
        try:
            return self._client.get(f"{self.url}{path}")
        except httpx.TransportError as e:
            raise ConnectionError(f"cannot read {self.url}{path}: {type(e).__name__}: {e}") from e

    def versions(self) -> list[int]:
        response = self._get(_LISTING)
        response.raise_for_status()
        try:
            body = response.json()
        except ValueError as e:
            raise ConnectionError(f"{self.url}{_LISTING} is not a tracegym weight listing ({e})") from None
        self._files = _parse_listing(body)
        return sorted(self._files)

    def has(self, version: int, name: str) -> bool:
        return name in self._files.get(version, {})

    def read(self, version: int, name: str) -> bytes:
        response = self._get(f"/versions/{int(version)}/{name}")
        if response.status_code == 404:
            raise FileNotFoundError(f"{self.url}/versions/{version}/{name} is gone")
        response.raise_for_status()
        return response.content

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def _parse_listing(body: Any) -> dict[int, dict[str, int]]:
    """{version: {file: size}} from a listing, checked: a server that is not tracegym's is an error, not a guess."""
    try:
        return {int(v["version"]): {str(name): int(size) for name, size in v["files"].items()}
                for v in body["versions"]}
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ConnectionError(f"not a tracegym weight listing ({type(e).__name__}: {e})") from None
