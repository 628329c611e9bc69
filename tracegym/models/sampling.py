"""The built-in sampler: batched, KV-cached generation in PyTorch that records exactly what it sampled from.

Per step and per sequence: ``z = logits / temperature`` (in fp32, whatever the model's precision), then
top-k, then top-p on the top-k-renormalised distribution (vLLM/HF order), then one draw from the result,
renormalised over the kept support S. For every generated token the engine records

- the token id,
- ``log mu(token)``: its log-prob under that truncated, renormalised distribution (the sampler log-prob
  the loss's importance ratios need),
- S itself (ids and their log-probs, CSR; see `tracegym.models.support`) for top-p mask replay,

plus, per sequence, the policy version and sampler id. ``model.generate`` is not used because it hides the
distribution it sampled from.

Determinism: candidates are ordered by (probability descending, token id ascending), so ties at the top-k
or top-p boundary always resolve the same way. Each sequence draws its uniforms from its own seeded
``torch.Generator``, so a sequence's tokens do not depend on what else is in the batch.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field, model_validator

from tracegym.errors import ModelError
from tracegym.models.kv_cache import growing_cache, require_cache_api
from tracegym.models.shared_prefix import (
    SharedPrefix,
    split_prefix,
    supports_shared_prefix,
    use_shared_prefix_attention,
)
from tracegym.models.stop_text import Decode, stop_cut, tail_has_stop
from tracegym.models.support import Support, SupportKind

if TYPE_CHECKING:
    from transformers import PreTrainedModel

    from tracegym.models.load import Precision

FinishReason = Literal["stop", "length"]


class SamplingParams(BaseModel):
    """How to sample one completion. Truncation is on when top_k > 0 or top_p < 1."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = Field(1.0, gt=0)
    """Logits are divided by this before top-k and top-p. For greedy decoding use top_k=1."""
    top_k: int = Field(0, ge=0)
    """Keep only the k most likely tokens; 0 turns top-k off."""
    top_p: float = Field(1.0, gt=0, le=1)
    """Nucleus sampling: keep the smallest most-likely set whose probability (after top-k) reaches top_p; 1 is off."""
    max_support: int = Field(64, ge=1)
    """Cap on |S| (Modal's top-k cap 64; SGLang's --sampling-mask-max-tokens). With top_p < 1 and top_k = 0,
    top_k = max_support is applied, so S stays bounded and is recorded exactly; a larger top_k is rejected."""
    head_logprobs: int = Field(0, ge=0)
    """Untruncated sampling only (top_k 0, top_p 1): record the N most likely ids with their full-vocabulary
    log-probs as a 'head' support. 0 records no support, since then S is the whole vocabulary."""
    max_new_tokens: int = Field(256, ge=1)
    """Stop after this many generated tokens (finish_reason 'length'); also capped by the context window."""
    stop_token_ids: tuple[int, ...] = ()
    """Ids that end a completion besides the model's EOS ids. The stop token is kept in the completion."""
    stop: tuple[str, ...] = ()
    """Text that ends a completion (OpenAI's `stop`): its text ends before the first one, and its ids after the
    token holding the text's last character (`tracegym.models.stop_text`); the engine needs a decoder."""

    @model_validator(mode="after")
    def _check_caps(self) -> SamplingParams:
        if self.top_k > self.max_support:
            raise ValueError(
                f"top_k={self.top_k} exceeds max_support={self.max_support}; raise max_support or lower top_k"
            )
        if self.truncated and self.head_logprobs:
            raise ValueError("head_logprobs applies to untruncated sampling only; with top-k/top-p S is recorded")
        return self

    @property
    def truncated(self) -> bool:
        """Whether top-k or top-p removes any token, so the sampled support is recorded."""
        return self.top_k > 0 or self.top_p < 1.0

    @property
    def effective_top_k(self) -> int:
        """The top-k actually applied: top_k, else max_support under top-p, else 0 (none)."""
        if self.top_k:
            return self.top_k
        return self.max_support if self.top_p < 1.0 else 0

    @property
    def support_kind(self) -> SupportKind | None:
        if self.truncated:
            return "exact"
        return "head" if self.head_logprobs else None


