"""The trainer's weight versions over HTTP, for samplers that cannot read its folder (on another machine, or a team's
own inference server): a read-only server over the broadcast folder, and `HttpVersions`, the `VersionSource` that
reads it.

    GET /versions                        {"versions": [{"version": 12, "files": {"bf16.safetensors": 4242},
                                                        "sha256": {"bf16.safetensors": "9f86..."}}, ...]}
                                         the complete versions (those marked STABLE), oldest first, with the size and
                                         the sha256 of each version file; signed (`X-Tracegym-Signature`)
    GET /versions/12/bf16.safetensors    a version file's bytes (whole weights, `bf16.delta.safetensors`, or a
                                         LoRA adapter alone, `bf16.adapter.safetensors`)

Nothing else is served (404). A request's path is matched whole against these two patterns and the file opened by
a name built from the match (a version number and a precision name), never by joining the request's path to the
folder: no other file on disk (the tokenizer beside the versions, the run folder, `..`) can be reached.

Every request must carry the run's bearer key (`Authorization: Bearer ...`, compared in constant time; 401 without
it). The run's token is a random secret the trainer makes when it starts serving and hands to its samplers inside
their spec (and writes to `RUN/weights_http.token`, mode 0600, for a reader of the operator's own); the bearer key
is derived from it, and so is the key the listing is signed with (HMAC-SHA256), which never travels. A reader thus
checks that the listing is this run's trainer's announcement, and each file it downloads against the sha256 the
announcement gives (`ChecksumMismatch` otherwise): a server someone else bound, a proxy or a damaged link cannot
hand it other weights. There is no TLS: on an address other than 127.0.0.1, the weights (and the bearer key) cross
the network in the clear, so keep it on a private network or behind an SSH tunnel.

Each version file also carries the checksum of its version (with `async.weight_delta`) and the time the trainer
began publishing it (`tracegym.samplers.weights.folder`), so a reader over HTTP verifies what it rebuilt from deltas
and measures its sync latency exactly as a reader of the folder does.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
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
from tracegym.samplers.weights.folder import DELTA_SUFFIX, STABLE, ChecksumMismatch, stable_versions
from tracegym.samplers.weights.lora_adapters import ADAPTER_SUFFIX

_NAME = rf"(?:{'|'.join(DTYPES)})(?:{re.escape(DELTA_SUFFIX)}|{re.escape(ADAPTER_SUFFIX)}|\.safetensors)"
_FILE = re.compile(rf"^/versions/(\d{{1,12}})/({_NAME})$")
_LISTING = "/versions"
_CHUNK = 1 << 20
SIGNATURE_HEADER = "X-Tracegym-Signature"
TOKEN_FILE = "weights_http.token"
"""The run's token in the run folder (0600), for a reader the operator runs outside the run's own samplers."""


def new_token() -> str:
    """A fresh per-run token (256 random bits)."""
    return secrets.token_hex(32)


def bearer_key(token: str) -> str:
    """What a reader sends as `Authorization: Bearer ...`: derived from the token, so that a server that is not the
    trainer learns nothing from it that signs a listing."""
    return hmac.new(token.encode(), b"tracegym-weights bearer", hashlib.sha256).hexdigest()


def listing_signature(token: str, body: bytes) -> str:
    """The signature of a listing's bytes under the run's token."""
    return hmac.new(token.encode(), b"tracegym-weights listing\n" + body, hashlib.sha256).hexdigest()


class _Digests:
    """sha256 of version files, computed once per file (a version's files never change once it is STABLE; one
    published again is a new folder, so a new inode)."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, int, int, int], str] = {}
        self._lock = threading.Lock()

    def of(self, path: Path) -> str | None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as f:
            stat = os.fstat(f.fileno())
            key = (str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns)
            with self._lock:
                known = self._known.get(key)
            if known is None:
                known = hashlib.file_digest(f, "sha256").hexdigest()
                with self._lock:
                    self._known = {k: v for k, v in self._known.items() if k[0] != key[0]} | {key: known}
        return known


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


