"""The episode runner: model turn -> parse actions -> environment step -> observation, until a stop condition.

Shared by `tracegym run`, checkpoint evaluation and the trainer. With a token-level client (`HFPolicy`)
the prompt of every turn is the previous prompt's ids + the completion ids as sampled + the template ids
of the environment's answer (`tracegym.harnesses.chat_template.TokenConversation`): the model's text is never
re-tokenised. With a messages-only client (`OpenAIPolicy`) the conversation is sent as messages and the
episode has no token record.

Stop conditions, checked in this order after each step: the harness says done (the model answered, or the
environment ended it), the turn limit, the episode's token budget, the time budget; and before each
turn: the time budget, and whether the prompt still fits the model's context and `max_prompt_tokens`
(nothing is truncated silently). The time budget is checked between steps; a single command or generation
is bounded by its own limits.

A harness or policy failure ends that episode with the error recorded (`harness_error`, stop reason
`harness_error` or `policy_error`) and is not scored; every other episode runs on.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from pydantic import BaseModel, ConfigDict, Field

from tracegym.episodes.record import Episode, Message, StopReason, TokenRecord, TurnRecord, build_token_record
from tracegym.errors import ConfigError, ModelError, TracegymError
from tracegym.evals.scorers.base import Scorer
from tracegym.evals.scorers.trajectory import Trajectory
from tracegym.harnesses.base import ExternalHarness, Harness, Reply, Reset, Step
from tracegym.harnesses.chat_template import ChatRenderer, TokenConversation
from tracegym.harnesses.policy import Completion, PolicyClient, PolicyRequest
from tracegym.models.sampling import SamplingParams
from tracegym.models.support import Support
from tracegym.tasks.spec import TaskSpec

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


class EpisodeLimits(BaseModel):
    """When an episode stops, besides the model or the environment ending it."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    max_turns: int = Field(10, ge=1)
    """Most model turns."""
    max_tokens: int | None = Field(None, ge=1)
    """Most model tokens over the whole episode (a turn is cut to what is left); None: no budget."""
    max_prompt_tokens: int | None = Field(None, ge=1)
    """Stop before a turn whose prompt is longer (also always stops before the model's context is full)."""
    time_budget_s: float | None = Field(None, gt=0)
    """Wall-clock seconds for the episode, checked between steps; None: no budget."""


class _Failed(Exception):
    """Ends an episode early with a recorded error."""

    def __init__(self, reason: StopReason, error: BaseException | str) -> None:
        text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        super().__init__(text)
        self.reason = reason
        self.text = text


