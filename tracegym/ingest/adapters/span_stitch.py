"""LLM-call spans without a parent, stitched into conversations (apps that open no span around their loop).

openlit's quickstart, or any plain loop under an instrumented client, exports each
LLM call as a trace of its own. Such spans (a parentless LLM call or tool span,
with the spans and log records of its trace, found in the same file or by span id
in earlier ones) are grouped per service instead of per trace: the group's parts
are kept like any trace's (tracegym/ingest/parts.py), so every file of the
service, ingested in any order, rebuilds the group whole. The cost: each file
that brings such spans rebuilds its service's whole group.

The group is cut into conversations by the rule the per-call logs use
(tracegym/ingest/stitch.py): calls in start order; a call whose input starts with
everything an earlier call sent plus the reply it got goes on with that call's
conversation (the longest such, of the same session id); any other call opens a
new one. Messages are compared as spans record them, so that the recorders' own
losses do not split a conversation: role, text and answered call id; an assistant
turn with tool calls also matches itself re-sent without them (openlit 1.45) or
without its text (OTel openai-v2), and is skipped when the input leaves it out
altogether (openlit drops a turn of calls without text). A tool span goes with the
conversation whose calls hold its call id, else with the call before it. The spans of one trace
(a trace whose spans all lack a parent is still one run) stay in one conversation.

Each conversation is a trace named by its first call's trace id, its metadata
saying which group it was built from (`parts_of`): the store replaces what an
earlier build of the group made (`PartStore.rebuilt`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from tracegym.ingest.adapters.span_messages import Turn
from tracegym.ingest.adapters.spans import SpanFacts, SpanGroup

GROUP_PREFIX = "~"
"""Group keys start with it; OTel trace ids are hex, so no trace id does."""


def group_key(service: str | None) -> str:
    """By service only: a session id, where a span carries one, may be on some spans of a trace and not others,
    and the group must not depend on which of them a file holds. Sessions part conversations within the group."""
    return f"{GROUP_PREFIX}{service or ''}"


def is_group(key: str) -> bool:
    return key.startswith(GROUP_PREFIX)


@dataclass
class _Conversation:
    calls: list[SpanFacts] = field(default_factory=list)
    others: list[SpanFacts] = field(default_factory=list)
    tip: list[Turn] = field(default_factory=list)  # the last call's input and reply

    @property
    def session(self) -> str | None:
        return self.calls[0].session_id


def conversations(group: SpanGroup) -> list[SpanGroup]:
    """The group's spans as one span group per conversation, keyed by its first call's trace id. The calls of one
    trace stay together (a trace whose spans have no parent, as some exporters leave them, is one run)."""
    ordered = sorted(group.facts, key=lambda f: (f.start or datetime.min, f.order))
    convs: list[_Conversation] = []
    by_trace: dict[str, _Conversation] = {}
    for f in ordered:
        if f.kind != "llm" or f.call is None:
            continue
        conv = by_trace.get(f.source_trace or "") or _extended(convs, f)
        if conv is None:
            conv = _Conversation()
            convs.append(conv)
        conv.calls.append(f)
        by_trace.setdefault(f.source_trace or "", conv)
        conv.tip = [*f.call.inputs, *f.call.outputs[:1]]
    for f in ordered:
        if convs and (f.kind != "llm" or f.call is None):
            (by_trace.get(f.source_trace or "") or _owner(convs, f)).others.append(f)
    return [SpanGroup(c.calls[0].source_trace or group.key, [*c.calls, *c.others], session_id=group.session_id,
                      info={**group.info, "calls": len(c.calls), "parts_of": group.key}) for c in convs]


def _extended(convs: list[_Conversation], f: SpanFacts) -> _Conversation | None:
    """The conversation of the call's session whose tip is the longest that the call's input starts with."""
    assert f.call is not None
    best: _Conversation | None = None
    for conv in convs:
        if conv.session == f.session_id and starts_with(f.call.inputs, conv.tip):
            if best is None or len(conv.tip) > len(best.tip):
                best = conv
    return best


def starts_with(inputs: list[Turn], tip: list[Turn]) -> bool:
    """Whether `inputs` begins with the messages of `tip`, compared as recorders re-send them."""
    if not tip:
        return False
    j = 0
    for held in tip:
        if j < len(inputs) and same_turn(held, inputs[j]):
            j += 1
        elif not (held.role == "assistant" and held.tool_calls and not (held.content or "").strip()):
            return False  # only a turn of calls without text may be left out
    return True


def same_turn(held: Turn, sent: Turn) -> bool:
    """`sent` is `held` as a later call's input re-sends it."""
    if held.role != sent.role or (held.tool_call_id or "") != (sent.tool_call_id or ""):
        return False
    text, again = (held.content or "").strip(), (sent.content or "").strip()
    if held.role == "assistant" and held.tool_calls:
        ids = [c.id or c.name for c in held.tool_calls]
        return (not sent.tool_calls or [c.id or c.name for c in sent.tool_calls] == ids) and again in ("", text)
    return text == again and not sent.tool_calls


def _owner(convs: list[_Conversation], f: SpanFacts) -> _Conversation:
    """The conversation a span other than a call belongs to: the one whose calls hold its tool call id, else the
    one of the last call that started before it (the first conversation for a span before every call)."""
    if f.tool is not None and f.tool.call_id:
        for conv in convs:
            if any(c.id == f.tool.call_id for call in conv.calls if call.call for out in call.call.outputs[:1]
                   for c in out.tool_calls):
                return conv
    before = [(call.start, n, conv) for n, conv in enumerate(convs) for call in conv.calls
              if call.start and f.start and call.start <= f.start]
    return max(before, key=lambda b: (b[0], b[1]))[2] if before else convs[0]
