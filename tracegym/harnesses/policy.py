"""Policy clients: one async interface over the built-in sampler and over OpenAI-compatible endpoints.

`PolicyClient.generate(requests) -> completions`. Token-level clients (`HFPolicy`) take prompt token ids
(or render messages with the model's chat template) and return completion ids with the sampler's
log-prob and kept support per token, the policy version and the sampler id: the exact record training
needs. `OpenAIPolicy` takes messages and returns text and tool calls, with token-level data only where the
endpoint returns it (log-probs when asked; token ids only from servers that send them, e.g. vLLM's
``return_token_ids``); it is for evaluating API models as a baseline, not for training.
"""

from __future__ import annotations

import abc
import asyncio
import os
import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field

from tracegym.errors import ModelError
from tracegym.harnesses.chat_template import ChatRenderer, Message
from tracegym.models import compute
from tracegym.models.precision import PrecisionChoice, resolve_precision
from tracegym.models.sampling import GenerationTiming, SampledSequence, SamplingEngine, SamplingParams, text_of
from tracegym.models.support import Support

if TYPE_CHECKING:
    import httpx
    from transformers import PreTrainedTokenizerBase


@dataclass(frozen=True)
class PolicyRequest:
    """One generation call. Token-level clients read `prompt_ids` (or render `messages` + `tools` when it is
    None); chat clients read `messages` + `tools`."""

    params: SamplingParams = field(default_factory=SamplingParams)
    prompt_ids: Sequence[int] | None = None
    messages: Sequence[Message] | None = None
    tools: Sequence[dict[str, Any]] | None = None
    seed: int | None = None


@dataclass
class Completion:
    """One reply, with as much of the token record as the client can give."""

    text: str
    """The reply text, without the final stop token (for tool parsing and display, never for training inputs)."""
    finish_reason: str
    sampler_id: str
    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None
    logprobs: torch.Tensor | None = None
    """(n,) sampler log-probs of completion_ids under the distribution actually sampled from, when known."""
    support: Support | None = None
    """Per-token kept support ('exact') or top-N head ('head'), when known."""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    """Structured OpenAI tool_calls objects, when the endpoint returned them."""
    policy_version: int | None = None
    seed: int | None = None
    latency_s: float = 0.0
    timing: GenerationTiming | None = None
    cut_at_stop: bool = False
    """The text ends where a stop string began (`SamplingParams.stop`), not where the completion ids end."""


class PolicyClient(abc.ABC):
    """Anything that turns requests into completions; `token_level` says whether ids and log-probs come back."""

    token_level: bool = False

    @abc.abstractmethod
    async def generate(self, requests: Sequence[PolicyRequest]) -> list[Completion]:
        """One completion per request, in order."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Release connections, threads and workers."""