def listing(root: Path, digests: _Digests) -> dict[str, Any]:
    """What `GET /versions` answers: each complete version's files, their sizes and sha256."""
    versions = []
    for version in sorted(stable_versions(root)):
        folder = root / f"step_{version}"
        files = version_files(folder)
        sums = {name: digest for name in sorted(files) if (digest := digests.of(folder / name)) is not None}
        if sums:
            versions.append({"version": version, "files": {name: files[name] for name in sums}, "sha256": sums})
    return {"versions": versions}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: a sampler polls the listing many times a second
    server_version = "tracegym-weights"
    timeout = 60  # an idle or stalled client's thread ends after this many seconds

    def __init__(self, root: Path, token: str, digests: _Digests, *args: Any) -> None:
        self.root, self.token, self.digests = root, token, digests
        super().__init__(*args)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._answer(body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(body=False)

    def _authorized(self) -> bool:
        scheme, _, given = (self.headers.get("Authorization") or "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(),
                                                                  bearer_key(self.token).encode())

    def _answer(self, body: bool) -> None:
        if not self._authorized():
            self._refuse(body)
            return
        path = urlsplit(self.path).path
        if path == _LISTING:
            data = json.dumps(listing(self.root, self.digests)).encode()
            self._headers(200, "application/json", len(data), {SIGNATURE_HEADER: listing_signature(self.token, data)})
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

    def _refuse(self, body: bool) -> None:
        data = b"this run's bearer key is required\n"
        self._headers(401, "text/plain", len(data), {"WWW-Authenticate": 'Bearer realm="tracegym-weights"'})
        if body:
            self.wfile.write(data)

    def _headers(self, status: int, kind: str, length: int, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(length))
        self.send_header("Cache-Control", "no-store")
        for name, value in (extra or {}).items():
            self.send_header(name, value)
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
    """Serves a broadcast folder read-only over HTTP from a background thread to readers holding `token` (the run's,
    `new_token()`); see the module doc."""

    def __init__(self, root: Path, token: str, host: str = "127.0.0.1", port: int = 0) -> None:
        self.root = Path(root)
        try:
            self._server = _Server((host, port), partial(_Handler, self.root, token, _Digests()))
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
    """A `VersionSource` over a `WeightServer` (the trainer's `async.weights_http`), holding the run's `token`:
    `versions()` reads the listing and checks its signature, and `has()` then answers from it; `read()` fetches a
    file and checks it against the listing's sha256 (`ChecksumMismatch` otherwise), FileNotFoundError when it is
    gone. Picklable (a sampler's spec crosses a process start, token included); the connection is opened in the
    process that uses it."""

    def __init__(self, url: str, token: str, timeout_s: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s
        self._files: dict[int, dict[str, str]] = {}  # version -> file -> announced sha256
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
                                        trust_env=False,  # straight to the trainer: no proxy from the environment
                                        headers={"Authorization": f"Bearer {bearer_key(self.token)}"})
        try:
            response = self._client.get(f"{self.url}{path}")
        except httpx.TransportError as e:
            raise ConnectionError(f"cannot read {self.url}{path}: {type(e).__name__}: {e}") from e
        if response.status_code == 401:
            raise ConnectionError(f"{self.url} refused this reader's key (401): it serves another run's weights, "
                                  "or the token is not the run's (RUN/weights_http.token)")
        return response

    def versions(self) -> list[int]:
        response = self._get(_LISTING)
        response.raise_for_status()
        signature = response.headers.get(SIGNATURE_HEADER, "")
        if not hmac.compare_digest(signature.encode(), listing_signature(self.token, response.content).encode()):
            raise ConnectionError(f"{self.url}{_LISTING} is not signed with this run's token: whatever answers there "
                                  "is not this run's trainer")
        try:
            body = response.json()
        except ValueError as e:
            raise ConnectionError(f"{self.url}{_LISTING} is not a tracegym weight listing ({e})") from None
        self._files = _parse_listing(body)
        return sorted(self._files)

    def has(self, version: int, name: str) -> bool:
        return name in self._files.get(version, {})

    def read(self, version: int, name: str) -> bytes:
        announced = self._files.get(version, {}).get(name)
        if announced is None:
            raise FileNotFoundError(f"{self.url}/versions/{version}/{name} is not in the listing")
        response = self._get(f"/versions/{int(version)}/{name}")
        if response.status_code == 404:
            raise FileNotFoundError(f"{self.url}/versions/{version}/{name} is gone")
        response.raise_for_status()
        data: bytes = response.content
        if not hmac.compare_digest(hashlib.sha256(data).hexdigest(), announced):
            raise ChecksumMismatch(f"{self.url}/versions/{version}/{name}: its sha256 is not the one the trainer "
                                   "announced")
        return data

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def _parse_listing(body: Any) -> dict[int, dict[str, str]]:
    """{version: {file: sha256}} from a listing, checked: a server that is not tracegym's is an error, not a
    guess."""
    try:
        return {int(v["version"]): {str(name): str(v["sha256"][name]) for name in v["files"]}
                for v in body["versions"]}
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ConnectionError(f"not a tracegym weight listing ({type(e).__name__}: {e})") from None
