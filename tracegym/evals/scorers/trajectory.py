"""What a scorer sees (`Trajectory`) and what it returns (`ScoreResult`).

A harness builds a `Trajectory` from an episode; `evals check` builds one from
a recorded trace. Scorers never know which: they read messages in OpenAI chat
form, the final answer, the workspace and the task's metadata.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tracegym.evals.scorers.command_runner import CommandRunner


@dataclass(frozen=True, slots=True)
class CallView:
    """One tool call the agent made, with its arguments parsed when they are JSON, and the tool's answer."""

    name: str
    arguments: Any
    call_id: str | None = None
    result: str | None = None


@dataclass(frozen=True, slots=True)
class ReferenceCall:
    """A tool call of a reference step, with how much each of its arguments counts."""

    name: str
    arguments: Any
    weights: dict[str, float] = field(default_factory=dict)
    """Argument -> weight in (0, 1]: how far the successful attempts at the same source task agreed on its value.
    An argument not listed weighs 1."""


@dataclass(frozen=True, slots=True)
class Reference:
    """A recorded next step that went well at the point an attempt starts from (what `reference` evals compare
    the attempt with)."""

    source: str
    """Where it was recorded: recorded_turn (the source trace's turn at the cut), sibling_turn (another successful
    attempt at the same source task, at the same point), later_turn (the source trace's first later answer that
    drew no finding)."""
    text: str = ""
    """What the step said."""
    calls: tuple[ReferenceCall, ...] = ()
    """The tool calls it made."""
    trace_id: str | None = None
    """The trace that recorded it."""


