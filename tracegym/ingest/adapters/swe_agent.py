"""SWE-agent trajectories (`*.traj`: `history[]`, `trajectory[]`, `info`).

Schema: SWE-agent/SWE-agent `sweagent/types.py` and `docs/usage/trajectories.md`.

Messages come from `history`, not `trajectory`: history is the conversation the
model actually saw (system prompt, demonstrations, the issue, each response and
each observation as it was shown), in order, which is what replay and training
need. `trajectory[]` holds only the agent's steps (action, observation, thought,
execution_time, state) and lacks the prompts; it is used to attach each step's
`execution_time` to its observation.

An assistant entry with an `action` is a tool call. Function-calling configs give
the calls (`tool_calls`, with ids) and answer with `tool` entries (`tool_call_ids`);
older configs give only the command string, so the call is named after the
command's first word when the system prompt documents it as a SWE-agent command
(`open`, `edit`, `submit`, …) and `bash` otherwise, with `{"command": …}` as its
arguments; the next user entry (its observation) becomes a `tool` message linked
by a synthesized id.

Demonstrations (`is_demo`) are worked examples pasted into the prompt: they stay
in the message list as written, because the model saw them, but none of their
actions become tool calls and none of their observations become results, so
failure mining never mistakes a demo for the agent's own behaviour. Their
positions are in `metadata.demo_message_idxs`.

The file has no resolution (`info.exit_status` says only how the run ended), so
the outcome is NULL unless a SWE-bench report beside the run says `resolved`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from tracegym.ingest.adapters.base import Adapter, SourceFile, require
from tracegym.ingest.adapters.chat_messages import openai_tool_call
from tracegym.ingest.adapters.swebench import find_resolution, resolution_scores
from tracegym.ingest.normalize import content_text, normalize_role
from tracegym.ingest.reading import Sample
from tracegym.ingest.records import Message, RawRecord, ToolCall, Trace

_SIGNATURE = re.compile(r"^\s*signature:\s*([A-Za-z_][\w-]*)", re.M)
# 'open:' (YAML-style docs) or 'open <path> [<line>] - …' / 'submit - …' (one-line docs)
_DOC_LINE = re.compile(r"^([A-Za-z_][\w-]*)(?::[ \t]*$|[ \t]+-[ \t]|[ \t]+[<\[])", re.M)
_SECTION_END = re.compile(r"\n\s*\n\s*\n|\n[A-Z][A-Z ]+:\s*\n")
# Observations SWE-agent itself uses to reject an action.
_REJECTIONS = re.compile(r"^Your proposed edit has introduced new syntax error|: command not found$", re.M)


class SweAgentAdapter(Adapter):
    name = "swe-agent"
    description = "SWE-agent trajectories (*.traj: history, trajectory, info)"

    def sniff(self, sample: Sample) -> bool:
        value = sample.top if sample.top is not None else sample.first
        if sample.path.suffix == ".traj" and (value is None or isinstance(value, dict) and "history" in value):
            return True
        if not isinstance(value, dict) or not isinstance(value.get("history"), list):
            return False
        first = value["history"][0] if value["history"] else None
        return isinstance(first, dict) and "role" in first and ("trajectory" in value or "agent" in first)

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        traj = record.value
        history = require(traj, "history", list)
        info = traj.get("info") if isinstance(traj.get("info"), dict) else {}
        instance_id, run = src.path.stem, src.path.parent.name
        trace = Trace(
            trace_id=f"swe-agent:{run}/{instance_id}",
            format=self.name,
            session_id=instance_id,
            model=_model(traj, run),
            metadata={
                "instance_id": instance_id,
                "run": run,
                "exit_status": info.get("exit_status"),
                "submission": info.get("submission"),
                "model_stats": info.get("model_stats"),
            },
        )
        acted = _append_history(trace, history)
        _attach_execution_times(acted, traj.get("trajectory"))
        _set_outcome(trace, src.path, instance_id)
        yield trace


def _model(traj: dict[str, Any], run: str) -> str | None:
    config = traj.get("replay_config")
    if isinstance(config, str):
        try:
            config = orjson.loads(config)
        except orjson.JSONDecodeError:
            config = None
    agent = config.get("agent") if isinstance(config, dict) else None
    model = agent.get("model") if isinstance(agent, dict) else None
    if isinstance(model, dict) and isinstance(model.get("name"), str):
        return model["name"]
    # Older runs name their folder `<model>__<dataset>__<config>__…`.
    return run.split("__", 1)[0] if "__" in run else None


def documented_commands(system_prompt: str | None) -> set[str]:
    """The SWE-agent commands the system prompt's COMMANDS section documents."""
    if not system_prompt:
        return set()
    names = set(_SIGNATURE.findall(system_prompt))
    start = system_prompt.find("COMMANDS:")
    if start >= 0:
        section = system_prompt[start + len("COMMANDS:"):]
        end = _SECTION_END.search(section)
        names.update(_DOC_LINE.findall(section[: end.start() if end else len(section)]))
    return names


