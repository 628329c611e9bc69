"""FP8 linear layers for the GPU check's fp8 pool on the HF engine (benchmarks/gpu_check.py).

Each linear layer of the decoder (not the tied embedding / output layer) keeps its weight in torch.float8_e4m3fn
with one fp32 scale per output row; activations are quantized per row on the fly. Where the GPU has fp8 matrix
units (CUDA capability 8.9 or newer: Ada, Hopper, Blackwell) the product is `torch._scaled_mm` with row-wise
scales and a bf16 result; elsewhere (a CPU, an older GPU) it is emulated: the same fp8 values dequantized and
multiplied in fp32. Either way the sampler computes with fp8-rounded weights and activations, so its mismatch
against the fp32 trainer is what an fp8 pool would show.

Loading a state dict (the trainer's fp32 or bf16 weights) quantizes the weights again, so `SamplingEngine.
load_weights` publishes to this model as to any other. Only APIs present in torch 2.11 are used (float8_e4m3fn,
`torch.finfo`, `torch._scaled_mm(a, b, scale_a=, scale_b=, out_dtype=)` returning one tensor).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

FP8 = torch.float8_e4m3fn
FP8_MAX = float(torch.finfo(FP8).max)  # 448
_ALIGN = 16  # _scaled_mm wants every dimension a multiple of 16


def has_fp8_matmul(device: torch.device) -> bool:
    """Whether `device` multiplies fp8 matrices natively (CUDA capability 8.9 or newer)."""
    return device.type == "cuda" and torch.cuda.get_device_capability(device) >= (8, 9)


def quantize_rows(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`x` [R, C] as fp8 values and their per-row fp32 scale [R, 1]: x ~ values * scale."""
    x = x.float()
    scale = x.abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / FP8_MAX
    return (x / scale).clamp(-FP8_MAX, FP8_MAX).to(FP8), scale


class Fp8Linear(torch.nn.Module):
    """A bias-free linear layer with fp8 weights (per output row scales) and fp8 activations (per token)."""

    def __init__(self, linear: torch.nn.Linear, native: bool) -> None:
        super().__init__()
        if linear.bias is not None:
            raise ValueError("Fp8Linear takes bias-free layers (Llama's)")
        self.in_features, self.out_features, self.native = linear.in_features, linear.out_features, native
        if native and (self.in_features % _ALIGN or self.out_features % _ALIGN):
            raise ValueError(f"_scaled_mm needs dimensions that are multiples of {_ALIGN}, got "
                             f"{self.in_features} x {self.out_features}")
        values, scale = quantize_rows(linear.weight.detach())
        self.register_buffer("weight", values)  # the state dict's key, as nn.Linear's
        self.register_buffer("weight_scale", scale, persistent=False)

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str, local_metadata: Any, strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str], error_msgs: list[str]) -> None:
        key = f"{prefix}weight"
        if key not in state_dict:
            missing_keys.append(key)
            return
        values, scale = quantize_rows(state_dict[key].to(self.weight.device))
        self.weight, self.weight_scale = values, scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, self.in_features)
        m = rows.shape[0]
        if self.native:
            rows = torch.nn.functional.pad(rows, (0, 0, 0, (-m) % _ALIGN))
        values, scale = quantize_rows(rows)
        if self.native:
            out = torch._scaled_mm(values, self.weight.t(), scale_a=scale,
                                   scale_b=self.weight_scale.t().contiguous(), out_dtype=torch.bfloat16)[:m]
        else:
            out = (values.float() * scale) @ (self.weight.float() * self.weight_scale).t()
        return out.to(x.dtype).reshape(*x.shape[:-1], self.out_features)


def to_fp8(model: torch.nn.Module, device: torch.device) -> str:
    """Replace the linear layers of `model`'s decoder (a bf16 model) by `Fp8Linear` in place; the kernel used."""
    native = has_fp8_matmul(device)
    decoder = model.get_submodule("model.layers")
    for name, module in list(decoder.named_modules()):
        if isinstance(module, torch.nn.Linear):
            parent, _, child = name.rpartition(".")
            setattr(decoder.get_submodule(parent) if parent else decoder, child, Fp8Linear(module, native))
    return "scaled_mm" if native else "emulated"
