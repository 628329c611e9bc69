"""OpenAI Responses API logs: `Response` objects, request/response pairs, item lists.

Schema: openai/openai-python `src/openai/types/responses/` (`response.py`,
`response_function_tool_call.py`, `response_input_item_param.py`,
`response_usage.py`, `response_output_message.py`, `response_reasoning_item.py`,
`response_status.py`).

A record is a `Response` (`object: "response"`), a logged call
`{request: {model, input, instructions, tools, ...}, response: Response}`, or a
conversation's item list (`{input: [...]}`, a JSONL line that is an array, or a
JSON document that is one). Items become messages in order: `message` items as
they are, `function_call` items as calls on an assistant turn (consecutive
calls share one), `function_call_output` as tool messages joined on `call_id`,
`mcp_call` as a call with its output. Reasoning and hosted-tool items are
counted in metadata. Each Response is one trace; `previous_response_id` and the
conversation id are kept so a chain can be followed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from tracegym.ingest.adapters.base import Adapter, SourceFile, require
from tracegym.ingest.adapters.openai_chat import derived_id
from tracegym.ingest.normalize import content_text, normalize_role, opt_int, parse_arguments, parse_ts
from tracegym.ingest.reading import Sample, raw_text
from tracegym.ingest.records import BadRecord, Message, RawRecord, ToolCall, Trace

FORMAT = "openai-responses"
CALL_ITEMS = {"function_call", "custom_tool_call"}
OUTPUT_ITEMS = {"function_call_output", "custom_tool_call_output"}
ITEM_TYPES = {"message", "reasoning", "mcp_call", "item_reference"} | CALL_ITEMS | OUTPUT_ITEMS
RESPONSE_KEYS = ("status", "error", "incomplete_details", "previous_response_id", "usage")


class OpenAIResponsesAdapter(Adapter):
    name = FORMAT
    description = "OpenAI Responses API logs (Response objects, request/response pairs, item lists)"

    def sniff(self, sample: Sample) -> bool:
        first = sample.first
        if isinstance(first, list):
            return _is_item_list(first)
        if not isinstance(first, dict):
            return False
        if not sample.jsonl and _is_item(first):
            return True
        response = first.get("response", first)
        if isinstance(response, dict) and response.get("object") == "response":
            return True
        request = first.get("request", first)
        return isinstance(request, dict) and _is_item_list(request.get("input"))

    def records(self, src: SourceFile) -> Iterator[RawRecord | BadRecord]:
        if src.sample.jsonl or not _is_item(src.sample.first):
            yield from super().records(src)
            return
        items: list[Any] = []
        for item in super().records(src):
            if isinstance(item, BadRecord):
                error = f"{item.error} (at {item.locator}); the item list is incomplete"
                yield BadRecord("$", error, raw_text(src.path.read_bytes()))
                return
            items.append(item.value)
        yield RawRecord("$", items)

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        rec = record.value
        if isinstance(rec, list):
            rec = {"input": rec}
        if not isinstance(rec, dict):
            raise ValueError(f"expected an object or an item list, got {type(rec).__name__}")
        response = rec.get("response")
        request = rec.get("request", rec)
        if response is None and rec.get("object") == "response":
            request, response = {}, rec
        if not isinstance(request, dict) or (response is not None and not isinstance(response, dict)):
            raise ValueError("request and response must be objects")
        trace = Trace(trace_id=_trace_id(rec, response), format=FORMAT)
        builder = _Builder(trace)
        instructions = (response or {}).get("instructions") or request.get("instructions")
        if isinstance(instructions, str):
            builder.add_message("system", instructions)
        request_input = request.get("input")
        if isinstance(request_input, str):
            builder.add_message("user", request_input)
        elif request_input is not None:
            builder.add_items(request_input, "input")
        if response is not None:
            _add_response(builder, response)
        model = (response or {}).get("model") or request.get("model")
        trace.model = model if isinstance(model, str) else None
        tools = (response or {}).get("tools") or request.get("tools")
        trace.tools = tools if isinstance(tools, list) else None
        trace.session_id = _conversation_id(response) or _conversation_id(request)
        if builder.skipped:
            trace.metadata["skipped_items"] = dict(builder.skipped)
        yield trace


class _Builder:
    """Turns Responses items into normalized messages and calls."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.skipped: Counter[str] = Counter()
        self._call_turn: int | None = None  # the assistant message that consecutive calls attach to

    def add_message(self, role: str, content: str | None) -> Message:
        msg = Message(role=role, content=content)
        self.trace.messages.append(msg)
        self._call_turn = len(self.trace.messages) - 1 if role == "assistant" else None
        return msg

    def add_items(self, items: Any, where: str) -> None:
        if not isinstance(items, list):
            raise ValueError(f"{where} must be a list of items, got {type(items).__name__}")
        for i, item in enumerate(items):
            self.add_item(item, f"{where}[{i}]")

    def add_item(self, item: Any, where: str) -> None:
        if not isinstance(item, dict):
            raise ValueError(f"{where} must be an object, got {type(item).__name__}")
        kind = item.get("type", "message")  # EasyInputMessage may leave out its type
        if kind == "message":
            self.add_message(normalize_role(item.get("role")), content_text(item.get("content")))
        elif kind in CALL_ITEMS:
            self._add_call(item, where)
        elif kind in OUTPUT_ITEMS:
            call_id = require(item, "call_id", str, where)
            self.add_message("tool", content_text(item.get("output"))).tool_call_id = call_id
        elif kind == "mcp_call":
            call = self._add_call({**item, "call_id": item.get("id")}, where)
            text = item.get("output") if item.get("error") is None else item.get("error")
            self.add_message("tool", content_text(text)).tool_call_id = call.call_id
            call.is_error = item.get("error") is not None
        else:
            self.skipped[str(kind)] += 1

    def _add_call(self, item: dict[str, Any], where: str) -> ToolCall:
        if self._call_turn is None:
            self.add_message("assistant", None)
        call = ToolCall(
            message_idx=self._call_turn,
            call_id=require(item, "call_id", str, where),
            name=require(item, "name", str, where),
            arguments=parse_arguments(item.get("arguments", item.get("input"))),
        )
        self.trace.tool_calls.append(call)
        return call


