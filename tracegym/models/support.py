"""Per-token candidate sets in CSR form: the sampler's kept support S, or the top-N head of its distribution.

Token t owns ``ids[offsets[t]:offsets[t+1]]`` and ``logprobs[offsets[t]:offsets[t+1]]`` (vLLM's
``SamplingMask(token_ids, offsets)`` layout, with SGLang's support log-probs beside the ids). Storage is
4 bytes per id and 4 per log-prob, so a capped support of 64 costs at most 520 bytes per token.

Two kinds, never mixed in one object:

- ``"exact"``: S is the whole support the token was drawn from (after temperature, top-k and top-p), and
  the log-probs are the sampling distribution renormalised over S, so they sum to 1 in probability space.
  The trainer can renormalise its own logits over S exactly (top-p mask replay).
- ``"head"``: untruncated sampling; the N most likely ids with their full-vocabulary log-probs, which sum
  to at most 1. Only an approximation of the distribution (the score-centering tail model needs it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import torch

from tracegym.errors import ModelError

SupportKind = Literal["exact", "head"]


@dataclass(frozen=True)
class Support:
    """Candidate sets for n tokens: ids (nnz,) int32, offsets (n+1,) int64, logprobs (nnz,) float32."""

    kind: SupportKind
    ids: torch.Tensor
    offsets: torch.Tensor
    logprobs: torch.Tensor

    def __len__(self) -> int:
        return self.offsets.numel() - 1

    @property
    def sizes(self) -> torch.Tensor:
        """(n,) int64: |S_t| for each token."""
        return self.offsets[1:] - self.offsets[:-1]

    def row(self, t: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The ids and log-probs of token t's set."""
        start, end = int(self.offsets[t]), int(self.offsets[t + 1])
        return self.ids[start:end], self.logprobs[start:end]

    def slice(self, start: int, end: int) -> Support:
        """The sets of tokens start..end-1, as their own CSR object."""
        lo, hi = int(self.offsets[start]), int(self.offsets[end])
        return Support(self.kind, self.ids[lo:hi], self.offsets[start : end + 1] - lo, self.logprobs[lo:hi])

    def padded(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Dense (n, K) views with K = max |S_t|: ids (int64, 0 where padded), logprobs (-inf where padded), mask.

        The trainer gathers its logits with the ids and renormalises under the mask.
        """
        n, width = len(self), int(self.sizes.max()) if len(self) else 0
        rows = torch.repeat_interleave(torch.arange(n), self.sizes)
        cols = torch.arange(self.ids.numel()) - self.offsets[rows]
        ids = torch.zeros(n, width, dtype=torch.int64)
        logprobs = torch.full((n, width), float("-inf"), dtype=torch.float32)
        mask = torch.zeros(n, width, dtype=torch.bool)
        ids[rows, cols] = self.ids.long()
        logprobs[rows, cols] = self.logprobs.float()
        mask[rows, cols] = True
        return ids, logprobs, mask

    def validate(self, token_ids: Sequence[int] | torch.Tensor | None = None) -> None:
        """Raise `ModelError` unless offsets are monotone from 0, ids are unique per token, sizes are >= 1,
        exact supports sum to 1 in probability space, and (when given) each token is in its own set."""
        if self.offsets.numel() < 1 or int(self.offsets[0]) != 0 or int(self.offsets[-1]) != self.ids.numel():
            raise ModelError("support offsets must start at 0 and end at the number of ids")
        if self.ids.numel() != self.logprobs.numel():
            raise ModelError("support ids and logprobs differ in length")
        if bool((self.sizes < 1).any()):
            raise ModelError("every token needs a non-empty support (offsets must strictly increase)")
        tokens = None if token_ids is None else torch.as_tensor(token_ids, dtype=torch.int64)
        if tokens is not None and tokens.numel() != len(self):
            raise ModelError(f"support covers {len(self)} tokens but {tokens.numel()} token ids were given")
        for t in range(len(self)):
            ids, logprobs = self.row(t)
            if torch.unique(ids).numel() != ids.numel():
                raise ModelError(f"token {t}: duplicate ids in its support")
            if self.kind == "exact" and abs(float(torch.logsumexp(logprobs.double(), 0))) > 1e-4:
                raise ModelError(f"token {t}: exact support log-probs do not sum to 1")
            if tokens is not None and self.kind == "exact" and not bool((ids == tokens[t]).any()):
                raise ModelError(f"token {t}: sampled id {int(tokens[t])} is not in its support")

    def to_dict(self) -> dict[str, Any]:
        """Plain lists, for JSON or Arrow."""
        return {
            "kind": self.kind,
            "ids": self.ids.tolist(),
            "offsets": self.offsets.tolist(),
            "logprobs": self.logprobs.tolist(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Support:
        return cls(
            kind=data["kind"],
            ids=torch.tensor(data["ids"], dtype=torch.int32),
            offsets=torch.tensor(data["offsets"], dtype=torch.int64),
            logprobs=torch.tensor(data["logprobs"], dtype=torch.float32),
        )

    @classmethod
    def from_rows(cls, kind: SupportKind, rows: Sequence[tuple[torch.Tensor, torch.Tensor]]) -> Support:
        """Build from per-token (ids, logprobs) pairs."""
        sizes = torch.tensor([ids.numel() for ids, _ in rows], dtype=torch.int64)
        offsets = torch.zeros(len(rows) + 1, dtype=torch.int64)
        offsets[1:] = torch.cumsum(sizes, 0)
        if not rows:
            return cls(kind, torch.zeros(0, dtype=torch.int32), offsets, torch.zeros(0, dtype=torch.float32))
        ids = torch.cat([r[0].to(torch.int32) for r in rows])
        logprobs = torch.cat([r[1].to(torch.float32) for r in rows])
        return cls(kind, ids, offsets, logprobs)

    @classmethod
    def concat(cls, parts: Sequence[Support]) -> Support:
        """Join the sets of consecutive token spans (e.g. the turns of an episode) into one object."""
        if not parts:
            raise ModelError("cannot join an empty list of supports")
        kinds = {p.kind for p in parts}
        if len(kinds) > 1:
            raise ModelError(f"cannot join supports of different kinds: {sorted(kinds)}")
        shifts = torch.cumsum(torch.tensor([0] + [p.ids.numel() for p in parts[:-1]]), 0)
        offsets = torch.cat([parts[0].offsets[:1]] + [p.offsets[1:] + s for p, s in zip(parts, shifts, strict=True)])
        return cls(parts[0].kind, torch.cat([p.ids for p in parts]), offsets, torch.cat([p.logprobs for p in parts]))
