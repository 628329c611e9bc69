"""Weight transport from the trainer to the samplers: one abstract method, and a filesystem backend.

The trainer calls `WeightBroadcast.publish(state_dict, version)` after every optimizer step; each sampler
polls a `WeightWatcher` between generation batches and loads what it finds. The filesystem backend lays
the versions out as

    ROOT/step_12/bf16.safetensors        whole weights, one file per precision some sampler pool uses, or
    ROOT/step_13/bf16.delta.safetensors  with `delta` set, what changed since version 12 in that precision
                                         (`tracegym.samplers.weights.deltas`): one uint8 payload per changed tensor
    ROOT/step_13/bf16.adapter.safetensors  with `adapter_precisions`, a LoRA adapter alone, for pools that serve
                                         it over base weights they load themselves
                                         (`tracegym.samplers.weights.lora_adapters`)
    ROOT/step_13/STABLE                  touched last: a folder without it is still being written

A version is written into a hidden temporary folder, renamed to `step_N`, and only then marked
`STABLE`, so a reader never loads half a version. The newest `keep` versions stay on disk; older ones
are deleted, except that the newest whole version and every delta after it always stay. Tied weights (SmolLM2's
embedding and output layer share one tensor) are written once and listed under the file's `aliases` metadata, which
safetensors needs anyway: it refuses shared tensors.

With deltas, the broadcast keeps a copy of the view it last published per precision and writes whole weights at
the first version, every `full_every` versions and after any gap in the versions; a reader holding version v-1
applies the delta of v, one that holds nothing (a sampler just started or restarted) loads the newest whole version
and applies the deltas after it in order. With deltas every file carries the xxh3-128 checksum of its version's
view; a reader verifies what it rebuilt, and on a mismatch (or a delta that does not decode: damaged on the
way) rebuilds from whole weights once before it gives up.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

import torch
import zstandard
from safetensors import SafetensorError
from torch import Tensor

from tracegym.errors import ModelError
from tracegym.models.load import DTYPES, Precision
from tracegym.samplers.weights.deltas import (
    Encoding,
    TensorDelta,
    apply_tensor,
    checksum,
    encode_tensor,
)
from tracegym.samplers.weights.lora_adapters import AdapterWeights, write_adapter

STABLE = "STABLE"
TOKENIZER_DIR = "tokenizer"
"""A folder beside the versions where the trainer saves its tokenizer for the samplers."""
_STEP = re.compile(r"^step_(\d+)$")
DELTA_SUFFIX = ".delta.safetensors"
View = dict[str, Tensor]


class WeightBroadcast(ABC):
    """Sends the trainer's weights to the samplers."""

    @abstractmethod
    def publish(self, state_dict: Mapping[str, Tensor], version: int,
                adapter: AdapterWeights | None = None) -> dict[str, float]:
        """Make `state_dict` (the weights after optimizer step `version`) the newest version readers see; returns
        the figures of this sync (`sync/bytes` written, `sync/dense_bytes` whole weights would take, ...).
        `adapter`: with model.lora, the adapter alone, for readers that serve it over the base weights."""


def precision_view(state_dict: Mapping[str, Tensor], precision: Precision,
                   copy: bool = False) -> tuple[View, dict[str, str]]:
    """The floating-point tensors cast to `precision` (others as they are), with shared tensors kept once; `copy`
    makes every tensor a copy even where no cast was needed (a snapshot must not follow the live weights).

    Returns (tensors, aliases): aliases maps a left-out name to the name whose tensor it shares.
    """
    dtype = DTYPES[precision]
    out: dict[str, Tensor] = {}
    aliases: dict[str, str] = {}
    seen: dict[tuple[int, int, tuple[int, ...], tuple[int, ...]], str] = {}
    for name, tensor in state_dict.items():
        key = (tensor.untyped_storage().data_ptr(), int(tensor.storage_offset()), tuple(tensor.shape),
               tensor.stride())
        if key in seen:
            aliases[name] = seen[key]
            continue
        seen[key] = name
        view = tensor.detach().to("cpu", dtype=dtype if tensor.is_floating_point() else tensor.dtype, copy=copy)
        out[name] = view.contiguous()
    return out, aliases


