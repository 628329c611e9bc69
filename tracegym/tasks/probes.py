"""The replies that gate a task: one that should earn its reward, and degenerate ones that must not.

A task mined from a failure is worth training on only if its reward pays for the fix and for nothing else
(Repo2RLEnv keeps a generated task only when its reference earns full reward and degenerate attempts earn 0).
For each task this module builds, from the task and its source trace, the probes the gates run through the
task's harness (`tracegym.harnesses.gates`):

- `reference`: a reply that should pass. The recorded turn at the cut when no finding falls in it (for a
  recovery cut: the agent's first answer after the failure that drew no finding of its own); else the gold
  actions where the format gives them (τ-bench's `task.actions` and `task.outputs`, τ²-bench's
  `evaluation_criteria.actions`): the gold calls the trace had not yet made before the cut, with the expected
  outputs as text. A task with neither has no reference and fails its gate.
- `empty`: an empty reply.
- `failing_action`: the recorded turn that went wrong (the assistant turn at or before the failure's message;
  for a failure of the whole trace, the turn at the cut).
- `wrong_shape`, per harness: for shell, the command as plain text without its ```bash block; for replay and
  tools, a tool call whose JSON is cut off; for chat, a tool call in place of an answer.

A finding "falls in" a turn when its message lies between that assistant turn and the next one (the turn
itself, the tool results and the feedback it drew).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tracegym.evals.recorded import RecordedTrace, iter_recorded
from tracegym.evals.scorers.tool_calls import canonical
from tracegym.tasks.spec import TaskSpec

ProbeKind = Literal["reference", "empty", "failing_action", "wrong_shape"]
DEGENERATE: tuple[ProbeKind, ...] = ("empty", "failing_action", "wrong_shape")
_BASH = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
_GOLD_PATHS = (("task", "actions"), ("evaluation_criteria", "actions"))


@dataclass(frozen=True)
class ProbeReply:
    """One scripted model reply: its text and any structured tool calls (OpenAI form)."""

    text: str
    tool_calls: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Probe:
    kind: ProbeKind
    source: str
    """Where the reply came from: recorded_turn, later_turn, gold, recorded, synthetic."""
    replies: tuple[ProbeReply, ...] = field(default_factory=tuple)


@dataclass
class SourceInfo:
    """What probes need of a task's source trace: the trace and the messages its findings point at."""

    trace: RecordedTrace
    findings: set[int]


def load_sources(store: Any, specs: Sequence[TaskSpec]) -> dict[str, SourceInfo]:
    """The source traces of `specs` with their located findings (of every detector), by trace id."""
    ids = sorted({s.provenance.trace_id for s in specs})
    if not ids:
        return {}
    rows = store.query("SELECT trace_id, message_idx FROM failures WHERE trace_id IN (SELECT unnest(?)) "
                       "AND message_idx IS NOT NULL", [ids])
    findings: dict[str, set[int]] = {}
    for row in rows:
        findings.setdefault(row["trace_id"], set()).add(int(row["message_idx"]))
    return {t.trace_id: SourceInfo(t, findings.get(t.trace_id, set()))
            for t in iter_recorded(store, "trace_id IN (SELECT unnest(?))", [ids])}


