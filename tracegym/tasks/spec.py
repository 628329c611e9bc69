"""TaskSpec: everything a harness needs to replay one situation where the agent went wrong.

A spec is a YAML file in a task-set folder. It holds the conversation up to the
turn the agent must take, the tools it had, the recorded calls and results (so
a replay environment can answer), the harness, the scorer binding and where it
all came from. `spec_version` changes whenever a field changes meaning.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from tracegym.evals.scorers import trajectory as scored
from tracegym.evals.scorers.command_runner import CommandRunner
from tracegym.evals.scorers.trajectory import CallView, Trajectory
from tracegym.yamlfile import load_model

SPEC_VERSION: Literal[1] = 1
Harness = Literal["replay", "shell", "chat", "proxy"]
Split = Literal["train", "heldout"]
Context = Literal["full", "last-user", "last-exchange"]


def trim_context(messages: list[dict[str, Any]], context: Context) -> list[dict[str, Any]]:
    """The messages (system prompt excluded) that a context policy keeps.

    full: all of them. last-user: those from the last user message on. last-exchange: also the agent's last
    words to the user before it (its last assistant message with text), which often say what the user is
    answering ("Shall I cancel reservation ABC123?"): the next action is seldom clear from the reply alone.
    Without a user message every message is kept."""
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if context == "full" or not users:
        return messages
    start = users[-1]
    if context == "last-exchange":
        said = [i for i, m in enumerate(messages[:start])
                if m.get("role") == "assistant" and (m.get("content") or "").strip()]
        start = said[-1] if said else start
    return messages[start:]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class FunctionCall(_Strict):
    name: str
    """Tool name."""
    arguments: str
    """Arguments as a JSON string, as OpenAI chat messages carry them."""


class ToolCallMessage(_Strict):
    id: str | None = None
    """The call id the tool result refers to."""
    type: Literal["function"] = "function"
    """Always function."""
    function: FunctionCall
    """The call."""


class ChatMessage(_Strict):
    """One message in OpenAI chat form."""

    role: Literal["system", "user", "assistant", "tool"]
    """Who speaks."""
    content: str | None = None
    """The text (None for an assistant turn that only calls tools)."""
    tool_calls: list[ToolCallMessage] | None = None
    """Tool calls an assistant turn makes."""
    tool_call_id: str | None = None
    """For a tool message: the call it answers."""
    name: str | None = None
    """For a tool message: the tool's name."""


class Prompt(_Strict):
    system: str | None = None
    """The system prompt (possibly cut to --system-max-chars)."""
    messages: list[ChatMessage]
    """The conversation after the system prompt, up to the turn the agent must take."""
    context: Context = "full"
    """full: every earlier message; last-user: only those since the last user message; last-exchange: also the
    agent's last words to the user before it (`trim_context`)."""
    dropped_messages: int = Field(0, ge=0)
    """Earlier messages the context mode left out."""
    system_chars: int | None = None
    """The full system prompt's length when it was cut; None when kept whole."""


class ToolSchema(_Strict):
    name: str
    """Tool name."""
    description: str = ""
    """What the tool does, when the trace declared it."""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    """JSON schema of the arguments."""
    source: Literal["declared", "inferred"]
    """declared: from the trace's own tool definitions; inferred: from the arguments of recorded calls."""


class RecordedCall(_Strict):
    message_idx: int
    """The assistant message (in the source trace) that made the call."""
    call_id: str | None = None
    """The call's id in the source trace."""
    name: str
    """Tool name."""
    arguments: Any = None
    """Parsed arguments (or the raw string when they were not JSON)."""
    result: str | None = None
    """What the tool answered."""
    is_error: bool | None = None
    """Whether the result was an error."""