class FilesystemBroadcast(WeightBroadcast):
    """Writes `ROOT/step_N/{precision}.safetensors` (or, with `delta`, `{precision}.delta.safetensors`) then
    `STABLE`; keeps the newest `keep` versions and the newest whole version with the deltas after it.

    A new broadcast starts from an empty folder: versions left by an earlier run (a resumed run may have
    gone further than its checkpoint) would otherwise look newer than what this run publishes. Other
    entries in the folder (the samplers' tokenizer) are left alone by the cleanup.

    `adapter_precisions`: also write each version's LoRA adapter alone in these precisions (`publish` is then given
    it), for pools that serve it over base weights of their own; `precisions` may then be empty (no pool takes
    merged weights).
    """

    def __init__(self, root: Path, precisions: Iterable[Precision] = ("fp32",), keep: int = 3,
                 delta: Encoding | None = None, full_every: int = 10,
                 adapter_precisions: Iterable[Precision] = ()) -> None:
        if keep < 1 or full_every < 1:
            raise ValueError("a weight broadcast keeps at least one version and writes whole weights at least "
                             "every version")
        self.root = Path(root)
        self.precisions = tuple(dict.fromkeys(precisions))
        self.adapter_precisions = tuple(dict.fromkeys(adapter_precisions))
        self.keep = keep
        self.delta = delta
        self.full_every = full_every
        shutil.rmtree(self.root, ignore_errors=True)
        self.root.mkdir(parents=True, exist_ok=True)
        self.bytes_written = 0
        self._views: dict[str, View] = {}  # precision -> the view of version self._last
        self._last: int | None = None

    def publish(self, state_dict: Mapping[str, Tensor], version: int,
                adapter: AdapterWeights | None = None) -> dict[str, float]:
        if self.adapter_precisions and adapter is None:
            raise ValueError("this broadcast writes an adapter with every version; publish was given none")
        tmp = self.root / f".step_{version}.tmp-{uuid.uuid4().hex[:8]}"
        tmp.mkdir()
        whole = (self.delta is None or self._last is None or version != self._last + 1
                 or version % self.full_every == 0)
        stats = {"sync/bytes": 0.0, "sync/dense_bytes": 0.0, "sync/changed": 0.0, "sync/elements": 0.0}
        published = repr(time.time())  # wall clock: a reader on another machine measures its sync latency from it
        for precision in self.precisions:
            tensors, aliases = precision_view(state_dict, precision, copy=self.delta is not None)
            base = self._views.get(precision)
            meta = {"aliases": json.dumps(aliases), "version": str(version), "delta": self.delta or "none",
                    "published": published}
            if self.delta is not None:  # what a reader rebuilds through a chain of deltas is checked against it
                meta["checksum"] = checksum(tensors)
            if whole or self.delta is None or base is None or base.keys() != tensors.keys():
                path, changed = _write_whole(tmp, precision, tensors, meta), None
            else:
                path, changed = _write_delta(tmp, precision, tensors, base, meta, self.delta, version - 1)
            if self.delta is not None:
                self._views[precision] = tensors
            size, elements = path.stat().st_size, sum(t.numel() for t in tensors.values())
            self.bytes_written += size
            stats["sync/bytes"] += size
            stats["sync/dense_bytes"] += sum(t.numel() * t.element_size() for t in tensors.values())
            stats["sync/elements"] += elements
            stats["sync/changed"] += changed if changed is not None else elements  # whole weights: all of them
        if adapter is not None:
            self._write_adapters(tmp, adapter, {"version": str(version), "published": published}, stats)
        self._last = version
        final = self.root / f"step_{version}"
        shutil.rmtree(final, ignore_errors=True)  # a version published again replaces the old files
        os.rename(tmp, final)
        (final / STABLE).touch()
        self._clean(version)
        stats["sync/whole"] = float(whole)
        return stats

    def _write_adapters(self, folder: Path, adapter: AdapterWeights, meta: dict[str, str],
                        stats: dict[str, float]) -> None:
        """The adapter alone in each adapter precision, always whole (`tracegym.samplers.weights.lora_adapters`)."""
        for precision in self.adapter_precisions:
            size = write_adapter(folder, precision, adapter, meta).stat().st_size
            elements = sum(t.numel() for t in adapter.tensors.values())
            self.bytes_written += size
            stats["sync/bytes"] += size
            stats["sync/dense_bytes"] += elements * DTYPES[precision].itemsize
            stats["sync/elements"] += elements
            stats["sync/changed"] += elements

    def _clean(self, newest: int) -> None:
        """Delete every version but the newest `keep` up to `newest` (any above it is an abandoned future), except
        the newest whole version at or below `newest` and the deltas after it: a reader starts from those."""
        versions = [v for v in stable_versions(self.root) if v <= newest]
        kept = set(sorted(versions, reverse=True)[: self.keep])
        # adapters alone (no merged weights): every version is whole
        whole = [v for v in versions if not self.precisions or _is_whole(self.root / f"step_{v}", self.precisions[0])]
        if whole:
            kept.update(v for v in versions if v >= max(whole))
        for entry in self.root.iterdir():
            match = _STEP.match(entry.name)
            if match and int(match.group(1)) not in kept:
                shutil.rmtree(entry, ignore_errors=True)


