"""A `ray://` head that accepts the client but never opens its session (ray-project/ray#63202: the client proxy's
server for the session died as it started) stops the run with a typed error, instead of a client waiting forever.

The head here is a gRPC server on 127.0.0.1 speaking Ray's own client protocol (`ray.core.generated`): it answers the
client's readiness ping and takes its data and log streams, then never replies, as such a proxy does."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import pytest

pytest.importorskip("ray")

import grpc  # noqa: E402  (installed with Ray)
from ray.core.generated import ray_client_pb2, ray_client_pb2_grpc  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


class _Driver(ray_client_pb2_grpc.RayletDriverServicer):
    def ClusterInfo(self, request: ray_client_pb2.ClusterInfoRequest,  # noqa: N802  (Ray's method name)
                    context: grpc.ServicerContext) -> ray_client_pb2.ClusterInfoResponse:
        return ray_client_pb2.ClusterInfoResponse(type=request.type, json="true")


class _Silent(ray_client_pb2_grpc.RayletDataStreamerServicer, ray_client_pb2_grpc.RayletLogStreamerServicer):
    """Reads what the client sends and answers nothing, until the server stops."""

    def __init__(self, stopped: threading.Event) -> None:
        self.stopped = stopped

    def Datapath(self, requests: Iterator[ray_client_pb2.DataRequest],  # noqa: N802
                 context: grpc.ServicerContext) -> Iterator[ray_client_pb2.DataResponse]:
        return self._drain(requests)

    def Logstream(self, requests: Iterator[ray_client_pb2.LogSettingsRequest],  # noqa: N802
                  context: grpc.ServicerContext) -> Iterator[ray_client_pb2.LogData]:
        return self._drain(requests)

    def _drain(self, requests: Iterator[object]) -> Iterator[ray_client_pb2.DataResponse]:
        threading.Thread(target=_read_all, args=(requests,), daemon=True).start()
        self.stopped.wait()
        yield from ()


def _read_all(requests: Iterator[object]) -> None:
    try:
        for _ in requests:
            pass
    except grpc.RpcError:  # the client went away
        return


@pytest.fixture
def silent_head() -> Iterator[int]:
    stopped = threading.Event()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    silent = _Silent(stopped)
    ray_client_pb2_grpc.add_RayletDriverServicer_to_server(_Driver(), server)
    ray_client_pb2_grpc.add_RayletDataStreamerServicer_to_server(silent, server)
    ray_client_pb2_grpc.add_RayletLogStreamerServicer_to_server(silent, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield port
    stopped.set()
    server.stop(grace=None)


def test_a_head_that_never_opens_the_session_fails_with_the_fix(silent_head: int, tmp_path: Path) -> None:
    join = ("from tracegym.samplers.backends.ray_cluster import connect\n"
            f"connect('ray://127.0.0.1:{silent_head}', 3)\n")
    done = subprocess.run([sys.executable, "-c", join], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)})
    assert done.returncode != 0
    assert "tracegym.errors.ConfigError" in done.stderr
    assert "opened no client session within 3 s" in done.stderr
    assert "GRPC_ENABLE_FORK_SUPPORT=false" in done.stderr
