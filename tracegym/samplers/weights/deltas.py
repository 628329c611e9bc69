"""Sparse weight deltas: what changed between two versions of one precision view, compressed (docs/training-math.md).

A sampler holding version v-1 in its precision (bf16, say) needs only the elements whose bits differ in version v.
After a small optimizer step few do: a bf16 value has 8 significant bits, so an fp32 master weight crosses into the
next bf16 cell with probability about min(1, |Δ|/ulp(w)), and frozen tensors not at all. Two encodings, per tensor:

- `xor` (Miles' disk-delta): the new bits XOR the old ones, zstd-compressed. Unchanged elements are zero words,
  which zstd squeezes to almost nothing. XOR is an involution, so a delta must be applied exactly once, to the
  version it was made against.
- `overwrite` (slime's gap encoding): the positions of the changed elements as gaps (uint16, or uint32 for a tensor
  with any gap over 65535), then their new values, zstd-compressed. Idempotent: applying it twice changes nothing.

A tensor that did not change gets no entry at all. `checksum` (xxh3-128 over names and bytes) lets a reader verify
that what it rebuilt is bit for bit the trainer's view.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
import xxhash
import zstandard

Encoding = Literal["xor", "overwrite"]
_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_GAP_DTYPES = {2: np.uint16, 4: np.uint32}


@dataclass(frozen=True)
class TensorDelta:
    """One tensor's delta: `payload` is a zstd frame whose layout `encoding` and `gap_width` say."""

    encoding: Encoding
    changed: int
    """Elements whose bits differ between the two versions."""
    payload: bytes
    gap_width: int = 0
    """overwrite: bytes per gap (2, or 4 when a gap exceeds 65535); 0 for xor."""


def _bits(tensor: torch.Tensor) -> torch.Tensor:
    """The tensor's elements reinterpreted as integers of the same width (flat, contiguous)."""
    return tensor.contiguous().view(-1).view(_BITS[tensor.element_size()])


def encode_tensor(new: torch.Tensor, base: torch.Tensor, encoding: Encoding, level: int = 1) -> TensorDelta | None:
    """The delta that turns `base` into `new` (same shape, dtype and device), or None when their bits are equal. On a
    GPU the comparison runs there and only what the delta holds is copied to the host for zstd."""
    if new.shape != base.shape or new.dtype != base.dtype:
        raise ValueError(f"a delta needs tensors of one shape and dtype, got {tuple(new.shape)} {new.dtype} "
                         f"and {tuple(base.shape)} {base.dtype}")
    new_bits = _bits(new)
    flips = torch.bitwise_xor(new_bits, _bits(base))  # (numel,) nonzero exactly where the bits differ
    changed = int(torch.count_nonzero(flips))
    if changed == 0:
        return None
    compressor = zstandard.ZstdCompressor(level=level)
    if encoding == "xor":
        # numpy's stubs declare ndarray's buffer protocol only for Python >= 3.12
        return TensorDelta("xor", changed, compressor.compress(flips.cpu().numpy()))  # type: ignore[arg-type]
    positions = flips.nonzero().view(-1)  # (changed,) int64, ascending
    gaps = torch.diff(positions, prepend=positions.new_zeros(1)).cpu().numpy()  # first gap: the first position
    width = 2 if int(gaps.max()) <= np.iinfo(np.uint16).max else 4
    body = gaps.astype(_GAP_DTYPES[width]).tobytes() + new_bits[positions].cpu().numpy().tobytes()
    return TensorDelta("overwrite", changed, compressor.compress(body), width)


def apply_tensor(base: torch.Tensor, delta: TensorDelta) -> torch.Tensor:
    """`base` with `delta` applied, as a new tensor on `base`'s device (`base` is left as it was)."""
    if base.device.type != "cpu":  # numpy works on host memory: apply there, hand back a tensor where base was
        return apply_tensor(base.cpu(), delta).to(base.device)
    out = base.clone()
    bits = _bits(out).numpy()  # shares memory with `out`
    body = zstandard.ZstdDecompressor().decompress(delta.payload)
    if delta.encoding == "xor":
        flips = np.frombuffer(body, dtype=bits.dtype)
        if flips.size != bits.size:
            raise ValueError(f"an xor delta of {flips.size} elements for a tensor of {bits.size}")
        np.bitwise_xor(bits, flips, out=bits)
        return out
    split = delta.changed * delta.gap_width
    positions = np.cumsum(np.frombuffer(body[:split], dtype=_GAP_DTYPES[delta.gap_width]).astype(np.int64))
    values = np.frombuffer(body[split:], dtype=bits.dtype)
    if values.size != delta.changed or (delta.changed and int(positions[-1]) >= bits.size):
        raise ValueError("an overwrite delta that does not fit its tensor")
    bits[positions] = values
    return out


def checksum(tensors: Mapping[str, torch.Tensor]) -> str:
    """xxh3-128 over every tensor's name, dtype, shape and bytes, in name order."""
    digest = xxhash.xxh3_128()
    for name in sorted(tensors):
        tensor = tensors[name]
        digest.update(f"{name}\x1f{tensor.dtype}\x1f{tuple(tensor.shape)}\x1e".encode())
        digest.update(_bits(tensor).numpy())  # type: ignore[arg-type]  # ndarray is a buffer (stubs: only >= 3.12)
    return digest.hexdigest()