class HFPolicyConfig(BaseModel):
    """The built-in PyTorch sampler over a local Hugging Face model."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["hf"] = "hf"
    model: str = "smollm2-135m"
    """A model reference: 'smollm2-135m', a model folder, or a run/checkpoint folder."""
    precision: PrecisionChoice = "fp32"
    """The sampler's weight and activation precision (logits are processed in fp32 regardless); auto is bf16
    where the device computes it natively, else fp32."""
    device: str = "cpu"
    """torch device for the sampler, e.g. 'cpu' or 'cuda:0'."""
    sampler_id: str = "hf-0"
    """Recorded on every completion, so metrics can be split per sampler."""
    max_batch_size: int = Field(32, ge=1)
    """Most sequences decoded together."""
    batch_window_ms: float = Field(5.0, ge=0)
    """How long the batcher waits for more concurrent requests before running a batch."""
    seed: int | None = None
    """Seeds the seeds of requests that bring none, so whole runs can be replayed."""


class HFPolicy(PolicyClient):
    """Token-level client over a `SamplingEngine`, batching concurrent requests from many episodes.

    Requests queue up; a worker collects those arriving within `batch_window_s` (up to the engine's batch
    size), groups them by sampling params, and runs each group as one batch off the event loop, so it keeps
    serving episodes (tool calls, sandboxes) while the model decodes: on the thread that serves the loop's
    `tracegym.models.compute.Runner` (the one that loaded the model; see that module for why), or else on
    a worker thread of its own.
    """

    token_level = True

    def __init__(self, engine: SamplingEngine, tokenizer: PreTrainedTokenizerBase, batch_window_s: float = 0.005):
        self.engine = engine
        self.tokenizer = tokenizer
        self._text = text_of(tokenizer)
        if engine.decode is None:  # stop sequences are text: the engine reads its completions with our tokenizer
            engine.decode = text_of(tokenizer)
        self.batch_window_s = batch_window_s
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"sampler-{engine.sampler_id}")
        self._queue: asyncio.Queue[tuple[PolicyRequest, list[int], asyncio.Future[Completion]]] | None = None
        self._worker: asyncio.Task[None] | None = None
        self.batches_run = 0

    @classmethod
    def from_config(cls, config: HFPolicyConfig) -> HFPolicy:
        from tracegym.models.load import load_tokenizer

        engine = SamplingEngine.from_ref(
            config.model,
            resolve_precision(config.precision, config.device),
            config.device,
            sampler_id=config.sampler_id,
            max_batch_size=config.max_batch_size,
            seed=config.seed,
        )
        return cls(engine, load_tokenizer(config.model), batch_window_s=config.batch_window_ms / 1000)

    async def generate(self, requests: Sequence[PolicyRequest]) -> list[Completion]:
        queue = self._ensure_worker()
        loop = asyncio.get_running_loop()
        futures = []
        for request in requests:
            future: asyncio.Future[Completion] = loop.create_future()
            queue.put_nowait((request, self._prompt_ids(request), future))
            futures.append(future)
        return list(await asyncio.gather(*futures))

    async def aclose(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            try:
                await self._worker
            except asyncio.CancelledError:
                pass
            self._worker = self._queue = None
        self._executor.shutdown(wait=True)

    def _prompt_ids(self, request: PolicyRequest) -> list[int]:
        if request.prompt_ids is not None:
            return [int(i) for i in request.prompt_ids]
        if not request.messages:
            raise ModelError("a policy request needs prompt_ids or messages")
        return ChatRenderer(self.tokenizer, request.tools).ids(request.messages, add_generation_prompt=True)

    def _ensure_worker(self) -> asyncio.Queue:
        loop = asyncio.get_running_loop()
        if self._worker is None or self._worker.done() or self._worker.get_loop() is not loop:
            self._queue = asyncio.Queue()
            self._worker = loop.create_task(self._run(self._queue), name=f"batcher-{self.engine.sampler_id}")
        assert self._queue is not None
        return self._queue

    async def _run(self, queue: asyncio.Queue) -> None:
        limit = self.engine.max_batch_size
        while True:
            pending = [await queue.get()]
            # Sleep, then drain: a queue.get() cancelled by wait_for can lose its item before Python 3.12.
            if self.batch_window_s and queue.qsize() < limit - 1:
                await asyncio.sleep(self.batch_window_s)
            while len(pending) < limit and not queue.empty():
                pending.append(queue.get_nowait())
            groups: dict[SamplingParams, list] = defaultdict(list)
            for item in pending:
                groups[item[0].params].append(item)
            for params, items in groups.items():
                await self._run_group(params, items)

    async def _run_group(self, params: SamplingParams, items: list) -> None:
        prompts = [ids for _, ids, _ in items]
        seeds = [request.seed for request, _, _ in items]
        start = time.perf_counter()
        try:
            seqs = await compute.offload(self.engine.generate, prompts, params, seeds, fallback=self._executor)
            latency = time.perf_counter() - start
            completions = [self._completion(seq, latency) for seq in seqs]
        except Exception as e:  # noqa: BLE001 - the error belongs to the requests' callers, not to the batcher
            for _, _, future in items:
                if not future.done():
                    future.set_exception(e)
            return
        self.batches_run += 1
        for (_, _, future), completion in zip(items, completions, strict=True):
            if not future.done():
                future.set_result(completion)

    def _completion(self, seq: SampledSequence, latency: float) -> Completion:
        ids = seq.completion_ids
        if seq.text_end is not None:
            text = self._text(ids)[: seq.text_end]
        else:
            text = self._text(ids[:-1] if seq.finish_reason == "stop" else ids)
        return Completion(
            text=text,
            finish_reason=seq.finish_reason,
            sampler_id=seq.sampler_id,
            prompt_ids=seq.prompt_ids,
            completion_ids=ids,
            logprobs=seq.logprobs,
            support=seq.support,
            policy_version=seq.policy_version,
            seed=seq.seed,
            latency_s=latency,
            timing=seq.timing,
            cut_at_stop=seq.text_end is not None,
        )


class OpenAIPolicyConfig(BaseModel):
    """Any OpenAI-compatible /v1/chat/completions endpoint (OpenAI, vLLM, SGLang, llama.cpp, ...)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["openai"] = "openai"
    base_url: str = "https://api.openai.com/v1"
    """Endpoint root; '/chat/completions' is appended."""
    model: str
    """The model name the endpoint expects."""
    api_key_env: str | None = "OPENAI_API_KEY"
    """Environment variable holding the API key; unset or None sends no Authorization header."""
    sampler_id: str = "openai"
    """Recorded on every completion."""
    timeout_s: float = Field(120.0, gt=0)
    """Per-request timeout."""
    max_retries: int = Field(2, ge=0)
    """Retries after a connection error, HTTP 429 or 5xx, with exponential backoff."""
    max_concurrency: int = Field(8, ge=1)
    """Requests in flight at once."""
    top_logprobs: int = Field(0, ge=0, le=20)
    """Ask for this many alternatives per token (recorded as a 'head' support when token ids come back)."""
    logprobs: bool = True
    """Ask for per-token log-probs (logprobs=true)."""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Merged into every request body, e.g. {"return_token_ids": true} for vLLM."""


class OpenAIPolicy(PolicyClient):
    """Messages in, text and tool calls out, over HTTP with httpx; token-level data where returned."""

    token_level = False

    def __init__(self, config: OpenAIPolicyConfig, client: httpx.AsyncClient | None = None) -> None:
        import httpx

        self.config = config
        headers = {}
        key = os.environ.get(config.api_key_env) if config.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._client = client or httpx.AsyncClient(timeout=config.timeout_s, headers=headers)
        self._limit = asyncio.Semaphore(config.max_concurrency)

    async def generate(self, requests: Sequence[PolicyRequest]) -> list[Completion]:
        return list(await asyncio.gather(*(self._one(r) for r in requests)))

    async def aclose(self) -> None:
        await self._client.aclose()

    def payload(self, request: PolicyRequest) -> dict[str, Any]:
        """The JSON body for one request."""
        if not request.messages:
            raise ModelError("an OpenAI-compatible endpoint needs messages, not prompt token ids")
        p = request.params
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": list(request.messages),
            "temperature": p.temperature,
            "top_p": p.top_p,
            "max_tokens": p.max_new_tokens,
        }
        if p.stop:
            body["stop"] = list(p.stop)
        if p.top_k:
            body["top_k"] = p.top_k  # not OpenAI's own API; vLLM, SGLang and llama.cpp accept it
        if request.tools:
            body["tools"] = list(request.tools)
        if request.seed is not None:
            body["seed"] = request.seed
        if self.config.logprobs:
            body["logprobs"] = True
            if self.config.top_logprobs:
                body["top_logprobs"] = self.config.top_logprobs
        return {**body, **self.config.extra_body}

    async def _one(self, request: PolicyRequest) -> Completion:
        body = self.payload(request)
        start = time.perf_counter()
        async with self._limit:
            data = await self._post(body)
        completion = parse_chat_completion(data, self.config.sampler_id)
        completion.latency_s = time.perf_counter() - start
        completion.seed = request.seed
        return completion

    async def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        import httpx

        url = self.config.base_url.rstrip("/") + "/chat/completions"
        error = ModelError(f"no attempt was made to reach {url}")
        for attempt in range(self.config.max_retries + 1):
            if attempt:
                await asyncio.sleep(0.5 * 2 ** (attempt - 1))
            try:
                response = await self._client.post(url, json=body)
            except httpx.TransportError as e:
                error = ModelError(f"could not reach {url}: {e!r}")
                continue
            if response.status_code == 200:
                try:
                    return response.json()
                except ValueError as e:
                    raise ModelError(f"{url} answered with invalid JSON: {response.text[:300]}") from e
            error = ModelError(f"{url} answered HTTP {response.status_code}: {response.text[:500]}")
            if not (response.status_code == 429 or response.status_code >= 500):
                raise error
        raise error


def parse_chat_completion(data: dict[str, Any], sampler_id: str) -> Completion:
    """A chat.completion response body as a `Completion` (first choice)."""
    try:
        choice = data["choices"][0]
        message = choice.get("message") or {}
    except (KeyError, IndexError, TypeError) as e:
        raise ModelError(f"the endpoint's reply has no choices: {str(data)[:300]}") from e
    entries = ((choice.get("logprobs") or {}).get("content")) or []
    ids = choice.get("token_ids") or _ids_from_tokens([e.get("token", "") for e in entries])
    prompt_ids = data.get("prompt_token_ids") or choice.get("prompt_token_ids")
    return Completion(
        text=message.get("content") or "",
        finish_reason=choice.get("finish_reason") or "stop",
        sampler_id=sampler_id,
        prompt_ids=list(prompt_ids) if prompt_ids else None,
        completion_ids=list(ids) if ids else None,
        logprobs=torch.tensor([e["logprob"] for e in entries], dtype=torch.float32) if entries else None,
        support=_head_support(entries),
        tool_calls=list(message.get("tool_calls") or []),
    )


def _ids_from_tokens(tokens: list[str]) -> list[int] | None:
    """Token ids from vLLM's ``return_tokens_as_token_ids`` form ('token_id:123'); None for plain text tokens."""
    if not tokens or not all(t.startswith("token_id:") for t in tokens):
        return None
    return [int(t.split(":", 1)[1]) for t in tokens]


def _head_support(entries: list[dict[str, Any]]) -> Support | None:
    """The returned top_logprobs as a 'head' support, when every alternative names its token id."""
    rows = []
    for entry in entries:
        top = entry.get("top_logprobs") or []
        ids = _ids_from_tokens([t.get("token", "") for t in top])
        if ids is None:
            return None
        rows.append((torch.tensor(ids), torch.tensor([t["logprob"] for t in top])))
    return Support.from_rows("head", rows) if rows else None


PolicyConfig = Annotated[HFPolicyConfig | OpenAIPolicyConfig, Field(discriminator="type")]


def make_policy(config: HFPolicyConfig | OpenAIPolicyConfig) -> PolicyClient:
    """The client a policy config describes."""
    if isinstance(config, HFPolicyConfig):
        return HFPolicy.from_config(config)
    return OpenAIPolicy(config)
