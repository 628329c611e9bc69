"""The replies that gate a task: one that should earn its reward, and degenerate ones that must not.

A task mined from a failure is worth training on only if its reward pays for the fix and for nothing else
(Repo2RLEnv keeps a generated task only when its reference earns full reward and degenerate attempts earn 0).
For each task this module builds, from the task and its source trace, the probes the gates run through the
task's harness (`tracegym.harnesses.gates`):

- `reference`: a reply that should pass, the first of:
  0. the reference supplied in the spec (`provenance.reference`: a `--references` row or a `--reference-model`
     sample that passed when the set was generated);
  1. the recorded turn at the cut when no finding falls in it;
  2. a sibling's turn: another attempt at the same source task (τ-bench's trials of one task id) that
     succeeded, at the same point of the conversation, that drew no finding and is not the failing turn
     (`same_point`; replay and chat tasks only: a shell's state is its files, which no recording holds);
  3. for a recovery cut, the agent's first later answer that drew no finding of its own;
  4. the gold actions where the format gives them (τ-bench's `task.actions` and `task.outputs`, τ²-bench's
     `evaluation_criteria.actions`): the gold calls the trace had not yet made before the cut, with the
     expected outputs as text.
  A task with none has no reference and fails its gate.
- `empty`: an empty reply.
- `failing_action`: the recorded turn that went wrong (the assistant turn at or before the failure's message;
  for a failure of the whole trace, the turn at the cut).
- `wrong_shape`, per harness: for shell, the command as plain text without its ```bash block; for replay and
  tools, a tool call whose JSON is cut off; for chat, a tool call in place of an answer.

A finding "falls in" a turn when its message lies between that assistant turn and the next one (the turn
itself, the tool results and the feedback it drew). `successful_replies` gives every recorded reply that could be
the reference (not only the first), for the `reference` eval's steps. Where a conversation stands, and whether two
traces stood at the same point, is `tracegym.evals.scorers.points`, which that eval shares.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from tracegym.evals.scorers import points
from tracegym.evals.scorers.points import (
    Point,
    assistant_turns,
    canonical_arguments,
    clean,
    message_at,
    same_point,
    shown_prompt,
    state_before,
)
from tracegym.evals.scorers.recorded import RecordedTrace, findings_by_trace, iter_recorded, successful_siblings
from tracegym.tasks.cuts import build_prompt
from tracegym.tasks.spec import Context, TaskSpec

if TYPE_CHECKING:
    from tracegym.store import Store

ProbeKind = Literal["reference", "empty", "failing_action", "wrong_shape"]
DEGENERATE: tuple[ProbeKind, ...] = ("empty", "failing_action", "wrong_shape")
_BASH = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
_GOLD_PATHS = (("task", "actions"), ("evaluation_criteria", "actions"))
# Harnesses whose world a recording captures (the tool calls and their results): only there can another
# trace be known to stand where the task stands.
_SIBLING_HARNESSES = frozenset({"replay", "chat"})


@dataclass(frozen=True)
class ProbeReply:
    """One scripted model reply: its text and any structured tool calls (OpenAI form)."""

    text: str
    tool_calls: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Probe:
    kind: ProbeKind
    source: str
    """Where the reply came from: recorded_turn, sibling_turn, later_turn, gold, file:PATH, model:NAME, recorded,
    synthetic."""
    replies: tuple[ProbeReply, ...] = field(default_factory=tuple)
    trace_id: str | None = None
    """The trace whose recording gave the reply (the task's own, or a sibling's); None for gold and synthetic."""


@dataclass
class SourceInfo:
    """What probes need of a task's source trace: the trace, the messages its findings point at, and the
    successful attempts at the same source task."""

    trace: RecordedTrace
    findings: set[int]
    siblings: list[SourceInfo] = field(default_factory=list)
    """Other traces of the same source task whose outcome is success, by trace id."""


def load_sources(store: Store, specs: Sequence[TaskSpec]) -> dict[str, SourceInfo]:
    """The source traces of `specs` with their located findings (of every detector) and their successful
    siblings, by trace id."""
    ids = sorted({s.provenance.trace_id for s in specs})
    if not ids:
        return {}
    own = {t.trace_id: t for t in iter_recorded(store, "trace_id IN (SELECT unnest(?))", [ids])}
    sibling_ids = successful_siblings(store, own.values())
    traces = {**own, **{t.trace_id: t for t in iter_recorded(store, "trace_id IN (SELECT unnest(?))",
                                                               [sibling_ids])}} if sibling_ids else own
    findings = findings_by_trace(store, sorted(traces))
    infos = {tid: SourceInfo(t, findings.get(tid, set())) for tid, t in traces.items()}
    by_key: dict[str, list[SourceInfo]] = {}
    for info in infos.values():
        if info.trace.outcome == "success":
            by_key.setdefault(info.trace.task_key(), []).append(info)
    for tid in own:
        infos[tid].siblings = sorted((s for s in by_key.get(own[tid].task_key(), []) if s.trace.trace_id != tid),
                                     key=lambda s: s.trace.trace_id)
    return {tid: infos[tid] for tid in own}


def build_probes(spec: TaskSpec, source: SourceInfo | None) -> list[Probe]:
    """The task's probes, reference first; a degenerate reply equal to an earlier probe's is left out."""
    failing = _failing_message(spec, source)
    reference = (_supplied_reference(spec) or _recorded_reference(spec, source, later=False)
                 or _sibling_reference(spec, source, failing) or _recorded_reference(spec, source, later=True)
                 or _gold_reference(spec))
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


def _failing_turn(spec: TaskSpec, trace: RecordedTrace) -> int | None:
    failure = spec.provenance.failure_message_idx
    if failure is None:
        return spec.provenance.cut_message_idx
    upto = [t for t in assistant_turns(trace) if t <= failure]
    return upto[-1] if upto else None


def _failing_message(spec: TaskSpec, source: SourceInfo | None) -> ProbeReply | None:
    if source is None:
        turn = spec.provenance.recorded_turn
        failing = spec.provenance.failure_message_idx is None or (
            spec.provenance.cut_message_idx <= spec.provenance.failure_message_idx)
        return reply_of(turn.model_dump(exclude_none=True)) if turn is not None and failing else None
    turn_idx = _failing_turn(spec, source.trace)
    return reply_of(message_at(source.trace, turn_idx)) if turn_idx is not None else None


def _recorded_reference(spec: TaskSpec, source: SourceInfo | None, later: bool) -> Probe | None:
    """The recorded turn at the cut, or (`later`) the agent's first later answer that drew no finding."""
    if source is None:
        return None
    trace, cut = source.trace, spec.provenance.cut_message_idx
    turns = assistant_turns(trace)
    failing = _failing_turn(spec, trace)
    # After the failure (a recovery cut) any later answer that drew no finding shows the fix; at or before it,
    # only the turn at the cut is an answer to this prompt.
    if later:
        candidates = [t for t in turns if t > cut] if failing is not None and cut > failing else []
    else:
        candidates = [cut]
    for turn in candidates:
        if turn == failing or turn not in turns or not clean(turn, turns, source.findings):
            continue
        reply = reply_of(message_at(trace, turn))
        if reply.text.strip() or reply.tool_calls:
            return Probe("reference", "later_turn" if later else "recorded_turn", (reply,), trace.trace_id)
    return None


