"""The Ray backend (`async.backend: ray`): each sampler a Ray actor placed by its pool's resource request.

The orchestrator (`AsyncRollouts`) runs unchanged: credits, the staleness bound, task order, heartbeats and
replacement are its own. This module only starts samplers and carries their messages:

- An actor (`SamplerActor`, one per sampler id and life) runs the worker's own `serve` (`tracegym.samplers.worker`)
  in a thread of its process, over a local pipe, and relays that pipe: `send` writes a message into it, and
  `receive` (a long poll) returns what the worker sent, with the worker's exit code once it has ended. The torch
  work runs on that one thread, as in a sampler process.
- `RayLink` keeps one `receive` pending per actor; when it completes, a byte on a local pipe wakes the monitor, so
  a group is read as soon as it arrives. An actor that dies (`ActorDiedError`: killed, crashed, or gone with its
  node) ends the link, and `exit_reason()` says which; a node that is no longer alive in the cluster is counted
  once in `nodes_lost` (stats: `source/nodes_lost` in the store), and the orchestrator requeues the actor's groups
  and starts a replacement, which Ray places where the pool's resources remain.
- The weights go through Ray's object store (`tracegym.samplers.weights.object_store`); the trainer's tokenizer travels
as
  bytes through it too and is written to a temporary folder on the actor's node. The model folder (its config: the
  weights come from the trainer) and the task set are read at the same paths on every node: a shared disk, or the
  same image.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracegym.errors import ConfigError

try:
    import ray
    from ray.exceptions import ActorDiedError, GetTimeoutError, RayError
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ConfigError(f"async.backend: ray needs Ray, which this installation cannot import ({e}). "
                      "Fix: pip install -e '.[ray]', or set async.backend: processes.") from e

from tracegym.samplers.backends.ray_cluster import cause, connect, release
from tracegym.samplers.weights.object_store import RayBroadcast, RayVersions, VersionRegistry

if TYPE_CHECKING:
    from tracegym.samplers.config import RaySection, SamplerPool
    from tracegym.samplers.orchestrator import SamplerLink
    from tracegym.samplers.weights.folder import FilesystemBroadcast, WeightBroadcast
    from tracegym.samplers.worker import SamplerSpec

_RECEIVE_S = 5.0
"""How long one `receive` waits for a message (a beat comes every half second while the worker runs)."""
_STOP_S = 15.0


class SamplerActor:
    """One sampler in a Ray actor: the worker's `serve` in a thread, relayed over a local pipe."""

    def __init__(self, spec: SamplerSpec, tokenizer_files: dict[str, bytes]) -> None:
        folder = Path(tempfile.mkdtemp(prefix="tracegym-tokenizer-"))
        for name, data in tokenizer_files.items():
            (folder / name).write_bytes(data)
        self._conn, child = multiprocessing.Pipe(duplex=True)
        self._inbox: deque[tuple[Any, ...]] = deque()
        self._cond = threading.Condition()
        self._code: int | None = None
        self._ended = False
        self._server = threading.Thread(target=self._serve, args=(replace(spec, tokenizer_dir=folder), child, folder),
                                        name="tracegym-sampler", daemon=True)
        self._server.start()
        threading.Thread(target=self._relay, name="tracegym-relay", daemon=True).start()

    def where(self) -> tuple[str, int]:
        """The actor's node id and process id."""
        return ray.get_runtime_context().get_node_id(), os.getpid()

    @ray.method(concurrency_group="inbox")  # one thread: messages reach the worker in the order they were sent
    def send(self, message: tuple[Any, ...]) -> None:
        self._conn.send(message)

    def receive(self, timeout_s: float) -> tuple[list[tuple[Any, ...]], int | None]:
        """What the worker sent since the last call, waiting up to `timeout_s` for something; and its exit code,
        once it has ended and everything it sent is in this answer."""
        with self._cond:
            self._cond.wait_for(lambda: self._inbox or self._ended, timeout=timeout_s)
            messages = list(self._inbox)
            self._inbox.clear()
            return messages, self._code if self._ended else None

    def _serve(self, spec: SamplerSpec, child: Any, folder: Path) -> None:
        from tracegym.samplers.worker import serve

        code = 1  # unless `serve` returns one: it raised past its own reporting
        try:
            code = serve(spec, child)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
            self._code = code

    def _relay(self) -> None:
        """The worker's messages into the inbox until it has ended and the pipe holds no more (its last words are
        in the pipe by then); then the end, with its exit code."""
        while self._code is None or self._conn.poll():
            try:
                if not self._conn.poll(0.2):
                    continue
                message = self._conn.recv()
            except (EOFError, OSError):
                break  # the worker's end of the pipe is closed: it has ended
            with self._cond:
                self._inbox.append(message)
                self._cond.notify_all()
        self._server.join()
        with self._cond:
            self._ended = True
            self._cond.notify_all()


