"""Logs with one line per API call, stitched into one trace per conversation.

A chat client re-sends the whole conversation on every call, so a log of calls
(request + response per line) holds each conversation many times over, one
partial copy per call. A call whose messages start with everything an earlier
call sent plus the reply it got extends that call's conversation; any other call
(the first, a second conversation, a rewritten or shortened history, other tools)
opens a new one; a call goes on only with a conversation of its own session id
(none with none), so two sessions that start alike stay two. This is the proxy harness's rule (`Segment.extended_by` in
tracegym/harnesses/proxy/calls.py, `same_message` in proxy_openai.py), applied
here to normalized messages so that it reads OpenAI and Anthropic logs alike:
role, text (None and "" alike), the answered call id, and each tool call's id,
name and arguments (compared as parsed JSON, so re-encoding does not matter).

Each conversation becomes the trace of its last call (whose messages hold all
the others'), named by its first call's id, with each earlier reply's text,
tokens and time laid onto the message it became; its metadata is the last
call's (finish reason, usage), plus `calls` and `call_ids` (a conversation of one call too). Prefixes are
compared by a chain of hashes, so a file of N calls costs O(total messages), not O(N^2) comparisons.

Across files (tracegym/ingest/call_store.py): a conversation of the file whose first call goes on with a
conversation an earlier file stored (by the same rule, against its last call and reply) continues it, under
its id; a stored conversation whose first call goes on with a conversation of the file (a later piece of a
log ingested first) is taken into it, under the file's id; and a log that grew since its last ingest holds
its stored conversations again with more calls, which replace them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tracegym.ingest.normalize import to_json
from tracegym.ingest.records import Message, RawRecord, ToolCall, Trace

PART_KEY = "calls"
"""The `span_parts` key of a stored conversation's `Tip` (tracegym/ingest/call_store.py)."""


@dataclass(slots=True)
class Call:
    """One logged API call as a trace of its own: the request's messages, then the reply (if any)."""

    trace: Trace
    prompt: int
    """How many of `trace.messages` the request sent; the rest is the reply."""


@dataclass(slots=True)
class Stored:
    """A conversation an earlier file stored, as the stitcher goes on with it."""

    trace_id: str
    started_at: datetime | None
    call_ids: list[str]
    replies: list[tuple[int, Message]]
    """Each call's reply, where it sits in the conversation, as stored."""
    head: list[str] | None
    """Its `Tip.head` (None where stored before heads were kept)."""


@dataclass(slots=True)
class Later:
    """A conversation an earlier file stored whose first call goes on with a conversation of this file: its
    trace as stored, which becomes the conversation's, and its `Tip`."""

    trace: Trace
    call_ids: list[str]
    tip: Tip


@dataclass(slots=True)
class Tip:
    """What a later file needs to go on with a stored conversation: the chain hash of its last call's messages
    and reply, and where each call's reply sits."""

    tip: str
    replies: list[int]
    head: list[str] | None = None
    """The chain hashes of its first call's request (`chain`, without the tools' alone): a conversation that
    a later file stores goes on with this one when one of them is this one's tip."""


Earlier = Callable[[list[list[str]], list[str | None], set[str]], list[Stored | None]]
"""For each conversation of a file, the chain hashes of its first call's request (`chain`) and its session id,
and the ids of the file's calls: the stored conversation it goes on with, if any (see
call_store.StoredCalls.continued)."""
Following = Callable[[list[str], list[str | None], set[str]], list[Later | None]]
"""For each conversation of a file, its tip and session id, and the ids of the file's calls: the stored
conversation that goes on with it, if any (see call_store.StoredCalls.following)."""


@dataclass
class _Conversation:
    trace_id: str
    latest: Call
    record: RawRecord
    started_at: object
    first_prompt: int
    replies: list[tuple[int, Message]] = field(default_factory=list)
    call_ids: list[str] = field(default_factory=list)
    tip: str = ""
    head: list[str] | None = None
    later: Later | None = None
    """The stored conversation that goes on with this one, whose trace holds it all."""

    def continue_stored(self, stored: Stored) -> None:
        """Put the stored conversation's calls before this one's: it goes on with them, under their id."""
        self.trace_id, self.started_at, self.head = stored.trace_id, stored.started_at, stored.head
        self.replies = [*stored.replies, *self.replies]
        self.call_ids = [*stored.call_ids, *self.call_ids]

    def go_on_with(self, later: Later) -> None:
        """Put the stored conversation's calls after this one's: they go on with it, under this one's id."""
        latest = self.latest
        if len(latest.trace.messages) > latest.prompt:
            self.replies.append((latest.prompt, latest.trace.messages[latest.prompt]))
        self.call_ids = [*self.call_ids, *later.call_ids]
        self.tip, self.later = later.tip.tip, later

    def index(self) -> Tip:
        if self.later is not None:
            return Tip(self.tip, [idx for idx, _ in self.replies] + self.later.tip.replies, self.head)
        latest = self.latest
        last = [latest.prompt] if len(latest.trace.messages) > latest.prompt else []
        return Tip(self.tip, [idx for idx, _ in self.replies] + last, self.head)


