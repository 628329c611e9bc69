"""Weights through Ray's object store: the trainer's versions reach sampler actors on any node of the cluster.

The trainer still writes each version through `FilesystemBroadcast` (whole weights or a delta per precision, with
its checksum, in the run's folder: checkpoints and the process backend read it there). `RayBroadcast` then puts
each file's bytes into the object store (`ray.put`: the trainer owns them) and hands the listing
{version: {file name: ObjectRef}} of the versions the folder keeps to a small `VersionRegistry` actor. A sampler's
`WeightWatcher` reads through `RayVersions`, a `VersionSource`: a thread follows the registry's listing by long
poll, and `read` fetches a file's bytes from the object store (from another node: over the network). So the
watcher's logic is unchanged: it applies the deltas since the version it holds, starts (or catches up) from the
newest whole version, and verifies what it rebuilt against the checksum, going back to whole weights once on a
mismatch. The bytes a sampler reads per sync are the file of its precision, the delta's size (or, for a pool served
a LoRA adapter, the adapter's file: `tracegym.samplers.weights.lora_adapters`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import ray
from ray.exceptions import RayError

from tracegym.samplers.weights.folder import FilesystemBroadcast, WeightBroadcast, stable_versions

if TYPE_CHECKING:
    from torch import Tensor

    from tracegym.samplers.weights.lora_adapters import AdapterWeights

Listing = dict[int, dict[str, "ray.ObjectRef[bytes]"]]
"""{version: {file name: ObjectRef of its bytes}}."""
_LONG_POLL_S = 10.0


class VersionRegistry:
    """An async actor holding the current listing; `newer` answers as soon as it changes (a long poll)."""

    def __init__(self) -> None:
        self._listing: Listing = {}
        self._generation = 0
        self._changed = asyncio.Event()

    async def set(self, listing: Listing) -> None:
        self._listing = listing
        self._generation += 1
        self._changed.set()
        self._changed = asyncio.Event()

    async def newer(self, generation: int, timeout_s: float) -> tuple[int, Listing]:
        """The listing once its generation differs from `generation`, or as it is after `timeout_s`."""
        if generation == self._generation:
            try:
                await asyncio.wait_for(self._changed.wait(), timeout_s)
            except TimeoutError:
                pass
        return self._generation, self._listing


class RayBroadcast(WeightBroadcast):
    """Publishes through `files`, then puts the version's files into the object store and lists them."""

    def __init__(self, files: FilesystemBroadcast, registry: Any) -> None:
        self.files = files
        self.registry = registry
        self._refs: Listing = {}

    def publish(self, state_dict: Mapping[str, Tensor], version: int,
                adapter: AdapterWeights | None = None) -> dict[str, float]:
        stats = self.files.publish(state_dict, version, adapter)
        folder = self.files.root / f"step_{version}"
        self._refs[version] = {p.name: ray.put(p.read_bytes()) for p in sorted(folder.glob("*.safetensors"))}
        kept = set(stable_versions(self.files.root))  # as the folder keeps them: deltas after the newest whole
        self._refs = {v: refs for v, refs in self._refs.items() if v in kept}
        # Nested in a dict, the refs travel as refs (the registry borrows them) rather than as their bytes.
        ray.get(self.registry.set.remote(dict(self._refs)))
        return stats


class RayVersions:
    """A `VersionSource` over the registry's listing; picklable (the sampler actor gets it in its spec)."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry
        self._listing: Listing = {}
        self._lock = threading.Lock()
        self._first = threading.Event()
        self._follower: threading.Thread | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"registry": self.registry}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["registry"])  # type: ignore[misc]

    def __str__(self) -> str:
        return "Ray's object store"

    def versions(self) -> list[int]:
        return sorted(self._current())

    def has(self, version: int, name: str) -> bool:
        return name in self._current().get(version, {})

    def read(self, version: int, name: str) -> bytes:
        ref = self._current().get(version, {}).get(name)
        if ref is None:
            raise FileNotFoundError(f"version {version} has no {name} in Ray's object store (no longer kept)")
        try:
            return ray.get(ref)
        except RayError as e:  # the trainer that owns it is gone, or its node: as a file deleted under the reader
            raise FileNotFoundError(f"version {version}'s {name} is gone from Ray's object store: {e}") from e

    def _current(self) -> Listing:
        with self._lock:
            if self._follower is None:
                self._follower = threading.Thread(target=self._follow, name="tracegym-ray-versions", daemon=True)
                self._follower.start()
        self._first.wait(timeout=_LONG_POLL_S)
        with self._lock:
            return self._listing

    def _follow(self) -> None:
        generation = -1
        while True:
            try:
                generation, listing = ray.get(self.registry.newer.remote(generation, _LONG_POLL_S))
            except RayError:
                self._first.set()
                return  # the registry went with the trainer: no version will come any more
            with self._lock:
                self._listing = listing
            self._first.set()