class RayLink:
    """A sampler actor as the orchestrator sees it (a `SamplerLink`)."""

    def __init__(self, actor: Any, backend: RayBackend) -> None:
        self.actor = actor
        self.backend = backend
        self._where = actor.where.remote().future()
        self._node: str | None = None
        self._pid: int | None = None
        self._ended: str | None = None
        self._wake_r, self._wake_w = multiprocessing.Pipe(duplex=False)
        self._pending: Any = None
        self._future: Future | None = None
        self._ask()

    @property
    def pid(self) -> int | None:
        self._learn_where()
        return self._pid

    def send(self, message: tuple[Any, ...]) -> None:
        if self._ended is not None:
            raise OSError(f"the sampler actor {self._ended}")
        self.actor.send.remote(message)

    def receive(self) -> list[tuple[Any, ...]]:
        while self._wake_r.poll():
            self._wake_r.recv_bytes()
        if self._ended is not None:
            raise EOFError(self._ended)
        if self._future is None or not self._future.done():
            return []
        try:
            messages, code = ray.get(self._pending)
        except RayError as e:
            self._ended = self._death(e)
            raise EOFError(self._ended) from None
        if code is None:
            self._ask()
        else:
            self._ended = f"exited with code {code}"
        return messages

    def exit_reason(self) -> str | None:
        return self._ended

    def waitables(self) -> list[Any]:
        return [] if self._wake_r.closed else [self._wake_r]

    def kill(self) -> None:
        self._ended = self._ended or "was killed"
        try:
            ray.kill(self.actor, no_restart=True)
        except (RayError, ValueError):
            pass  # already gone
        self._wake_r.close()
        self._wake_w.close()

    def wait_ended(self, deadline: float) -> None:
        """Read (and discard) what a stopping sampler still sends until its worker has ended, or `deadline`."""
        while self._ended is None and self._pending is not None:
            try:
                _, code = ray.get(self._pending, timeout=max(0.0, deadline - time.monotonic()))
            except (GetTimeoutError, RayError):
                return
            if code is not None:
                return
            self._ask()

    def _ask(self) -> None:
        self._pending = self.actor.receive.remote(_RECEIVE_S)
        self._future = self._pending.future()
        self._future.add_done_callback(self._ring)

    def _ring(self, _: Future) -> None:
        try:
            self._wake_w.send_bytes(b"")
        except (OSError, ValueError):
            pass  # the link is closed: nobody waits on it

    def _learn_where(self) -> None:
        if self._pid is None and self._where.done() and self._where.exception() is None:
            self._node, self._pid = self._where.result()

    def _death(self, error: RayError) -> str:
        """How the actor ended: with its node (counted), failing to start, or on its own."""
        self._learn_where()
        if self._node is not None and not self.backend.node_alive(self._node):
            self.backend.lost_nodes.add(self._node)
            return f"lost its node {self._node[:12]} (Ray: the actor died with it)"
        if isinstance(error, ActorDiedError) and error.actor_init_failed:
            return f"could not start as a Ray actor: {cause(error)}"
        return f"ended: its Ray actor died ({cause(error)})"


class RayBackend:
    """Starts samplers as Ray actors on the cluster `async.ray.address` names."""

    def __init__(self, settings: RaySection) -> None:
        self.settings = settings
        self.lost_nodes: set[str] = set()
        self._connected = False
        self._registry: Any = None
        self._versions: RayVersions | None = None
        self._tokenizer: Any = None

    def weight_broadcast(self, files: FilesystemBroadcast) -> WeightBroadcast:
        self._connect()
        registry_node = ray.get_runtime_context().get_node_id()
        # On the trainer's node: a node lost must not take every sampler's weights with it.
        self._registry = ray.remote(VersionRegistry).options(
            num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(registry_node, soft=False)).remote()
        self._versions = RayVersions(self._registry)
        return RayBroadcast(files, self._registry)

    def start(self, spec: SamplerSpec, pool: SamplerPool) -> RayLink:
        self._connect()
        if self._tokenizer is None:  # saved by the trainer before the first sampler starts
            self._tokenizer = ray.put(_folder_files(spec.tokenizer_dir))
        if self._versions is not None:
            spec = replace(spec, weights=self._source(spec, pool))
        actor = _ACTOR.options(**_actor_options(pool)).remote(spec, self._tokenizer)
        return RayLink(actor, self)

    def stop(self, links: Sequence[SamplerLink]) -> None:
        mine = [link for link in links if isinstance(link, RayLink)]  # the links this backend started
        for link in mine:
            try:
                link.send(("stop",))
            except OSError:
                pass  # already gone
        deadline = time.monotonic() + _STOP_S
        for link in mine:
            link.wait_ended(deadline)
        for link in mine:
            link.kill()

    def close(self) -> None:
        if self._registry is not None:
            ray.kill(self._registry, no_restart=True)
            self._registry = None
        if self._connected:
            release()
            self._connected = False

    def stats(self) -> dict[str, float]:
        return {"source/nodes_lost": float(len(self.lost_nodes))}

    def node_alive(self, node_id: str) -> bool:
        return any(n["NodeID"] == node_id and n["Alive"] for n in ray.nodes())

    def _source(self, spec: SamplerSpec, pool: SamplerPool) -> Any:
        """Where the sampler reads the versions: Ray's object store, or the trainer's weight endpoint for a pool with
        `weights: http` (already set on its spec)."""
        return spec.weights if pool.weights == "http" else self._versions

    def _connect(self) -> None:
        if not self._connected:
            connect(self.settings.address, self.settings.connect_timeout_s)
            self._connected = True


def _actor_options(pool: SamplerPool) -> dict[str, Any]:
    options = pool.ray.actor_options(cpus=float(pool.threads), gpus=float(pool.device.startswith("cuda")))
    options["max_restarts"] = 0  # the orchestrator replaces a dead sampler itself, and requeues its groups
    return options


def _folder_files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


# ray.remote's overloads leave out the actor options (concurrency_groups, max_concurrency) it takes
_ACTOR = ray.remote(concurrency_groups={"inbox": 1}, max_concurrency=4)(SamplerActor)  # type: ignore[call-overload]