def derive_seed(*parts: object) -> int:
    """A 63-bit seed fixed by its parts (a run seed, a task id, a sample index, a turn)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


@dataclass(frozen=True)
class _TokenAccess:
    """What a token-level client exposes for the exact record."""

    tokenizer: PreTrainedTokenizerBase
    stop_token_ids: tuple[int, ...]
    context_length: int | None


def token_access(policy: PolicyClient, params: SamplingParams) -> _TokenAccess | None:
    """Tokenizer, stop ids and context of a token-level client; None for a messages-only one."""
    if not policy.token_level:
        return None
    tokenizer = getattr(policy, "tokenizer", None)
    engine = getattr(policy, "engine", None)
    eos = getattr(engine, "eos_token_ids", None)
    if tokenizer is None or not eos:
        raise ConfigError(f"{type(policy).__name__} is token-level but exposes no tokenizer and engine EOS ids, "
                          "which the exact token record needs.")
    stops = tuple(sorted({*eos, *params.stop_token_ids}))
    return _TokenAccess(tokenizer, stops, getattr(engine, "context_length", None))


class _EpisodeRun:
    """The mutable state of one episode while it runs."""

    def __init__(self, policy: PolicyClient, harness: Harness, task: TaskSpec, params: SamplingParams,
                 limits: EpisodeLimits, seed: int) -> None:
        self.policy, self.harness, self.task = policy, harness, task
        self.params, self.limits, self.seed = params, limits, seed
        self.access = token_access(policy, params)
        self.messages: list[Message] = []
        self.tools: list[dict[str, Any]] | None = None
        self.conv: TokenConversation | None = None
        self.turns: list[TurnRecord] = []
        self.logprobs: list[torch.Tensor] = []
        self.supports: list[Support | None] = []
        self.tokens_out = 0
        self.started = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    async def start(self) -> int:
        """Reset the harness; returns the number of prompt messages."""
        try:
            reset: Reset = await self.harness.reset(self.task)
        except Exception as e:  # noqa: BLE001 - a harness that cannot start is this episode's recorded failure
            raise _Failed("harness_error", e) from e
        self.messages, self.tools = [dict(m) for m in reset.messages], reset.tools
        if self.access is not None:
            renderer = ChatRenderer(self.access.tokenizer, self.tools)
            self.conv = TokenConversation.start(renderer, self.messages, self.access.stop_token_ids)
        return len(self.messages)

    async def loop(self) -> StopReason:
        turn = 0
        while True:
            if self._over_time():
                return "time_budget"
            if self._prompt_too_long():
                return "context_exceeded"
            reply = await self._model_turn(turn)
            step = await self._step(reply)
            self.messages.append(step.assistant)
            self.messages.extend(step.observations)
            stop = self._stop_after(step, reply, turn)
            if stop is not None:
                return stop
            self._observe(step)
            turn += 1

    def _observe(self, step: Step) -> None:
        """Append the environment's answer to the token record, as the chat template renders it."""
        if self.conv is None:
            return
        try:
            self.conv.add_environment(step.observations)
        except ModelError as e:  # the template cannot append this answer token-exactly: the environment's turn
            raise _Failed("harness_error", e) from e

    def _stop_after(self, step: Step, reply: Reply, turn: int) -> StopReason | None:
        if step.done:
            cut = step.reason == "model_done" and reply.finish_reason == "length"
            return "max_new_tokens" if cut else (step.reason or "env_done")
        if turn + 1 >= self.limits.max_turns:
            return "max_turns"
        if self.limits.max_tokens is not None and self.tokens_out >= self.limits.max_tokens:
            return "max_tokens"
        return "time_budget" if self._over_time() else None

    def _over_time(self) -> bool:
        return self.limits.time_budget_s is not None and self.elapsed() >= self.limits.time_budget_s

    def _prompt_too_long(self) -> bool:
        if self.conv is None or self.access is None:
            return False
        n = len(self.conv.ids)
        context = self.access.context_length
        too_long_for_model = context is not None and n >= context  # at least one token must still fit
        return too_long_for_model or (self.limits.max_prompt_tokens is not None and n > self.limits.max_prompt_tokens)

    async def _model_turn(self, turn: int) -> Reply:
        params = self._turn_params()
        seed = derive_seed(self.seed, turn)
        if self.conv is not None:
            request = PolicyRequest(params, prompt_ids=list(self.conv.ids), seed=seed)
        else:
            request = PolicyRequest(params, messages=list(self.messages), tools=self.tools, seed=seed)
        try:
            [completion] = await self.policy.generate([request])
        except Exception as e:  # noqa: BLE001 - a client that fails (disconnects, errors) ends this episode only
            raise _Failed("policy_error", e) from e
        return self._record(completion, turn, seed)

    def _turn_params(self) -> SamplingParams:
        if self.limits.max_tokens is None:
            return self.params
        left = self.limits.max_tokens - self.tokens_out
        return self.params.model_copy(update={"max_new_tokens": min(self.params.max_new_tokens, left)})

    def _record(self, completion: Completion, turn: int, seed: int) -> Reply:
        record = TurnRecord(completion.finish_reason, completion.sampler_id, completion.policy_version,
                            completion.seed if completion.seed is not None else seed, completion.latency_s)
        if self.conv is None:
            self.turns.append(record)
            return Reply(completion.text, completion.finish_reason, turn, list(completion.tool_calls))
        ids = completion.completion_ids
        if ids is None or completion.logprobs is None or len(completion.logprobs) != len(ids):
            raise _Failed("policy_error", "the token-level client returned no completion ids or log-probs")
        if completion.prompt_ids is not None and list(completion.prompt_ids) != self.conv.ids:
            raise _Failed("policy_error", "the client sampled from a different prompt than the one sent")
        record.start = len(self.conv.ids)
        text = self.conv.add_completion(ids)
        record.end = len(self.conv.ids)
        self.turns.append(record)
        self.logprobs.append(completion.logprobs)
        self.supports.append(completion.support)
        self.tokens_out += len(ids)
        return Reply(text, completion.finish_reason, turn)

    async def _step(self, reply: Reply) -> Step:
        try:
            return await self.harness.step(reply)
        except Exception as e:  # noqa: BLE001 - a tool that raises, a sandbox that dies: this episode's failure
            raise _Failed("harness_error", e) from e

    def token_record(self) -> TokenRecord | None:
        if self.conv is None:
            return None
        return build_token_record(self.conv.ids, self.conv.trainable, self.logprobs, self.supports)


@dataclass(frozen=True)
class EpisodeJob:
    """One episode to run: a task, its sample index and seed, and where it belongs."""

    task: TaskSpec
    sample_idx: int = 0
    seed: int = 0
    task_set_id: str | None = None


