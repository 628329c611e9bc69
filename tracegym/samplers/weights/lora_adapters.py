"""LoRA adapters as weight versions, for sampler pools whose engine serves adapters (vLLM's `enable_lora`).

With `model.lora`, a pool with `engine: vllm` is sent the adapter instead of the merged weights: the base weights
never change, so the sampler loads them once from the model folder and each version is the adapter alone. The
broadcast writes it beside the merged files, in the pool's precision, into the same version folder:

    ROOT/step_13/bf16.adapter.safetensors   the adapter's tensors under peft's saved names, with the version's
                                            adapter_config.json in the file's metadata (`adapter_config`)

One file per precision, like the merged weights, so a version stays complete-or-absent under the same `STABLE`
marker, and the HTTP endpoint and Ray's object store carry it as any other version file. An adapter always travels
whole: it is small, and a delta of it would save little (its B and A both move at every step). A sampler rebuilds
the peft folder vLLM loads (`adapter_model.safetensors`, `adapter_config.json`) from the file's bytes.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torch import Tensor

from tracegym.errors import ModelError
from tracegym.models.load import DTYPES, Precision

if TYPE_CHECKING:
    from tracegym.samplers.weights.folder import VersionSource

ADAPTER_SUFFIX = ".adapter.safetensors"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
ADAPTER_CONFIG = "adapter_config.json"


@dataclass(frozen=True)
class AdapterWeights:
    """The trainer's adapter as peft saves it: its tensors under peft's saved names
    (`base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight`) and its adapter_config.json as a dict."""

    tensors: Mapping[str, Tensor]
    config: Mapping[str, Any]


def write_adapter(folder: Path, precision: Precision, adapter: AdapterWeights, meta: Mapping[str, str]) -> Path:
    """`{precision}.adapter.safetensors` in `folder`: the tensors cast to `precision`, the config in the metadata."""
    from safetensors.torch import save_file

    tensors = {name: t.detach().to("cpu", DTYPES[precision]).contiguous() for name, t in adapter.tensors.items()}
    path = folder / f"{precision}{ADAPTER_SUFFIX}"
    save_file(tensors, str(path), metadata={**meta, "adapter_config": json.dumps(dict(adapter.config))})
    return path


@dataclass(frozen=True)
class PublishedAdapter:
    """One version's adapter as a sampler read it: the file's bytes, and the adapter_config.json it carries."""

    data: bytes
    config: dict[str, Any]

    def save(self, folder: Path) -> Path:
        """Write it out as a peft adapter folder (what vLLM's `LoRARequest` and peft load)."""
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ADAPTER_WEIGHTS).write_bytes(self.data)
        (folder / ADAPTER_CONFIG).write_text(json.dumps(self.config), encoding="utf-8")
        return folder


class AdapterWatcher:
    """The reader side for an adapter pool, shaped as `WeightWatcher`: `poll()` returns the newest complete version
    once, when it is newer than the last, as the adapter file of this reader's precision."""

    rebuilt_from_whole = 0
    """Always 0: an adapter travels whole, there is no delta chain to rebuild."""

    def __init__(self, source: VersionSource, precision: Precision = "fp32") -> None:
        self.source = source
        self.name = f"{precision}{ADAPTER_SUFFIX}"
        self.bytes_read = 0
        """Bytes of adapter files read so far: on the wire, for a source across the network."""
        self.version: int | None = None
        self.published: float | None = None
        """When the trainer began publishing `version` (its wall clock, from the file's metadata)."""

    def poll(self) -> tuple[int, PublishedAdapter] | None:
        """(version, adapter) of a version newer than the last one returned, or None (also when the version was
        deleted while being read: the next poll finds a newer one)."""
        versions = self.source.versions()
        newest = max(versions) if versions else None
        if newest is None or (self.version is not None and newest <= self.version):
            return None
        try:
            data = self.source.read(newest, self.name)
        except FileNotFoundError:
            return None
        self.bytes_read += len(data)
        config, self.published = _header(data, f"version {newest}'s {self.name} from {self.source}")
        self.version = newest
        return newest, PublishedAdapter(data, config)


def _header(data: bytes, what: str) -> tuple[dict[str, Any], float | None]:
    """The adapter config and publish time an adapter file carries, read from its safetensors header alone."""
    try:
        (size,) = struct.unpack("<Q", data[:8])
        meta = json.loads(data[8:8 + size]).get("__metadata__") or {}
        published = meta.get("published")
        return json.loads(meta["adapter_config"]), float(published) if published is not None else None
    except (struct.error, ValueError, KeyError, AttributeError, TypeError) as e:
        raise ModelError(f"{what} is not a tracegym adapter file ({type(e).__name__}: {e}). Fix: check what lies "
                         "between the trainer and this sampler (disk, network, proxy).") from None