def _add_response(builder: _Builder, response: dict[str, Any]) -> None:
    trace = builder.trace
    start = len(trace.messages)
    builder.add_items(response.get("output") or [], "response.output")
    trace.started_at = parse_ts(response.get("created_at"))
    trace.ended_at = parse_ts(response.get("completed_at"))
    last = next((m for m in reversed(trace.messages[start:]) if m.role == "assistant"), None)
    usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
    if last is not None:
        last.input_tokens = opt_int(usage.get("input_tokens"))
        last.output_tokens = opt_int(usage.get("output_tokens"))
        last.ts = trace.started_at
        if trace.started_at and trace.ended_at:
            last.latency_ms = (trace.ended_at - trace.started_at).total_seconds() * 1000
    trace.metadata["response_id"] = response.get("id")
    for key in RESPONSE_KEYS:
        if response.get(key) is not None:
            trace.metadata[key] = response[key]


def _trace_id(rec: dict[str, Any], response: dict[str, Any] | None) -> str:
    for value in (rec.get("id"), (response or {}).get("id")):
        if isinstance(value, str) and value:
            return value
    return derived_id(rec, FORMAT)


def _conversation_id(obj: dict[str, Any] | None) -> str | None:
    conv = (obj or {}).get("conversation")
    if isinstance(conv, dict):
        conv = conv.get("id")
    return conv if isinstance(conv, str) and conv else None


def _is_item(value: Any) -> bool:
    if not isinstance(value, dict) or value.get("type") not in ITEM_TYPES:
        return False
    # An Anthropic Message is also `type: "message"`; it carries stop_reason, an item does not.
    return value["type"] != "message" or (isinstance(value.get("content"), (list, str)) and "stop_reason" not in value)


def _is_item_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and any(_is_item(v) for v in value[:5]) and all(
        isinstance(v, dict) for v in value[:5]
    )