async def run_episode(
    policy: PolicyClient,
    harness: Harness | ExternalHarness,
    job: EpisodeJob,
    params: SamplingParams,
    limits: EpisodeLimits | None = None,
    scorer: Scorer | None = None,
    model: str | None = None,
    rollout_id: str | None = None,
) -> Episode:
    """Run one episode to a stop condition, score it (unless the harness or policy failed) and return it."""
    if isinstance(harness, ExternalHarness):
        return await harness.run_episode(policy, job, params, limits or EpisodeLimits(), scorer, model,
                                         rollout_id or uuid.uuid4().hex)
    run = _EpisodeRun(policy, harness, job.task, params, limits or EpisodeLimits(), job.seed)
    error: _Failed | None = None
    n_prompt = 0
    try:
        n_prompt = await run.start()
        stop: StopReason = await run.loop()
    except _Failed as failed:
        error, stop = failed, failed.reason
    episode = Episode(
        rollout_id=rollout_id or uuid.uuid4().hex, task_id=job.task.task_id, task_set_id=job.task_set_id,
        split=job.task.split, harness=harness.name, sample_idx=job.sample_idx, seed=job.seed, model=model,
        sampling=sampling_record(params), messages=run.messages, n_prompt_messages=n_prompt, tokens=run.token_record(),
        turns=run.turns, stop_reason=stop, counts=harness.counts, harness_error=error.text if error else None,
        metrics=_metrics(harness, run),
    )
    try:
        if error is None and scorer is not None:
            await _score(episode, job.task, harness, scorer)
    finally:
        await _close(harness, episode)
    episode.latency_s = run.elapsed()
    return episode


def sampling_record(params: SamplingParams) -> dict[str, Any]:
    """What an episode records of its sampling: what re-scoring needs."""
    return params.model_dump(include={"temperature", "top_p", "top_k", "max_new_tokens", "max_support"})


def _metrics(harness: Harness, run: _EpisodeRun) -> dict[str, Any]:
    metrics = dict(harness.metrics)
    if run.conv is not None:
        metrics["chat/template_fallbacks"] = run.conv.stats.template_fallbacks
    return metrics


async def _score(episode: Episode, task: TaskSpec, harness: Harness, scorer: Scorer) -> None:
    trajectory = task.trajectory(episode.continuation, harness.workspace, episode.counts.malformed_tool_calls,
                                 harness.command_runner())
    await score_trajectory(episode, trajectory, scorer)


async def score_trajectory(episode: Episode, trajectory: Trajectory, scorer: Scorer) -> None:
    """Score `trajectory` off the event loop and put the reward (or the scorer's error) on `episode`."""
    try:
        result = await asyncio.to_thread(scorer.score, trajectory)
    except TracegymError as e:  # a scorer that cannot run here (a judge model that will not load): recorded
        episode.scorer_error = f"{type(e).__name__}: {e}"
        return
    episode.reward, episode.scorer_details, episode.scorer_error = result.reward, dict(result.details), result.error
    episode.components, episode.component_weights = dict(result.components), dict(result.weights)


async def _close(harness: Harness, episode: Episode) -> None:
    try:
        await harness.close()
    except Exception as e:  # noqa: BLE001 - the episode is complete; a failed cleanup is noted, not fatal
        episode.metrics["harness/close_error"] = f"{type(e).__name__}: {e}"


class RunOptions(BaseModel):
    """How many episodes to run, how, and how to sample."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    samples: int = Field(1, ge=1)
    """Episodes per task (k)."""
    concurrency: int = Field(8, ge=1)
    """Episodes in flight at once (a token-level client batches their turns together)."""
    seed: int = 0
    """Run seed; each episode's seed derives from it, the task id and the sample index."""
    sampling: SamplingParams = SamplingParams()
    """Temperature, top-p, top-k and tokens per turn."""
    limits: EpisodeLimits = EpisodeLimits()
    """When an episode stops."""


async def run_many(
    policy: PolicyClient,
    tasks: Sequence[TaskSpec],
    make_harness: Callable[[TaskSpec, str], Harness | ExternalHarness],
    options: RunOptions,
    scorer_for: Callable[[TaskSpec], Scorer | None] | None = None,
    task_set_id: str | None = None,
    model: str | None = None,
    on_episode: Callable[[Episode], None] | None = None,
) -> list[Episode]:
    """Run `options.samples` episodes of every task, at most `options.concurrency` at once.

    Returns the episodes in task order, then sample order; `on_episode` sees each as it finishes.
    """
    gate = asyncio.Semaphore(options.concurrency)
    jobs = [EpisodeJob(t, k, derive_seed(options.seed, t.task_id, k), task_set_id)
            for t in tasks for k in range(options.samples)]

    async def one(job: EpisodeJob) -> Episode:
        async with gate:
            rollout_id = uuid.uuid4().hex
            harness = make_harness(job.task, f"ep-{rollout_id}")
            scorer = scorer_for(job.task) if scorer_for is not None else None
            episode = await run_episode(policy, harness, job, options.sampling, options.limits, scorer, model,
                                        rollout_id)
        if on_episode is not None:
            on_episode(episode)
        return episode

    return list(await asyncio.gather(*(one(job) for job in jobs)))