@dataclass(frozen=True)
class Distribution:
    """The per-row distribution sampled from, over candidate columns in canonical order.

    ids (B, K) int64; logprobs (B, K) float32, normalised over the first `sizes[b]` columns and -inf after.
    """

    ids: torch.Tensor
    logprobs: torch.Tensor
    sizes: torch.Tensor


@dataclass(frozen=True)
class GenerationTiming:
    """Wall-clock figures of the batch a sequence was generated in."""

    batch_size: int
    prefill_s: float
    decode_s: float
    batch_new_tokens: int

    @property
    def tokens_per_s(self) -> float:
        """Generated tokens per second over the whole batch (prefill included)."""
        total = self.prefill_s + self.decode_s
        return self.batch_new_tokens / total if total > 0 else 0.0


@dataclass
class SampledSequence:
    """One completion with its exact token record."""

    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: torch.Tensor
    """(n,) float32: log mu(token) under the truncated, renormalised distribution actually sampled from."""
    support: Support | None
    """Per-token kept support S ('exact'), or the top-N head ('head'), or None (untruncated, no head asked)."""
    finish_reason: FinishReason
    policy_version: int
    sampler_id: str
    seed: int
    params: SamplingParams
    timing: GenerationTiming
    stop_token_ids: tuple[int, ...] = field(default=())
    """The ids that counted as stop tokens for this sequence (model EOS ids plus params.stop_token_ids)."""
    text_end: int | None = None
    """When a stop string ended it: the characters of the decoded completion that are its text (the rest is
    the stop string's start, in the last token kept)."""


def cut_at_stop(seq: SampledSequence, decode: Decode | None) -> SampledSequence:
    """`seq` cut where its text meets one of its params' stop strings (unchanged when it holds none)."""
    if not seq.params.stop:
        return seq
    if decode is None:
        raise ModelError("stop sequences need the engine to decode its tokens; give it the tokenizer's decode")
    cut = stop_cut(seq.completion_ids, decode, seq.params.stop)
    if cut is None:
        return seq
    keep, end = cut
    support = seq.support.slice(0, keep) if seq.support is not None else None
    return replace(seq, completion_ids=seq.completion_ids[:keep], logprobs=seq.logprobs[:keep], support=support,
                   finish_reason="stop", text_end=end)


