"""OpenAI Chat Completions logs: conversations, request/response pairs, bare message lists.

Schema: openai/openai-python `src/openai/types/chat/` (`chat_completion.py`,
`chat_completion_message.py`, `chat_completion_message_param.py`,
`completion_create_params.py`) and `types/completion_usage.py`.

A record is one of:
- a conversation `{messages, id?, model?, tools?, metadata?, user?}` (the
  request body, or a fine-tuning line, with an optional id from the logger);
- a logged call `{request: {model, messages, tools, ...}, response: ChatCompletion}`,
  or a conversation with a `response` beside its `messages` (proxy logs);
- a bare `ChatCompletion` (`object: "chat.completion"`);
- a bare message list (a JSONL line that is an array, or a JSON document that is one).
The API has no trace id: the logger's `id`, else the completion's `id`, else a
hash of the record names the trace. Only `choices[0]` joins the conversation.
The app's own fields beside the request (session id, time, latency, user) are
read by tracegym/ingest/adapters/log_line.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

import duckdb

from tracegym.ingest.adapters.base import Adapter, FileSink, SourceFile
from tracegym.ingest.adapters.chat_messages import append_openai_message, append_openai_messages
from tracegym.ingest.adapters.log_line import LineFields, read_line, session_key
from tracegym.ingest.field_paths import Path
from tracegym.ingest.normalize import opt_int, parse_ts, to_json
from tracegym.ingest.reading import Sample, raw_text
from tracegym.ingest.records import BadRecord, RawRecord, Trace
from tracegym.ingest.stitch import Call, is_logged_call

FORMAT = "openai-chat"
RESPONSE_KEYS = ("system_fingerprint", "service_tier")


class OpenAIChatAdapter(Adapter):
    name = FORMAT
    description = "OpenAI Chat Completions logs (conversations, request/response pairs, message lists)"

    def sniff(self, sample: Sample) -> bool:
        first = sample.first
        if isinstance(first, list):
            return _is_message_list(first)
        if not isinstance(first, dict):
            return False
        if not sample.jsonl and _is_message(first):
            return True  # a JSON document that is one bare message list
        return _is_chat_record(first)

    def records(self, src: SourceFile) -> Iterator[RawRecord | BadRecord]:
        if not src.sample.jsonl and _is_message(src.sample.first):
            yield from _whole_document(src, super().records(src))
            return
        yield from super().records(src)

    def check_options(self, options: dict[str, Any]) -> None:
        session_key(options.get("session_key"))

    def bulk_load(self, con: duckdb.DuckDBPyConnection, src: SourceFile, sink: FileSink) -> bool:
        """JSONL goes through DuckDB (see openai_chat_sql); a JSON document is read record by record, and so is
        a log whose session key lies inside the messages."""
        key = session_key(src.options.get("session_key"))
        if not src.sample.jsonl or (key is not None and key[0] == "messages"):
            return False
        from tracegym.ingest.adapters.openai_chat_sql import load_chat_jsonl

        load_chat_jsonl(src, sink)
        return True

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        value = record.value
        if isinstance(value, list):
            trace = Trace(trace_id=derived_id(value), format=FORMAT)
            append_openai_messages(trace, value)
            yield trace
            return
        if not isinstance(value, dict):
            raise ValueError(f"expected an object or a message list, got {type(value).__name__}")
        yield _call(value, session_key(src.options.get("session_key"))).trace

    def call_of(self, record: RawRecord, src: SourceFile) -> Call | None:
        if not is_logged_call(record.value):
            return None
        return _call(record.value, session_key(src.options.get("session_key")))


def _call(rec: dict[str, Any], key: Path | None = None) -> Call:
    request = rec.get("request", rec)
    if not isinstance(request, dict):
        raise ValueError(f"request must be an object, got {type(request).__name__}")
    response = rec.get("response")
    if response is None and rec.get("object") == "chat.completion":
        response, request = rec, {}
    if response is not None and not isinstance(response, dict):
        raise ValueError(f"response must be an object, got {type(response).__name__}")
    metadata, line = line_metadata(rec, request, key)
    trace = Trace(trace_id=_trace_id(rec, response), format=FORMAT, metadata=metadata, session_id=line.session_id)
    trace.model = _opt_str(request.get("model"), "model")
    tools = request.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise ValueError(f"tools must be a list, got {type(tools).__name__}")
        trace.tools = tools
    if "messages" in request or response is None:
        append_openai_messages(trace, request.get("messages"), "messages")
    prompt = len(trace.messages)
    if response is None or not _add_response(trace, response, line):
        trace.started_at = unanswered(trace.metadata, line)
    return Call(trace, prompt)


def _trace_id(rec: dict[str, Any], response: dict[str, Any] | None) -> str:
    for value in (rec.get("id"), (response or {}).get("id")):
        if isinstance(value, str) and value:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return derived_id(rec)


def derived_id(value: Any, fmt: str = FORMAT) -> str:
    """An id from the content itself, for logs that carry none: the same record, the same id."""
    return f"{fmt}:{hashlib.sha256(to_json(value).encode()).hexdigest()[:24]}"


def request_metadata(request: dict[str, Any]) -> dict[str, Any]:
    metadata = request.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise ValueError(f"metadata must be an object, got {type(metadata).__name__}")
    out = dict(metadata or {})
    if request.get("user") is not None:
        out["user"] = request["user"]
    return out


def line_metadata(line: dict[str, Any], request: dict[str, Any], key: Path | None) -> tuple[dict[str, Any], LineFields]:
    """The trace's metadata (the request's, the user id and unreadable fields of the line) and the line's fields."""
    metadata = request_metadata(request)
    fields = read_line(line, key, metadata)
    metadata.update(fields.metadata)
    return metadata, fields


