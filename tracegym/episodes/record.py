"""The record of one episode: the conversation as it happened and the exact token record training needs.

The token record is one flat sequence per episode, never rebuilt from text:

    input_ids        prompt ids of the first turn, then per model turn its completion ids (as sampled)
                     followed by the environment's ids (tool results, feedback) as the chat template adds them
    loss_mask        True exactly on the model's own tokens (trainable); prompt and environment are masked
    sampler_logprobs log mu(token) recorded by the sampler on trainable positions; NaN on masked ones, so a
                     masked position can never pass for a log-prob of 0
    support          the sampler's per-token support (CSR, `tracegym.models.support.Support`) over the
                     trainable tokens only, in order; None when the client recorded none

Each `TurnRecord` names its completion's span [start, end) in `input_ids`, the policy version and the
sampler that produced it, so `turn_inputs` gives the trainer (and the re-scoring tests) each turn's exact
prompt and completion ids.

Segments. An agent that rewrites its history (drops a reply, edits its system prompt, compacts) makes
conversations that do not extend one another; the proxy harness keeps each as a segment. The record is then
the segments' sequences one after the other, `segment_starts` saying where each begins (a segment begins
with its own prompt, so never on a trainable token). A segment is one sequence for the model: its tokens
never attend to another segment's. The trainer makes one sample per segment, all with the episode's
advantage (as prime-rl and verifiers do with branching trajectories), and a turn's prompt starts at its
segment's start (`TurnRecord.segment_start`). An observation that follows the last model turn is in `messages` only: the
model never saw it (except when the episode stops because that observation made the next prompt too long
for the context: then its masked tokens end the record, so the overflow can be seen).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

import torch

from tracegym.errors import ModelError
from tracegym.models.support import Support

Message = dict[str, Any]
StopReason = Literal[
    "model_done",  # the model replied without asking for an action: its answer
    "env_done",  # the environment ended the episode (a submit, a terminal tool, a one-reply conversation)
    "max_turns",  # the turn limit was reached
    "max_tokens",  # the episode's budget of model tokens was spent
    "max_new_tokens",  # the last reply was cut at the per-turn token limit and asked for no action
    "time_budget",  # the episode's wall-clock budget ran out
    "context_exceeded",  # the next prompt would not fit the model's context or max_prompt_tokens
    "harness_error",  # the environment failed (a tool raised, the sandbox did not start)
    "policy_error",  # the policy client failed (a disconnect, an engine error)
]
STOP_REASONS: tuple[str, ...] = get_args(StopReason)
TrainUse = Literal[
    "trained",  # in a step's batch, and the group's rewards differed: the loss learned from it
    "no_signal",  # in a step's batch, but every reward of its group was equal: advantages 0, skipped
    "set_aside",  # taken by dynamic sampling and replaced (every reward of its group was equal)
    "stale",  # sampled by weights more than async.max_staleness versions old: dropped
    "imported",  # sampled and scored by another trainer, brought back by `tracegym rollouts import`
]


@dataclass
class TurnRecord:
    """One model turn."""

    finish_reason: str
    """'stop' (the model ended its turn) or 'length' (cut at max_new_tokens), or what an API said."""
    sampler_id: str
    policy_version: int | None
    seed: int | None
    latency_s: float
    start: int | None = None
    """Start of this turn's completion in `TokenRecord.input_ids`; None without a token record."""
    end: int | None = None
    """End (exclusive) of this turn's completion in `TokenRecord.input_ids`."""
    segment_start: int = 0
    """Start in `TokenRecord.input_ids` of the segment the turn belongs to: where its prompt begins."""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TurnRecord:
        return cls(**data)


