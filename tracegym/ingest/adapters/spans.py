"""Span-shaped formats (OTel GenAI, OpenInference, Langfuse, LangSmith): spans to one conversation.

Each of these adapters reads its spans (runs, observations) into `SpanFacts`, what
one span says about an LLM call, a tool execution, scores and the session, and
groups them by trace id into a `SpanGroup`. `build_trace` then rebuilds the
conversation from the group.

Rebuilding the conversation. Every LLM call's input repeats the history before
it, so concatenating inputs would repeat each turn once per later call. Calls are
taken in start order; an input message is appended only when the conversation does
not already hold it (compared by role, text and tool-call ids, counting repeats, so
a user who says "yes" twice keeps both), and the call's output (its first choice)
is always appended. In the usual agent loop, where each input is the previous input
plus the previous output and the tool results, this yields exactly the last call's
input plus its output; it also keeps earlier turns when a framework truncates or
summarises history, and the turns of a sub-agent whose context differs.

Tool executions (execute_tool spans, TOOL spans, tool runs, TOOL observations) are
matched to the assistant's tool calls by call id, or by name in order where the
format has no id. Their errors flag the call; a result that no later LLM input
carried is inserted after the call as a tool message. A tool execution that matches
no call (its LLM span recorded no content) still becomes a tool message and a tool
call, owned by the assistant message before it, or by itself when there is none.

Outcome: 'success' or 'failure' only when a score clearly says so: its name holds
one of the words success, successful, succeeded, correct, correctness, resolved,
solved, passed, pass, and its value is exactly 0 or 1 (or its label is true/false,
yes/no, pass/fail, correct/incorrect, resolved/unresolved, success/failure). No
such score, or scores that disagree, leave the outcome NULL.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tracegym.ingest.adapters.span_messages import Turn
from tracegym.ingest.normalize import parse_arguments, to_json
from tracegym.ingest.parts import Part, PartStore
from tracegym.ingest.records import BadRecord, Message, RawRecord, Score, ToolCall, Trace


@dataclass(slots=True)
class LlmCall:
    inputs: list[Turn]
    outputs: list[Turn]  # one per choice; the conversation continues with the first
    input_tokens: int | None = None
    output_tokens: int | None = None
    model: str | None = None


@dataclass(slots=True)
class ToolRun:
    name: str
    call_id: str | None
    arguments: Any
    result: str | None
    is_error: bool = False
    exit_code: int | None = None


@dataclass(slots=True)
class SpanFacts:
    """What one span says. `kind` is 'llm', 'agent', 'tool' or '' (anything else)."""

    name: str | None
    start: datetime | None
    end: datetime | None
    order: str = ""  # tie-breaker after start time: dotted order or position in the file
    kind: str = ""
    call: LlmCall | None = None
    tool: ToolRun | None = None
    scores: list[Score] = field(default_factory=list)
    session_id: str | None = None
    error: str | None = None
    tools: list[Any] | None = None  # tool definitions offered to the model
    info: dict[str, Any] = field(default_factory=dict)  # user, agent, service: into trace metadata


@dataclass(slots=True)
class SpanGroup:
    """All the spans of one trace, with what the format says about the trace as a whole."""

    key: str
    facts: list[SpanFacts]
    scores: list[Score] = field(default_factory=list)
    session_id: str | None = None
    started_at: datetime | None = None
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Located:
    """A span (run, observation, log record) read from a file, before grouping."""

    key: str  # the trace id it belongs to
    pos: int  # line number (JSONL) or 1-based item number (JSON documents)
    where: str  # full locator for a bad-record report
    item: Any
    raw: Any  # the JSON as read
    part: Part | None = None  # its identity as a part of the trace (see tracegym/ingest/parts.py)


# ---------------------------------------------------------------- grouping


def trace_records(
    items: Iterable[Located | BadRecord],
    unit: str,
    to_group: Callable[[str, list[Located]], Iterator[SpanGroup | BadRecord]],
    store: PartStore | None = None,
    revive: Callable[[Any], Any] | None = None,
) -> Iterator[RawRecord | BadRecord]:
    """Group located spans by trace id; one raw record per trace, bad spans on their own.

    The whole file is read before the first trace is yielded, since one trace's
    spans may be spread over many lines. With a part `store` (and `revive`, which
    turns a part's JSON back into an item), each trace is built from its parts in
    every file ingested so far, this one included.
    """
    groups: dict[str, list[Located]] = {}
    for item in items:
        if isinstance(item, BadRecord):
            yield item
        else:
            groups.setdefault(item.key, []).append(item)
    if store is not None and revive is not None:
        groups = _with_stored_parts(groups, store, revive)
    for key, members in groups.items():
        positions = {m.pos for m in members if m.pos}
        label = unit.removesuffix("s") if len(positions) == 1 else unit
        locator = f"trace {key} ({label} {compress(positions)})" if positions else f"trace {key}"
        raw = to_json([m.raw for m in members])
        for out in to_group(key, members):
            yield out if isinstance(out, BadRecord) else RawRecord(locator, out, raw)


def _with_stored_parts(groups: dict[str, list[Located]], store: PartStore,
                       revive: Callable[[Any], Any]) -> dict[str, list[Located]]:
    """Each trace's members from all its parts, stored and new, read back from their JSON in `seq` order."""
    here = {(key, m.part.key): m for key, members in groups.items() for m in members if m.part is not None}
    merged = store.merge({key: [m.part for m in members if m.part is not None] for key, members in groups.items()})
    out: dict[str, list[Located]] = {}
    for key, parts in merged.items():
        members = [m for m in groups[key] if m.part is None]
        for part in parts:
            mine = here.get((key, part.key))
            pos, where = (mine.pos, mine.where) if mine else (0, f"trace {key}, part {part.key} from an earlier file")
            members.append(Located(key, pos, where, revive(part.doc), part.doc, part))
        out[key] = members
    return out


def compress(numbers: Iterable[int]) -> str:
    """[3, 4, 5, 9] -> '3-5, 9'."""
    nums = sorted(set(numbers))
    spans: list[str] = []
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        spans.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    return ", ".join(spans)


def facts_or_bad(members: Iterable[Located], parse: Callable[[Any], SpanFacts]) -> Iterator[SpanFacts | BadRecord]:
    """Parse each span; a span that raises becomes a bad record with its raw JSON."""
    for m in members:
        try:
            yield parse(m.item)
        except Exception as e:  # noqa: BLE001 - one malformed span must not cost the others
            yield BadRecord(m.where, f"{type(e).__name__}: {e}", to_json(m.raw))


def split_bad(results: Iterable[SpanFacts | BadRecord]) -> tuple[list[SpanFacts], list[BadRecord]]:
    facts: list[SpanFacts] = []
    bad: list[BadRecord] = []
    for r in results:
        (bad if isinstance(r, BadRecord) else facts).append(r)
    return facts, bad


# ---------------------------------------------------------------- the trace


class Incomplete(ValueError):
    """The parts of a trace read so far hold no LLM call or tool execution (logs or scores only, say)."""



def build_trace(group: SpanGroup, fmt: str) -> Trace:
    """One normalized trace from the facts of all its spans."""
    facts = sorted(group.facts, key=lambda f: (f.start or datetime.min, f.order))
    calls = [f for f in facts if f.kind == "llm" and f.call]
    if not any(_has_content(f.call) for f in calls):
        # Agent-level spans repeat what their LLM calls say; use them only when the calls are silent.
        agent_calls = [f for f in facts if f.kind == "agent" and f.call and _has_content(f.call)]
        calls = agent_calls or calls
    runs = [f for f in facts if f.kind == "tool" and f.tool]
    if not calls and not runs:
        raise Incomplete(_what_is_held(facts))
    trace = Trace(trace_id=f"{fmt}:{group.key}", format=fmt)
    _append_calls(trace, calls)
    _merge_tool_runs(trace, runs)
    trace.scores = [s for f in facts for s in f.scores] + group.scores
    trace.session_id = group.session_id or next((f.session_id for f in facts if f.session_id), None)
    trace.model = next((f.call.model for f in reversed(calls) if f.call and f.call.model), None)
    starts = [f.start for f in facts if f.start] + ([group.started_at] if group.started_at else [])
    ends = [f.end for f in facts if f.end]
    trace.started_at = min(starts) if starts else None
    trace.ended_at = max(ends) if ends else None
    trace.tools = next((f.tools for f in reversed(facts) if f.tools), None)
    trace.outcome = outcome_from_scores(trace.scores)
    trace.metadata = _metadata(group, facts)
    missing = _not_captured(trace)
    if missing:
        trace.metadata["content_not_captured"] = missing
    return trace


def _what_is_held(facts: list[SpanFacts]) -> str:
    """Why a trace waits, naming what it holds: spans none of which this format reads as an LLM call or a tool
    execution would not complete it however long it waits, if no other file brings its calls."""
    named = sorted({f.name for f in facts if f.name and f.name != "(log records)"})
    if not named:
        return "no LLM calls or tool executions in this trace yet (log records or scores only)"
    shown = ", ".join(repr(n) for n in named[:8]) + (f" and {len(named) - 8} more" if len(named) > 8 else "")
    return (f"no LLM calls or tool executions in this trace yet: its {len(facts)} spans ({shown}) are none of them "
            "an LLM call or a tool execution this format reads")


def _has_content(call: LlmCall | None) -> bool:
    return call is not None and bool(call.inputs or call.outputs)


def _metadata(group: SpanGroup, facts: list[SpanFacts]) -> dict[str, Any]:
    meta: dict[str, Any] = {"source_trace_id": group.key, "spans": len(facts)}
    for f in facts:
        for key, value in f.info.items():
            meta.setdefault(key, value)
    meta.update(group.info)
    errors = [{"span": f.name, "error": f.error} for f in facts if f.error and f.kind != "tool"]
    if errors:
        meta["span_errors"] = errors
    return meta


def _not_captured(trace: Trace) -> list[str]:
    """What the recorder left out (content capture off): stored as NULL, and named here so that an empty
    message or call is not taken for what the model or the tool said."""
    callers = {c.message_idx for c in trace.tool_calls}
    missing = []
    if any(m.content is None and m.role != "tool" and i not in callers for i, m in enumerate(trace.messages)):
        missing.append("messages")
    if any(c.arguments is None for c in trace.tool_calls):
        missing.append("tool arguments")
    if any(m.content is None for m in trace.messages if m.role == "tool"):
        missing.append("tool results")
    return missing


def turn_key(t: Turn) -> tuple[str, str, str, tuple[str, ...]]:
    """What makes two recorded messages the same one. A message whose tool calls all have ids is known by them:
    recorders drop its text when it comes back as history (OTel openai-v2 2.3's assistant message event)."""
    by_ids = bool(t.tool_calls) and all(c.id for c in t.tool_calls)
    text = "" if by_ids else (t.content or "").strip()
    return (t.role, text, t.tool_call_id or "", tuple(c.id or c.name for c in t.tool_calls))


def _append_calls(trace: Trace, calls: list[SpanFacts]) -> None:
    held: Counter[tuple] = Counter()  # how many times the conversation already holds each message
    for f in calls:
        call = f.call
        assert call is not None
        seen: Counter[tuple] = Counter()
        for turn in call.inputs:
            key = turn_key(turn)
            seen[key] += 1
            if seen[key] > held[key]:
                held[key] += 1
                _add_turn(trace, turn, f.start)
        if not call.outputs and f.error:
            continue  # a failed call produced no message
        out = call.outputs[0] if call.outputs else Turn("assistant", None)
        held[turn_key(out)] += 1
        msg = _add_turn(trace, out, f.end)
        msg.input_tokens = call.input_tokens if call.input_tokens is not None else out.input_tokens
        msg.output_tokens = call.output_tokens if call.output_tokens is not None else out.output_tokens
        if f.start and f.end:
            msg.latency_ms = (f.end - f.start).total_seconds() * 1000


def _add_turn(trace: Trace, turn: Turn, ts: datetime | None) -> Message:
    idx = len(trace.messages)
    msg = Message(role=turn.role, content=turn.content, tool_call_id=turn.tool_call_id, name=turn.name, ts=ts)
    trace.messages.append(msg)
    for part in turn.tool_calls:
        trace.tool_calls.append(ToolCall(idx, part.id, part.name, parse_arguments(part.arguments)))
    if turn.is_error and turn.tool_call_id:
        for call in trace.tool_calls:
            if call.call_id == turn.tool_call_id:
                call.is_error = True
    return msg


def _merge_tool_runs(trace: Trace, runs: list[SpanFacts]) -> None:
    claimed: set[int] = set()  # id() of the calls a run has already matched
    for f in runs:
        run = f.tool
        assert run is not None
        call = _match_call(trace, run, claimed)
        if call is None:
            _add_orphan_run(trace, f)
            continue
        claimed.add(id(call))
        call.is_error = bool(call.is_error or run.is_error)
        if run.exit_code is not None:
            call.exit_code = run.exit_code
        answer = _answer_of(trace, call)
        if answer is None:
            pos = _after_call_group(trace, call.message_idx)
            _insert(trace, pos, _tool_message(run, f, call.call_id, call.name))
        else:
            answer.content = answer.content if answer.content is not None else run.result
            answer.name = answer.name or call.name


def _match_call(trace: Trace, run: ToolRun, claimed: set[int]) -> ToolCall | None:
    """By call id; failing that, the first unclaimed call of the same name (id-less calls only
    when the run has an id, so two different ids never meet)."""
    open_calls = [c for c in trace.tool_calls if id(c) not in claimed]
    if run.call_id is not None:
        hit = next((c for c in open_calls if c.call_id == run.call_id), None)
        if hit is not None:
            return hit
        open_calls = [c for c in open_calls if c.call_id is None]
    return next((c for c in open_calls if c.name == run.name), None)


def _answer_of(trace: Trace, call: ToolCall) -> Message | None:
    """The tool message after the call (before the next non-tool message) that answers it."""
    for msg in trace.messages[call.message_idx + 1:]:
        if msg.role != "tool":
            return None
        if call.call_id and msg.tool_call_id == call.call_id:
            return msg
        if not msg.tool_call_id and msg.name in (None, call.name):
            return msg
    return None


def _after_call_group(trace: Trace, idx: int) -> int:
    pos = idx + 1
    while pos < len(trace.messages) and trace.messages[pos].role == "tool":
        pos += 1
    return pos


def _tool_message(run: ToolRun, f: SpanFacts, call_id: str | None, name: str) -> Message:
    latency = (f.end - f.start).total_seconds() * 1000 if f.start and f.end else None
    return Message(role="tool", content=run.result, tool_call_id=call_id, name=name, ts=f.end, latency_ms=latency)


def _insert(trace: Trace, pos: int, msg: Message) -> None:
    trace.messages.insert(pos, msg)
    for call in trace.tool_calls:
        if call.message_idx >= pos:
            call.message_idx += 1


def _add_orphan_run(trace: Trace, f: SpanFacts) -> None:
    run = f.tool
    assert run is not None
    pos = len(trace.messages)
    while pos > 0 and f.start and trace.messages[pos - 1].ts and trace.messages[pos - 1].ts > f.start:
        pos -= 1
    _insert(trace, pos, _tool_message(run, f, run.call_id, run.name))
    owner = next((i for i in range(pos - 1, -1, -1) if trace.messages[i].role == "assistant"), pos)
    arguments = parse_arguments(run.arguments) if run.arguments is not None else None  # not recorded: NULL
    trace.tool_calls.append(
        ToolCall(owner, run.call_id, run.name, arguments, is_error=run.is_error, exit_code=run.exit_code)
    )


# ---------------------------------------------------------------- outcome

_OUTCOME_WORDS = {"success", "successful", "succeeded", "correct", "correctness", "resolved", "solved", "passed",
                  "pass"}
_YES = {"true", "yes", "pass", "passed", "correct", "success", "succeeded", "resolved", "solved", "1"}
_NO = {"false", "no", "fail", "failed", "incorrect", "failure", "unresolved", "unsolved", "0"}


def outcome_from_scores(scores: Iterable[Score]) -> str | None:
    verdicts = set()
    for s in scores:
        if not set(re.split(r"[^a-z]+", s.name.lower())) & _OUTCOME_WORDS:
            continue
        verdict = _binary(s)
        if verdict is not None:
            verdicts.add(verdict)
    if len(verdicts) != 1:
        return None
    return "success" if verdicts.pop() else "failure"


def _binary(s: Score) -> bool | None:
    if s.value is not None:
        return bool(s.value) if s.value in (0.0, 1.0) else None
    label = (s.label or "").strip().lower()
    return True if label in _YES else False if label in _NO else None


def score_value(value: Any, where: str) -> float | None:
    """A score's numeric value: numbers and booleans (as 1/0); None stays None."""
    if value is None:
        return None
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    raise ValueError(f"{where} must be a number, got {type(value).__name__}")
