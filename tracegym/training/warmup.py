"""The supervised warm start: next-action targets from the store's successful traces.

A small model that never emits a tool call earns reward 0 on every sample, and GRPO learns nothing
from a group whose rewards are all equal. So, as practitioners do, the run starts with a few supervised
steps: every assistant turn of a trace whose outcome is success is one example, its prompt cut and
shortened exactly as a task's would be (`tracegym.tasks.cuts.build_prompt`, then the context policy of
`tracegym.tasks.prompts`), rendered with the model's chat template (`ChatRenderer`, the renderer the
harnesses use), and its target the recorded turn up to the end-of-turn token. The loss is the
cross-entropy of the target tokens only, averaged over every target token of the step.

Traces of the source tasks behind held-out tasks are left out (`exclude_heldout`), so the warm start
never sees a successful answer to a task it is evaluated on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch

from tracegym.harnesses.chat_template import ChatRenderer
from tracegym.samplers.rollouts import TaskOrder
from tracegym.tasks.cuts import build_prompt, cut_points, recorded_turn
from tracegym.tasks.prompts import PromptSection, openai_messages, openai_tool_list, shorten
from tracegym.tasks.schemas import declared_tools, format_tools
from tracegym.tasks.spec import ToolSchema
from tracegym.training.config import WarmupSection
from tracegym.training.grpo.batching import TrainSample, completion_logits, pack
from tracegym.training.grpo.trainer import clip_and_step

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from tracegym.evals.scorers.recorded import RecordedTrace
    from tracegym.store.connection import Store


@dataclass(frozen=True)
class WarmupExample:
    """A prompt and its target turn: input_ids[:n_prompt] is the prompt, the rest the target."""

    trace_id: str
    message_idx: int
    input_ids: list[int]
    n_prompt: int

    def sample(self) -> TrainSample:
        ids = torch.tensor(self.input_ids, dtype=torch.long)
        targets = torch.arange(self.n_prompt, len(self.input_ids))
        return TrainSample(ids, targets, torch.zeros(len(targets)), None, 1.0)


@dataclass
class WarmupData:
    examples: list[WarmupExample]
    counts: dict[str, int] = field(default_factory=dict)
    """traces, excluded_traces, turns, too_long, template_mismatch, examples."""


def build_examples(
    store: Store,
    tokenizer: PreTrainedTokenizerBase,
    warmup: WarmupSection,
    policy: PromptSection,
    stop_ids: Sequence[int],
    exclude_tasks: set[str],
    seed: int,
) -> WarmupData:
    """Examples from every successful trace (of the chosen formats) whose source task is not excluded."""
    from tracegym.evals.scorers.recorded import iter_recorded

    where, params = "outcome = 'success'", []
    if warmup.formats:
        where += " AND format IN (SELECT unnest(?))"
        params.append(list(warmup.formats))
    counts = dict.fromkeys(("traces", "excluded_traces", "turns", "too_long", "template_mismatch"), 0)
    examples: list[WarmupExample] = []
    tools_by_format: dict[str, list[ToolSchema]] = {}
    for trace in iter_recorded(store, where, params):
        if warmup.exclude_heldout and trace.task_key() in exclude_tasks:
            counts["excluded_traces"] += 1
            continue
        counts["traces"] += 1
        tools = _trace_tools(store, trace, tools_by_format)
        for cut in cut_points(trace, None, "turns"):
            example = _example(trace, cut, tools, tokenizer, warmup, policy, stop_ids, counts)
            if example is not None:
                examples.append(example)
    order = TaskOrder(examples, seed) if examples else None
    if order is not None and warmup.max_examples is not None and warmup.max_examples < len(examples):
        examples = [order.task_at(i) for i in range(warmup.max_examples)]
    counts["examples"] = len(examples)
    return WarmupData(examples, counts)


def _trace_tools(store: Store, trace: RecordedTrace, cache: dict[str, list[ToolSchema]]) -> list[ToolSchema]:
    own = declared_tools(trace.tools)
    if own is not None:
        return own
    if trace.format not in cache:
        cache[trace.format] = format_tools(store, trace.format)
    return cache[trace.format]


def _example(
    trace: RecordedTrace,
    cut: int,
    tools: list[ToolSchema],
    tokenizer: PreTrainedTokenizerBase,
    warmup: WarmupSection,
    policy: PromptSection,
    stop_ids: Sequence[int],
    counts: dict[str, int],
) -> WarmupExample | None:
    target = recorded_turn(trace, cut).model_dump(exclude_none=True)
    if warmup.turns == "tool_calls" and not target.get("tool_calls"):
        return None
    if not target.get("tool_calls") and not (target.get("content") or "").strip():
        return None
    counts["turns"] += 1
    prompt = build_prompt(trace, cut, "full", None)
    system, messages, kept_tools = shorten(prompt.system, [m.model_dump(exclude_none=True) for m in prompt.messages],
                                           tools, policy)
    renderer = ChatRenderer(tokenizer, openai_tool_list(kept_tools))
    conversation = openai_messages(system, messages)
    prompt_ids = renderer.ids(conversation, add_generation_prompt=True)
    if policy.max_tokens is not None and len(prompt_ids) > policy.max_tokens:
        counts["too_long"] += 1
        return None
    full = renderer.ids([*conversation, target], add_generation_prompt=False)
    completion = full[len(prompt_ids):]
    ends = [i for i, t in enumerate(completion) if t in stop_ids]
    if full[: len(prompt_ids)] != prompt_ids or not ends:
        counts["template_mismatch"] += 1
        return None
    # The target ends with the model's end-of-turn token; what the template adds after it is not the model's.
    return WarmupExample(trace.trace_id, cut, prompt_ids + completion[: ends[-1] + 1], len(prompt_ids))


def warmup_batch(examples: Sequence[WarmupExample], step: int, batch_size: int, seed: int) -> list[WarmupExample]:
    """The examples of warm-start step `step` (0-based): a seeded, epoch-by-epoch order, fixed by the step."""
    order = TaskOrder(list(examples), seed)
    return [order.task_at(step * batch_size + j) for j in range(batch_size)]


def supervised_step(
    model: PreTrainedModel,
    optimizer: torch.optim.Optimizer,
    batch: Sequence[WarmupExample],
    micro_batch_tokens: int,
    grad_clip: float | None,
    pad_id: int = 0,
) -> dict[str, float]:
    """One optimizer step of token-mean cross-entropy on the targets; warmup/* metrics."""
    model.train()
    optimizer.zero_grad(set_to_none=True)
    micro = pack([e.sample() for e in batch], micro_batch_tokens, pad_id)
    total = sum(mb.num_tokens for mb in micro)
    loss_sum, correct = 0.0, 0
    for mb in micro:
        logits = completion_logits(model, mb)  # [T, V]
        tokens = mb.tokens.to(logits.device)
        nll = -torch.log_softmax(logits, dim=-1).gather(1, tokens[:, None]).squeeze(1)  # [T]
        (nll.sum() / total).backward()
        loss_sum += float(nll.detach().sum())
        correct += int((logits.detach().argmax(dim=-1) == tokens).sum())
    norm = clip_and_step(model, optimizer, grad_clip)
    loss = loss_sum / max(total, 1)
    return {"warmup/loss": loss, "warmup/perplexity": math.exp(min(loss, 50.0)), "warmup/grad_norm": norm,
            "warmup/token_accuracy": correct / max(total, 1), "warmup/tokens": float(total)}