@dataclass
class TokenRecord:
    """The flat token sequence of an episode; see the module docstring for the invariants."""

    input_ids: torch.Tensor
    """(T,) int64."""
    loss_mask: torch.Tensor
    """(T,) bool: True on model tokens."""
    sampler_logprobs: torch.Tensor
    """(T,) float32: the sampler's log-prob on trainable positions, NaN elsewhere."""
    support: Support | None
    """Per trainable token (in order): the sampler's support; None when the client gave none."""
    segment_starts: tuple[int, ...] = (0,)
    """Where each segment begins in `input_ids` (see the module docstring); (0,) for one conversation."""

    @property
    def n_trainable(self) -> int:
        return int(self.loss_mask.sum())

    def segments(self) -> list[tuple[int, int]]:
        """Each segment's [start, end) in `input_ids`."""
        ends = [*self.segment_starts[1:], self.input_ids.numel()]
        return list(zip(self.segment_starts, ends, strict=True))

    def validate(self) -> None:
        """Raise `ModelError` unless shapes align, log-probs sit exactly on trainable tokens and the support
        covers the trainable tokens (each sampled id inside its own set, for an exact support)."""
        n = self.input_ids.numel()
        if self.loss_mask.numel() != n or self.sampler_logprobs.numel() != n:
            raise ModelError("token record: input_ids, loss_mask and sampler_logprobs differ in length")
        if not bool((torch.isfinite(self.sampler_logprobs) == self.loss_mask).all()):
            raise ModelError("token record: sampler log-probs must be finite exactly on trainable tokens")
        starts = list(self.segment_starts)
        if (not starts or starts[0] != 0 or any(b <= a for a, b in zip(starts, starts[1:], strict=False))
                or starts[-1] >= max(n, 1) or any(bool(self.loss_mask[i]) for i in starts if i < n)):
            raise ModelError(f"token record: segment starts {starts} must rise from 0 within the record, each on a "
                             "prompt token")
        if self.support is not None:
            if len(self.support) != self.n_trainable:
                raise ModelError(
                    f"token record: support covers {len(self.support)} tokens, {self.n_trainable} are trainable"
                )
            self.support.validate(self.input_ids[self.loss_mask])

    def turn_inputs(self, turns: Sequence[TurnRecord]) -> list[tuple[list[int], list[int], Support | None]]:
        """Per turn: (prompt ids, completion ids, the completion's support), exactly as the sampler saw them."""
        out, seen, ids = [], 0, self.input_ids.tolist()
        for turn in turns:
            if turn.start is None or turn.end is None:
                raise ModelError("this episode has no token record to take turn inputs from")
            n = turn.end - turn.start
            support = self.support.slice(seen, seen + n) if self.support is not None else None
            out.append((ids[turn.segment_start : turn.start], ids[turn.start : turn.end], support))
            seen += n
        return out


def build_token_record(
    ids: Sequence[int],
    trainable: Sequence[bool],
    turn_logprobs: Sequence[torch.Tensor],
    turn_supports: Sequence[Support | None],
) -> TokenRecord:
    """Assemble the record from a conversation's ids/trainable flags and each turn's sampler outputs."""
    mask = torch.tensor(list(trainable), dtype=torch.bool)
    logprobs = torch.full((len(ids),), math.nan, dtype=torch.float32)
    sampled = torch.cat([lp.float() for lp in turn_logprobs]) if turn_logprobs else torch.zeros(0)
    if sampled.numel() != int(mask.sum()):
        raise ModelError(f"{int(mask.sum())} trainable tokens but {sampled.numel()} sampler log-probs")
    logprobs[mask] = sampled
    supports = list(turn_supports)
    if any(s is None for s in supports):
        support = None
        if any(s is not None for s in supports):
            raise ModelError("some turns recorded a support and others did not; sample every turn alike")
    else:
        support = Support.concat(supports) if supports else None  # type: ignore[arg-type]
    record = TokenRecord(torch.tensor(list(ids), dtype=torch.int64), mask, logprobs, support)
    record.validate()
    return record


