"""Anthropic Messages logs: conversations with content blocks, request/response pairs, bare Messages.

Schema: anthropics/anthropic-sdk-python `src/anthropic/types/` (`message.py`,
`tool_use_block.py`, `tool_result_block_param.py`, `usage.py`,
`stop_reason.py`, `metadata_param.py`; the request is `MessageCreateParams`).

A record is a conversation `{system?, messages, model?, id?, tools?, metadata?}`,
a logged call `{request: MessageCreateParams, response: Message}` (or a
conversation with a `response` beside its `messages`), or a bare `Message`
(`type: "message"`). Assistant `tool_use` blocks become tool calls; each
`tool_result` block in a user turn becomes a tool message answering the call
with that `tool_use_id`, and `is_error: true` marks the call failed. Thinking
blocks are counted in metadata, not copied into the text. The app's own fields
beside the request (session id, time, latency, user) are read by
tracegym/ingest/adapters/log_line.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tracegym.ingest.adapters.base import Adapter, SourceFile, require
from tracegym.ingest.adapters.log_line import LineFields, read_line, session_key
from tracegym.ingest.adapters.openai_chat import derived_id
from tracegym.ingest.field_paths import Path
from tracegym.ingest.normalize import content_text, normalize_role, opt_int, to_json
from tracegym.ingest.reading import Sample
from tracegym.ingest.records import Message, RawRecord, ToolCall, Trace
from tracegym.ingest.stitch import Call, is_logged_call

FORMAT = "anthropic-messages"
# Block types only Anthropic has; text blocks look the same in both APIs.
ANTHROPIC_BLOCKS = {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use"}
THINKING = {"thinking", "redacted_thinking"}
PLACEHOLDER_BLOCKS = {"image", "document"}  # their payload is base64 or a URL: keep a marker, not the bytes
RESPONSE_KEYS = ("stop_reason", "stop_sequence", "usage")
PROMPT_USAGE = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


class AnthropicAdapter(Adapter):
    name = FORMAT
    description = "Anthropic Messages logs (content blocks, tool_use/tool_result, request/response pairs)"

    def sniff(self, sample: Sample) -> bool:
        first = sample.first
        if not isinstance(first, dict):
            return False
        if _is_message_response(first) or _is_message_response(first.get("response")):
            return True
        request = first.get("request", first)
        if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
            return False
        messages = request["messages"]
        return _has_anthropic_blocks(messages) or ("system" in request and not _has_openai_calls(messages))

    def check_options(self, options: dict[str, Any]) -> None:
        session_key(options.get("session_key"))

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        yield _call(record.value, session_key(src.options.get("session_key"))).trace

    def call_of(self, record: RawRecord, src: SourceFile) -> Call | None:
        if not is_logged_call(record.value):
            return None
        return _call(record.value, session_key(src.options.get("session_key")))


def _call(rec: Any, key: Path | None = None) -> Call:
    """One logged conversation or call; `prompt` counts the messages the request sent."""
    if not isinstance(rec, dict):
        raise ValueError(f"expected an object, got {type(rec).__name__}")
    request = rec.get("request", rec)
    response = rec.get("response")
    if response is None and _is_message_response(rec):
        request, response = {}, rec
    if not isinstance(request, dict) or (response is not None and not isinstance(response, dict)):
        raise ValueError("request and response must be objects")
    trace = Trace(trace_id=_trace_id(rec, response), format=FORMAT, metadata={})
    model = (response or {}).get("model") or request.get("model")
    trace.model = model if isinstance(model, str) else None
    if isinstance(request.get("tools"), list):
        trace.tools = request["tools"]
    request_metadata = request.get("metadata") if isinstance(request.get("metadata"), dict) else None
    if request_metadata is not None:
        trace.metadata["metadata"] = request_metadata
    line = read_line(rec, key, request_metadata)
    trace.session_id = line.session_id
    trace.metadata.update(line.metadata)
    builder = _Builder(trace)
    if request.get("system") is not None:
        builder.add_text_message("system", _block_text(request["system"]))
    messages = request.get("messages", [] if response is not None else None)
    if not isinstance(messages, list):
        raise ValueError(f"messages must be a list, got {type(messages).__name__}")
    for i, msg in enumerate(messages):
        builder.add(msg, f"messages[{i}]")
    prompt = len(trace.messages)
    reply = _add_response(builder, response) if response is not None else None
    _place_line(trace, reply, line)
    if builder.thinking:
        trace.metadata["thinking_blocks"] = builder.thinking
    return Call(trace, prompt)


class _Builder:
    """Turns Anthropic turns into normalized messages, remembering calls by id."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.calls: dict[str, ToolCall] = {}
        self.thinking = 0

    def add_text_message(self, role: str, text: str | None) -> Message:
        msg = Message(role=role, content=text)
        self.trace.messages.append(msg)
        return msg

    def add(self, raw: Any, where: str) -> Message | None:
        role = normalize_role(require(raw, "role", str, where))
        if "tool_calls" in raw:  # an OpenAI-style turn: its calls would be lost here, so refuse it loudly
            raise ValueError(f"{where} has OpenAI-style tool_calls; read this log with --format openai-chat")
        content = raw.get("content")
        if isinstance(content, str) or content is None:
            return self.add_text_message(role, content)
        if not isinstance(content, list):
            raise ValueError(f"{where}.content must be a string or a list of blocks")
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        for j, block in enumerate(results):
            self._add_result(block, f"{where}.content[{j}]")
        rest = [b for b in content if not (isinstance(b, dict) and b.get("type") == "tool_result")]
        if results and not rest:
            return None
        msg = self.add_text_message(role, self._text(rest))
        idx = len(self.trace.messages) - 1
        for j, block in enumerate(rest):
            if isinstance(block, dict) and block.get("type") in ("tool_use", "server_tool_use"):
                self._add_call(block, idx, f"{where}.content[{j}]")
        return msg

    def _text(self, blocks: list[Any]) -> str | None:
        parts = []
        for block in blocks:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind in THINKING:
                self.thinking += 1
            elif kind in PLACEHOLDER_BLOCKS:
                parts.append(f"[{kind}]")
            elif kind not in ("tool_use", "server_tool_use"):
                parts.append(_block_text([block]))
        return "\n".join(p for p in parts if p) if parts else None

    def _add_call(self, block: dict[str, Any], idx: int, where: str) -> None:
        name = require(block, "name", str, where)
        call = ToolCall(message_idx=idx, call_id=require(block, "id", str, where), name=name,
                        arguments=block.get("input", {}))
        self.trace.tool_calls.append(call)
        self.calls[call.call_id] = call

    def _add_result(self, block: dict[str, Any], where: str) -> None:
        call_id = require(block, "tool_use_id", str, where)
        content = block.get("content")
        text = content if isinstance(content, str) or content is None else self._text(content)
        self.trace.messages.append(Message(role="tool", content=text, tool_call_id=call_id))
        is_error = block.get("is_error")
        if is_error is not None and not isinstance(is_error, bool):
            raise ValueError(f"{where}.is_error must be a boolean")
        if is_error and call_id in self.calls:
            self.calls[call_id].is_error = True


