"""One proxy episode: the external agent's calls, stitched into conversations with the exact token record.

An agent re-sends its whole conversation on every call. When a call's messages start with everything the
agent sent last time plus the reply it was given (`same_message` ignores re-serialisation), the call
extends that conversation: the next prompt is the previous prompt's ids + the completion ids as sampled +
the template ids of the agent's new messages (`TokenConversation`), so the model's text is never
re-tokenised. A call that does not extend any conversation (the agent compacted or edited its history,
dropped a reply, changed its tools, or runs a second conversation alongside) starts a new segment, rendered
afresh. A segment is claimed while its call is generating, so two concurrent calls never extend the same
one. Every segment keeps its token record: the episode's record holds them one after the other
(`tracegym.episodes.record.join_segments`), so each trains as a sample of its own with the episode's
reward, and `split` says how the episode was split and why.

Limits are the runner's: after `max_turns` calls, once `max_tokens` model tokens are spent, or when a
prompt no longer fits the context or `max_prompt_tokens`, the call is refused with an OpenAI-style error
and the episode stops with that reason (`stopping` is set, so the harness gives the program a grace period
and then ends it). A failure (the policy raised, the agent's messages cannot be rendered) ends the episode
at once (`ended`).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from tracegym.episodes.record import (
    EpisodeCounts,
    Message,
    StopReason,
    TokenRecord,
    TurnRecord,
    build_token_record,
    join_segments,
)
from tracegym.errors import ModelError
from tracegym.harnesses.chat_template import ChatRenderer, TokenConversation
from tracegym.harnesses.policy import Completion, PolicyClient, PolicyRequest
from tracegym.harnesses.proxy.wire_chat import (
    AssistantReply,
    ChatRequest,
    ProxyError,
    assistant_reply,
    chat_completion,
    same_message,
)
from tracegym.harnesses.runner import EpisodeLimits, derive_seed, token_access
from tracegym.harnesses.toolcalls import ToolCallStats
from tracegym.models.sampling import SamplingParams
from tracegym.models.support import Support


@dataclass
class Segment:
    """One conversation of the episode: each of its calls extended the one before."""

    index: int
    tools: list[dict[str, Any]] | None
    messages: list[Message]
    """As the agent sent them, then the last reply as it was returned."""
    n_prompt: int
    """Messages of the call that opened the segment."""
    conv: TokenConversation | None
    """The token record (token-level policies only)."""
    turns: list[TurnRecord] = field(default_factory=list)
    logprobs: list[torch.Tensor] = field(default_factory=list)
    supports: list[Support | None] = field(default_factory=list)
    busy: bool = False
    opened: dict[str, Any] = field(default_factory=dict)
    """Why the call that opened it extended no earlier segment (see `ProxySession.split`)."""
    calls: list[int] = field(default_factory=list)
    """The episode's calls (0-based) it answered."""

    def extended_by(self, messages: Sequence[Message], tools: list[dict[str, Any]] | None) -> bool:
        n = len(self.messages)
        return (not self.busy and tools == self.tools and len(messages) > n
                and all(same_message(sent, known) for sent, known in zip(messages, self.messages, strict=False)))

    def token_record(self) -> TokenRecord | None:
        if self.conv is None or not self.turns:
            return None
        return build_token_record(self.conv.ids, self.conv.trainable, self.logprobs, self.supports)

    @property
    def model_tokens(self) -> int:
        return sum(int(lp.numel()) for lp in self.logprobs)


def _kept_messages(known: Sequence[Message], sent: Sequence[Message]) -> int:
    """How many of `known`'s messages `sent` starts with, as they were."""
    n = 0
    for a, b in zip(known, sent, strict=False):
        if not same_message(b, a):
            break
        n += 1
    return n


def template_view(messages: Sequence[Message]) -> list[Message]:
    """Messages as the chat template takes them: OpenAI's 'developer' role is the system prompt."""
    return [{**m, "role": "system"} if m.get("role") == "developer" else dict(m) for m in messages]