def join_segments(records: Sequence[TokenRecord]) -> TokenRecord:
    """One record holding `records` (each one segment) one after the other; turns' spans shift by the start of
    their segment (`segment_starts`)."""
    starts, at = [], 0
    for record in records:
        starts.append(at)
        at += record.input_ids.numel()
    supports = [r.support for r in records]
    if any(s is None for s in supports) and any(s is not None for s in supports):
        raise ModelError("some segments recorded a support and others did not; sample every turn alike")
    support = Support.concat(supports) if supports and supports[0] is not None else None  # type: ignore[arg-type]
    joined = TokenRecord(torch.cat([r.input_ids for r in records]), torch.cat([r.loss_mask for r in records]),
                         torch.cat([r.sampler_logprobs for r in records]), support, tuple(starts))
    joined.validate()
    return joined


@dataclass
class EpisodeCounts:
    """What the harness counted."""

    tool_calls: int = 0
    """Well-formed tool calls (bash actions included)."""
    malformed_tool_calls: int = 0
    """Replies whose action could not be parsed or broke its tool's schema (one per bad call)."""
    replay_hits: int = 0
    """Replay: calls answered from the recording."""
    replay_misses: int = 0
    """Replay: calls the recording could not answer (the episode left the recorded path)."""


@dataclass
class Episode:
    """One attempt at one task; `tracegym.episodes.rollout_table` stores it as a `rollouts` row."""

    rollout_id: str
    task_id: str
    task_set_id: str | None
    split: str | None
    harness: str
    sample_idx: int
    seed: int
    model: str | None
    sampling: dict[str, Any]
    """temperature, top_p, top_k, max_new_tokens: what re-scoring needs."""
    messages: list[Message]
    """The whole conversation in OpenAI chat form: the task's prompt, then what happened."""
    n_prompt_messages: int
    tokens: TokenRecord | None
    """None for clients that return no token ids (API baselines)."""
    turns: list[TurnRecord]
    stop_reason: StopReason
    counts: EpisodeCounts = field(default_factory=EpisodeCounts)
    reward: float | None = None
    scorer_details: dict[str, Any] = field(default_factory=dict)
    scorer_error: str | None = None
    components: dict[str, float] = field(default_factory=dict)
    """The reward's parts by name (`ScoreResult.components`); training uses `reward` alone unless
    `grpo.advantages` is per_component."""
    component_weights: dict[str, float] = field(default_factory=dict)
    """Each part's weight when the reward is their weighted mean (`ScoreResult.weights`); empty otherwise. Not
    stored in the rollouts table: the trainer reads it from the episodes it is handed."""
    harness_error: str | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    """Harness extras: chat-template fallbacks, tool-call counts per style, sandbox backend."""
    latency_s: float = 0.0
    created_at: datetime = field(default_factory=datetime.now)
    run_id: str | None = None
    train_step: int | None = None
    """The trainer step whose batch took the episode; None outside training."""
    train_use: TrainUse | None = None
    """What that step did with it; None outside training."""

    @property
    def continuation(self) -> list[Message]:
        """The messages after the task's prompt."""
        return self.messages[self.n_prompt_messages :]

    @property
    def policy_versions(self) -> list[int]:
        return [t.policy_version for t in self.turns if t.policy_version is not None]

    @property
    def policy_version(self) -> int | None:
        """The oldest version that wrote any of the episode's tokens (what staleness is measured from)."""
        versions = self.policy_versions
        return min(versions) if versions else None

    @property
    def version_changed(self) -> bool:
        """Whether the policy was updated between the episode's turns."""
        return len(set(self.policy_versions)) > 1

    @property
    def sampler_id(self) -> str | None:
        return self.turns[0].sampler_id if self.turns else None

    @property
    def left_recorded_path(self) -> bool:
        return self.counts.replay_misses > 0

    @property
    def tokens_out(self) -> int | None:
        return self.tokens.n_trainable if self.tokens is not None else None

    @property
    def tokens_in(self) -> int | None:
        """Prompt and environment tokens in the record."""
        return self.tokens.input_ids.numel() - self.tokens.n_trainable if self.tokens is not None else None