class ReferenceStepCall(_Strict):
    name: str
    """Tool name."""
    arguments: Any = None
    """Parsed arguments (or the raw string when they were not JSON)."""
    weights: dict[str, float] = {}
    """Argument -> weight in (0, 1]: the share of the other successful attempts at the same source task whose calls
    of this tool used this value (counting the step itself: 1 when all agree or none other called it). An
    argument not listed weighs 1."""

    def view(self) -> scored.ReferenceCall:
        return scored.ReferenceCall(self.name, self.arguments, dict(self.weights))


class ReferenceStep(_Strict):
    """A recorded next step that went well at the task's cut."""

    source: str
    """recorded_turn: the source trace's turn at the cut, no finding in it; sibling_turn: a successful attempt at
    the same source task at the same point; later_turn: the source trace's first later answer that drew no finding
    (only where there is neither)."""
    trace_id: str | None = None
    """The trace that recorded it."""
    text: str = ""
    """What it said."""
    calls: list[ReferenceStepCall] = []
    """The tool calls it made."""

    def view(self) -> scored.Reference:
        return scored.Reference(self.source, self.text, tuple(c.view() for c in self.calls), self.trace_id)

    @classmethod
    def of(cls, reference: scored.Reference) -> ReferenceStep:
        return cls(source=reference.source, trace_id=reference.trace_id, text=reference.text,
                   calls=[ReferenceStepCall(name=c.name, arguments=c.arguments, weights=c.weights)
                          for c in reference.calls])


class EvalRef(_Strict):
    name: str
    """An eval defined in the task set's evals file."""
    weight: float = Field(1.0, gt=0)
    """Its weight in the task's reward (a weighted mean over the bound evals)."""


class ScorerBinding(_Strict):
    evals_file: str = "evals.yaml"
    """The evals file, relative to the task-set folder."""
    evals: list[EvalRef] = Field(min_length=1)
    """The evals that score this task."""

    def reward_eval(self) -> str:
        """The reward's name, as its scorer reports it (`tracegym.evals.scorers.scorer_for`): the eval's name, or
        the bound evals' names joined by '+'."""
        return "+".join(e.name for e in self.evals)


class Duplicate(_Strict):
    trace_id: str
    """A trace whose task was merged into this one."""
    cluster_id: str | None = None
    """Its failure cluster."""
    cut_message_idx: int
    """Where its conversation was cut."""


class Reference(_Strict):
    """A reply that earns the task's reward, supplied where the recording holds none (`tasks generate
    --references` or `--reference-model`); the gates play it as the task's reference."""

    source: str
    """file:PATH (a row of a --references file) or model:NAME (the best passing sample of a --reference-model)."""
    detail: str | None = None
    """Which row (its line and key) or which sample (its index and reward)."""
    replies: list[ChatMessage] = Field(min_length=1)
    """The agent's replies, one per model turn (assistant messages: text and tool calls)."""

    def step(self) -> scored.Reference:
        """Its first reply as a next step that `reference` evals compare attempts with."""
        first = self.replies[0]
        calls = tuple(scored.ReferenceCall(c.function.name, scored.parse_arguments(c.function.arguments))
                      for c in first.tool_calls or [])
        return scored.Reference(self.source, first.content or "", calls)


class Provenance(_Strict):
    trace_id: str
    """The source trace."""
    format: str
    """The source trace's format."""
    source_task: str
    """What the agent was asked to do (a τ-bench task id, an instance, a session): splits never separate these."""
    cluster_id: str | None = None
    """The failure cluster this task was drawn from."""
    detector: str | None = None
    """The detector that found the failure."""
    signature: str | None = None
    """The failure's signature."""
    evidence: str | None = None
    """What the detector saw."""
    failure_message_idx: int | None = None
    """The message that shows the failure; None when it concerns the whole trace."""
    cut_message_idx: int
    """The prompt holds the source trace's messages before this index."""
    recorded_turn: ChatMessage | None = None
    """What the agent actually did at the cut, for comparison."""
    duplicates: list[Duplicate] = []
    """Near-duplicate tasks merged into this one."""
    reference: Reference | None = None
    """A supplied reply that passed the gates as this task's reference; None when the recording gave one (or the
    task was not gated)."""