def _place_line(trace: Trace, reply: Message | None, line: LineFields) -> None:
    """The line's time and latency go onto the reply (the trace starts then); without one, latency to metadata."""
    trace.started_at = line.ts
    if reply is not None:
        reply.ts, reply.latency_ms = line.ts, line.latency_ms
    elif line.latency_ms is not None:
        trace.metadata["latency_ms"] = line.latency_ms


def _add_response(builder: _Builder, response: dict[str, Any]) -> Message | None:
    """The reply's message (None for an error response, or a reply of tool results only)."""
    trace = builder.trace
    if isinstance(response.get("error"), dict):
        trace.metadata["error"] = response["error"]
        return None
    msg = builder.add({"role": response.get("role", "assistant"), "content": response.get("content")}, "response")
    usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
    if msg is not None and usage:
        # Anthropic's input_tokens leave out cached tokens; the prompt is all three together.
        parts = [opt_int(usage.get(k)) for k in PROMPT_USAGE]
        msg.input_tokens = sum(p for p in parts if p is not None) if parts[0] is not None else None
        msg.output_tokens = opt_int(usage.get("output_tokens"))
    trace.metadata["response_id"] = response.get("id")
    for key in RESPONSE_KEYS:
        if response.get(key) is not None:
            trace.metadata[key] = response[key]
    return msg


def _trace_id(rec: dict[str, Any], response: dict[str, Any] | None) -> str:
    for value in (rec.get("id"), (response or {}).get("id")):
        if isinstance(value, str) and value:
            return value
    return derived_id(rec, FORMAT)


def _block_text(blocks: Any) -> str | None:
    """System prompts and tool results: a string, or text blocks (other blocks as JSON)."""
    if isinstance(blocks, list):
        return "\n".join(b["text"] if isinstance(b, dict) and isinstance(b.get("text"), str) else to_json(b)
                         for b in blocks)
    return content_text(blocks)


def _is_message_response(value: Any) -> bool:
    return (
        isinstance(value, dict) and value.get("type") == "message" and isinstance(value.get("content"), list)
        and ("stop_reason" in value or "usage" in value)
    )


def _has_openai_calls(messages: list[Any]) -> bool:
    return any(isinstance(m, dict) and ("tool_calls" in m or "tool_call_id" in m) for m in messages[:50])


def _has_anthropic_blocks(messages: list[Any]) -> bool:
    for msg in messages[:20]:
        content = msg.get("content") if isinstance(msg, dict) else None
        blocks = content if isinstance(content, list) else []
        if any(isinstance(b, dict) and b.get("type") in ANTHROPIC_BLOCKS for b in blocks):
            return True
    return False