class ProxySession:
    """Answers one episode's /v1/chat/completions calls with the policy and keeps what they produced."""

    def __init__(self, policy: PolicyClient, params: SamplingParams, limits: EpisodeLimits, seed: int,
                 model_name: str) -> None:
        self.policy, self.params, self.limits, self.seed = policy, params, limits, seed
        self.model_name = model_name
        self.access = token_access(policy, params)
        self.segments: list[Segment] = []
        self.last: Segment | None = None
        """The segment of the last answered call: its conversation is the episode's."""
        self.calls = self.tokens_out = 0
        self.stop: StopReason | None = None
        """A limit the episode reached."""
        self.failure: tuple[StopReason, str] | None = None
        self.stopping = asyncio.Event()
        """Set when the episode is over for the proxy: a limit or a failure."""
        self.ended = asyncio.Event()
        """Set on a failure: the program is ended at once."""
        self.disconnected_at: float | None = None
        """When (time.monotonic) the agent's client went away mid-call, if it did: a program killed at its wall
        time does, and that is a time-out, not a failure."""
        self.counts = EpisodeCounts()
        self.tool_stats = ToolCallStats()
        self.ignored: set[str] = set()

    async def complete(self, request: ChatRequest) -> dict[str, Any]:
        """The chat.completion for one call; raises `ProxyError` for what the agent gets as an error."""
        self.ignored.update(request.ignored)
        if self.failure is not None or self.stop is not None:
            reason = self.failure[0] if self.failure is not None else self.stop
            raise ProxyError(400, f"this episode is over ({reason}); the proxy answers no more calls", "episode_over")
        self._check_budget()
        call = self.calls
        self.calls += 1
        segment = self._segment_for(request)
        segment.busy = True
        try:
            params = self._call_params(request)
            self._check_prompt(segment)
            completion = await self._generate(segment, request, params, call)
            reply, prompt_tokens, n_out = self._record(segment, request, completion, call)
        finally:
            segment.busy = False
        self.last = segment
        return chat_completion(f"chatcmpl-{uuid.uuid4().hex}", self.model_name, reply, prompt_tokens, n_out)

    def fail(self, reason: StopReason, text: str) -> None:
        """End the episode now with a recorded error (the first failure is the one kept)."""
        if self.failure is None:
            self.failure = (reason, text)
        self.stopping.set()
        self.ended.set()

    def disconnected(self, detail: str) -> None:
        if self.disconnected_at is None:
            self.disconnected_at = time.monotonic()
        self.fail("harness_error", f"{detail} (call {self.calls})")

    def crashed(self, error: BaseException) -> None:
        self.fail("harness_error", f"the proxy failed answering call {self.calls}: {type(error).__name__}: {error}")

    def _limit(self, reason: StopReason, message: str, code: str) -> ProxyError:
        self.stop = self.stop or reason
        self.stopping.set()
        return ProxyError(400, message, code)

    def _check_budget(self) -> None:
        if self.calls >= self.limits.max_turns:
            raise self._limit("max_turns", f"the episode's limit of {self.limits.max_turns} calls is reached",
                              "max_turns")
        if self.limits.max_tokens is not None and self.tokens_out >= self.limits.max_tokens:
            raise self._limit("max_tokens", f"the episode's budget of {self.limits.max_tokens} model tokens is spent",
                              "max_tokens")

    def _call_params(self, request: ChatRequest) -> SamplingParams:
        cap = self.params.max_new_tokens
        if request.max_tokens is not None:
            cap = min(cap, request.max_tokens)
        if self.limits.max_tokens is not None:
            cap = min(cap, self.limits.max_tokens - self.tokens_out)
        stop = tuple(dict.fromkeys((*self.params.stop, *request.stop)))  # the run's own, then the agent's
        if cap == self.params.max_new_tokens and stop == self.params.stop:
            return self.params
        return self.params.model_copy(update={"max_new_tokens": cap, "stop": stop})

    def _check_prompt(self, segment: Segment) -> None:
        if segment.conv is None or self.access is None:
            return
        n, context, most = len(segment.conv.ids), self.access.context_length, self.limits.max_prompt_tokens
        if (context is not None and n >= context) or (most is not None and n > most):
            limit = min(x for x in (context, most) if x is not None)
            raise self._limit("context_exceeded", f"the prompt has {n} tokens; the limit is {limit}",
                              "context_length_exceeded")

    def _segment_for(self, request: ChatRequest) -> Segment:
        """The conversation this call extends (its new messages appended), or a new segment."""
        candidates = [s for s in self.segments if s.extended_by(request.messages, request.tools)]
        for segment in sorted(candidates, key=lambda s: -len(s.messages)):
            new = request.messages[len(segment.messages):]
            if segment.conv is not None:
                try:
                    segment.conv.add_environment(template_view(new))
                except ModelError:
                    continue  # the template cannot append these messages token-exactly: render afresh instead
            segment.messages.extend(new)
            return segment
        return self._new_segment(request, bool(candidates))

    def _why_new(self, request: ChatRequest, template: bool) -> dict[str, Any]:
        """How a call that extends no segment relates to the closest one: which, how many of its messages the
        call kept as they were, and why it is not an extension."""
        if not self.segments:
            return {"why": "first_call"}
        kept = [(_kept_messages(s.messages, request.messages), s) for s in self.segments]
        n, closest = max(kept, key=lambda pair: (pair[0], pair[1].index))
        if template:
            why = "template"  # the chat template cannot append the new messages token-exactly
        elif request.tools != closest.tools:
            why = "tools_changed"
        elif n == len(closest.messages) and len(request.messages) > n:
            why = "parallel_call"  # it extends a segment whose own call was still generating
        elif n == len(request.messages):
            why = "resent"  # the same history again, or part of it: a retry or a step back
        else:
            why = "history_rewritten"
        return {"from_segment": closest.index, "kept_messages": n, "why": why}

    def _new_segment(self, request: ChatRequest, template: bool = False) -> Segment:
        conv = None
        if self.access is not None:
            try:
                renderer = ChatRenderer(self.access.tokenizer, request.tools)
                conv = TokenConversation.start(renderer, template_view(request.messages), self.access.stop_token_ids)
            except ModelError as e:
                self.fail("harness_error", f"the model's chat template cannot render the agent's messages: {e}")
                raise ProxyError(400, f"the model's chat template cannot render these messages: {e}",
                                 "invalid_messages") from e
        segment = Segment(len(self.segments), request.tools, list(request.messages), len(request.messages), conv,
                          opened=self._why_new(request, template))
        self.segments.append(segment)
        return segment

    async def _generate(self, segment: Segment, request: ChatRequest, params: SamplingParams,
                        call: int) -> Completion:
        seed = derive_seed(self.seed, call)
        if segment.conv is not None:
            policy_request = PolicyRequest(params, prompt_ids=list(segment.conv.ids), seed=seed)
        else:
            policy_request = PolicyRequest(params, messages=template_view(request.messages), tools=request.tools,
                                           seed=seed)
        try:
            [completion] = await self.policy.generate([policy_request])
        except Exception as e:  # noqa: BLE001 - a failing policy ends this episode only, with the error recorded
            text = f"{type(e).__name__}: {e}"
            self.fail("policy_error", text)
            raise ProxyError(500, f"the policy failed: {text}", "policy_error", "server_error") from e
        if completion.seed is None:
            completion.seed = seed
        return completion

    def _record(self, segment: Segment, request: ChatRequest, completion: Completion,
                call: int) -> tuple[AssistantReply, int, int]:
        """Append the completion to the segment; the reply as returned, its prompt and completion lengths."""
        turn = TurnRecord(completion.finish_reason, completion.sampler_id, completion.policy_version,
                          completion.seed, completion.latency_s)
        if segment.conv is None:
            text, structured, prompt_tokens = completion.text, completion.tool_calls, 0
            n_out = len(completion.completion_ids or [])
        else:
            ids = self._checked_ids(segment.conv, completion)
            turn.start = prompt_tokens = len(segment.conv.ids)
            text = segment.conv.add_completion(ids, completion.text if completion.cut_at_stop else None)
            structured, n_out = [], len(ids)
            turn.end = len(segment.conv.ids)
            segment.logprobs.append(completion.logprobs)  # type: ignore[arg-type]
            segment.supports.append(completion.support)
        segment.turns.append(turn)
        segment.calls.append(call)
        self.tokens_out += n_out
        reply = assistant_reply(text, completion.finish_reason, request, f"call_{call}", structured)
        self.tool_stats.add(reply.parsed)
        self.counts.tool_calls += len(reply.parsed.calls)
        self.counts.malformed_tool_calls += len(reply.parsed.errors)
        segment.messages.append(reply.message)
        return reply, prompt_tokens, n_out

    def _checked_ids(self, conv: TokenConversation, completion: Completion) -> list[int]:
        ids = completion.completion_ids
        problem = None
        if ids is None or completion.logprobs is None or len(completion.logprobs) != len(ids):
            problem = "the token-level client returned no completion ids or log-probs"
        elif completion.prompt_ids is not None and list(completion.prompt_ids) != conv.ids:
            problem = "the client sampled from a different prompt than the one sent"
        if problem is not None:
            self.fail("policy_error", problem)
            raise ProxyError(500, problem, "policy_error", "server_error")
        return list(ids)  # type: ignore[arg-type]

    def record(self) -> tuple[TokenRecord | None, list[TurnRecord]]:
        """The episode's token record, every segment that sampled a turn in it one after the other, and all turns,
        their spans in that record (None and the bare turns for a messages-only policy)."""
        answered = [s for s in self.segments if s.turns]
        if not answered or any(s.conv is None for s in answered):
            return None, [t for s in answered for t in s.turns]
        records = [s.token_record() for s in answered]
        record = join_segments(records)  # type: ignore[arg-type]
        turns = [replace(t, start=t.start + at, end=t.end + at, segment_start=at)  # type: ignore[operator]
                 for s, at in zip(answered, record.segment_starts, strict=True) for t in s.turns]
        return record, turns

    def split(self) -> list[dict[str, Any]]:
        """How the episode was split: per segment that sampled a turn, its calls, messages, span in the token
        record (`tokens`, [start, end)), trained tokens, and why it opened (`why`: first_call, history_rewritten,
        tools_changed, resent, parallel_call, template; `from_segment` is the closest earlier segment and
        `kept_messages` how many of its messages the opening call kept)."""
        out, at = [], 0
        for s in (s for s in self.segments if s.turns):
            length = len(s.conv.ids) if s.conv is not None else 0
            out.append({"segment": s.index, "calls": list(s.calls), "messages": len(s.messages),
                        "prompt_messages": s.n_prompt, "tokens": [at, at + length] if s.conv is not None else None,
                        "model_tokens": s.model_tokens, **s.opened})
            at += length
        return out

    def metrics(self) -> dict[str, Any]:
        """What the episode's calls showed: calls, segments and how the episode was split, tool calls."""
        kept = self.last
        metrics: dict[str, Any] = {
            "proxy/calls": self.calls,
            "proxy/segments": sum(1 for s in self.segments if s.turns),
            "proxy/split": self.split(),
            "proxy/ignored_params": sorted(self.ignored),
            **self.tool_stats.as_dict(),
        }
        if self.access is not None:
            metrics["chat/template_fallbacks"] = sum(s.conv.stats.template_fallbacks for s in self.segments if s.conv)
        others = [s for s in self.segments if s is not kept and s.turns]
        if others:  # the stored messages are the last call's conversation; these are the others'
            metrics["proxy/other_segments"] = [{"segment": s.index, "messages": s.messages} for s in others]
        return metrics
