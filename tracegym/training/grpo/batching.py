"""Episodes -> micro-batches of padded [B, L] tensors, and the trainer's logits at their completion positions.

Each episode is one flat token sequence (prompt, model turns, environment turns); its trainable tokens
are the ones the policy sampled. A micro-batch right-pads several sequences to the longest and lists
every trainable token as (row, col): the logits at position col of row predict the token at col + 1.
Only those T positions go through the output layer, so the [B, L, V] logits tensor is never built.
The support CSR of each micro-batch is the concatenation of its episodes' supports, offsets re-based
to the micro-batch.

Shared prompts. The episodes of a GRPO group start from the same prompt, which is often most of their
tokens (an agent's system prompt and tool schemas). A micro-batch runs each distinct prefix (the tokens
before the position that predicts a sequence's first trained token) once, the prefixes left-padded into
one batch, then runs every sequence's own tokens on top of its prefix's KV cache rows. Gradients reach a
prefix from every row through the cache, so the result is the same as running each full sequence (up to
the order of float additions), on fewer tokens: a group's prompt runs once instead of once per episode.
Groups share micro-batches, which stay as large as the budget allows: on a CPU each micro-batch also pays
for a dense gradient of the embedding matrix.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import torch
from torch import Tensor

from tracegym.errors import ModelError
from tracegym.models.kv_cache import require_cache_api
from tracegym.models.support import Support

if TYPE_CHECKING:
    from transformers import PreTrainedModel

    from tracegym.episodes.record import TokenRecord


@dataclass(frozen=True)
class TrainSample:
    """One sequence ready for the trainer."""

    input_ids: Tensor  # long [L]
    targets: Tensor  # long [n]: index in input_ids of each trained token (>= 1)
    sampler_logprobs: Tensor  # float [n]: log mu of those tokens (zeros for supervised samples)
    support: Support | None  # over the n tokens, or None
    advantage: float  # broadcast to the n tokens (1 for supervised samples)
    pool: str | None = None  # the sampler pool that drew it (`pool/index` sampler ids), for per-pool metrics
    sequence: int | None = None  # the episode it belongs to, shared by its segments (None: the sample's own index)
    sequence_tokens: int | None = None  # trained tokens of that whole episode (None: n), for sequence aggregation

    @property
    def length(self) -> int:
        return int(self.input_ids.numel())


def sample_from_record(record: TokenRecord, advantage: float, pool: str | None = None) -> TrainSample:
    """The trainable tokens of a one-segment token record, with its advantage (and the pool that sampled it)."""
    if len(record.segment_starts) != 1:
        raise ModelError("this token record holds several segments; take one sample per segment")
    [sample] = samples_from_record(record, advantage, pool)
    return sample


def samples_from_record(record: TokenRecord, advantage: float, pool: str | None = None,
                        sequence: int | None = None) -> list[TrainSample]:
    """One sample per segment of an episode's token record (most records have one), each with the episode's
    advantage; `sequence` names the episode, so sequence aggregation weighs it once, whatever its segments."""
    out, seen = [], 0
    for start, end in record.segments():
        mask = record.loss_mask[start:end]
        targets = mask.nonzero().squeeze(-1)  # [n], positions within the segment
        if targets.numel() and int(targets[0]) == 0:
            raise ModelError("a token record whose first token is trainable has no prompt to predict it from")
        n = int(targets.numel())
        support = record.support.slice(seen, seen + n) if record.support is not None else None
        if n:  # a segment whose turns all failed to sample anything has nothing to train
            out.append(TrainSample(record.input_ids[start:end].long(), targets,
                                   record.sampler_logprobs[start:end][targets].float(), support, advantage, pool,
                                   sequence, record.n_trainable))
        seen += n
    return out


@dataclass(frozen=True)
class MicroBatch:
    """Padded sequences and the completion positions to train on; T trained tokens in all.

    With `prefix_ids`, row b's sequence is the prefix `row_prefix[b]` followed by its row of `input_ids`,
    and `cols` index `input_ids`.
    """

    input_ids: Tensor  # long [B, L], right-padded
    attention_mask: Tensor  # long [B, L]
    rows: Tensor  # long [T]: batch row of each trained token
    cols: Tensor  # long [T]: the position whose logits predict it (its own index - 1)
    tokens: Tensor  # long [T]
    advantages: Tensor  # float [T]
    sampler_logprobs: Tensor  # float [T]
    seq_ids: Tensor  # long [T]: the sample's episode (`TrainSample.sequence`, else its index in the step)
    seq_lengths: Tensor  # float [T]: trained tokens of that whole episode (sequence aggregation)
    support: Support | None  # over the T tokens, in order
    prefix_ids: Tensor | None = None  # long [G, P]: the distinct prefixes, left-padded, each run once
    prefix_mask: Tensor | None = None  # long [G, P]
    row_prefix: Tensor | None = None  # long [B]: the prefix each row continues

    @property
    def num_tokens(self) -> int:
        return int(self.tokens.numel())


def pack(samples: Sequence[TrainSample], micro_batch_tokens: int, pad_id: int = 0,
         share_prefixes: bool = True) -> list[MicroBatch]:
    """Group samples into micro-batches of at most `micro_batch_tokens` tokens run through the model.

    With `share_prefixes`, a micro-batch holds whole prompt groups (a group over the budget is split) and
    counts G x the longest prefix plus B x the longest rest. Without, samples are padded to the longest of
    their micro-batch (B x longest L), taken longest first so that similar lengths share one. A sample
    over the budget gets a micro-batch of its own. Gradients do not depend on the grouping.
    """
    # A prefix needs a token before the position that predicts the first trained one.
    prefixed = [i for i, s in enumerate(samples) if share_prefixes and s.targets.numel() and int(s.targets[0]) >= 2]
    plain = sorted(set(range(len(samples))) - set(prefixed))
    batches = [_collate(samples, idx, pad_id) for idx in _fill(plain, samples, micro_batch_tokens)]
    groups = _prefix_groups(samples, prefixed, micro_batch_tokens)
    return batches + [_collate_prefixed(samples, chosen, pad_id) for chosen in _fill_groups(groups, micro_batch_tokens)]


def _fill(indices: Iterable[int], samples: Sequence[TrainSample], budget: int) -> list[list[int]]:
    """Split `indices`, longest first, into runs of B x longest L within `budget`."""
    batches: list[list[int]] = []
    for i in sorted(indices, key=lambda i: -samples[i].length):
        current = batches[-1] if batches else None
        width = samples[current[0]].length if current else 0  # the first is the longest
        if current is not None and (len(current) + 1) * width <= budget:
            current.append(i)
        else:
            batches.append([i])
    return batches


@dataclass(frozen=True)
class _Group:
    prefix_len: int  # P: the tokens before the position that predicts the first trained token
    members: list[int]
    rest: int  # the longest L - P of its members


def _prefix_groups(samples: Sequence[TrainSample], indices: list[int], budget: int) -> list[_Group]:
    """The samples at `indices` grouped by their prefix, longest rest first; a group over `budget` is cut."""
    by_prefix: dict[tuple[int, ...], list[int]] = {}
    for i in indices:
        s = samples[i]
        by_prefix.setdefault(tuple(s.input_ids[: int(s.targets[0]) - 1].tolist()), []).append(i)
    groups = []
    for prefix, members in by_prefix.items():
        members = sorted(members, key=lambda i: -samples[i].length)
        rest = samples[members[0]].length - len(prefix)
        per_batch = max(1, (budget - len(prefix)) // max(rest, 1))
        groups += [_Group(len(prefix), members[k : k + per_batch], rest) for k in range(0, len(members), per_batch)]
    return sorted(groups, key=lambda g: -g.rest)


def _fill_groups(groups: list[_Group], budget: int) -> list[list[_Group]]:
    """Whole groups into runs of G x longest prefix + B x longest rest within `budget`."""
    batches: list[list[_Group]] = []
    for group in groups:
        current = batches[-1] if batches else None
        if current is not None:
            candidate = [*current, group]
            cost = (len(candidate) * max(g.prefix_len for g in candidate)
                    + sum(len(g.members) for g in candidate) * candidate[0].rest)  # the first has the longest rest
            if cost <= budget:
                current.append(group)
                continue
        batches.append([group])
    return batches


def _collate(samples: Sequence[TrainSample], indices: list[int], pad_id: int) -> MicroBatch:
    """The samples at `indices` as one micro-batch of right-padded whole sequences."""
    chosen = [samples[i] for i in indices]
    ids, mask = _padded([s.input_ids for s in chosen], pad_id)  # [B, L]
    return _with_targets(samples, indices, [0] * len(indices), ids, mask)


def _collate_prefixed(samples: Sequence[TrainSample], groups: list[_Group], pad_id: int) -> MicroBatch:
    """Whole groups as one micro-batch: their prefixes left-padded [G, P], the rests right-padded [B, S]."""
    indices = [i for g in groups for i in g.members]
    prefix_ids, prefix_mask = _padded([samples[g.members[0]].input_ids[: g.prefix_len] for g in groups], pad_id,
                                      left=True)  # [G, P]
    starts = [g.prefix_len for g in groups for _ in g.members]
    ids, mask = _padded([samples[i].input_ids[start:] for i, start in zip(indices, starts, strict=True)],
                        pad_id)  # [B, S]
    row_prefix = torch.tensor([k for k, g in enumerate(groups) for _ in g.members], dtype=torch.long)  # [B]
    return replace(_with_targets(samples, indices, starts, ids, mask), prefix_ids=prefix_ids,
                   prefix_mask=prefix_mask, row_prefix=row_prefix)


def _padded(rows: list[Tensor], pad_id: int, left: bool = False) -> tuple[Tensor, Tensor]:
    """long [B, L] ids and mask: each row at the left (right-padded), or at the right with `left` padding."""
    width = max(r.numel() for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for row, r in enumerate(rows):
        span = slice(width - r.numel(), width) if left else slice(0, r.numel())
        ids[row, span] = r
        mask[row, span] = 1
    return ids, mask


def _with_targets(samples: Sequence[TrainSample], indices: list[int], starts: list[int], ids: Tensor,
                  mask: Tensor) -> MicroBatch:
    """A micro-batch over `ids` (row b holding sample indices[b] from token starts[b]) and its trained tokens."""
    rows, cols, tokens, advantages, logprobs, seq_ids, seq_lengths = [], [], [], [], [], [], []
    for row, (index, start) in enumerate(zip(indices, starts, strict=True)):
        s = samples[index]
        n = s.targets.numel()
        rows.append(torch.full((n,), row, dtype=torch.long))
        cols.append(s.targets - 1 - start)
        tokens.append(s.input_ids[s.targets])
        advantages.append(torch.full((n,), s.advantage, dtype=torch.float32))
        logprobs.append(s.sampler_logprobs)
        seq_ids.append(torch.full((n,), index if s.sequence is None else s.sequence, dtype=torch.long))
        seq_lengths.append(torch.full((n,), float(n if s.sequence_tokens is None else s.sequence_tokens)))
    return MicroBatch(ids, mask, torch.cat(rows), torch.cat(cols), torch.cat(tokens), torch.cat(advantages),
                      torch.cat(logprobs), torch.cat(seq_ids), torch.cat(seq_lengths),
                      _joined_support([samples[i].support for i in indices]))


def _joined_support(supports: list[Support | None]) -> Support | None:
    present = [s for s in supports if s is not None]
    if not present:
        return None
    if len(present) != len(supports):
        raise ModelError("some episodes recorded a sampler support and others did not; sample them all alike")
    return Support.concat(present)


def _over_prefixes(model: PreTrainedModel, batch: MicroBatch, ids: Tensor, mask: Tensor) -> Tensor:
    """float [B, S, H]: the hidden states of each row's tokens, run on top of its prefix's KV cache."""
    assert batch.prefix_ids is not None and batch.prefix_mask is not None and batch.row_prefix is not None
    require_cache_api()
    device = ids.device
    prefix_mask, row_prefix = batch.prefix_mask.to(device), batch.row_prefix.to(device)  # [G, P], [B]
    prefix_positions = (prefix_mask.cumsum(-1) - 1).clamp(min=0)  # [G, P]: left pads share position 0
    # The prefixes once, with grad: their cache rows, picked for each row, carry every row's gradient back.
    cache = model.base_model(input_ids=batch.prefix_ids.to(device), attention_mask=prefix_mask,
                             position_ids=prefix_positions, use_cache=True).cache
    cache.batch_select_indices(row_prefix)
    width = prefix_mask.shape[1]
    positions = prefix_mask.sum(-1)[row_prefix, None] + torch.arange(ids.shape[1], device=device)  # [B, S]
    return model.base_model(
        input_ids=ids, attention_mask=torch.cat([prefix_mask[row_prefix], mask], dim=1), position_ids=positions,
        cache_position=torch.arange(width, width + ids.shape[1], device=device), cache=cache, use_cache=True,
    ).last_hidden_state  # [B, S, H]


def check_plain_lm_head(model: PreTrainedModel) -> None:
    """Refuse models whose logits are not just the output layer over the last hidden state."""
    config = model.config
    for name in ("final_logit_softcapping", "logit_scale", "output_multiplier_scale"):
        if getattr(config, name, None) not in (None, 1, 1.0):
            raise ModelError(
                f"{type(model).__name__} post-processes its logits ({name}={getattr(config, name)}), which the "
                "trainer's completion-position logits do not reproduce; train a model without it"
            )
    if model.get_output_embeddings() is None:
        raise ModelError(f"{type(model).__name__} has no output embeddings; the trainer needs a causal LM head")


def completion_hidden(model: PreTrainedModel, batch: MicroBatch) -> Tensor:
    """[T, H]: the last hidden state at the batch's completion positions (what the output layer reads)."""
    device = next(model.parameters()).device
    ids, mask = batch.input_ids.to(device), batch.attention_mask.to(device)  # [B, S]
    if batch.prefix_ids is None:
        hidden = model.base_model(input_ids=ids, attention_mask=mask).last_hidden_state  # [B, S, H]
    else:
        hidden = _over_prefixes(model, batch, ids, mask)
    return hidden[batch.rows.to(device), batch.cols.to(device)]  # [T, H]


