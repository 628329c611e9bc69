"""Sampler precisions, and what "auto" means on a device.

Without bf16 units a CPU emulates bf16 matrix products in fp32 and pays for the conversions, so bf16 sampling is
slower than fp32 there, while CPUs with AVX512-BF16 or AMX (and GPUs) decode faster in bf16, since a decode step
mostly reads weights. So "auto" is bf16 only where the device computes it natively.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Literal

Precision = Literal["fp32", "bf16", "fp16"]
PrecisionChoice = Literal["auto", "fp32", "bf16", "fp16"]


def resolve_precision(precision: PrecisionChoice, device: str = "cpu") -> Precision:
    """`precision` itself, or for "auto": bf16 where `device` computes in bf16 natively, else fp32."""
    if precision != "auto":
        return precision
    if device.startswith("cuda"):
        import torch

        return "bf16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "fp32"
    return "bf16" if device == "cpu" and cpu_has_bf16() else "fp32"


@functools.cache
def cpu_has_bf16() -> bool:
    """Whether this CPU has bf16 arithmetic: x86 AVX512-BF16 or AMX-BF16, Arm's BF16 extension (Linux flags)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:  # not Linux: no flags to read, so no claim of bf16 units
        return False
    return bf16_in_cpuinfo(text)


def bf16_in_cpuinfo(text: str) -> bool:
    """Whether /proc/cpuinfo text lists a bf16 arithmetic flag (x86 `flags`, Arm `Features` lines)."""
    flags = {word for line in text.splitlines() if line.lower().startswith(("flags", "features"))
             for word in line.partition(":")[2].split()}
    return bool(flags & {"avx512_bf16", "amx_bf16", "bf16"})