def unanswered(metadata: dict[str, Any], line: LineFields) -> datetime | None:
    """For a conversation with no reply to carry them: the line's latency goes to the metadata, its time is the
    trace's start (returned)."""
    if line.latency_ms is not None:
        metadata["latency_ms"] = line.latency_ms
    return line.ts


def _add_response(trace: Trace, response: dict[str, Any], line: LineFields) -> bool:
    """Append `choices[0].message`, with the call's usage, time (the line's, else `created`) and latency, and
    keep what else it says; False for an error response, which has no message."""
    if isinstance(response.get("error"), dict):
        trace.metadata["error"] = response["error"]
        return False
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("response.choices must be a non-empty list of objects")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ValueError("response.choices[0].message must be an object")
    msg = append_openai_message(trace, {"role": "assistant", **message}, "response.choices[0].message")
    usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
    msg.input_tokens = opt_int(usage.get("prompt_tokens"))
    msg.output_tokens = opt_int(usage.get("completion_tokens"))
    msg.ts = line.ts or parse_ts(response.get("created"))
    msg.latency_ms = line.latency_ms
    trace.started_at = msg.ts
    trace.model = _opt_str(response.get("model"), "response.model") or trace.model
    trace.metadata["response_id"] = response.get("id")
    trace.metadata["finish_reason"] = choice.get("finish_reason")
    if len(choices) > 1:
        trace.metadata["n_choices"] = len(choices)
    if usage:
        trace.metadata["usage"] = usage
    for key in RESPONSE_KEYS:
        if response.get(key) is not None:
            trace.metadata[key] = response[key]
    return True


def _opt_str(value: Any, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f"{where} must be a string, got {type(value).__name__}")


def _whole_document(src: SourceFile, items: Iterator[RawRecord | BadRecord]) -> Iterator[RawRecord | BadRecord]:
    """A document that is one message list is one record; a cut in it makes the whole list bad."""
    messages: list[Any] = []
    for item in items:
        if isinstance(item, BadRecord):
            error = f"{item.error} (at {item.locator}); the conversation is incomplete"
            yield BadRecord("$", error, raw_text(src.path.read_bytes()))
            return
        messages.append(item.value)
    yield RawRecord("$", messages)


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("role"), str) and (
        "content" in value or "tool_calls" in value
    )


def _is_message_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(_is_message(m) for m in value[:3])


def _is_chat_record(rec: dict[str, Any]) -> bool:
    if rec.get("object") == "chat.completion":
        return True
    request = rec.get("request", rec)
    if not isinstance(request, dict):
        return False
    messages = request.get("messages")
    return isinstance(messages, list) and (not messages or _is_message_list(messages))
