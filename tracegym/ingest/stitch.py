"""Logs with one line per API call, stitched into one trace per conversation.

A chat client re-sends the whole conversation on every call, so a log of calls
(request + response per line) holds each conversation many times over, one
partial copy per call. A call whose messages start with everything an earlier
call sent plus the reply it got extends that call's conversation; any other call
(the first, a second conversation, a rewritten or shortened history, other tools)
opens a new one. This is the proxy harness's rule (`Segment.extended_by` in
tracegym/harnesses/proxy_session.py, `same_message` in proxy_openai.py), applied
here to normalized messages so that it reads OpenAI and Anthropic logs alike:
role, text (None and "" alike), the answered call id, and each tool call's id,
name and arguments (compared as parsed JSON, so re-encoding does not matter).

Each conversation becomes the trace of its last call (whose messages hold all
the others'), named by its first call's id, with each earlier reply's text,
tokens and time laid onto the message it became; its metadata is the last
call's (finish reason, usage), plus `calls` and `call_ids` (a conversation of one call too). Prefixes are
compared by a chain of hashes, so a file of N calls costs O(total messages), not O(N^2) comparisons.

A log that grew since its last ingest holds its stored conversations again, some with more calls: a
conversation whose stored calls (`call_ids`) begin the new one's is replaced by it (`grown_calls`), instead
of being reported as a conflict.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa

from tracegym import exact_json
from tracegym.ingest.normalize import to_json
from tracegym.ingest.records import Message, RawRecord, ToolCall, Trace


@dataclass(slots=True)
class Call:
    """One logged API call as a trace of its own: the request's messages, then the reply (if any)."""

    trace: Trace
    prompt: int
    """How many of `trace.messages` the request sent; the rest is the reply."""


@dataclass
class _Conversation:
    trace_id: str
    latest: Call
    record: RawRecord
    started_at: object
    replies: list[tuple[int, Message]] = field(default_factory=list)
    call_ids: list[str] = field(default_factory=list)
    tip: str = ""


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
        self.by_tip: dict[str, list[_Conversation]] = {}
        self.seen: set[str] = set()

    def add(self, call: Call, record: RawRecord) -> str:
        """Take one call: 'new' when it opens a conversation, 'extended' when it goes on with one, 'duplicate'
        when it extends nothing and its id was seen before in this file (a repeated line)."""
        trace = call.trace
        chain = _chain(trace)
        conv = self._extended(chain, call.prompt)
        if conv is None and trace.trace_id in self.seen:
            return "duplicate"
        self.seen.add(trace.trace_id)
        status = "new" if conv is None else "extended"
        if conv is None:
            conv = _Conversation(trace.trace_id, call, record, trace.started_at)
            self.open.append(conv)
        else:
            self.by_tip[conv.tip].remove(conv)
            previous = conv.latest
            if len(previous.trace.messages) > previous.prompt:
                conv.replies.append((previous.prompt, previous.trace.messages[previous.prompt]))
            conv.latest, conv.record = call, record
        conv.call_ids.append(trace.trace_id)
        conv.tip = chain[-1]
        self.by_tip.setdefault(conv.tip, []).append(conv)
        return status

    def _extended(self, chain: list[str], prompt: int) -> _Conversation | None:
        """The open conversation whose messages (with its last reply) the longest prefix of the prompt is."""
        for n in range(prompt, 0, -1):
            waiting = self.by_tip.get(chain[n])
            if waiting:
                return waiting[0]  # of two identical conversations, the older one goes on first
        return None

    def conversations(self) -> Iterator[tuple[Trace, RawRecord]]:
        for conv in self.open:
            yield _stitched(conv), conv.record


def _stitched(conv: _Conversation) -> Trace:
    trace = conv.latest.trace
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


def _chain(trace: Trace) -> list[str]:
    """chain[i]: a hash of the tools and the first i messages."""
    calls: dict[int, list[ToolCall]] = {}
    for call in trace.tool_calls:
        calls.setdefault(call.message_idx, []).append(call)
    h = hashlib.sha256(to_json(trace.tools).encode()).digest()
    chain = [h.hex()]
    for idx, msg in enumerate(trace.messages):
        key = [msg.role, msg.content or "", msg.tool_call_id,
               [[c.call_id, c.name, to_json(c.arguments)] for c in calls.get(idx, [])]]
        h = hashlib.sha256(h + to_json(key).encode()).digest()
        chain.append(h.hex())
    return chain


def grown_calls(con: duckdb.DuckDBPyConnection, traces: list[Trace]) -> set[str]:
    """The ids of `traces` (stitched conversations) stored with fewer calls: the stored calls are the first of
    the new trace's, and its messages (compared as calls are) begin the new trace's, so it is the same
    conversation, logged further since."""
    new = {t.trace_id: t for t in traces}
    staged_ids = pa.table({"trace_id": pa.array(list(new), pa.string())})  # noqa: F841 - read by name in SQL
    rows = con.execute("SELECT trace_id, metadata->'call_ids' FROM traces SEMI JOIN staged_ids USING (trace_id) "
                       "WHERE (metadata->'call_ids') IS NOT NULL").fetchall()
    grown = set()
    for tid, stored in rows:
        before, after = exact_json.loads(stored), new[tid].metadata.get("call_ids") or []
        if not (isinstance(before, list) and len(before) < len(after) and after[:len(before)] == before):
            continue
        old = _stored(con, tid)
        chain = _chain(new[tid])
        if len(old.messages) < len(chain) and _chain(old)[-1] == chain[len(old.messages)]:
            grown.add(tid)
    return grown


def _stored(con: duckdb.DuckDBPyConnection, trace_id: str) -> Trace:
    """What `_chain` reads of a stored trace: its tools, messages and tool calls."""
    (tools,) = con.execute("SELECT tools FROM traces WHERE trace_id = ?", [trace_id]).fetchone()
    trace = Trace(trace_id, "", tools=exact_json.loads(tools) if tools is not None else None)
    for role, content, call_id in con.execute("SELECT role, content, tool_call_id FROM messages "
                                              "WHERE trace_id = ? ORDER BY idx", [trace_id]).fetchall():
        trace.messages.append(Message(role, content, call_id))
    for idx, call_id, name, arguments in con.execute(
            "SELECT message_idx, call_id, name, arguments FROM tool_calls WHERE trace_id = ? "
            "ORDER BY message_idx, rowid", [trace_id]).fetchall():
        trace.tool_calls.append(ToolCall(idx, call_id, name, exact_json.loads(arguments) if arguments else None))
    return trace
