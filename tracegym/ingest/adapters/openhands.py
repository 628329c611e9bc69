"""OpenHands event streams: a saved trajectory (a JSON list of events), or eval output JSONL.

Schema: All-Hands-AI/OpenHands `openhands/events/serialization/event.py`,
`openhands/events/tool.py`, `evaluation/utils/shared.py` (EvalOutput). An event
has `id`, `timestamp`, `source` (user/agent/environment) and either `action` +
`args` or `observation` + `content` + `extras`; an observation's `cause` is the
id of the action it answers, and agent actions carry `tool_call_metadata`
(`function_name`, `tool_call_id`, the `model_response` that made the call).

Representation: user and agent `message` actions become user/assistant messages;
the `system` action becomes the system message; every other agent action becomes
an assistant message with one tool call (several actions from one model response
share one message, as the model produced them in one turn). An observation that
answers a call (by `tool_call_metadata.tool_call_id` or `cause`) becomes a `tool`
message linked by tool_call_id; `observation: "error"`, `success: false` and
`extras.metadata.exit_code` ≠ 0 mark the call as an error. Agent-state changes
and empty ("null") observations are bookkeeping and are skipped (counted in
metadata); any other observation that answers no call is environment feedback
and stays a user message. The file has no outcome, so it is NULL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tracegym.ingest.adapters.base import Adapter, SourceFile, require
from tracegym.ingest.normalize import content_text, opt_int, parse_arguments, parse_ts
from tracegym.ingest.reading import Sample, iter_jsonl, whole_document
from tracegym.ingest.records import BadRecord, Message, RawRecord, ToolCall, Trace

SKIPPED_ACTIONS = {"change_agent_state", "null"}
SKIPPED_OBSERVATIONS = {"agent_state_changed", "null"}
_EVENT_LIST_HEAD = re.compile(rb'^\s*\[\s*\{[^\n]*"(id|timestamp|source)"')
# Bookkeeping fields of action args that are not the tool's arguments.
_ARG_NOISE = {"thought", "blocking", "hidden", "confirmation_state", "is_input", "security_risk", "wait_for_response"}


def _is_event(value: Any) -> bool:
    return isinstance(value, dict) and "source" in value and ("action" in value or "observation" in value)


class OpenHandsAdapter(Adapter):
    name = "openhands"
    description = "OpenHands event streams (JSON list of action/observation events, or eval output.jsonl with history)"

    def sniff(self, sample: Sample) -> bool:
        first = sample.first
        if _is_event(first):
            return True
        if isinstance(first, dict) and isinstance(first.get("history"), list) and first["history"]:
            return _is_event(first["history"][0])
        # A truncated or corrupt event list still comes here, so its error says what broke.
        return first is None and bool(_EVENT_LIST_HEAD.match(sample.head)) and b'"observation"' in sample.head

    def records(self, src: SourceFile) -> Iterator[RawRecord | BadRecord]:
        """Eval output: one record per line. A saved trajectory: the whole event list is one record."""
        if src.sample.jsonl:
            yield from iter_jsonl(src.path)
            return
        yield whole_document(src.path)

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        value = record.value
        if isinstance(value, list):
            trace = Trace(trace_id=f"openhands:{src.path.stem}", format=self.name, session_id=src.path.stem)
            _Stream(trace).read(value)
        else:
            events = require(value, "history", list)
            instance_id = str(require(value, "instance_id", (str, int)))
            trace = Trace(trace_id="", format=self.name, session_id=instance_id, metadata=_eval_metadata(value))
            _Stream(trace).read(events)
            # An eval output file may hold runs of several models on the same instances.
            trace.trace_id = f"openhands:{trace.model}:{instance_id}" if trace.model else f"openhands:{instance_id}"
        yield trace


def _eval_metadata(output: dict[str, Any]) -> dict[str, Any]:
    return {k: output.get(k) for k in ("instance_id", "test_result", "metrics", "error", "instruction")
            if output.get(k) is not None}


@dataclass
class _Stream:
    """Folds events into the trace, remembering which event made which call."""

    trace: Trace
    by_event: dict[int, ToolCall] = field(default_factory=dict)
    by_call_id: dict[str, ToolCall] = field(default_factory=dict)
    response_msg: dict[str, int] = field(default_factory=dict)  # model_response.id -> assistant message idx
    skipped: int = 0

    def read(self, events: list[Any]) -> None:
        for i, event in enumerate(events):
            where = f"$[{i}]"
            if not isinstance(event, dict):
                raise ValueError(f"{where} must be an object, got {type(event).__name__}")
            if "action" in event:
                self._action(event, where)
            elif "observation" in event:
                self._observation(event, where)
            else:
                self.skipped += 1
        times = [m.ts for m in self.trace.messages if m.ts is not None]
        if times:
            self.trace.started_at, self.trace.ended_at = min(times), max(times)
        self.trace.metadata["skipped_events"] = self.skipped

    def _action(self, event: dict[str, Any], where: str) -> None:
        kind = require(event, "action", str, where)
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        ts = parse_ts(event.get("timestamp"))
        if kind in SKIPPED_ACTIONS:
            self.skipped += 1
        elif kind == "system":
            self._append(Message("system", _text(args.get("content"), event.get("message")), ts=ts))
        elif kind == "message" and not event.get("tool_call_metadata"):
            role = "user" if event.get("source") == "user" else "assistant"
            self._append(Message(role, _text(args.get("content"), event.get("message")), ts=ts))
        else:
            self._tool_action(event, kind, args, ts, where)

    def _tool_action(self, event: dict[str, Any], kind: str, args: dict[str, Any], ts: Any, where: str) -> None:
        meta = event.get("tool_call_metadata")
        if meta is not None and not isinstance(meta, dict):
            raise ValueError(f"{where}.tool_call_metadata must be an object, got {type(meta).__name__}")
        meta = meta or {}
        response = meta.get("model_response") if isinstance(meta.get("model_response"), dict) else {}
        idx = self._assistant_turn(response, args, event, ts)
        call_id = meta.get("tool_call_id")
        call = ToolCall(
            message_idx=idx,
            call_id=call_id if isinstance(call_id, str) and call_id else f"event-{event.get('id')}",
            name=meta.get("function_name") if isinstance(meta.get("function_name"), str) else kind,
            arguments=_call_arguments(response, call_id, args),
        )
        self.trace.tool_calls.append(call)
        self.by_call_id[call.call_id] = call
        if isinstance(event.get("id"), int):
            self.by_event[event["id"]] = call

    def _assistant_turn(self, response: dict[str, Any], args: dict[str, Any], event: dict[str, Any], ts: Any) -> int:
        """The assistant message for this model response, created on its first action."""
        response_id = response.get("id")
        if isinstance(response_id, str) and response_id in self.response_msg:
            return self.response_msg[response_id]
        message = _response_message(response)
        content = _text(message.get("content"), args.get("thought") or event.get("message"))
        msg = Message("assistant", content, ts=ts)
        usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
        msg.input_tokens = opt_int(usage.get("prompt_tokens"))
        msg.output_tokens = opt_int(usage.get("completion_tokens"))
        if self.trace.model is None and isinstance(response.get("model"), str):
            self.trace.model = response["model"]
        idx = self._append(msg)
        if isinstance(response_id, str):
            self.response_msg[response_id] = idx
        return idx

    def _observation(self, event: dict[str, Any], where: str) -> None:
        kind = require(event, "observation", str, where)
        if kind in SKIPPED_OBSERVATIONS:
            self.skipped += 1
            return
        ts = parse_ts(event.get("timestamp"))
        call = self._answered_call(event)
        if call is None or call.result_message_idx is not None:
            self._append(Message("user", _text(event.get("content"), event.get("message")), ts=ts))
            return
        # A result keeps the tool's own output, even when empty; `message` is only the UI's summary of it.
        content = content_text(event.get("content")) if "content" in event else _text(None, event.get("message"))
        call.result_message_idx = self._append(
            Message("tool", content, tool_call_id=call.call_id, name=call.name, ts=ts))
        call.result = content
        extras = event.get("extras") if isinstance(event.get("extras"), dict) else {}
        metadata = extras.get("metadata") if isinstance(extras.get("metadata"), dict) else {}
        call.exit_code = opt_int(metadata.get("exit_code"))
        call.is_error = kind == "error" or event.get("success") is False or call.exit_code not in (None, 0)

    def _answered_call(self, event: dict[str, Any]) -> ToolCall | None:
        meta = event.get("tool_call_metadata") if isinstance(event.get("tool_call_metadata"), dict) else {}
        call_id = meta.get("tool_call_id")
        if isinstance(call_id, str) and call_id in self.by_call_id:
            return self.by_call_id[call_id]
        cause = event.get("cause")
        return self.by_event.get(cause) if isinstance(cause, int) and not isinstance(cause, bool) else None

    def _append(self, msg: Message) -> int:
        self.trace.messages.append(msg)
        return len(self.trace.messages) - 1


def _response_message(response: dict[str, Any]) -> dict[str, Any]:
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict):
            return message
    return {}


def _call_arguments(response: dict[str, Any], call_id: Any, args: dict[str, Any]) -> Any:
    """The arguments the model sent (from its response), else the action's args without bookkeeping."""
    for call in _response_message(response).get("tool_calls") or []:
        if isinstance(call, dict) and call.get("id") == call_id and isinstance(call.get("function"), dict):
            return parse_arguments(call["function"].get("arguments"))
    return {k: v for k, v in args.items() if k not in _ARG_NOISE}


def _text(primary: Any, fallback: Any) -> str | None:
    text = content_text(primary)
    if text:
        return text
    return content_text(fallback) if isinstance(fallback, (str, list)) else text