def point_at(trace: RecordedTrace, turn: int, context: Context) -> Point:
    """The point before assistant message `turn`, with its prompt as the task's context mode shows it."""
    prompt = build_prompt(trace, turn, context, None)
    return points.point_at(trace, turn, shown_prompt(prompt.system, (m.model_dump() for m in prompt.messages)))


def _sibling_reference(spec: TaskSpec, source: SourceInfo | None, failing: ProbeReply | None) -> Probe | None:
    """The first successful sibling's turn at the task's point (`sibling_turns`)."""
    return next(sibling_turns(spec, source, failing), None)


def sibling_turns(spec: TaskSpec, source: SourceInfo | None, failing: ProbeReply | None) -> Iterator[Probe]:
    """Each successful sibling's turns at the task's point that drew no finding and are not the failing turn."""
    if source is None or not source.siblings or spec.harness not in _SIBLING_HARNESSES:
        return
    here = point_at(source.trace, spec.provenance.cut_message_idx, spec.prompt.context)
    for sibling in source.siblings:
        turns = assistant_turns(sibling.trace)
        for turn in turns:
            # The world's state first: it is cheap, and rules out most turns before a prompt is built.
            if (state_before(sibling.trace, turn) != here.state or not clean(turn, turns, sibling.findings)
                    or not same_point(here, point_at(sibling.trace, turn, spec.prompt.context))):
                continue
            reply = reply_of(message_at(sibling.trace, turn))
            if (reply.text.strip() or reply.tool_calls) and not (failing and _same_reply(reply, failing)):
                yield Probe("reference", "sibling_turn", (reply,), sibling.trace.trace_id)


def successful_replies(spec: TaskSpec, source: SourceInfo | None) -> list[Probe]:
    """Every recorded reply that shows a good next step at the task's cut: the turn at the cut when no finding
    falls in it, and each successful sibling's turn at the same point; when there is neither, the agent's first
    later answer that drew no finding (it answers a later prompt, so it only stands in)."""
    failing = _failing_message(spec, source)
    own = _recorded_reference(spec, source, later=False)
    found = ([own] if own else []) + list(sibling_turns(spec, source, failing))
    later = None if found else _recorded_reference(spec, source, later=True)
    return found + ([later] if later else [])


def _same_reply(a: ProbeReply, b: ProbeReply) -> bool:
    """The same words and the same calls (call ids aside)."""
    def calls(r: ProbeReply) -> list[tuple[Any, str]]:
        return [((c.get("function") or {}).get("name"), canonical_arguments((c.get("function") or {}).get("arguments")))
                for c in r.tool_calls]
    return a.text.strip() == b.text.strip() and calls(a) == calls(b)


def _supplied_reference(spec: TaskSpec) -> Probe | None:
    """The reference supplied for this task (a --references row, a --reference-model sample), kept in its spec."""
    supplied = spec.provenance.reference
    if supplied is None:
        return None
    return Probe("reference", supplied.source, tuple(reply_of(m.model_dump(exclude_none=True))
                                                     for m in supplied.replies))


def _gold_reference(spec: TaskSpec) -> Probe | None:
    """The gold calls not yet made before the cut, with the expected outputs as text."""
    gold = next((g for g in (_dig(spec.metadata, p) for p in _GOLD_PATHS) if isinstance(g, list)), None)
    if gold is None:
        return None
    done = [(c.name, canonical_arguments(c.arguments)) for c in spec.prior_calls()]
    calls = []
    for i, item in enumerate(gold):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        args = item.get("arguments", item.get("kwargs", {}))
        args = json.loads(args) if isinstance(args, str) else args
        key = (item["name"], canonical_arguments(args))
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