def canonical_top(scores: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The k best columns of each row ordered by (score descending, column ascending): values and ids (B, k).

    Uses topk(k+1); a row whose k-th and (k+1)-th scores tie falls back to a full stable sort, because
    topk does not say which of the tied columns it returns.
    """
    vocab = scores.shape[-1]
    k = min(k, vocab)
    width = min(k + 1, vocab)
    values, ids = scores.topk(width, dim=-1)  # (B, width), descending
    ids, by_id = ids.sort(dim=-1)  # ascending ids first, then a stable sort on the scores
    values = values.gather(-1, by_id)
    values, order = values.sort(dim=-1, descending=True, stable=True)
    ids = ids.gather(-1, order)
    if width > k:
        tied = values[:, k - 1] == values[:, k]
        if bool(tied.any()):
            full_values, full_ids = scores[tied].sort(dim=-1, descending=True, stable=True)
            values[tied], ids[tied] = full_values[:, :width], full_ids[:, :width]
    return values[:, :k], ids[:, :k]


def truncated_distribution(logits: torch.Tensor, params: SamplingParams) -> Distribution:
    """The distribution a row samples from: logits (B, V) -> temperature -> top-k -> top-p -> renormalise.

    Untruncated rows keep the whole vocabulary in id order (K = V).
    """
    z = logits.float() / params.temperature  # (B, V)
    batch, vocab = z.shape
    k = params.effective_top_k
    if not k:
        ids = torch.arange(vocab).expand(batch, vocab)
        return Distribution(ids, torch.log_softmax(z, dim=-1), torch.full((batch,), vocab))
    values, ids = canonical_top(z, k)  # (B, K)
    logprobs = torch.log_softmax(values, dim=-1)
    if params.top_p < 1.0:
        probs = logprobs.exp()
        before = torch.cumsum(probs, dim=-1) - probs  # mass strictly ahead of each candidate
        keep = before < params.top_p
        keep[:, 0] = True
        logprobs = torch.log_softmax(values.masked_fill(~keep, float("-inf")), dim=-1)
    sizes = torch.isfinite(logprobs).sum(dim=-1)
    return Distribution(ids, logprobs, sizes)


def draw(dist: Distribution, uniforms: torch.Tensor) -> torch.Tensor:
    """Inverse-CDF sampling: (B,) column indices into dist, one uniform in [0, 1) per row."""
    cdf = torch.cumsum(dist.logprobs.double().exp(), dim=-1)  # (B, K); fp64 so a 49k-entry sum stays exact
    targets = (uniforms.double() * cdf[:, -1]).unsqueeze(-1)
    cols = torch.searchsorted(cdf, targets, right=True).squeeze(-1)
    return torch.minimum(cols, dist.sizes - 1)


class SamplingEngine:
    """Hand-written batched generation over a Hugging Face causal LM, one batch at a time (thread-safe).

    `generate` left-pads the prompts, prefills them in one forward pass, then decodes one token per step
    with a KV cache, dropping finished rows from the batch. Rows never see each other's padding: the
    attention mask hides it and position ids count only real tokens.
    """

    def __init__(
        self,
        model: PreTrainedModel,
        *,
        eos_token_ids: Sequence[int],
        pad_token_id: int | None = None,
        sampler_id: str = "hf-0",
        policy_version: int = 0,
        max_batch_size: int = 32,
        seed: int | None = None,
        shared_prefix: bool = True,
        decode: Decode | None = None,
    ) -> None:
        require_cache_api()
        self.decode = decode
        """Token ids to text, for stop sequences (`SamplingParams.stop`); a policy client sets its tokenizer's."""
        self.model = model.eval()
        # Rows of one prompt decode over a single copy of its cache (models/shared_prefix.py) where that is exact.
        self.shared_prefix = shared_prefix and supports_shared_prefix(model)
        if self.shared_prefix:
            use_shared_prefix_attention(model)
        self.eos_token_ids = tuple(int(i) for i in eos_token_ids)
        self.pad_token_id = int(pad_token_id if pad_token_id is not None else self.eos_token_ids[0])
        self.sampler_id = sampler_id
        self.policy_version = policy_version
        self.max_batch_size = max_batch_size
        self._seeds = random.Random(seed)
        self._lock = threading.Lock()

    @classmethod
    def from_ref(
        cls,
        ref: str | Path | None = None,
        precision: Precision = "fp32",
        device: str = "cpu",
        **kwargs: object,
    ) -> SamplingEngine:
        """An engine over a model reference (see `tracegym.models.load.resolve_model_ref`)."""
        from tracegym.models.load import load_model, load_tokenizer, stop_token_ids

        model, tokenizer = load_model(ref, precision, device), load_tokenizer(ref)
        return cls(model, eos_token_ids=stop_token_ids(model, tokenizer), decode=text_of(tokenizer),
                   **kwargs)  # type: ignore[arg-type]

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def vocab_size(self) -> int:
        return int(self.model.get_output_embeddings().weight.shape[0])

    @property
    def context_length(self) -> int:
        return int(getattr(self.model.config, "max_position_embeddings", 1 << 30))

    def load_weights(self, state_dict: Mapping[str, torch.Tensor], policy_version: int) -> None:
        """Replace the weights (cast to the engine's precision) and the policy version, between batches."""
        with self._lock, torch.no_grad():
            self.model.load_state_dict(dict(state_dict), strict=True)
            self.policy_version = policy_version

    def generate(
        self,
        prompts: Sequence[Sequence[int]],
        params: SamplingParams,
        seeds: Sequence[int | None] | None = None,
    ) -> list[SampledSequence]:
        """Sample one completion per prompt, in batches of at most `max_batch_size`, in input order.

        A None seed (or no seeds) draws one from the engine's own generator; the seed used is recorded.
        """
        seeds = list(seeds) if seeds is not None else [None] * len(prompts)
        if len(seeds) != len(prompts):
            raise ModelError(f"{len(prompts)} prompts but {len(seeds)} seeds")
        for i, prompt in enumerate(prompts):
            self._check_prompt(i, prompt)
        out: list[SampledSequence] = []
        with self._lock, torch.inference_mode():
            resolved = [s if s is not None else self._seeds.getrandbits(63) for s in seeds]
            for start in range(0, len(prompts), self.max_batch_size):
                end = start + self.max_batch_size
                out.extend(self._generate_batch(prompts[start:end], params, resolved[start:end]))
        return out

    def _check_prompt(self, index: int, prompt: Sequence[int]) -> None:
        if not prompt:
            raise ModelError(f"prompt {index} is empty; a prompt needs at least one token")
        if len(prompt) >= self.context_length:
            raise ModelError(
                f"prompt {index} has {len(prompt)} tokens, which fills the model's context of {self.context_length}"
            )
        if min(prompt) < 0 or max(prompt) >= self.vocab_size:
            raise ModelError(f"prompt {index} has token ids outside the vocabulary [0, {self.vocab_size})")

    def _forward(
        self, ids: torch.Tensor, mask: torch.Tensor | None, positions: torch.Tensor, cache: object,
        prefix: SharedPrefix | None = None,
    ) -> torch.Tensor:
        """Last-position logits (B, V) in fp32 for ids/mask/positions (B, T), extending the cache in place.

        With `prefix`, the rows attend to their prompts there and to the cache (their own tokens); no mask."""
        extra = {"shared_prefix": prefix} if prefix is not None else {}
        out = self.model(
            input_ids=ids, attention_mask=mask, position_ids=positions, cache=cache, use_cache=True, logits_to_keep=1,
            **extra,
        )
        logits = out.logits[:, -1, :].float()
        if bool(torch.isnan(logits).any()):
            raise ModelError(
                "the model produced NaN logits (an fp16 overflow is the usual cause); sample in bf16 or fp32"
            )
        return logits

    def _generate_batch(
        self, prompts: Sequence[Sequence[int]], params: SamplingParams, seeds: Sequence[int]
    ) -> list[SampledSequence]:
        dev, batch = self.device, len(prompts)
        # A GRPO group is one prompt sampled group_size times: prefill each distinct prompt once and give
        # every row its copy of that prompt's cache.
        distinct, row_of = share_prompts(prompts)  # U distinct prompts; row_of (B,) indexes them
        ids, mask = left_pad(distinct, self.pad_token_id)  # (U, L)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)  # real tokens count from 0 after the padding
        stops = torch.tensor(sorted(set(self.eos_token_ids) | set(params.stop_token_ids)), dtype=torch.int64)
        limits = torch.tensor([min(params.max_new_tokens, self.context_length - len(p)) for p in prompts])
        generators = [torch.Generator().manual_seed(int(s)) for s in seeds]
        rec = _Recorder(batch, params)

        start = time.perf_counter()
        cache = growing_cache(self.model.config)
        logits = self._forward(ids.to(dev), mask.to(dev), positions.to(dev), cache).cpu()[row_of]  # (B, V)
        prefix = None
        if len(distinct) < batch and self.shared_prefix:
            prefix = split_prefix(cache, mask.to(dev), row_of.to(dev))
        elif len(distinct) < batch:
            cache.batch_select_indices(row_of.to(dev))
        mask, positions = mask[row_of], positions[row_of]  # (B, L)
        prefill_s = time.perf_counter() - start
        active = torch.arange(batch)  # original row of each live batch row
        next_pos = positions[:, -1] + 1
        while True:
            dist = truncated_distribution(logits, params)
            uniforms = torch.cat([torch.rand(1, generator=generators[r], dtype=torch.float64) for r in active.tolist()])
            tokens = rec.record(active, dist, draw(dist, uniforms))
            stopped = torch.isin(tokens, stops)
            if params.stop:
                stopped |= self._stopped_by_text(rec, active)
            rec.mark_stopped(active[stopped])
            live = ~(stopped | (rec.counts[active] >= limits[active]))
            if not bool(live.any()):
                break
            if not bool(live.all()):
                rows = live.nonzero().squeeze(-1).to(dev)
                cache.batch_select_indices(rows)
                if prefix is not None:
                    prefix.select(rows)
                active, mask, tokens, next_pos = active[live], mask[live], tokens[live], next_pos[live]
            step_mask = None  # over shared prefixes, nothing is masked: padding lives in the prefix's own mask
            if prefix is None:
                mask = torch.cat([mask, torch.ones(len(active), 1, dtype=mask.dtype)], dim=1)
                step_mask = mask.to(dev)
            logits = self._forward(tokens[:, None].to(dev), step_mask, next_pos[:, None].to(dev), cache, prefix).cpu()
            next_pos = next_pos + 1
        timing = GenerationTiming(batch, prefill_s, time.perf_counter() - start - prefill_s, int(rec.counts.sum()))
        return [cut_at_stop(
            SampledSequence(
                prompt_ids=[int(t) for t in prompts[r]],
                completion_ids=rec.tokens[r],
                logprobs=torch.tensor(rec.logprobs[r], dtype=torch.float32),
                support=rec.support(r),
                finish_reason=rec.finish[r],
                policy_version=self.policy_version,
                sampler_id=self.sampler_id,
                seed=int(seeds[r]),
                params=params,
                timing=timing,
                stop_token_ids=tuple(stops.tolist()),
            ), self.decode)
            for r in range(batch)
        ]

    def _stopped_by_text(self, rec: _Recorder, active: torch.Tensor) -> torch.Tensor:
        """(B_live,) bool: rows whose text now holds one of the params' stop strings."""
        if self.decode is None:
            raise ModelError("stop sequences need the engine to decode its tokens; give it the tokenizer's decode")
        decode, stops = self.decode, rec.params.stop
        return torch.tensor([tail_has_stop(rec.tokens[r], decode, stops) for r in active.tolist()], dtype=torch.bool)


class _Recorder:
    """Accumulates each row's tokens, sampler log-probs and support rows during decoding."""

    def __init__(self, batch: int, params: SamplingParams) -> None:
        self.params = params
        self.tokens: list[list[int]] = [[] for _ in range(batch)]
        self.logprobs: list[list[float]] = [[] for _ in range(batch)]
        self.rows: list[list[tuple[torch.Tensor, torch.Tensor]]] = [[] for _ in range(batch)]
        self.counts = torch.zeros(batch, dtype=torch.int64)
        self.finish: list[FinishReason] = ["length"] * batch

    def mark_stopped(self, rows: torch.Tensor) -> None:
        """Rows whose last token was a stop token end with finish_reason 'stop'."""
        for r in rows.tolist():
            self.finish[r] = "stop"

    def record(self, active: torch.Tensor, dist: Distribution, cols: torch.Tensor) -> torch.Tensor:
        """Store the drawn column of each live row; returns the token ids (B_live,)."""
        tokens = dist.ids.gather(-1, cols[:, None]).squeeze(-1)
        token_logprobs = dist.logprobs.gather(-1, cols[:, None]).squeeze(-1)
        kind = self.params.support_kind
        head = canonical_top(dist.logprobs, self.params.head_logprobs) if kind == "head" else None
        for j, r in enumerate(active.tolist()):
            self.tokens[r].append(int(tokens[j]))
            self.logprobs[r].append(float(token_logprobs[j]))
            if kind == "exact":
                size = int(dist.sizes[j])
                self.rows[r].append((dist.ids[j, :size].clone(), dist.logprobs[j, :size].clone()))
            elif head is not None:
                self.rows[r].append((head[1][j].clone(), head[0][j].clone()))
        self.counts[active] += 1
        return tokens

    def support(self, row: int) -> Support | None:
        kind = self.params.support_kind
        return Support.from_rows(kind, self.rows[row]) if kind is not None else None


def text_of(tokenizer: object) -> Decode:
    """The tokenizer's decode of completion ids, special tokens kept (the text the reply's is taken from)."""
    def decode(ids: Sequence[int]) -> str:
        return tokenizer.decode(list(ids), skip_special_tokens=False)  # type: ignore[attr-defined]
    return decode


def share_prompts(prompts: Sequence[Sequence[int]]) -> tuple[list[Sequence[int]], torch.Tensor]:
    """The distinct prompts in first-seen order, and for each input row the index (B,) of its distinct prompt."""
    index: dict[tuple[int, ...], int] = {}
    row_of = [index.setdefault(tuple(int(t) for t in p), len(index)) for p in prompts]
    distinct = [list(key) for key in index]
    return distinct, torch.tensor(row_of, dtype=torch.int64)


def left_pad(prompts: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Left-padded ids and attention mask, both (B, max_len) int64."""
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.int64)
    mask = torch.zeros((len(prompts), width), dtype=torch.int64)
    for i, prompt in enumerate(prompts):
        ids[i, width - len(prompt) :] = torch.as_tensor(list(prompt), dtype=torch.int64)
        mask[i, width - len(prompt) :] = 1
    return ids, mask