def completion_logits(model: PreTrainedModel, batch: MicroBatch, temperature: float = 1.0) -> Tensor:
    """float32 [T, V]: the model's logits at the batch's completion positions, divided by the temperature."""
    logits = model.get_output_embeddings()(completion_hidden(model, batch)).float()  # [T, V]
    return logits / temperature if temperature != 1.0 else logits


@dataclass(frozen=True)
class SupportLogits:
    """The trainer's logits over each position's replayed support alone, the support's columns as the vocabulary.

    With top-p mask replay the loss reads a position's logits only on its support S_t (pi renormalised over S_t),
    so the output layer need not run over the whole vocabulary (supports hold tens of ids, the vocabulary tens of
    thousands), with the same gradient.
    """

    logits: Tensor  # float32 [T, K]: column j of row t is the j-th id of S_t; -inf past |S_t|
    tokens: Tensor  # long [T]: each trained token's column
    support: Support  # the batch's support, ids replaced by their columns


def support_logits(model: PreTrainedModel, batch: MicroBatch, temperature: float = 1.0) -> SupportLogits | None:
    """The batch's logits on its exact support only; None when a trained token is not in its own support (the
    full-vocabulary path then reports the corrupt support) or there is no trained token."""
    support = batch.support
    if support is None or support.kind != "exact":
        raise ModelError("support_logits needs the exact support a truncating sampler records")
    if len(support) == 0:
        return None
    ids, _, kept = support.padded()  # [T, K]
    matched = (ids == batch.tokens[:, None]) & kept  # [T, K]
    if not bool(matched.any(dim=-1).all()):
        return None
    rows, cols = kept.nonzero(as_tuple=True)  # [N] each, in the CSR's order
    hidden = completion_hidden(model, batch)  # [T, H]
    device = hidden.device
    head = model.get_output_embeddings()
    flat_ids = support.ids.long().to(device)  # [N]
    z = (hidden[rows.to(device)] * head.weight[flat_ids]).sum(-1).float()  # [N]
    if getattr(head, "bias", None) is not None:
        z = z + head.bias[flat_ids].float()
    logits = z.new_full(kept.shape, float("-inf")).index_put((rows.to(device), cols.to(device)), z / temperature)
    columns = Support("exact", cols.to(torch.int32), support.offsets, support.logprobs)
    return SupportLogits(logits, matched.int().argmax(dim=-1), columns)