@dataclass(slots=True)
class Trajectory:
    """An agent's attempt at a task, as scorers see it."""

    messages: list[dict[str, Any]]
    """OpenAI chat messages: role, content, and `tool_calls` / `tool_call_id` where present."""
    final_answer: str | None = None
    """The agent's last non-empty reply to the user, if any."""
    workspace: Path | None = None
    """The folder the agent worked in (shell harnesses); None for chat and replay tasks."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """The task's metadata: gold actions, expected answers, the source trace's own metadata."""
    trace_id: str | None = None
    """The recorded trace this trajectory is (or was generated from)."""
    task_id: str | None = None
    """The task this attempt was made on, when it came from a task set."""
    malformed_tool_calls: int | None = None
    """Replies the harness could not parse as a tool call, or whose call broke its tool's schema; None when
    no harness ran (recorded traces)."""
    prompt_messages: int = 0
    """How many leading `messages` the agent was given as its prompt (0 for a recorded trace: all of it is the
    agent's)."""
    prior_calls: list[CallView] = field(default_factory=list)
    """The successful tool calls the source trace made before the task's cut, shown in the prompt or not: what was
    already done when the agent took over."""
    runner: CommandRunner | None = field(default=None, repr=False, compare=False)
    """How command evals reach `workspace`: the sandbox the episode ran in. None where no harness confines the
    workspace; command evals then refuse to run in it."""
    references: list[Reference] = field(default_factory=list)
    """The next steps that went well where the attempt starts (`TaskSpec.references`: the team's reply for the
    task, the recorded steps at its cut); empty for a recorded trace and for tasks that carry none."""

    def tool_calls(self) -> list[CallView]:
        """Every tool call in the assistant messages, in order, each with the tool message that answered it.

        A tool message answers the latest unanswered call with its id (agents
        reuse ids within a conversation, so a plain id lookup can pick the wrong call).
        """
        calls: list[CallView] = []
        waiting: dict[Any, list[int]] = {}
        for msg in self.messages:
            if msg.get("role") == "tool":
                pending = waiting.get(msg.get("tool_call_id"))
                if pending:
                    i = pending.pop()
                    c = calls[i]
                    calls[i] = CallView(c.name, c.arguments, c.call_id, msg.get("content"))
                continue
            if msg.get("role") != "assistant":
                continue
            for call in msg.get("tool_calls") or []:
                fn = call.get("function") or {}
                waiting.setdefault(call.get("id"), []).append(len(calls))
                calls.append(CallView(str(fn.get("name")), parse_arguments(fn.get("arguments")), call.get("id")))
        return calls

    def agent_calls(self) -> list[CallView]:
        """The tool calls of this attempt: those after the prompt."""
        prompt_calls = Trajectory(self.messages[:self.prompt_messages]).tool_calls()
        return self.tool_calls()[len(prompt_calls):]

    def assistant_text(self) -> str:
        """All assistant message text joined by newlines (what the agent said, not what it called)."""
        return "\n".join(m["content"] for m in self.messages if m.get("role") == "assistant" and m.get("content"))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(replace(self, runner=None))
        del data["runner"]
        data["workspace"] = str(self.workspace) if self.workspace else None
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trajectory:
        ws = data.get("workspace")
        return cls(
            messages=list(data.get("messages") or []),
            final_answer=data.get("final_answer"),
            workspace=Path(ws) if ws else None,
            metadata=dict(data.get("metadata") or {}),
            trace_id=data.get("trace_id"),
            task_id=data.get("task_id"),
            malformed_tool_calls=data.get("malformed_tool_calls"),
            prompt_messages=int(data.get("prompt_messages") or 0),
            prior_calls=[CallView(**c) for c in data.get("prior_calls") or []],
            references=[Reference(r["source"], r.get("text") or "",
                                  tuple(ReferenceCall(**c) for c in r.get("calls") or []), r.get("trace_id"))
                        for r in data.get("references") or []],
        )


def parse_arguments(raw: Any) -> Any:
    """Tool-call arguments: a JSON string becomes its value; anything else is kept as is."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


@dataclass(frozen=True, slots=True)
class ScoreResult:
    """A reward in [0, 1] with details, or an error and no reward.

    `reward` is None exactly when `error` is set: a failed scorer is recorded as
    such and never turns into a silent zero.
    """

    reward: float | None
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    components: dict[str, float] = field(default_factory=dict)
    """The parts the reward was made of, by name (a weighted eval's parts, or what a scorer returned under
    `components`): kept beside the scalar for diagnosis; training uses the scalar unless `grpo.advantages` is
    per_component."""
    weights: dict[str, float] = field(default_factory=dict)
    """Each component's weight when the reward is their weighted mean (a weighted eval); empty otherwise."""

    def __post_init__(self) -> None:
        if self.error is None:
            if self.reward is None or not math.isfinite(self.reward) or not 0.0 <= self.reward <= 1.0:
                raise ValueError(f"reward must be a finite number in [0, 1], got {self.reward!r}")
        elif self.reward is not None:
            raise ValueError("a failed score carries no reward")

    @property
    def ok(self) -> bool:
        return self.error is None

    @classmethod
    def failed(cls, error: str, details: dict[str, Any] | None = None) -> ScoreResult:
        return cls(None, details or {}, error)

    def to_dict(self) -> dict[str, Any]:
        out = {"reward": self.reward, "details": self.details, "error": self.error}
        if self.components:
            out["components"] = self.components
        return out


class PathError(LookupError):
    """A dotted path that does not lead anywhere in a trajectory."""


_COMPUTED = {"tool_calls": lambda t: [asdict(c) for c in t.tool_calls()], "assistant_text": Trajectory.assistant_text}


def resolve_path(traj: Trajectory, path: str) -> Any:
    """`metadata.task.actions`, `final_answer`, `messages.-1.content`, `assistant_text`, ...

    The first segment names a trajectory field (or `tool_calls` / `assistant_text`);
    later segments are mapping keys or list indices.
    """
    head, *rest = path.split(".")
    if head in _COMPUTED:
        value: Any = _COMPUTED[head](traj)
    elif head in Trajectory.__dataclass_fields__:
        value = getattr(traj, head)
    else:
        fields = sorted([*Trajectory.__dataclass_fields__, *_COMPUTED])
        raise PathError(f"{path!r}: a trajectory has no field {head!r} (fields: {', '.join(fields)})")
    walked = head
    for key in rest:
        value = _step(value, key, walked)
        walked += f".{key}"
    return value


def _step(value: Any, key: str, walked: str) -> Any:
    if isinstance(value, dict):
        if key not in value:
            raise PathError(f"{walked} has no key {key!r} (keys: {', '.join(map(str, list(value)[:20]))})")
        return value[key]
    if isinstance(value, list):
        try:
            return value[int(key)]
        except (ValueError, IndexError):
            raise PathError(f"{walked} is a list of {len(value)}; {key!r} is not an index in it") from None
    raise PathError(f"{walked} is a {type(value).__name__}, not a mapping or list; cannot take {key!r}")
