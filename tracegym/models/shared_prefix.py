"""Decoding the rows of a GRPO group over one copy of their prompt's KV cache (cascade attention).

The sampling engine prefills each distinct prompt once. Copying that prompt's cache into every row of its
group, as `batch_select_indices` does, makes each decode step read the prompt's keys and values once per row:
a group of 8 samples reads 8 times the bytes it needs. Here a decode step splits attention in two (FlashInfer's cascade
attention, Hydragen): the queries of all rows of a prompt attend to its single cached copy in one matrix
multiply, each row's queries attend to its own generated tokens, and the two softmaxes are merged exactly
by their log-sum-exp. The result equals attention over the concatenated cache up to float rounding.

The model's attention function is swapped for `shared_prefix_attention` (registered with transformers'
AttentionInterface), which does the split when a forward pass passes `shared_prefix=` and is plain SDPA
otherwise, so prefill and any other use of the model are unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor
from transformers import AttentionInterface
from transformers.cache_utils import DynamicCache
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

from tracegym.errors import ModelError
from tracegym.models.kv_cache import GrowingLayer

if TYPE_CHECKING:
    from transformers import PreTrainedModel

ATTENTION = "tracegym_shared_prefix"
"""The attention implementation name a model decoding over shared prefixes runs under."""

SUPPORTED_MODEL_TYPES = frozenset({"llama", "qwen2", "qwen3", "mistral"})
"""Families whose attention is plain scaled dot-product attention over every position (no sliding window,
soft-capping or attention sinks, which the split would have to reproduce)."""


@dataclass
class SharedPrefix:
    """The prompts' cached keys and values, one copy per distinct prompt, and which prompt each live row extends.

    keys[layer], values[layer]: (U, KV, P, D) left-padded; mask: (U, 1, 1, P) bool, True on real tokens;
    row_of: (B,) the prompt of each live row.
    """

    keys: list[Tensor]
    values: list[Tensor]
    mask: Tensor
    row_of: Tensor

    def __post_init__(self) -> None:
        self._index()

    def select(self, rows: Tensor) -> None:
        """Keep the live rows `rows` (indices into the current rows), as the suffix cache does."""
        self.row_of = self.row_of[rows]
        self._index()

    def _index(self) -> None:
        # slots (U, G): the rows of each prompt, padded with row 0 (their output is never read);
        # row_slot (B,): each row's position in slots flattened to (U * G,).
        prompts = self.keys[0].shape[0]
        counts = torch.bincount(self.row_of, minlength=prompts)
        width = max(int(counts.max()), 1)
        order = torch.argsort(self.row_of, stable=True)
        starts = torch.cumsum(counts, 0) - counts
        rank = torch.arange(len(order), device=order.device) - starts[self.row_of[order]]
        self.slots = torch.zeros(prompts, width, dtype=torch.int64, device=order.device)
        self.slots[self.row_of[order], rank] = order
        self.row_slot = torch.empty_like(self.row_of)
        self.row_slot[order] = self.row_of[order] * width + rank


def supports_shared_prefix(model: PreTrainedModel) -> bool:
    """Whether decoding `model` over shared prefixes is exact: a supported family on SDPA or eager attention."""
    config = model.config
    full = all(kind == "full_attention" for kind in getattr(config, "layer_types", None) or ["full_attention"])
    no_window = getattr(config, "sliding_window", None) is None or not getattr(config, "use_sliding_window", True)
    return (
        config.model_type in SUPPORTED_MODEL_TYPES
        and config._attn_implementation in ("sdpa", "eager", ATTENTION)
        and full
        and no_window
    )


def use_shared_prefix_attention(model: PreTrainedModel) -> None:
    """Run `model` under `shared_prefix_attention` (SDPA unless a forward pass passes `shared_prefix=`)."""
    AttentionInterface.register(ATTENTION, shared_prefix_attention)
    AttentionMaskInterface.register(ATTENTION, ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])
    model.set_attn_implementation(ATTENTION)


def split_prefix(cache: DynamicCache, mask: Tensor, row_of: Tensor) -> SharedPrefix:
    """The prefilled prompts' cache (U rows) as a SharedPrefix for rows `row_of` (B,); `cache` is emptied in place
    to hold the rows' own tokens.

    mask: (U, P) the prompts' attention mask (1 on real tokens).
    """
    prefix = SharedPrefix(  # compact copies: the prefill's buffers have room for growth that is never used
        keys=[layer.keys.contiguous() for layer in cache.layers],
        values=[layer.values.contiguous() for layer in cache.layers],
        mask=mask.bool()[:, None, None, :],
        row_of=row_of,
    )
    cache.layers = [GrowingLayer() for _ in cache.layers]
    return prefix


def shared_prefix_attention(
    module: torch.nn.Module,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attention_mask: Tensor | None,
    scaling: float | None = None,
    dropout: float = 0.0,
    shared_prefix: SharedPrefix | None = None,
    **kwargs: Any,
) -> tuple[Tensor, None]:
    """transformers' attention-function signature. Without `shared_prefix`, SDPA; with it, one decode step:
    query (B, H, 1, D) over the rows' prompts in `shared_prefix` and their own tokens key/value (B, KV, S, D).

    Returns (B, 1, H, D), as the model's attention functions do."""
    if shared_prefix is None:
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                      **kwargs)
    layer = module.layer_idx  # type: ignore[attr-defined]
    scale = scaling if scaling is not None else query.shape[-1] ** -0.5
    out = cascade_attention(query, shared_prefix, shared_prefix.keys[layer], shared_prefix.values[layer], key, value,
                            scale)
    return out.transpose(1, 2).contiguous(), None


