"""Weight transport from the trainer to the samplers: one abstract method, and a filesystem backend.

The trainer calls `WeightBroadcast.publish(state_dict, version)` after every optimizer step; each sampler
polls a `WeightWatcher` between generation batches and loads what it finds. The filesystem backend lays
the versions out as

    ROOT/step_12/bf16.safetensors     one file per precision some sampler pool uses
    ROOT/step_12/STABLE               touched last: a folder without it is still being written

A version is written into a hidden temporary folder, renamed to `step_N`, and only then marked
`STABLE`, so a reader never loads half a version. The newest `keep` versions stay on disk; older ones
are deleted. Tied weights (SmolLM2's embedding and output layer share one tensor) are written once and
listed under the file's `aliases` metadata, which safetensors needs anyway: it refuses shared tensors.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from pathlib import Path

from torch import Tensor

from tracegym.models.load import DTYPES, Precision

STABLE = "STABLE"
TOKENIZER_DIR = "tokenizer"
"""A folder beside the versions where the trainer saves its tokenizer for the samplers."""
_STEP = re.compile(r"^step_(\d+)$")


class WeightBroadcast(ABC):
    """Sends the trainer's weights to the samplers."""

    @abstractmethod
    def publish(self, state_dict: Mapping[str, Tensor], version: int) -> None:
        """Make `state_dict` (the weights after optimizer step `version`) the newest version readers see."""


def precision_view(state_dict: Mapping[str, Tensor], precision: Precision) -> tuple[dict[str, Tensor], dict[str, str]]:
    """The floating-point tensors cast to `precision` (others as they are), with shared tensors kept once.

    Returns (tensors, aliases): aliases maps a left-out name to the name whose tensor it shares.
    """
    dtype = DTYPES[precision]
    out: dict[str, Tensor] = {}
    aliases: dict[str, str] = {}
    seen: dict[tuple[int, int, tuple[int, ...], tuple[int, ...]], str] = {}
    for name, tensor in state_dict.items():
        key = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape), tensor.stride())
        if key in seen:
            aliases[name] = seen[key]
            continue
        seen[key] = name
        view = tensor.detach().to("cpu", dtype=dtype) if tensor.is_floating_point() else tensor.detach().cpu()
        out[name] = view.contiguous()
    return out, aliases


class FilesystemBroadcast(WeightBroadcast):
    """Writes `ROOT/step_N/{precision}.safetensors` then `STABLE`; keeps the newest `keep` versions.

    A new broadcast starts from an empty folder: versions left by an earlier run (a resumed run may have
    gone further than its checkpoint) would otherwise look newer than what this run publishes. Other
    entries in the folder (the samplers' tokenizer) are left alone by the cleanup.
    """

    def __init__(self, root: Path, precisions: Iterable[Precision] = ("fp32",), keep: int = 3) -> None:
        if keep < 1:
            raise ValueError("a weight broadcast keeps at least one version")
        self.root = Path(root)
        self.precisions = tuple(dict.fromkeys(precisions))
        self.keep = keep
        shutil.rmtree(self.root, ignore_errors=True)
        self.root.mkdir(parents=True, exist_ok=True)
        self.bytes_written = 0

    def publish(self, state_dict: Mapping[str, Tensor], version: int) -> None:
        from safetensors.torch import save_file

        tmp = self.root / f".step_{version}.tmp-{uuid.uuid4().hex[:8]}"
        tmp.mkdir()
        for precision in self.precisions:
            tensors, aliases = precision_view(state_dict, precision)
            path = tmp / f"{precision}.safetensors"
            save_file(tensors, str(path), metadata={"aliases": json.dumps(aliases), "version": str(version)})
            self.bytes_written += path.stat().st_size
        final = self.root / f"step_{version}"
        shutil.rmtree(final, ignore_errors=True)  # a version published again replaces the old files
        os.rename(tmp, final)
        (final / STABLE).touch()
        self._clean(version)

    def _clean(self, newest: int) -> None:
        """Delete every version but the newest `keep` up to `newest` (any above it is an abandoned future)."""
        kept = sorted((v for v in stable_versions(self.root) if v <= newest), reverse=True)[: self.keep]
        for entry in self.root.iterdir():
            match = _STEP.match(entry.name)
            if match and int(match.group(1)) not in kept:
                shutil.rmtree(entry, ignore_errors=True)


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


class WeightWatcher:
    """The reader side: `poll()` returns the newest complete version once, when it is newer than the last."""

    def __init__(self, root: Path, precision: Precision = "fp32") -> None:
        self.root = Path(root)
        self.precision = precision
        self.version: int | None = None

    def latest(self) -> int | None:
        versions = stable_versions(self.root)
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
            state_dict = read_version(self.root / f"step_{newest}", self.precision)
        except FileNotFoundError:
            return None
        self.version = newest
        return newest, state_dict


def read_version(folder: Path, precision: Precision) -> dict[str, Tensor]:
    """The state dict of one version in one precision, tied names restored as the same tensor."""
    from safetensors import safe_open

    path = folder / f"{precision}.safetensors"
    if not path.is_file():
        raise FileNotFoundError(path)
    with safe_open(str(path), framework="pt") as f:
        state_dict = {name: f.get_tensor(name) for name in f.keys()}  # noqa: SIM118 - safe_open is no mapping
        aliases = json.loads((f.metadata() or {}).get("aliases", "{}"))
    for name, source in aliases.items():
        state_dict[name] = state_dict[source]
    return state_dict