def command_name(action: str, documented: set[str]) -> str:
    words = action.split()
    return words[0] if words and words[0] in documented else "bash"


@dataclass(slots=True)
class _Acted:
    """One action the agent took, and the message that showed it the observation."""

    action: str
    observation: Message | None = None


def _append_history(trace: Trace, history: list[Any]) -> list[_Acted]:
    documented: set[str] = set()
    demos: list[int] = []
    acted: list[_Acted] = []
    pending: list[ToolCall] = []
    for i, entry in enumerate(history):
        where = f"history[{i}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{where} must be an object, got {type(entry).__name__}")
        msg = Message(role=normalize_role(entry.get("role")), content=content_text(entry.get("content")))
        idx = len(trace.messages)
        trace.messages.append(msg)
        if msg.role == "system" and not documented:
            documented = documented_commands(msg.content)
        if entry.get("is_demo"):
            demos.append(idx)
            continue
        if msg.role == "assistant":
            pending = _calls(entry, idx, documented, where)
            trace.tool_calls.extend(pending)
            if pending:
                acted.append(_Acted(entry["action"].strip() if isinstance(entry.get("action"), str) else ""))
        elif msg.role in ("user", "tool") and pending and entry.get("message_type") in (None, "observation"):
            _observe(msg, idx, entry, pending, where)
            acted[-1].observation = msg
            pending = []
    if demos:
        trace.metadata["demo_message_idxs"] = demos
    return acted


def _calls(entry: dict[str, Any], idx: int, documented: set[str], where: str) -> list[ToolCall]:
    calls = entry.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise ValueError(f"{where}.tool_calls must be a list, got {type(calls).__name__}")
        return [openai_tool_call(c, idx, f"{where}.tool_calls[{j}]") for j, c in enumerate(calls)]
    action = entry.get("action")
    if action is None:
        return []
    if not isinstance(action, str):
        raise ValueError(f"{where}.action must be a string, got {type(action).__name__}")
    if not action.strip():
        return []
    name = command_name(action, documented)
    return [ToolCall(message_idx=idx, call_id=f"call-{idx}", name=name, arguments={"command": action.strip()})]


def _observe(msg: Message, idx: int, entry: dict[str, Any], pending: list[ToolCall], where: str) -> None:
    """Make `msg` (at `idx`) the result of the pending call it answers, by id when the entry names one.

    Linked here rather than by id alone because replayed demonstrations reuse call ids.
    """
    ids = entry.get("tool_call_ids")
    if ids is not None and not (isinstance(ids, list) and all(isinstance(x, str) for x in ids)):
        raise ValueError(f"{where}.tool_call_ids must be a list of strings")
    call = next((c for c in pending if ids and c.call_id == ids[0]), pending[0])
    msg.role, msg.tool_call_id, msg.name = "tool", call.call_id, call.name
    call.result, call.result_message_idx = msg.content, idx
    if msg.content and _REJECTIONS.search(msg.content):
        call.is_error = True


def _attach_execution_times(acted: list[_Acted], steps: Any) -> None:
    """Match trajectory steps to actions by their text, in order; a step's time becomes its observation's latency.

    Steps and history can differ (hand-edited demonstrations drop or add steps), so
    a step with no matching action is skipped rather than shifting the rest.
    """
    if not isinstance(steps, list):
        return
    pos = 0
    for step in steps:
        if not isinstance(step, dict) or not isinstance(step.get("action"), str):
            continue
        seconds = step.get("execution_time")
        match = next((k for k in range(pos, len(acted)) if acted[k].action == step["action"].strip()), None)
        if match is None:
            continue
        pos = match + 1
        observation = acted[match].observation
        if observation is not None and isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
            observation.latency_ms = float(seconds) * 1000.0


def _set_outcome(trace: Trace, path: Path, instance_id: str) -> None:
    resolution = find_resolution(path, instance_id)
    if resolution is None:
        return
    trace.outcome = "success" if resolution.resolved else "failure"
    trace.scores.extend(resolution_scores(resolution))
    trace.metadata.update(outcome_source=resolution.source, tests_status=resolution.tests_status)
