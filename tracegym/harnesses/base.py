"""The harness interface: an environment that gives the model a task and answers what it does.

A harness is made per episode. `reset(task)` returns the opening messages and tool schemas; `step(reply)`
turns one model reply into the assistant message as it should be recorded (tool calls structured), the
environment's answer, and whether the episode is over. Everything about turns, tokens, limits and scoring
is the runner's (`tracegym.harnesses.runner`); a harness only knows its environment.

A harness signals its own failures (a tool that raises, a sandbox that cannot start) by raising; the runner
ends that episode with the error recorded and the run goes on. What the model got wrong (a malformed call,
an unknown tool, a failing command) is not a failure: the model is told, as production harnesses do.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from tracegym.episodes.record import Episode, EpisodeCounts, Message
from tracegym.harnesses.toolcalls import ParseResult, ToolCall, ToolCallStats, parse_tool_calls
from tracegym.tasks.spec import TaskSpec

if TYPE_CHECKING:
    from tracegym.evals.scorers.base import Scorer
    from tracegym.evals.scorers.command_runner import CommandRunner
    from tracegym.harnesses.policy import PolicyClient
    from tracegym.harnesses.runner import EpisodeJob, EpisodeLimits
    from tracegym.models.sampling import SamplingParams

DoneReason = Literal["model_done", "env_done"]
# Hermes tool-call blocks (closed or left open at the end), removed from the text a scorer reads as the reply.
_HERMES_BLOCK = re.compile(r"<tool_call>.*?(</tool_call>|$)", re.DOTALL)


@dataclass(frozen=True)
class Reset:
    """What the model starts from."""

    messages: list[Message]
    """The opening conversation in OpenAI chat form (system prompt first)."""
    tools: list[dict[str, Any]] | None = None
    """OpenAI tool schemas ({"type": "function", "function": {...}}) the model may call."""


@dataclass(frozen=True)
class Reply:
    """One model reply, as text (for token clients, decoded from the exact ids) and any structured calls."""

    text: str
    finish_reason: str
    turn: int
    """0 for the first reply of the episode."""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    """OpenAI tool_calls objects, when an API returned them."""


@dataclass
class Step:
    """The environment's answer to one reply."""

    assistant: Message
    """The reply as recorded: content, plus tool_calls in OpenAI form."""
    observations: list[Message] = field(default_factory=list)
    """Tool results and feedback the model sees next."""
    done: bool = False
    reason: DoneReason | None = None
    """Why the episode is over, when done."""


class Harness(ABC):
    """Base of every harness; subclasses set `name` and implement `reset` and `step`."""

    name: ClassVar[str]

    def __init__(self) -> None:
        self.counts = EpisodeCounts()
        self.workspace: Path | None = None
        """The folder the episode worked in, for scorers that read it (shell)."""
        self.metrics: dict[str, Any] = {}

    @abstractmethod
    async def reset(self, task: TaskSpec) -> Reset:
        """Prepare the environment for `task`; the opening messages and tools."""

    def command_runner(self) -> CommandRunner | None:
        """How command evals reach `workspace`: the episode's own sandbox; None for harnesses without one."""
        return None

    @abstractmethod
    async def step(self, reply: Reply) -> Step:
        """Act on one reply."""

    async def close(self) -> None:  # noqa: B027 - not abstract: most harnesses hold nothing to release
        """Release what the episode holds (workspaces, processes); called once, after scoring."""


class ExternalHarness(ABC):
    """A harness whose agent is a program of its own that calls the model itself (through the proxy).

    The program, not the runner, decides when the model is called, so the runner hands such a harness the
    whole episode: `run_episode` runs the program with the policy behind it, scores what it did and returns
    the episode; harness failures end up on the episode (`harness_error`), never raised.
    """

    name: ClassVar[str]

    @abstractmethod
    async def run_episode(self, policy: PolicyClient, job: EpisodeJob, params: SamplingParams,
                          limits: EpisodeLimits, scorer: Scorer | None, model: str | None,
                          rollout_id: str) -> Episode:
        """Run, score and return one episode of `job`."""


def openai_tools(task: TaskSpec) -> list[dict[str, Any]]:
    """The task's tool schemas in OpenAI form."""
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in task.tools
    ]


def visible_text(text: str, parsed: ParseResult) -> str | None:
    """The reply without its tool-call markup: what the model said, as opposed to what it called."""
    styles = {c.style for c in parsed.calls} | {e.style for e in parsed.errors}
    if "json" in styles:
        return None
    if "hermes" in styles:
        text = _HERMES_BLOCK.sub("", text)
    return text.strip() or None


class ToolCallingHarness(Harness):
    """A harness whose actions are function calls: parse, answer each call, report malformed ones.

    A reply without any call ends the episode (the model answered). A malformed call, an unknown tool or
    arguments that break the tool's schema get the parser's message back as a user turn, and the episode
    goes on. A call to one of `terminal_tools` is answered, then ends the episode (τ-bench's
    transfer_to_human_agents, say). Subclasses implement `call_tool`.
    """

    def __init__(self, terminal_tools: frozenset[str] = frozenset()) -> None:
        super().__init__()
        self.tools: list[dict[str, Any]] = []
        self.tool_stats = ToolCallStats()
        self.terminal_tools = terminal_tools

    @abstractmethod
    async def call_tool(self, call: ToolCall) -> str:
        """The tool's answer to one well-formed call; raise when the environment itself fails."""

    async def step(self, reply: Reply) -> Step:
        parsed = self.tool_stats.add(parse_tool_calls(reply.text, reply.tool_calls, self.tools))
        self.counts.tool_calls += len(parsed.calls)
        self.counts.malformed_tool_calls += len(parsed.errors)
        self.metrics.update(self.tool_stats.as_dict())
        calls = [(call.id or f"call_{reply.turn}_{i}", call) for i, call in enumerate(parsed.calls)]
        assistant: Message = {"role": "assistant", "content": visible_text(reply.text, parsed)}
        if calls:
            assistant["tool_calls"] = [_call_message(call_id, call) for call_id, call in calls]
        if not parsed.calls and not parsed.errors:
            return Step(assistant, done=True, reason="model_done")
        observations: list[Message] = []
        for call_id, call in calls:
            result = await self.call_tool(call)
            observations.append({"role": "tool", "tool_call_id": call_id, "name": call.name, "content": result})
        if parsed.errors:
            observations.append({"role": "user", "content": "\n".join(e.message for e in parsed.errors)})
        if any(call.name in self.terminal_tools for _, call in calls):
            return Step(assistant, observations, done=True, reason="env_done")
        return Step(assistant, observations)


def _call_message(call_id: str, call: ToolCall) -> dict[str, Any]:
    arguments = json.dumps(call.arguments, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": call.name, "arguments": arguments}}