def _write_whole(folder: Path, precision: str, tensors: View, meta: dict[str, str]) -> Path:
    from safetensors.torch import save_file

    path = folder / f"{precision}.safetensors"
    save_file(tensors, str(path), metadata=meta)
    return path


def _write_delta(folder: Path, precision: str, tensors: View, base: View, meta: dict[str, str],
                 encoding: Encoding, base_version: int) -> tuple[Path, int]:
    """One uint8 tensor per changed tensor (its delta's payload); the layout of each in the `entries` metadata."""
    from safetensors.torch import save_file

    # The publish waits for this; zstd and torch release the GIL, so tensors compress on every core at once.
    with ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:
        encoded = pool.map(lambda name: encode_tensor(tensors[name], base[name], encoding), list(tensors))
    deltas = {name: delta for name, delta in zip(tensors, encoded, strict=True) if delta is not None}
    payloads = {name: torch.frombuffer(bytearray(d.payload), dtype=torch.uint8) for name, d in deltas.items()}
    entries = {name: {"encoding": d.encoding, "changed": d.changed, "gap_width": d.gap_width}
               for name, d in deltas.items()}
    path = folder / f"{precision}{DELTA_SUFFIX}"
    save_file(payloads, str(path), metadata={**meta, "base_version": str(base_version), "entries": json.dumps(entries)})
    return path, sum(d.changed for d in deltas.values())


def _is_whole(folder: Path, precision: str) -> bool:
    return (folder / f"{precision}.safetensors").is_file()


def stable_versions(root: Path) -> list[int]:
    """The versions under `root` whose folder is complete (has `STABLE`)."""
    if not root.is_dir():
        return []
    out = []
    for entry in root.iterdir():
        match = _STEP.match(entry.name)
        if match and (entry / STABLE).is_file():
            out.append(int(match.group(1)))
    return out


class VersionSource(Protocol):
    """Where a reader finds the published versions: the broadcast's folder, or a copy of it served over the
    network (the trainer's HTTP endpoint, Ray's object store). Files are named as in the folder:
    `{precision}.safetensors` (whole weights) or `{precision}.delta.safetensors`."""

    def versions(self) -> list[int]:
        """The complete versions available now."""

    def has(self, version: int, name: str) -> bool:
        """Whether version `version` has file `name`."""

    def read(self, version: int, name: str) -> bytes:
        """The bytes of file `name` of `version`; FileNotFoundError when it is gone (deleted as newer ones came)."""


