"""This process's connection to the Ray cluster of `async.ray.address`, shared by the sampler backend
(`async.backend: ray`) and the trainer's ranks (`parallel.launcher: ray`).

Ray's connection is one per process, so both hold the same one: the first to connect opens it, and the last to let
go shuts it down, if this process opened it (a connection someone else opened, a test's, is theirs to close). The
trainer's ranks connect before the samplers start and end before they stop, so neither may close it under the other.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from tracegym.errors import ConfigError

try:
    import ray
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ConfigError(f"async.backend: ray and parallel.launcher: ray need Ray, which this installation cannot import "
                      f"({e}). Fix: pip install -e '.[ray]', or set async.backend: processes and parallel.launcher: "
                      "spawn.") from e


LOCAL_NODE = "127.0.0.1"
"""The address of the Ray instance `address: local` starts: its GCS, raylet, workers and object transfers."""
_CLUSTERS_VAR = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
_PROBE_S = 5.0
"""How long a cluster's address may take to accept a TCP connection."""


class _Connection:
    holders = 0
    opened_here = False


def connect(address: str, timeout_s: float) -> None:
    """Join the cluster at `address` (local | auto | ray://host:port), unless this process is connected already;
    every call must be matched by one `release`. A `ray://` session that has not opened within `timeout_s` fails."""
    if not ray.is_initialized():
        _open(address, timeout_s)
        _Connection.opened_here = True
    _Connection.holders += 1


def release() -> None:
    """Let go of the connection; the last holder shuts it down if this process opened it."""
    _Connection.holders -= 1
    if _Connection.holders == 0 and _Connection.opened_here:
        ray.shutdown()
        _Connection.opened_here = False


def _open(address: str, timeout_s: float) -> None:
    _reachable(address)
    if address.startswith("ray://"):
        _within(address, timeout_s)
        return
    try:
        if address == "local":
            # Ray starts its workers at nice 15, below the trainer; on the trainer's machine the samplers are the
            # run's main work, as sampler processes are (a cluster's nodes: `RAY_worker_niceness=0 ray start`).
            os.environ.setdefault("RAY_worker_niceness", "0")
            # A new instance, even beside a running one, on this machine alone (`_loopback_only`), without a
            # dashboard, and with Ray's token authentication as Ray 2.59+ sets it up for a local instance
            # (RAY_AUTH_MODE unset: a token in ~/.ray/auth_token).
            with _loopback_only():
                ray.init(address="local", include_dashboard=False, _node_ip_address=LOCAL_NODE)
        else:
            ray.init(address=address)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise _unreachable(address, e) from e


def _within(address: str, timeout_s: float) -> None:
    """`ray.init` through the Ray client, on a thread of its own: a head whose client proxy accepted the connection
    but lost the session's server (ray-project/ray#63202) leaves the client waiting forever for its first reply."""
    failed: list[Exception] = []

    def join() -> None:
        try:
            ray.init(address=address)
        except (ConnectionError, RuntimeError, ValueError) as e:
            failed.append(e)

    opening = threading.Thread(target=join, name="ray-client-connect", daemon=True)
    opening.start()
    opening.join(timeout_s)
    if failed:
        raise _unreachable(address, failed[0]) from failed[0]
    if opening.is_alive():
        raise ConfigError(f"the Ray cluster at ray.address {address!r} accepted the connection but opened no client "
                          f"session within {timeout_s:g} s (async.ray.connect_timeout_s). A head on Ray 2.60 started "
                          "with gRPC's fork support on can lose the session's server as it starts (ray-project/ray"
                          "#63202). Fix: restart the head with GRPC_ENABLE_FORK_SUPPORT=false in its environment "
                          "(docs/ray.md), raise async.ray.connect_timeout_s if the head is only slow, or set "
                          "async.ray.address: local.")


def _unreachable(address: str, error: Exception) -> ConfigError:
    return ConfigError(f"could not reach the Ray cluster at ray.address {address!r}: {str(error).rstrip('.')}. "
                       "Fix: start it (`ray start --head`), point RAY_ADDRESS or async.ray.address at it, "
                       "or set async.ray.address: local.")


@contextmanager
def _loopback_only() -> Iterator[None]:
    """While a local instance starts: its node's address is 127.0.0.1, so that every process of it (GCS, raylet,
    workers, agents) listens on loopback. Ray 2.60 turns a loopback `_node_ip_address` into the address the host name
    resolves to, and binds every interface, unless clusters are off (`RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`, its
    single-machine mode); the processes it starts read the variable, this one Ray's constant."""
    from ray._private import ray_constants

    previous, flag = os.environ.get(_CLUSTERS_VAR), ray_constants.ENABLE_RAY_CLUSTER
    os.environ[_CLUSTERS_VAR], ray_constants.ENABLE_RAY_CLUSTER = "0", False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = flag
        if previous is None:
            os.environ.pop(_CLUSTERS_VAR, None)
        else:
            os.environ[_CLUSTERS_VAR] = previous


def _reachable(address: str) -> None:
    """Fail at once on a ray://host:port that nothing listens at, where Ray's client waits 30 s before giving up."""
    if not address.startswith("ray://"):
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=_PROBE_S).close()
    except (OSError, ValueError) as e:
        raise ConfigError(f"could not reach the Ray cluster at ray.address {address!r}: nothing answers at "
                          f"{host}:{port} ({e}). Fix: start it (`ray start --head`), point RAY_ADDRESS or "
                          "async.ray.address at it, or set async.ray.address: local.") from e


def cause(error: Exception) -> str:
    """The line of a Ray error's message that says why, else its first line."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return next((line for line in lines if "died because" in line), lines[0] if lines else type(error).__name__)
