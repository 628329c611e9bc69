"""A KV cache for the sampling engine that appends in place instead of re-concatenating every step.

transformers' `DynamicLayer.update` does ``keys = torch.cat([keys, new])``: each decode step copies the whole
cache of every layer, which for GRPO batches of long prompts is a large share of the decode time on a CPU.
`GrowingLayer` keeps a buffer with spare room and exposes the filled part as a view, so a step writes one position
per layer. Room grows by half the length (at least 64
positions): a prompt of 300 tokens has room for 150 new ones before the buffer is copied.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import torch
from transformers.cache_utils import DynamicCache, DynamicLayer

from tracegym.errors import ModelError

CACHE_API = (5, 24)
"""The transformers version whose forward takes `cache=`, as the sampling engine and the trainer's shared prompts
pass it; older versions take the keyword without a word and ignore it, so every step would run without its context."""


@functools.cache
def require_cache_api() -> None:
    """Raise `ModelError` unless the installed transformers reads the `cache=` keyword (pip enforces the pin; an
    install with --no-deps, or beside a package pinning an older transformers, does not)."""
    import transformers

    found = tuple(int(x) for x in re.findall(r"\d+", transformers.__version__)[:2])
    if found < CACHE_API:
        raise ModelError(f"transformers {transformers.__version__} ignores the KV cache tracegym passes (`cache=`); "
                         f"its sampling engine and trainer need transformers >= {CACHE_API[0]}.{CACHE_API[1]}. "
                         "Fix: pip install 'transformers>=5.24'")


class GrowingLayer(DynamicLayer):
    """One layer's keys and values, (B, H, capacity, D) buffers whose first `length` positions are filled."""

    def __init__(self) -> None:
        super().__init__()
        self._keys: torch.Tensor | None = None
        self._values: torch.Tensor | None = None
        self._length = 0

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Append (B, H, n, D) states; returns views of all cached positions (B, H, length, D)."""
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        end = self._length + key_states.shape[-2]
        if self._keys is None or end > self._keys.shape[-2]:
            self._grow(key_states, value_states, capacity=end + max(end // 2, 64))
        assert self._keys is not None and self._values is not None
        self._keys[..., self._length : end, :] = key_states
        self._values[..., self._length : end, :] = value_states
        self._length = end
        self._expose()
        return self.keys, self.values

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        """Keep (and repeat, when an index repeats) the rows `indices` of the batch."""
        if self._keys is None or self._values is None:
            return
        self._keys, self._values = self._keys[indices], self._values[indices]
        self._expose()

    def _grow(self, key_states: torch.Tensor, value_states: torch.Tensor, capacity: int) -> None:
        batch, heads, _, dim = key_states.shape
        keys = key_states.new_empty((batch, heads, capacity, dim))
        values = value_states.new_empty((batch, heads, capacity, value_states.shape[-1]))
        if self._keys is not None and self._values is not None:
            keys[..., : self._length, :] = self._keys[..., : self._length, :]
            values[..., : self._length, :] = self._values[..., : self._length, :]
        self._keys, self._values = keys, values

    def _expose(self) -> None:
        assert self._keys is not None and self._values is not None
        self.keys = self._keys[..., : self._length, :]
        self.values = self._values[..., : self._length, :]


def growing_cache(config: Any) -> DynamicCache:
    """A DynamicCache for `config` whose full-attention layers are `GrowingLayer`s.

    Sliding-window layers (other architectures) keep transformers' own implementation.
    """
    cache = DynamicCache(config=config)
    cache.layers = [GrowingLayer() if type(layer) is DynamicLayer else layer for layer in cache.layers]
    return cache