def is_logged_call(rec: Any) -> bool:
    """A logged call: a request's messages with its response (`{request: {messages}, response}` or
    `{messages, response}`). Conversations without a response, and bare responses, stand alone."""
    if not isinstance(rec, dict) or rec.get("response") is None:
        return False
    request = rec.get("request", rec)
    return isinstance(request, dict) and isinstance(request.get("messages"), list)


class CallStitcher:
    """Collects a file's calls (`add`) and hands back one trace per conversation (`conversations`)."""

    def __init__(self) -> None:
        self.open: list[_Conversation] = []
        self.by_tip: dict[tuple[str | None, str], list[_Conversation]] = {}
        """Open conversations by session id and the chain hash of their messages and last reply."""
        self.seen: set[str] = set()
        self.continued = 0
        self.joined: dict[str, str] = {}
        """Stored conversations taken into one of the file's (`Later`), by id: the id they go on under."""

    def add(self, call: Call, record: RawRecord) -> str:
        """Take one call: 'new' when it opens a conversation, 'extended' when it goes on with one, 'duplicate'
        when it extends nothing and its id was seen before in this file (a repeated line)."""
        trace = call.trace
        hashes = chain(trace)
        conv = self._extended(trace.session_id, hashes, call.prompt)
        if conv is None and trace.trace_id in self.seen:
            return "duplicate"
        self.seen.add(trace.trace_id)
        status = "new" if conv is None else "extended"
        if conv is None:
            conv = _Conversation(trace.trace_id, call, record, trace.started_at, call.prompt)
            self.open.append(conv)
        else:
            self.by_tip[(trace.session_id, conv.tip)].remove(conv)
            previous = conv.latest
            if len(previous.trace.messages) > previous.prompt:
                conv.replies.append((previous.prompt, previous.trace.messages[previous.prompt]))
            conv.latest, conv.record = call, record
        conv.call_ids.append(trace.trace_id)
        conv.tip = hashes[-1]
        self.by_tip.setdefault((trace.session_id, conv.tip), []).append(conv)
        return status

    def _extended(self, session: str | None, hashes: list[str], prompt: int) -> _Conversation | None:
        """The open conversation of the session whose messages (with its last reply) the longest prefix of the
        prompt is."""
        for n in range(prompt, 0, -1):
            waiting = self.by_tip.get((session, hashes[n]))
            if waiting:
                return waiting[0]  # of two identical conversations, the older one goes on first
        return None

    def conversations(self, earlier: Earlier | None = None,
                      following: Following | None = None) -> Iterator[tuple[Trace, RawRecord, Tip]]:
        """Each conversation's trace, the record it stands for, and its `Tip`. With `earlier`, a conversation
        whose first call goes on with a stored one continues it; with `following`, a stored conversation whose
        first call goes on with one of the file's is taken into it (`joined`). `continued` counts both."""
        self.continued, self.joined = 0, {}
        if earlier is not None and self.open:
            for conv in self.open:
                conv.head = chain(conv.latest.trace)[1:conv.first_prompt + 1]
            sessions = [c.latest.trace.session_id for c in self.open]
            heads = [c.head or [] for c in self.open]
            for conv, stored in zip(self.open, earlier(heads, sessions, self.seen), strict=True):
                if stored is not None:
                    conv.continue_stored(stored)
                    self.continued += 1
        if following is not None and self.open:
            sessions = [c.latest.trace.session_id for c in self.open]
            for conv, later in zip(self.open, following([c.tip for c in self.open], sessions, self.seen),
                                   strict=True):
                if later is not None:
                    self.joined[later.trace.trace_id] = conv.trace_id
                    conv.go_on_with(later)
                    self.continued += 1
        for conv in self.open:
            tip = conv.index()
            yield _stitched(conv), conv.record, tip


def _stitched(conv: _Conversation) -> Trace:
    trace = conv.latest.trace if conv.later is None else conv.later.trace
    trace.metadata["calls"] = len(conv.call_ids)
    trace.metadata["call_ids"] = conv.call_ids
    if len(conv.call_ids) == 1:
        return trace
    for idx, reply in conv.replies:
        kept = trace.messages[idx]
        kept.content = reply.content  # as the model gave it, not as the client re-sent it ("" for None, say)
        kept.input_tokens, kept.output_tokens = reply.input_tokens, reply.output_tokens
        kept.latency_ms, kept.ts = reply.latency_ms, reply.ts
    trace.trace_id = conv.trace_id
    trace.ended_at = trace.ended_at or trace.started_at
    trace.started_at = conv.started_at
    return trace


def chain(trace: Trace) -> list[str]:
    """chain[i]: a hash of the tools and the first i messages."""
    calls: dict[int, list[ToolCall]] = {}
    for call in trace.tool_calls:
        calls.setdefault(call.message_idx, []).append(call)
    h = hashlib.sha256(to_json(trace.tools).encode()).digest()
    out = [h.hex()]
    for idx, msg in enumerate(trace.messages):
        key = [msg.role, msg.content or "", msg.tool_call_id,
               [[c.call_id, c.name, to_json(c.arguments)] for c in calls.get(idx, [])]]
        h = hashlib.sha256(h + to_json(key).encode()).digest()
        out.append(h.hex())
    return out
