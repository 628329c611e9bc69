"""Recorded traces read back from the store, in the shape scorers and task generation need."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tracegym.evals.scorers.trajectory import Trajectory

if TYPE_CHECKING:
    from tracegym.evals.scorers.base import StoreReader

_CHUNK = 500  # traces per round trip: bounds memory on large stores


@dataclass(slots=True)
class RecordedCall:
    """One tool call as recorded, with the result that answered it."""

    message_idx: int
    call_id: str | None
    name: str
    arguments: Any
    result: str | None = None
    result_message_idx: int | None = None
    is_error: bool | None = None
    exit_code: int | None = None


@dataclass(slots=True)
class RecordedTrace:
    trace_id: str
    format: str
    session_id: str | None
    outcome: str | None
    metadata: dict[str, Any]
    tools: list[dict[str, Any]] | None
    messages: list[dict[str, Any]] = field(default_factory=list)
    """Store rows: idx, role, content, tool_call_id, name."""
    calls: list[RecordedCall] = field(default_factory=list)

    def openai_messages(self, upto: int | None = None) -> list[dict[str, Any]]:
        """Messages [0, upto) in OpenAI chat form, tool calls attached to their assistant turns."""
        by_msg: dict[int, list[RecordedCall]] = {}
        for call in self.calls:
            by_msg.setdefault(call.message_idx, []).append(call)
        out = []
        for row in self.messages[:upto]:
            out.append(openai_message(row, by_msg.get(row["idx"], [])))
        return out

    def final_answer(self) -> str | None:
        for row in reversed(self.messages):
            if row["role"] == "assistant" and (row["content"] or "").strip():
                return row["content"]
        return None

    def trajectory(self) -> Trajectory:
        """The whole recorded attempt as a scorer sees it."""
        return Trajectory(self.openai_messages(), self.final_answer(), None, self.metadata, self.trace_id)

    def task_key(self) -> str:
        """What the agent was asked to do, so repeated attempts at one task group together.

        τ-bench and SWE-bench style metadata name the task; otherwise the session
        does; a trace without either is its own task.
        """
        for key in ("task_id", "instance_id"):
            if self.metadata.get(key) is not None:
                return f"{self.format}:{key}={self.metadata[key]}"
        return f"{self.format}:session={self.session_id}" if self.session_id else f"trace={self.trace_id}"


def openai_message(row: dict[str, Any], calls: Sequence[RecordedCall]) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": row["role"], "content": row["content"]}
    if row["role"] == "tool":
        msg["tool_call_id"] = row["tool_call_id"]
        msg["name"] = row["name"]
    if calls:
        msg["tool_calls"] = [
            {"id": c.call_id, "type": "function", "function": {
                "name": c.name,
                "arguments": c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments)}}
            for c in calls
        ]
    return msg


def iter_recorded(store: StoreReader, where: str = "TRUE", params: Sequence[Any] = ()) -> Iterator[RecordedTrace]:
    """Traces matching `where` (SQL over `traces`), ordered by trace id, with messages and calls."""
    heads = store.query(
        f"SELECT trace_id, format, session_id, outcome, metadata, tools FROM traces WHERE {where} ORDER BY trace_id",
        list(params),
    )
    for start in range(0, len(heads), _CHUNK):
        chunk = heads[start:start + _CHUNK]
        ids = [h["trace_id"] for h in chunk]
        messages = _grouped(store, "SELECT trace_id, idx, role, content, tool_call_id, name FROM messages "
                                   "WHERE trace_id IN (SELECT unnest(?)) ORDER BY trace_id, idx", ids)
        # rowid keeps several calls of one message in the order they were recorded.
        calls = _grouped(store, "SELECT * FROM tool_calls WHERE trace_id IN (SELECT unnest(?)) "
                                "ORDER BY trace_id, message_idx, rowid", ids)
        for head in chunk:
            tid = head["trace_id"]
            trace = RecordedTrace(tid, head["format"], head["session_id"], head["outcome"],
                                  json_or_text(head["metadata"]) or {}, json_or_text(head["tools"]),
                                  messages.get(tid, []))
            trace.calls = [_call(row) for row in calls.get(tid, [])]
            pair_results(trace)
            yield trace


def _grouped(store: StoreReader, sql: str, ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for row in store.query(sql, [ids]):
        out.setdefault(row.pop("trace_id"), []).append(row)
    return out


def successful_siblings(store: StoreReader, traces: Collection[RecordedTrace]) -> list[str]:
    """The ids of the successful traces, other than `traces`, that attempted the same source tasks (`task_key`)."""
    wanted = {t.task_key() for t in traces}
    own = {t.trace_id for t in traces}
    # task_key reads the metadata in Python: narrow by format and outcome in SQL, then by key on the heads.
    heads = store.query("SELECT trace_id, format, session_id, metadata FROM traces WHERE outcome = 'success' "
                        "AND format IN (SELECT unnest(?))", [sorted({t.format for t in traces})])
    return sorted(h["trace_id"] for h in heads if h["trace_id"] not in own and _head(h).task_key() in wanted)


def findings_by_trace(store: StoreReader, ids: Sequence[str]) -> dict[str, set[int]]:
    """The messages each trace's located findings (of every detector) point at, by trace id."""
    rows = store.query("SELECT trace_id, message_idx FROM failures WHERE trace_id IN (SELECT unnest(?)) "
                       "AND message_idx IS NOT NULL", [list(ids)])
    findings: dict[str, set[int]] = {}
    for row in rows:
        findings.setdefault(row["trace_id"], set()).add(int(row["message_idx"]))
    return findings


def _head(row: dict[str, Any]) -> RecordedTrace:
    """A trace's head row (id, format, session, metadata) as a trace without messages."""
    metadata = json_or_text(row["metadata"])
    return RecordedTrace(row["trace_id"], row["format"], row["session_id"], row.get("outcome"),
                         metadata if isinstance(metadata, dict) else {}, None)


def _call(row: dict[str, Any]) -> RecordedCall:
    return RecordedCall(row["message_idx"], row["call_id"], row["name"], json_or_text(row["arguments"]), row["result"],
                        row["result_message_idx"], row["is_error"], row["exit_code"])


def json_or_text(value: Any) -> Any:
    """A JSON column's value parsed, or the text as it is where it is not JSON."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def pair_results(trace: RecordedTrace) -> None:
    """Attach each tool message to the call it answers: the latest earlier unanswered call with its id.

    Re-pairs from the messages rather than trusting `tool_calls.result`:
    agents reuse call ids within a trace (gpt-4o does in the public τ-bench
    runs), and stores ingested before ingest handled that joined by id alone,
    handing results to the wrong calls.
    """
    pending: list[RecordedCall] = []
    by_msg: dict[int, list[RecordedCall]] = {}
    for call in trace.calls:
        by_msg.setdefault(call.message_idx, []).append(call)
    paired: set[int] = set()
    answered: set[int] = set()
    for row in trace.messages:
        pending.extend(by_msg.get(row["idx"], []))
        if row["role"] != "tool" or not pending:
            continue
        match = next((c for c in reversed(pending) if row["tool_call_id"] and c.call_id == row["tool_call_id"]), None)
        if match is None and row["name"]:
            match = next((c for c in pending if c.name == row["name"]), None)
        if match is None:
            continue
        match.result, match.result_message_idx = row["content"], row["idx"]
        paired.add(id(match))
        answered.add(row["idx"])
        pending.remove(match)
    for call in trace.calls:
        if id(call) not in paired and call.result_message_idx in answered:
            call.result, call.result_message_idx = None, None  # that message answers another call
