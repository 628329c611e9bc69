"""The replay harness: tools answered from the source trace's recorded calls, with no production side effects.

Matching. A call is answered by a recorded call of the same name whose arguments are equivalent:
arguments are compared as JSON values after parsing, so key order, JSON whitespace and number formatting
do not matter (1, 1.0 and 1e0 are one number), while types do ("1" is a string, not a number; true is
not 1) and so does text inside strings. The pool holds the calls the trace recorded from the task's cut
on (earlier ones were already answered in the prompt), each answering one call, equal calls in the order
they were recorded. A recorded call without a result cannot answer anything.

A call the pool cannot answer leaves the recorded path: the episode counts it (`EpisodeCounts.replay_misses`,
`replay/missed_calls` in its details), and the policy gets an answer such as the tool itself gives, which says
nothing of a replay (what the policy sees should not tell it that it is in a test):

- `unseen: error`: an error saying the tool has no result for these arguments, written in the tool's own error
  style, learned from the trace's recorded errors (tracegym/harnesses/error_style.py: τ-bench's "Error: ...", a
  JSON {"error": {"code": ..., "message": ...}} object); with no recorded error in the trace,
  "Error: TOOL: no result for these arguments";
- `unseen: fallback`: whatever a user function `fallback(name, arguments, task) -> str` answers.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import sys
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tracegym.errors import ConfigError
from tracegym.harnesses.base import Reset, ToolCallingHarness, openai_tools
from tracegym.harnesses.error_style import ErrorStyle
from tracegym.harnesses.toolcalls import ToolCall
from tracegym.harnesses.tools import ToolRaised
from tracegym.tasks.spec import RecordedCall, TaskSpec

_MISSED_SHOWN = 5


class ReplayConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    unseen: Literal["error", "fallback"] = "error"
    """What a call outside the recording gets: an error in the tool's style, or the fallback function's answer."""
    fallback: str | None = Field(None, pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
    """`module:function` called as fallback(name, arguments, task) for unseen calls (with unseen: fallback)."""
    python_path: list[str] = []
    """Folders (relative to the harness config file) put on sys.path before importing the fallback."""
    unseen_message: str = "no result for these arguments"
    """The error text for unseen calls, wrapped in the tool's error style ({name} is the tool's name, {call} the
    call as name(arguments)). The policy reads it as the tool's answer: say nothing of a replay or a recording."""
    terminal_tools: list[str] = []
    """Tools whose call ends the episode once answered (e.g. transfer_to_human_agents)."""

    @model_validator(mode="after")
    def _fallback_named(self) -> ReplayConfig:
        if self.unseen == "fallback" and self.fallback is None:
            raise ValueError("unseen: fallback needs fallback: module:function")
        return self


def canonical(value: Any) -> Any:
    """A JSON value with formatting differences removed: integral floats as ints, containers recursed."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else value
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return str(value)


def arguments_key(arguments: Any) -> str:
    """The canonical text of a call's arguments (a JSON string is parsed first; other text is kept as is)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return "raw:" + arguments
    return json.dumps(canonical(arguments), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class RecordedPool:
    """The recorded calls still available to answer, by (name, canonical arguments), oldest first."""

    def __init__(self, calls: Sequence[RecordedCall], cut_message_idx: int) -> None:
        self._pool: dict[tuple[str, str], deque[RecordedCall]] = {}
        for call in sorted(calls, key=lambda c: c.message_idx):
            if call.message_idx >= cut_message_idx and call.result is not None:
                self._pool.setdefault((call.name, arguments_key(call.arguments)), deque()).append(call)

    def take(self, name: str, arguments: Any) -> RecordedCall | None:
        """The oldest unused recorded call equivalent to this one, now used; None when there is none."""
        queue = self._pool.get((name, arguments_key(arguments)))
        return queue.popleft() if queue else None

    def __len__(self) -> int:
        return sum(len(q) for q in self._pool.values())


def describe_call(name: str, arguments: Any) -> str:
    return f"{name}({json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str)})"


class ReplayHarness(ToolCallingHarness):
    name = "replay"

    def __init__(self, config: ReplayConfig, fallback: Callable[..., Any] | None = None) -> None:
        super().__init__(frozenset(config.terminal_tools))
        self.config = config
        self.fallback = fallback
        self.task: TaskSpec | None = None
        self.pool = RecordedPool([], 0)

    async def reset(self, task: TaskSpec) -> Reset:
        self.task = task
        self.tools = openai_tools(task)
        self.pool = RecordedPool(task.replay, task.provenance.cut_message_idx)
        self.metrics["replay/recorded_calls"] = len(self.pool)
        return Reset(task.messages(), self.tools)

    async def call_tool(self, call: ToolCall) -> str:
        recorded = self.pool.take(call.name, call.arguments)
        if recorded is not None:
            self.counts.replay_hits += 1
            return recorded.result or ""
        self.counts.replay_misses += 1
        missed = self.metrics.setdefault("replay/missed_calls", [])
        if len(missed) < _MISSED_SHOWN:
            missed.append(describe_call(call.name, call.arguments)[:300])
        return await self._unseen(call)

    async def _unseen(self, call: ToolCall) -> str:
        assert self.task is not None
        if self.config.unseen == "error":
            message = self.config.unseen_message.format(name=call.name,
                                                        call=describe_call(call.name, call.arguments))
            style = ErrorStyle.learn(self.task.replay, call.name)
            return style.format(message) if style is not None else f"Error: {call.name}: {message}"
        if self.fallback is None:
            raise ConfigError("replay: unseen: fallback, but no fallback function was loaded (see load_fallback)")
        try:
            if inspect.iscoroutinefunction(self.fallback):
                answer = await self.fallback(call.name, call.arguments, self.task)
            else:
                answer = await asyncio.to_thread(self.fallback, call.name, call.arguments, self.task)
        except Exception as e:  # noqa: BLE001 - the user's fallback failing is the environment failing
            raise ToolRaised(f"replay fallback {self.config.fallback} raised {type(e).__name__}: {e}") from e
        return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False, default=str)


def load_fallback(config: ReplayConfig, base_dir: Path) -> Callable[..., Any] | None:
    """The fallback function, imported once per run (None with unseen: error)."""
    if config.unseen != "fallback" or config.fallback is None:
        return None
    from tracegym.evals.scorers.python import import_function

    for folder in config.python_path:
        resolved = str((base_dir / folder).resolve())
        if resolved not in sys.path:
            sys.path.insert(0, resolved)
    return import_function(config.fallback, "replay: fallback")
