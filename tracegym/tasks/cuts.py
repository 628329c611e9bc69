"""Where a failure's conversation is cut, and what the agent sees there.

A failure points at a message: a wrong tool call, an error result, a user's
complaint. The agent went wrong at the latest assistant turn at or before it,
so the task's prompt is everything before that turn. A failure of the whole
trace (no message) cuts at the first assistant turn: the agent must redo the
episode. `turns` mode instead cuts at every assistant turn up to the failure.
`recovery` mode cuts at the first assistant turn after the failure's message:
the prompt ends with the error result, the format correction or the complaint,
and the task is how the agent answers it (a failure of the whole trace has no
such turn).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Literal

from tracegym.evals.scorers.recorded import RecordedTrace
from tracegym.tasks.spec import ChatMessage, Context, Prompt, trim_context

CutMode = Literal["failure", "turns", "recovery"]

# Metadata keys that tell attempts at one task apart; ignored when spotting duplicates.
ATTEMPT_KEYS = frozenset({"trial", "attempt", "run_id", "sample_id", "seed", "domain_file"})
# What a chat log records about each call rather than the task (the chat adapters' response and log-line fields):
# it differs between twins, so near-duplicates are compared without it.
CALL_KEYS = frozenset({"calls", "call_ids", "response_id", "finish_reason", "stop_reason", "usage", "user", "user_id",
                       "latency_ms", "duration_ms", "system_fingerprint", "service_tier", "n_choices",
                       "thinking_blocks"})
_DIGITS = re.compile(r"\d+")
_HEXID = re.compile(r"\b[0-9a-f]{8,}\b|\b[0-9A-Za-z_-]*_[0-9A-Za-z]{16,}\b")


def cut_points(trace: RecordedTrace, message_idx: int | None, mode: CutMode) -> list[int]:
    """Indices of the assistant turns to cut before, oldest first."""
    turns = [m["idx"] for m in trace.messages if m["role"] == "assistant"]
    if not turns:
        return []
    if mode == "recovery":
        after = [t for t in turns if message_idx is not None and t > message_idx]
        return after[:1]
    if message_idx is None:
        return [turns[0]] if mode == "failure" else turns
    upto = [t for t in turns if t <= message_idx]
    if not upto:
        return []
    return [upto[-1]] if mode == "failure" else upto


def build_prompt(trace: RecordedTrace, cut: int, context: Context, system_max_chars: int | None) -> Prompt:
    """The system prompt and the messages before `cut`, trimmed as `context` asks."""
    before = trace.openai_messages(upto=_position(trace, cut))
    system: str | None = None
    if before and before[0]["role"] == "system":
        system = str(before.pop(0)["content"] or "")
    kept = trim_context(before, context)
    full_length: int | None = None
    if system is not None and system_max_chars is not None and len(system) > system_max_chars:
        full_length = len(system)
        system = f"{system[:system_max_chars]}\n[… {full_length - system_max_chars} characters cut …]"
    return Prompt(system=system, messages=[ChatMessage.model_validate(m) for m in kept], context=context,
                  dropped_messages=len(before) - len(kept), system_chars=full_length)


def recorded_turn(trace: RecordedTrace, cut: int) -> ChatMessage:
    """The assistant message the agent actually produced at `cut`."""
    pos = _position(trace, cut)
    return ChatMessage.model_validate(trace.openai_messages(upto=pos + 1)[pos])


def _position(trace: RecordedTrace, idx: int) -> int:
    for pos, m in enumerate(trace.messages):
        if m["idx"] == idx:
            return pos
    raise ValueError(f"trace {trace.trace_id} has no message {idx}")


def duplicate_key(prompt: Prompt, harness: str, metadata: dict[str, Any]) -> str:
    """Tasks with the same key are near-duplicates: the same prompt up to numbers and ids, and the same task data.

    The task data (the trace's metadata less attempt and per-call bookkeeping) is compared exactly: two source
    tasks that differ only in a number (τ-bench's task_id 3 and 4) are different tasks.
    """
    parts = [harness, _norm(prompt.system or "")]
    for m in prompt.messages:
        calls = [(c.function.name, _norm(c.function.arguments)) for c in m.tool_calls or []]
        parts.append(json.dumps([m.role, _norm(m.content or ""), calls]))
    data = {k: v for k, v in metadata.items() if k not in ATTEMPT_KEYS | CALL_KEYS}
    parts.append(json.dumps(data, sort_keys=True, default=str))
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def _norm(text: str) -> str:
    """Case, spacing, numbers and long ids vary between near-twins; the words do not."""
    text = _HEXID.sub("<id>", text.casefold())
    return " ".join(_DIGITS.sub("0", text).split())