def cascade_attention(query: Tensor, prefix: SharedPrefix, prefix_keys: Tensor, prefix_values: Tensor,
                      keys: Tensor, values: Tensor, scale: float) -> Tensor:
    """Attention of one query per row over its prompt then its own tokens; (B, H, 1, D).

    query (B, H, 1, D); prefix_keys/values (U, KV, P, D); keys/values (B, KV, S, D). Head h reads KV head
    h // (H / KV), as transformers' repeat_kv lays them out.
    """
    batch, heads, q_len, dim = query.shape
    if q_len != 1:  # several new positions would need a causal mask among the row's own tokens
        raise ModelError(f"shared-prefix attention decodes one position per row, not {q_len}")
    prompts, kv_heads, _, _ = prefix_keys.shape
    rep = heads // kv_heads
    q = query.reshape(batch, kv_heads, rep * q_len, dim)  # (B, KV, R, D)
    width = prefix.slots.shape[1]
    # Prefix: every row of a prompt in one product with its one copy of the prompt.
    grouped = q[prefix.slots].permute(0, 2, 1, 3, 4).reshape(prompts, kv_heads, width * rep * q_len, dim)
    scores = torch.matmul(grouped, prefix_keys.transpose(-1, -2)).float() * scale  # (U, KV, G*R, P)
    scores = scores.masked_fill(~prefix.mask, float("-inf"))
    out_p, max_p, sum_p = _partial_softmax(scores, prefix_values)  # (U, KV, G*R, D), (U, KV, G*R, 1) x2
    out_p, max_p, sum_p = (_to_rows(t, prefix, kv_heads) for t in (out_p, max_p, sum_p))  # (B, KV, R, .)
    # Suffix: each row's own generated tokens (a decode step's query is the last position, so no causal mask).
    scores = torch.matmul(q, keys.transpose(-1, -2)).float() * scale  # (B, KV, R, S)
    out_s, max_s, sum_s = _partial_softmax(scores, values)
    top = torch.maximum(max_p, max_s)
    weight_p, weight_s = torch.exp(max_p - top), torch.exp(max_s - top)
    out = (out_p * weight_p + out_s * weight_s) / (sum_p * weight_p + sum_s * weight_s)
    return out.to(query.dtype).reshape(batch, heads, q_len, dim)


def _partial_softmax(scores: Tensor, values: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Unnormalised softmax-weighted values, the row max and the sum of exp(scores - max); fp32."""
    top = scores.amax(-1, keepdim=True)
    weights = torch.exp(scores - top)
    return torch.matmul(weights.to(values.dtype), values).float(), top, weights.sum(-1, keepdim=True)


def _to_rows(grouped: Tensor, prefix: SharedPrefix, kv_heads: int) -> Tensor:
    """(U, KV, G*R, X) grouped by prompt -> (B, KV, R, X) in row order."""
    prompts, _, columns, last = grouped.shape
    width = prefix.slots.shape[1]
    per_slot = grouped.reshape(prompts, kv_heads, width, columns // width, last).permute(0, 2, 1, 3, 4)
    return per_slot.reshape(prompts * width, kv_heads, columns // width, last)[prefix.row_slot]

