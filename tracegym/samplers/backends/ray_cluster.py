"""This process's connection to the Ray cluster of `async.ray.address`, shared by the sampler backend
(`async.backend: ray`) and the trainer's ranks (`parallel.launcher: ray`).

Ray's connection is one per process, so both hold the same one: the first to connect opens it, and the last to let
go shuts it down, if this process opened it (a connection someone else opened, a test's, is theirs to close). The
trainer's ranks connect before the samplers start and end before they stop, so neither may close it under the other.
"""

from __future__ import annotations

import os
import socket

from tracegym.errors import ConfigError

try:
    import ray
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ConfigError(f"async.backend: ray and parallel.launcher: ray need Ray, which this installation cannot import "
                      f"({e}). Fix: pip install -e '.[ray]', or set async.backend: processes and parallel.launcher: "
                      "spawn.") from e


_PROBE_S = 5.0
"""How long a cluster's address may take to accept a TCP connection."""


class _Connection:
    holders = 0
    opened_here = False


def connect(address: str) -> None:
    """Join the cluster at `address` (local | auto | ray://host:port), unless this process is connected already;
    every call must be matched by one `release`."""
    if not ray.is_initialized():
        _open(address)
        _Connection.opened_here = True
    _Connection.holders += 1


def release() -> None:
    """Let go of the connection; the last holder shuts it down if this process opened it."""
    _Connection.holders -= 1
    if _Connection.holders == 0 and _Connection.opened_here:
        ray.shutdown()
        _Connection.opened_here = False


def _open(address: str) -> None:
    _reachable(address)
    try:
        if address == "local":
            # Ray starts its workers at nice 15, below the trainer; on the trainer's machine the samplers are the
            # run's main work, as sampler processes are (a cluster's nodes: `RAY_worker_niceness=0 ray start`).
            os.environ.setdefault("RAY_worker_niceness", "0")
            ray.init(address="local", include_dashboard=False)  # a new instance, even beside a running one
        else:
            ray.init(address=address)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise ConfigError(f"could not reach the Ray cluster at ray.address {address!r}: {str(e).rstrip('.')}. "
                          "Fix: start it (`ray start --head`), point RAY_ADDRESS or async.ray.address at it, "
                          "or set async.ray.address: local.") from e


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
