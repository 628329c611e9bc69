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
itself, the tool results and the feedback it drew).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from tracegym.evals.scorers.recorded import RecordedTrace, iter_recorded
from tracegym.evals.scorers.tool_calls import canonical
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
    wanted = {t.task_key() for t in own.values()}
    # task_key reads the metadata in Python: narrow by format and outcome in SQL, then by key on the heads.
    heads = store.query("SELECT trace_id, format, session_id, metadata FROM traces WHERE outcome = 'success' "
                        "AND format IN (SELECT unnest(?))", [sorted({t.format for t in own.values()})])
    sibling_ids = sorted(h["trace_id"] for h in heads if _head_key(h) in wanted and h["trace_id"] not in own)
    traces = {**own, **{t.trace_id: t for t in iter_recorded(store, "trace_id IN (SELECT unnest(?))",
                                                               [sibling_ids])}} if sibling_ids else own
    rows = store.query("SELECT trace_id, message_idx FROM failures WHERE trace_id IN (SELECT unnest(?)) "
                       "AND message_idx IS NOT NULL", [sorted(traces)])
    findings: dict[str, set[int]] = {}
    for row in rows:
        findings.setdefault(row["trace_id"], set()).add(int(row["message_idx"]))
    infos = {tid: SourceInfo(t, findings.get(tid, set())) for tid, t in traces.items()}
    by_key: dict[str, list[SourceInfo]] = {}
    for info in infos.values():
        if info.trace.outcome == "success":
            by_key.setdefault(info.trace.task_key(), []).append(info)
    for tid in own:
        infos[tid].siblings = sorted((s for s in by_key.get(own[tid].task_key(), []) if s.trace.trace_id != tid),
                                     key=lambda s: s.trace.trace_id)
    return {tid: infos[tid] for tid in own}


def _head_key(head: dict[str, Any]) -> str:
    metadata = head["metadata"]
    metadata = json.loads(metadata) if isinstance(metadata, str) else metadata
    return RecordedTrace(head["trace_id"], head["format"], head["session_id"], "success",
                         metadata if isinstance(metadata, dict) else {}, None).task_key()


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


def _recorded_reference(spec: TaskSpec, source: SourceInfo | None, later: bool) -> Probe | None:
    """The recorded turn at the cut, or (`later`) the agent's first later answer that drew no finding."""
    if source is None:
        return None
    trace, cut = source.trace, spec.provenance.cut_message_idx
    turns = _turns(trace)
    failing = _failing_turn(spec, trace)
    # After the failure (a recovery cut) any later answer that drew no finding shows the fix; at or before it,
    # only the turn at the cut is an answer to this prompt.
    if later:
        candidates = [t for t in turns if t > cut] if failing is not None and cut > failing else []
    else:
        candidates = [cut]
    for turn in candidates:
        if turn == failing or turn not in turns or not _clean(turn, turns, source.findings):
            continue
        reply = reply_of(_message(trace, turn))
        if reply.text.strip() or reply.tool_calls:
            return Probe("reference", "later_turn" if later else "recorded_turn", (reply,), trace.trace_id)
    return None


@dataclass(frozen=True)
class Point:
    """Where a conversation stands before an assistant turn, as far as the recording can tell."""

    state: tuple[tuple[str, str], ...]
    """The successful tool calls made before (name, arguments), in order: what the tools' world has seen."""
    exchange: tuple[tuple[str, str, str | None], ...]
    """The calls made since the last user message (name, arguments, result): the failing call context."""
    shown: str
    """The prompt as the task's context mode shows it (system prompt and messages, call ids left out)."""


def point_at(trace: RecordedTrace, turn: int, context: Context) -> Point:
    before = [m["idx"] for m in trace.messages if m["role"] == "user" and m["idx"] < turn]
    since = before[-1] if before else -1
    prompt = build_prompt(trace, turn, context, None)
    shown = [prompt.system] + [[m.role, m.content, [(c.function.name, _canonical(c.function.arguments))
                                                    for c in m.tool_calls or []]] for m in prompt.messages]
    return Point(_state(trace, turn),
                 tuple((c.name, _canonical(c.arguments), c.result) for c in trace.calls
                       if since < c.message_idx < turn),
                 json.dumps(shown, ensure_ascii=False))


def _state(trace: RecordedTrace, turn: int) -> tuple[tuple[str, str], ...]:
    return tuple((c.name, _canonical(c.arguments)) for c in trace.calls if c.message_idx < turn and not c.is_error)


def same_point(task: Point, other: Point) -> bool:
    """Whether another trace stood where the task stands: the same world (the same successful calls before),
    and either the same prompt as the task shows it, or the same calls since the last user message with the
    same results (the same failing call and its error), the user's own words aside: trials of one τ-bench task
    seldom word a request alike, but hit the same error in the same state."""
    return task.state == other.state and (task.shown == other.shown or (bool(task.exchange)
                                                                          and task.exchange == other.exchange))


def _sibling_reference(spec: TaskSpec, source: SourceInfo | None, failing: ProbeReply | None) -> Probe | None:
    """A successful sibling's turn at the task's point that drew no finding and is not the failing turn."""
    if source is None or not source.siblings or spec.harness not in _SIBLING_HARNESSES:
        return None
    here = point_at(source.trace, spec.provenance.cut_message_idx, spec.prompt.context)
    for sibling in source.siblings:
        turns = _turns(sibling.trace)
        for turn in turns:
            # The world's state first: it is cheap, and rules out most turns before a prompt is built.
            if (_state(sibling.trace, turn) != here.state or not _clean(turn, turns, sibling.findings)
                    or not same_point(here, point_at(sibling.trace, turn, spec.prompt.context))):
                continue
            reply = reply_of(_message(sibling.trace, turn))
            if (reply.text.strip() or reply.tool_calls) and not (failing and _same_reply(reply, failing)):
                return Probe("reference", "sibling_turn", (reply,), sibling.trace.trace_id)
    return None


def _same_reply(a: ProbeReply, b: ProbeReply) -> bool:
    """The same words and the same calls (call ids aside)."""
    def calls(r: ProbeReply) -> list[tuple[Any, str]]:
        return [((c.get("function") or {}).get("name"), _canonical((c.get("function") or {}).get("arguments")))
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