class FolderVersions:
    """The broadcast's own folder, read directly (samplers on the trainer's machine or a shared disk)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def __str__(self) -> str:
        return str(self.root)

    def versions(self) -> list[int]:
        return stable_versions(self.root)

    def has(self, version: int, name: str) -> bool:
        return (self.root / f"step_{version}" / name).is_file()

    def read(self, version: int, name: str) -> bytes:
        return (self.root / f"step_{version}" / name).read_bytes()


class WeightWatcher:
    """The reader side: `poll()` returns the newest complete version once, when it is newer than the last, rebuilt
    from the version it holds and the deltas since, or from the newest whole version and the deltas after it."""

    def __init__(self, source: VersionSource | Path, precision: Precision = "fp32") -> None:
        self.source: VersionSource = FolderVersions(source) if isinstance(source, Path) else source
        self.precision = precision
        self.bytes_read = 0
        """Bytes of version files read so far: on the wire, for a source across the network."""
        self.version: int | None = None
        self._held: View | None = None  # the view of `version`, tied tensors once, and their aliases
        self._last_published: float | None = None
        self._aliases: dict[str, str] = {}
        self.rebuilt_from_whole = 0  # times a checksum mismatch sent this reader back to whole weights
        self.published: float | None = None
        """When the trainer began publishing `version` (its wall clock, from the files' metadata; None if unknown)."""
        self._deltas_follow = False  # whether the broadcast publishes deltas (its files say)

    def latest(self) -> int | None:
        versions = self.source.versions()
        return max(versions) if versions else None

    def poll(self) -> tuple[int, dict[str, Tensor]] | None:
        """(version, state_dict) of a version newer than the last one returned, or None.

        A version deleted while being read (the trainer published `keep` more meanwhile) is skipped: the
        next poll finds a newer one.
        """
        newest = self.latest()
        if newest is None or (self.version is not None and newest <= self.version):
            return None
        try:
            try:
                tensors, aliases = self._rebuild(newest, use_held=True)
            except ChecksumMismatch:
                self.rebuilt_from_whole += 1
                tensors, aliases = self._rebuild(newest, use_held=False)
        except FileNotFoundError:
            return None
        except ChecksumMismatch as e:
            raise ModelError(f"weights of version {newest} from {self.source} do not match their checksum (or do not "
                             f"decode) even when rebuilt from whole weights ({e}). Fix: check what lies between the "
                             "trainer and this sampler (disk, network, proxy), or restart the run with "
                             "async.weight_delta: none, and report it.") from None
        # A reader keeps a copy of what it read only where deltas will follow (a sampler's weights would else be
        # in memory twice for nothing).
        self.version, self._aliases = newest, aliases
        self.published = self._last_published
        self._held = tensors if self._deltas_follow else None
        state_dict = dict(tensors)
        for name, source in aliases.items():
            state_dict[name] = state_dict[source]
        return newest, state_dict

    def _rebuild(self, newest: int, use_held: bool) -> tuple[View, dict[str, str]]:
        """The view of `newest` and its aliases: the deltas from the held version (or from the newest whole version
        at or below `newest`) applied in order, then checked against the checksum `newest` was published with."""
        start = self.version if use_held and self._held is not None else None
        chain: list[int] = []
        v = newest
        while v != start and not self.source.has(v, f"{self.precision}.safetensors"):
            if v <= 0:
                raise FileNotFoundError(f"no whole weights in {self.source} to rebuild version {newest} from")
            chain.append(v)
            v -= 1
        if v == start and self._held is not None:
            tensors, aliases, expected = dict(self._held), self._aliases, None
        else:
            data = self._read(v, f"{self.precision}.safetensors")
            try:
                tensors, meta = _load(data)
                aliases = json.loads(meta.get("aliases", "{}"))
            except _UNDECODABLE as e:
                raise ChecksumMismatch(f"version {v}'s whole weights do not decode ({type(e).__name__}: {e})"
                                        ) from None
            expected = meta.get("checksum")
            self._deltas_follow = meta.get("delta", "none") != "none"
            self._last_published = _float_or_none(meta.get("published"))
        for u in reversed(chain):
            data = self._read(u, f"{self.precision}{DELTA_SUFFIX}")
            try:
                deltas, meta = _deltas(data)
                base = int(meta["base_version"])
                if base == u - 1:
                    tensors = _applied(tensors, deltas)
                    aliases = json.loads(meta.get("aliases", "{}"))
            except _UNDECODABLE as e:  # damaged on the way (a proxy, a flaky link): caught as the checksum would be
                raise ChecksumMismatch(f"version {u}'s delta does not decode ({type(e).__name__}: {e})") from None
            if base != u - 1:
                raise FileNotFoundError(f"version {u}'s delta is against {base}, not {u - 1}")
            expected = meta.get("checksum")
            self._last_published = _float_or_none(meta.get("published"))
        if expected is not None and checksum(tensors) != expected:
            raise ChecksumMismatch(f"version {newest}, rebuilt from version {v}")
        return tensors, aliases

    def _read(self, version: int, name: str) -> bytes:
        data = self.source.read(version, name)
        self.bytes_read += len(data)
        return data


def _applied(tensors: View, deltas: dict[str, TensorDelta]) -> View:
    """`tensors` with their deltas applied (decompression releases the GIL: every core at once)."""
    with ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:
        applied = dict(zip(deltas, pool.map(lambda name: apply_tensor(tensors[name], deltas[name]), list(deltas)),
                           strict=True))
    return {name: applied.get(name, tensor) for name, tensor in tensors.items()}


class ChecksumMismatch(Exception):
    """Weights that are not what the trainer published: a rebuilt view whose checksum differs, a file that does not
    decode, or (raised by a `VersionSource`'s `read`) bytes whose digest differs from the one the trainer announced.
    The watcher rebuilds from whole weights once, then stops with a ModelError."""


_UNDECODABLE = (ValueError, KeyError, TypeError, RuntimeError, struct.error, SafetensorError, zstandard.ZstdError)
"""What decoding a damaged delta file raises: a bad header (JSON, safetensors), zstd frames, payloads that do not
fit their tensors."""


def _float_or_none(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def _load(data: bytes) -> tuple[View, dict[str, str]]:
    """The tensors and metadata of a safetensors file's bytes."""
    from safetensors.torch import load

    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    return load(data), dict(header.get("__metadata__") or {})


def _deltas(data: bytes) -> tuple[dict[str, TensorDelta], dict[str, str]]:
    payloads, meta = _load(data)
    entries = json.loads(meta["entries"])
    deltas = {name: TensorDelta(e["encoding"], e["changed"], payloads[name].numpy().tobytes(), e["gap_width"])
              for name, e in entries.items()}
    return deltas, meta
