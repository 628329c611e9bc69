"""The trainer's weight endpoint over HTTP: a watcher follows it, catches up after missed versions, survives a delta
damaged in transit, and nothing but version files can be read through it; nothing at all without the run's token,
and a reader takes neither a listing the trainer did not sign nor a file whose sha256 is not the announced one."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import pickle
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import torch

from tracegym.errors import ConfigError, ModelError
from tracegym.samplers.weights.folder import DELTA_SUFFIX, STABLE, FilesystemBroadcast, WeightWatcher
from tracegym.samplers.weights.http import HttpVersions, WeightServer, bearer_key, new_token


def _versions(n: int) -> list[dict[str, torch.Tensor]]:
    """n versions of a few bf16-cast tensors, each a small update of the one before (some bits flip each time)."""
    g = torch.Generator().manual_seed(0)
    state = {"a.weight": torch.randn(64, 32, generator=g), "b.bias": torch.randn(300, generator=g),
             "c.index": torch.arange(5)}
    out = []
    for _ in range(n):
        out.append({k: v.clone() for k, v in state.items()})
        for k in ("a.weight", "b.bias"):
            state[k] = state[k] + torch.randn(state[k].shape, generator=g) * 1e-2
    return out


def _bf16(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: v.to(torch.bfloat16) if v.is_floating_point() else v for k, v in state.items()}


def _equal(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


TOKEN = new_token()


def _size(root: Path, version: int, name: str) -> int:
    return (root / f"step_{version}" / name).stat().st_size


def test_a_watcher_follows_the_trainer_over_http_counting_bytes_and_publish_times(tmp_path: Path) -> None:
    root, versions = tmp_path / "w", _versions(4)
    broadcast = FilesystemBroadcast(root, ["bf16"], keep=10, delta="xor", full_every=100)
    with WeightServer(root, TOKEN) as server:
        source = HttpVersions(server.url, TOKEN)
        watcher = WeightWatcher(source, "bf16")
        assert server.url.startswith("http://127.0.0.1:") and watcher.poll() is None
        read = 0
        for v, state in enumerate(versions):
            before = time.time()
            broadcast.publish(state, v)
            got = watcher.poll()
            assert got is not None and got[0] == v and _equal(got[1], _bf16(state))
            read += _size(root, v, "bf16.safetensors" if v == 0 else f"bf16{DELTA_SUFFIX}")
            assert watcher.bytes_read == read, "bytes on the wire: the files read, no more"
            assert before <= watcher.published <= time.time()
        assert watcher.poll() is None and watcher.rebuilt_from_whole == 0
        copy = pickle.loads(pickle.dumps(source))  # a sampler's spec crosses a process start
        assert copy.versions() == [0, 1, 2, 3] and copy.has(3, f"bf16{DELTA_SUFFIX}")
        assert not copy.has(3, "bf16.safetensors")
        copy.close()
        source.close()


def test_a_sampler_that_missed_versions_catches_up_from_the_newest_whole_version(tmp_path: Path) -> None:
    root, versions = tmp_path / "w", _versions(8)
    broadcast = FilesystemBroadcast(root, ["bf16"], keep=2, delta="overwrite", full_every=3)
    with WeightServer(root, TOKEN) as server:
        watcher = WeightWatcher(HttpVersions(server.url, TOKEN), "bf16")
        broadcast.publish(versions[0], 0)
        assert watcher.poll()[0] == 0
        for v in range(1, 8):  # the sampler is away; versions 1-5 are deleted as newer ones come
            broadcast.publish(versions[v], v)
        assert sorted(int(p.name.split("_")[1]) for p in root.glob("step_*")) == [6, 7]
        before = watcher.bytes_read
        version, state = watcher.poll()
        assert version == 7 and _equal(state, _bf16(versions[7])) and watcher.rebuilt_from_whole == 0
        assert watcher.bytes_read - before == _size(root, 6, "bf16.safetensors") + _size(root, 7, f"bf16{DELTA_SUFFIX}")


class _FlipOnce:
    """A link that damages one delta on the way (a proxy that flips a byte), then behaves."""

    def __init__(self, inner: HttpVersions, where: str) -> None:
        self.inner, self.where, self.flipped = inner, where, 0

    def versions(self) -> list[int]:
        return self.inner.versions()

    def has(self, version: int, name: str) -> bool:
        return self.inner.has(version, name)

    def read(self, version: int, name: str) -> bytes:
        data = bytearray(self.inner.read(version, name))
        if name.endswith(DELTA_SUFFIX) and not self.flipped:
            self.flipped += 1
            at = len(data) - 3 if self.where == "payload" else data.index(b'"checksum"') + 14
            data[at] ^= 0x5A
        return bytes(data)


@pytest.mark.parametrize("where", ["payload", "header"])
def test_a_delta_damaged_in_transit_is_caught_and_rebuilt_from_whole_weights(tmp_path: Path, where: str) -> None:
    root, versions = tmp_path / "w", _versions(3)
    broadcast = FilesystemBroadcast(root, ["bf16"], keep=10, delta="xor", full_every=100)
    with WeightServer(root, TOKEN) as server:
        link = _FlipOnce(HttpVersions(server.url, TOKEN), where)
        watcher = WeightWatcher(link, "bf16")
        broadcast.publish(versions[0], 0)
        watcher.poll()
        broadcast.publish(versions[1], 1)
        version, state = watcher.poll()
        assert link.flipped == 1 and watcher.rebuilt_from_whole == 1
        assert version == 1 and _equal(state, _bf16(versions[1]))
        broadcast.publish(versions[2], 2)  # and it follows the deltas again
        version, state = watcher.poll()
        assert version == 2 and _equal(state, _bf16(versions[2])) and watcher.rebuilt_from_whole == 1


def _get(server: WeightServer, path: str, method: str = "GET", key: str | None = bearer_key(TOKEN),
         ) -> tuple[int, bytes]:
    """A raw request: the path goes out exactly as written (an HTTP library would normalise `..` away)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", "127.0.0.1")
        if key is not None:
            conn.putheader("Authorization", f"Bearer {key}")
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_nothing_but_complete_version_files_can_be_read(tmp_path: Path) -> None:
    root = tmp_path / "run" / "weights"
    broadcast = FilesystemBroadcast(root, ["bf16", "fp32"])
    broadcast.publish(_versions(1)[0], 1)
    broadcast.publish(_versions(1)[0], 2)
    (tmp_path / "run" / "secret.txt").write_text("SECRET")
    (root / "tokenizer").mkdir()
    (root / "tokenizer" / "tokenizer.json").write_text("SECRET")
    (root / "step_2" / STABLE).unlink()  # as if still being written
    os.symlink(tmp_path / "run" / "secret.txt", root / "step_1" / "fp16.safetensors")
    with WeightServer(root, TOKEN) as server:
        status, body = _get(server, "/versions")
        names = ("bf16.safetensors", "fp32.safetensors")
        assert status == 200 and json.loads(body) == {"versions": [{
            "version": 1, "files": {name: _size(root, 1, name) for name in names},
            "sha256": {name: hashlib.sha256((root / "step_1" / name).read_bytes()).hexdigest() for name in names}}]}
        status, body = _get(server, "/versions/1/bf16.safetensors")
        assert status == 200 and body == (root / "step_1" / "bf16.safetensors").read_bytes()
        assert _get(server, "/versions/1/bf16.safetensors", "HEAD") == (200, b"")
        for path in ["/versions/1/../../secret.txt", "/versions/1/%2e%2e/%2e%2e/secret.txt", "/../secret.txt",
                     "/versions/..%2f..%2fsecret.txt", "//etc/passwd", "/etc/passwd", "/versions/1/STABLE",
                     "/tokenizer/tokenizer.json", "/versions/1/fp16.safetensors", "/versions/2/bf16.safetensors",
                     "/versions/1/bf16.safetensors/..", "/versions/1/../1/bf16.safetensors", "/versions/1/x.txt",
                     "http://evil/../secret.txt", "/versions/-1/bf16.safetensors", "/versions/1", "/", "/weights"]:
            status, body = _get(server, path)
            assert status == 404 and b"SECRET" not in body, path
        assert _get(server, "/versions", "POST")[0] == 501
        with pytest.raises(ConfigError, match="async.weights_http.port"):
            WeightServer(root, TOKEN, port=server.port)  # taken