def build_probes(spec: TaskSpec, source: SourceInfo | None) -> list[Probe]:
    """The task's probes, reference first; a degenerate reply equal to an earlier probe's is left out."""
    failing = _failing_message(spec, source)
    reference = _recorded_reference(spec, source) or _gold_reference(spec)
    probes = [reference] if reference is not None else []
    probes.append(Probe("empty", "synthetic", (ProbeReply(""),)))
    if failing is not None:
        probes.append(Probe("failing_action", "recorded", (failing,)))
    probes.append(Probe("wrong_shape", "synthetic", (_wrong_shape(spec, reference, failing),)))
    seen: set[str] = set()
    unique = []
    for probe in probes:
        key = json.dumps([[r.text, list(r.tool_calls)] for r in probe.replies], sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            unique.append(probe)
    return unique


def reply_of(message: dict[str, Any]) -> ProbeReply:
    """A recorded assistant message (OpenAI form) as a scripted reply."""
    return ProbeReply(message.get("content") or "", tuple(message.get("tool_calls") or ()))


def _turns(trace: RecordedTrace) -> list[int]:
    return [m["idx"] for m in trace.messages if m["role"] == "assistant"]


def _message(trace: RecordedTrace, idx: int) -> dict[str, Any]:
    pos = next(p for p, m in enumerate(trace.messages) if m["idx"] == idx)
    return trace.openai_messages(upto=pos + 1)[pos]


def _failing_turn(spec: TaskSpec, trace: RecordedTrace) -> int | None:
    failure = spec.provenance.failure_message_idx
    if failure is None:
        return spec.provenance.cut_message_idx
    upto = [t for t in _turns(trace) if t <= failure]
    return upto[-1] if upto else None


def _failing_message(spec: TaskSpec, source: SourceInfo | None) -> ProbeReply | None:
    if source is None:
        turn = spec.provenance.recorded_turn
        failing = spec.provenance.failure_message_idx is None or (
            spec.provenance.cut_message_idx <= spec.provenance.failure_message_idx)
        return reply_of(turn.model_dump(exclude_none=True)) if turn is not None and failing else None
    turn_idx = _failing_turn(spec, source.trace)
    return reply_of(_message(source.trace, turn_idx)) if turn_idx is not None else None


def _clean(turn: int, turns: list[int], findings: Iterable[int]) -> bool:
    """No finding between this assistant turn and the next one."""
    pos = bisect_right(turns, turn)
    end = turns[pos] if pos < len(turns) else float("inf")
    return not any(turn <= f < end for f in findings)


def _recorded_reference(spec: TaskSpec, source: SourceInfo | None) -> Probe | None:
    if source is None:
        return None
    trace, cut = source.trace, spec.provenance.cut_message_idx
    turns = _turns(trace)
    failing = _failing_turn(spec, trace)
    # After the failure (a recovery cut) any later answer that drew no finding shows the fix; at or before it,
    # only the turn at the cut is an answer to this prompt.
    candidates = [t for t in turns if t >= cut] if failing is not None and cut > failing else [cut]
    for turn in candidates:
        if turn == failing or turn not in turns or not _clean(turn, turns, source.findings):
            continue
        reply = reply_of(_message(trace, turn))
        if reply.text.strip() or reply.tool_calls:
            return Probe("reference", "recorded_turn" if turn == cut else "later_turn", (reply,))
    return None


def _gold_reference(spec: TaskSpec) -> Probe | None:
    """The gold calls not yet made before the cut, with the expected outputs as text."""
    gold = next((g for g in (_dig(spec.metadata, p) for p in _GOLD_PATHS) if isinstance(g, list)), None)
    if gold is None:
        return None
    done = [(c.name, _canonical(c.arguments)) for c in spec.prior_calls()]
    calls = []
    for i, item in enumerate(gold):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        args = item.get("arguments", item.get("kwargs", {}))
        args = json.loads(args) if isinstance(args, str) else args
        key = (item["name"], _canonical(args))
        if key in done:
            done.remove(key)
            continue
        calls.append({"id": f"gold_{i}", "type": "function",
                      "function": {"name": item["name"], "arguments": json.dumps(args, ensure_ascii=False)}})
    outputs = _dig(spec.metadata, ("task", "outputs"))
    text = "\n".join(str(o) for o in outputs) if isinstance(outputs, list) else ""
    if not calls and not text:
        return None
    return Probe("reference", "gold", (ProbeReply(text, tuple(calls)),))


def _wrong_shape(spec: TaskSpec, reference: Probe | None, failing: ProbeReply | None) -> ProbeReply:
    shown = [*(reference.replies if reference else ()), *((failing,) if failing else ())]
    if spec.harness == "shell":
        command = next((m.group(1).strip() for r in shown for m in [_BASH.search(r.text)] if m), "")
        return ProbeReply(command or "I will look at the repository first.")
    call = next((c.get("function") or {} for r in shown for c in r.tool_calls), None)
    if spec.harness in ("replay", "tools") and (call or spec.tools):
        name = call.get("name") if call else spec.tools[0].name
        arguments = str(call.get("arguments") or "{}") if call else "{}"
        return ProbeReply(f'<tool_call>{{"name": {json.dumps(name)}, "arguments": {arguments}</tool_call>')
    return ProbeReply('<tool_call>{"name": "reply", "arguments": {}}</tool_call>')


def _dig(data: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _canonical(value: Any) -> str:
    """Arguments as comparable text: a JSON string parsed, 250 and 250.0 alike (as the tool_calls scorer sees)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(canonical(value), sort_keys=True, default=str)
