"""Re-scoring stored completions: the log-probs a model assigns to given completion tokens.

Used by the tests as the "token record is exact" oracle (sample, then re-score with the same weights) and
by the trainer for pi_old / pi_theta. Nothing here decodes or re-encodes text: inputs are token ids.

Two normalisations, matching `tracegym.models.sampling`:

- full vocabulary: ``log_softmax(z / T)[a]``;
- over a recorded support S (top-p mask replay): ``z_a / T - logsumexp_{v in S} z_v / T``. A token
  outside its S is an error, since it cannot have been sampled from S.

The functions keep autograd intact; wrap calls in ``torch.no_grad()`` when no gradient is wanted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch

from tracegym.errors import ModelError
from tracegym.models.sampling import left_pad
from tracegym.models.support import Support

if TYPE_CHECKING:
    from transformers import PreTrainedModel


def completion_logits(
    model: PreTrainedModel, prompts: Sequence[Sequence[int]], completions: Sequence[Sequence[int]]
) -> list[torch.Tensor]:
    """One forward pass over the left-padded prompt+completion sequences.

    Returns, per sequence, the fp32 logits (n_i, V) at the positions that predict its n_i completion tokens.
    """
    if len(prompts) != len(completions):
        raise ModelError(f"{len(prompts)} prompts but {len(completions)} completions")
    if any(not p for p in prompts):
        raise ModelError("every prompt needs at least one token")
    sequences = [list(p) + list(c) for p, c in zip(prompts, completions, strict=True)]
    ids, mask = left_pad(sequences, pad_id=0)  # (B, L)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    dev = next(model.parameters()).device
    logits = model(input_ids=ids.to(dev), attention_mask=mask.to(dev), position_ids=positions.to(dev)).logits
    width = ids.shape[1]
    out = []
    for row, completion in enumerate(completions):
        n = len(completion)
        # position j predicts token j+1, so the n completion tokens are predicted by the n positions before the end
        out.append(logits[row, width - n - 1 : width - 1].float())
    return out


def token_logprobs(
    logits: torch.Tensor, token_ids: torch.Tensor, temperature: float = 1.0, support: Support | None = None
) -> torch.Tensor:
    """(n,) log-probs of token_ids (n,) under logits (n, V) / temperature, over the vocabulary or over `support`."""
    z = logits.float() / temperature  # (n, V)
    tokens = token_ids.to(torch.int64).to(z.device)
    if support is None:
        return torch.log_softmax(z, dim=-1).gather(-1, tokens[:, None]).squeeze(-1)
    ids, _, mask = _exact_padded(support, z.shape[0])
    ids, mask = ids.to(z.device), mask.to(z.device)
    member = ((ids == tokens[:, None]) & mask).any(dim=-1)
    if not bool(member.all()):
        first = int((~member).nonzero()[0])
        raise ModelError(f"token {first} (id {int(tokens[first])}) is outside its recorded support")
    z_support = z.gather(-1, ids).masked_fill(~mask, float("-inf"))  # (n, K)
    return z.gather(-1, tokens[:, None]).squeeze(-1) - torch.logsumexp(z_support, dim=-1)


def support_logprobs(logits: torch.Tensor, support: Support, temperature: float = 1.0) -> torch.Tensor:
    """(n, K) log pi^S for every id of each token's support, -inf in padded columns (see `Support.padded`)."""
    z = logits.float() / temperature
    ids, _, mask = _exact_padded(support, z.shape[0])
    ids, mask = ids.to(z.device), mask.to(z.device)
    return torch.log_softmax(z.gather(-1, ids).masked_fill(~mask, float("-inf")), dim=-1)


def _exact_padded(support: Support, n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if support.kind != "exact":
        raise ModelError(f"renormalising needs an 'exact' support, not {support.kind!r} (a top-N head)")
    if len(support) != n:
        raise ModelError(f"support covers {len(support)} tokens but there are {n} completion tokens")
    return support.padded()


def logprobs_of(
    model: PreTrainedModel,
    prompt_ids: Sequence[int],
    completion_ids: Sequence[int],
    temperature: float = 1.0,
    support: Support | None = None,
) -> torch.Tensor:
    """(n,) fp32 log-probs of one completion's tokens given its prompt, over the vocabulary or over `support`.

    With the sampler's temperature and recorded support this reproduces the sampler's stored log-probs.
    """
    return batch_logprobs_of(model, [prompt_ids], [completion_ids], temperature, [support])[0]


def batch_logprobs_of(
    model: PreTrainedModel,
    prompts: Sequence[Sequence[int]],
    completions: Sequence[Sequence[int]],
    temperature: float = 1.0,
    supports: Sequence[Support | None] | None = None,
) -> list[torch.Tensor]:
    """`logprobs_of` for a batch, in one forward pass; `supports` aligns with the completions (None: full vocab)."""
    supports = list(supports) if supports is not None else [None] * len(completions)
    if len(supports) != len(completions):
        raise ModelError(f"{len(completions)} completions but {len(supports)} supports")
    logits = completion_logits(model, prompts, completions)
    return [
        token_logprobs(lg, torch.as_tensor(list(c), dtype=torch.int64), temperature, s)
        for lg, c, s in zip(logits, completions, supports, strict=True)
    ]