def test_a_version_gone_meanwhile_is_skipped_and_the_next_poll_finds_a_newer_one(tmp_path: Path) -> None:
    root, versions = tmp_path / "w", _versions(3)
    broadcast = FilesystemBroadcast(root, ["bf16"], keep=1)
    with WeightServer(root, TOKEN) as server:
        source = HttpVersions(server.url, TOKEN)
        watcher = WeightWatcher(source, "bf16")
        broadcast.publish(versions[0], 0)
        assert source.versions() == [0]
        broadcast.publish(versions[1], 1)  # deletes version 0 behind the listing the reader holds
        with pytest.raises(FileNotFoundError):
            source.read(0, "bf16.safetensors")
        assert watcher.poll()[0] == 1
        broadcast.publish(versions[2], 2)
        assert watcher.poll()[0] == 2


def test_nothing_is_served_without_the_runs_key(tmp_path: Path) -> None:
    root = tmp_path / "w"
    FilesystemBroadcast(root, ["bf16"]).publish(_versions(1)[0], 1)
    with WeightServer(root, TOKEN) as server:
        for key in (None, "", TOKEN, bearer_key(new_token()), bearer_key(TOKEN)[:-1]):  # none, the raw token, ...
            for path, method in (("/versions", "GET"), ("/versions/1/bf16.safetensors", "GET"),
                                 ("/versions/1/bf16.safetensors", "HEAD"), ("/nothing", "GET")):
                status, body = _get(server, path, method, key=key)
                assert status == 401 and b"safetensors" not in body, (key, path, method)
        assert _get(server, "/versions/1/bf16.safetensors")[0] == 200
        with pytest.raises(ConnectionError, match="401"):
            HttpVersions(server.url, new_token()).versions()  # another run's reader