class TaskSpec(_Strict):
    spec_version: Literal[1] = SPEC_VERSION
    """Format version of this file."""
    task_id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    """Unique within its task set; also the file name."""
    split: Split
    """train or heldout; near-twins are never on both sides."""
    harness: Harness
    """replay: answer tool calls from the recording; shell: run commands in a sandbox; chat: talk only; proxy: the
    team's own agent program (the harness config's `proxy.command`) does the task, calling the policy through the
    proxy."""
    prompt: Prompt
    """Where the agent must act."""
    tools: list[ToolSchema] = []
    """The tools the agent has."""
    replay: list[RecordedCall] = []
    """Every tool call recorded in the source trace, with its result."""
    scorer: ScorerBinding
    """How attempts are rewarded."""
    metadata: dict[str, Any] = {}
    """The source trace's metadata (gold actions, expected answers, ...), which scorers read."""
    provenance: Provenance
    """Where the task came from."""
    reference_steps: list[ReferenceStep] = []
    """The recorded next steps that went well at the cut, which `reference` evals compare attempts with; written
    for tasks bound to such an eval."""

    def messages(self) -> list[dict[str, Any]]:
        """The prompt as OpenAI chat messages, system prompt first."""
        head = [{"role": "system", "content": self.prompt.system}] if self.prompt.system is not None else []
        return head + [m.model_dump(exclude_none=True) for m in self.prompt.messages]

    def trajectory(self, continuation: list[dict[str, Any]], workspace: Path | None = None,
                   malformed_tool_calls: int | None = None, runner: CommandRunner | None = None) -> Trajectory:
        """A scorer's view of an attempt: the prompt followed by what the agent (and tools, user) said next."""
        prompt = self.messages()
        answer = next((m["content"] for m in reversed(continuation)
                       if m.get("role") == "assistant" and (m.get("content") or "").strip()), None)
        return Trajectory(prompt + continuation, answer, workspace, dict(self.metadata), self.provenance.trace_id,
                          self.task_id, malformed_tool_calls, len(prompt), self.prior_calls(), runner,
                          self.references())

    def references(self) -> list[scored.Reference]:
        """The next steps `reference` evals compare attempts with: the team's reply for this task (a --references
        row, `provenance.reference`) and the recorded steps that went well at the cut. A --reference-model sample
        is left out: it passed the evals, this one among them, and is no evidence of what succeeds."""
        supplied = self.provenance.reference
        team = [supplied.step()] if supplied is not None and supplied.source.startswith("file:") else []
        return team + [r.view() for r in self.reference_steps]

    def prior_calls(self) -> list[CallView]:
        """The successful calls the source trace made before the cut (the context mode may have left them out of
        the prompt)."""
        return [CallView(c.name, c.arguments, c.call_id, c.result) for c in self.replay
                if c.message_idx < self.provenance.cut_message_idx and not c.is_error]


def dump_spec(spec: TaskSpec) -> str:
    """The spec as YAML (multi-line text as literal blocks; unset optional fields left out)."""
    return to_yaml(spec.model_dump(mode="json", exclude_none=True))


def load_spec(path: Path, text: str | None = None) -> TaskSpec:
    """Read and validate a task file; errors name the file, the line and the fix."""
    spec, _ = load_model(Path(path), TaskSpec, text)
    return spec


class _BlockDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Multi-line strings as `|` blocks, so prompts read like prompts."""


_BREAKS = "\n\x85\u2028\u2029"


def _str(dumper: Any, value: str) -> yaml.ScalarNode:
    # A block that ends in two or more line breaks, or is one line break, is written "kept" (`|+`), and after it the
    # emitter ends the document (`...`): a template that adds sections after it would write two documents.
    trailing = len(value) - len(value.rstrip(_BREAKS))
    kept = trailing > 1 or (trailing == 1 and len(value) == 1)
    style = ('"' if kept else "|") if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str)


def to_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=100)
