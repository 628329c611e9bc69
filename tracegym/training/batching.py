"""Episodes -> micro-batches of padded [B, L] tensors, and the trainer's logits at their completion positions.

Each episode is one flat token sequence (prompt, model turns, environment turns); its trainable tokens
are the ones the policy sampled. A micro-batch right-pads several sequences to the longest and lists
every trainable token as (row, col): the logits at position col of row predict the token at col + 1.
Only those T positions go through the output layer, so the [B, L, V] logits tensor is never built.
The support CSR of each micro-batch is the concatenation of its episodes' supports, offsets re-based
to the micro-batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import Tensor

from tracegym.errors import ModelError
from tracegym.models.support import Support

if TYPE_CHECKING:
    from transformers import PreTrainedModel

    from tracegym.harnesses.episode import TokenRecord


@dataclass(frozen=True)
class TrainSample:
    """One sequence ready for the trainer."""

    input_ids: Tensor  # long [L]
    targets: Tensor  # long [n]: index in input_ids of each trained token (>= 1)
    sampler_logprobs: Tensor  # float [n]: log mu of those tokens (zeros for supervised samples)
    support: Support | None  # over the n tokens, or None
    advantage: float  # broadcast to the n tokens (1 for supervised samples)

    @property
    def length(self) -> int:
        return int(self.input_ids.numel())


def sample_from_record(record: TokenRecord, advantage: float) -> TrainSample:
    """The trainable tokens of an episode's token record, with its advantage."""
    targets = record.loss_mask.nonzero().squeeze(-1)  # [n]
    if targets.numel() and int(targets[0]) == 0:
        raise ModelError("a token record whose first token is trainable has no prompt to predict it from")
    return TrainSample(record.input_ids.long(), targets, record.sampler_logprobs[targets].float(), record.support,
                       advantage)


@dataclass(frozen=True)
class MicroBatch:
    """Padded sequences and the completion positions to train on; T trained tokens in all."""

    input_ids: Tensor  # long [B, L], right-padded
    attention_mask: Tensor  # long [B, L]
    rows: Tensor  # long [T]: batch row of each trained token
    cols: Tensor  # long [T]: the position whose logits predict it (its own index - 1)
    tokens: Tensor  # long [T]
    advantages: Tensor  # float [T]
    sampler_logprobs: Tensor  # float [T]
    seq_ids: Tensor  # long [T]: the sample's index in the whole step (sequence aggregation)
    support: Support | None  # over the T tokens, in order

    @property
    def num_tokens(self) -> int:
        return int(self.tokens.numel())


def pack(samples: Sequence[TrainSample], micro_batch_tokens: int, pad_id: int = 0) -> list[MicroBatch]:
    """Group samples into micro-batches of at most `micro_batch_tokens` padded tokens (B x longest L).

    Samples are taken longest first, so sequences of similar length share a micro-batch; a sample longer
    than the budget gets a micro-batch of its own. Gradients do not depend on the grouping.
    """
    order = sorted(range(len(samples)), key=lambda i: -samples[i].length)
    batches: list[list[int]] = []
    for i in order:
        current = batches[-1] if batches else None
        width = samples[current[0]].length if current else 0  # the first is the longest
        if current is not None and (len(current) + 1) * width <= micro_batch_tokens:
            current.append(i)
        else:
            batches.append([i])
    return [_collate(samples, idx, pad_id) for idx in batches]


def _collate(samples: Sequence[TrainSample], indices: list[int], pad_id: int) -> MicroBatch:
    chosen = [samples[i] for i in indices]
    width = max(s.length for s in chosen)
    ids = torch.full((len(chosen), width), pad_id, dtype=torch.long)  # [B, L]
    mask = torch.zeros((len(chosen), width), dtype=torch.long)  # [B, L]
    rows, cols, tokens, advantages, logprobs, seq_ids = [], [], [], [], [], []
    for row, (index, s) in enumerate(zip(indices, chosen, strict=True)):
        ids[row, : s.length] = s.input_ids
        mask[row, : s.length] = 1
        n = s.targets.numel()
        rows.append(torch.full((n,), row, dtype=torch.long))
        cols.append(s.targets - 1)
        tokens.append(s.input_ids[s.targets])
        advantages.append(torch.full((n,), s.advantage, dtype=torch.float32))
        logprobs.append(s.sampler_logprobs)
        seq_ids.append(torch.full((n,), index, dtype=torch.long))
    return MicroBatch(ids, mask, torch.cat(rows), torch.cat(cols), torch.cat(tokens), torch.cat(advantages),
                      torch.cat(logprobs), torch.cat(seq_ids), _joined_support([s.support for s in chosen]))


def _joined_support(supports: list[Support | None]) -> Support | None:
    present = [s for s in supports if s is not None]
    if not present:
        return None
    if len(present) != len(supports):
        raise ModelError("some episodes recorded a sampler support and others did not; sample them all alike")
    return Support.concat(present)


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


def completion_logits(model: PreTrainedModel, batch: MicroBatch, temperature: float = 1.0) -> Tensor:
    """float32 [T, V]: the model's logits at the batch's completion positions, divided by the temperature."""
    device = next(model.parameters()).device
    hidden = model.base_model(
        input_ids=batch.input_ids.to(device), attention_mask=batch.attention_mask.to(device)
    ).last_hidden_state  # [B, L, H]
    picked = hidden[batch.rows.to(device), batch.cols.to(device)]  # [T, H]
    logits = model.get_output_embeddings()(picked).float()  # [T, V]
    return logits / temperature if temperature != 1.0 else logits