class _Impostor(ThreadingHTTPServer):
    """Whatever answers at a port the reader was pointed at: a server of someone else's that relays the trainer's
    signed listing (it saw a reader's bearer key) but serves other bytes, or that writes a listing of its own."""

    def __init__(self, upstream: str, forge_listing: bool) -> None:
        self.upstream, self.forge_listing, self.keys_seen = upstream, forge_listing, []
        super().__init__(("127.0.0.1", 0), _ImpostorHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _ImpostorHandler(BaseHTTPRequestHandler):
    server: _Impostor

    def do_GET(self) -> None:  # noqa: N802
        import httpx

        self.server.keys_seen.append(self.headers.get("Authorization"))
        real = httpx.get(f"{self.server.upstream}{self.path}", headers={"Authorization": self.headers["Authorization"]})
        body, headers = real.content, {"X-Tracegym-Signature": real.headers.get("X-Tracegym-Signature", "")}
        if self.path == "/versions" and self.server.forge_listing:
            listing = json.loads(body)
            listing["versions"][0]["sha256"] = {name: "0" * 64 for name in listing["versions"][0]["files"]}
            body = json.dumps(listing).encode()
        elif self.path != "/versions":
            body = body[:-1] + bytes([body[-1] ^ 0x5A])  # other weights, same size
        self.send_response(real.status_code)
        for name, value in {**headers, "Content-Length": str(len(body))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def test_a_reader_refuses_weights_other_than_the_trainer_announced(tmp_path: Path) -> None:
    root, versions = tmp_path / "w", _versions(1)
    FilesystemBroadcast(root, ["bf16"]).publish(versions[0], 0)  # no deltas: no checksum inside the file
    with WeightServer(root, TOKEN) as server:
        relay = _Impostor(server.url, forge_listing=False)
        watcher = WeightWatcher(HttpVersions(relay.url, TOKEN), "bf16")
        with pytest.raises(ModelError, match="do not match their checksum"):
            watcher.poll()  # the relayed listing is the trainer's; the bytes are not what it announced
        assert watcher.rebuilt_from_whole == 1 and watcher.version is None
        relay.shutdown()

        forger = _Impostor(server.url, forge_listing=True)
        with pytest.raises(ConnectionError, match="not signed with this run's token"):
            HttpVersions(forger.url, TOKEN).versions()
        assert forger.keys_seen and TOKEN not in str(forger.keys_seen)  # the key it saw is not the token
        forger.shutdown()
        assert WeightWatcher(HttpVersions(server.url, TOKEN), "bf16").poll()[0] == 0  # the trainer's own: taken
