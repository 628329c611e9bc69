"""OpenTelemetry GenAI spans, as an OTLP/JSON export (one document, an array, or JSONL).

Schema: open-telemetry/semantic-conventions `docs/gen-ai/gen-ai-spans.md`,
`gen-ai-agent-spans.md`, `gen-ai-input-messages.json`, `gen-ai-output-messages.json`,
`model/gen-ai/registry.yaml` and `model/gen-ai/deprecated/*.yaml`.

- Spans group into traces by trace id (one trace per OTel trace) and order by start.
- Inference spans (`gen_ai.operation.name` chat / text_completion / generate_content)
  give the conversation: `gen_ai.system_instructions`, `gen_ai.input.messages` and
  `gen_ai.output.messages` (parts text / tool_call / tool_call_response; reasoning,
  blob, file and uri parts are not conversation text). Older conventions are read
  too: `gen_ai.prompt` / `gen_ai.completion` (attributes, or on the
  `gen_ai.content.prompt` / `gen_ai.content.completion` events; a JSON string of
  OpenAI messages, or the Python repr the registry's own example shows), and the
  `gen_ai.{system,user,assistant,tool}.message` / `gen_ai.choice` events, as log
  records linked by span id (their body is the event body) or as span events whose
  body is the `gen_ai.event.content` JSON attribute (the Azure AI SDKs' form).
  `invoke_agent` spans speak for the conversation only when no inference span does.
- `execute_tool` spans give tool results (`gen_ai.tool.name`, `.call.id`,
  `.call.arguments`, `.call.result`), linked by call id to the assistant's tool calls.
- Errors: span status ERROR, `error.type`, or an `exception` event; on a tool span
  they flag the tool call, on any other span they are listed in the trace metadata.
- `gen_ai.evaluation.result` events (span events or log records) become scores of
  kind eval. Session: `gen_ai.conversation.id` (else `session.id`). Model:
  `gen_ai.response.model`, else `gen_ai.request.model`. Tokens:
  `gen_ai.usage.input_tokens` / `output_tokens` (deprecated `prompt_tokens` /
  `completion_tokens`) on the call's output message.
- MLflow's default OTLP export (spans with `mlflow.spanType` and no `gen_ai.operation.name`) is read from its
  `mlflow.*` attributes by `mlflow_spans.py`.
- Outcome follows the rule in `spans.py`: only a success/correct/resolved-like 0/1 score sets it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

import orjson

from tracegym import exact_json
from tracegym.ingest.adapters import mlflow_spans, otlp, span_stitch
from tracegym.ingest.adapters.base import Adapter, SourceFile
from tracegym.ingest.adapters.span_messages import CallPart, Turn, as_text, message_turns, text_of
from tracegym.ingest.adapters.spans import (
    Incomplete,
    LlmCall,
    Located,
    SpanFacts,
    SpanGroup,
    ToolRun,
    build_trace,
    score_value,
    trace_records,
)
from tracegym.ingest.normalize import normalize_role, opt_int
from tracegym.ingest.parts import PartStore
from tracegym.ingest.reading import Sample
from tracegym.ingest.records import BadRecord, RawRecord, Score, Trace

LLM_OPS = {"chat", "text_completion", "generate_content"}
NOT_LLM_OPS = {"execute_tool", "embeddings", "create_agent", "invoke_agent", "invoke_workflow"}
MESSAGE_EVENTS = {
    "gen_ai.system.message": "system", "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool",
}
EVAL_EVENT = "gen_ai.evaluation.result"
# Since semconv 1.37 the content may travel on this event (log record) instead of the span: the
# instrumentation's `event_only` capture mode, or both with `span_and_event`.
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
_CONTENT_KEYS = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.prompt", "gen_ai.completion")


class OtelGenAIAdapter(Adapter):
    name = "otel-genai"
    upserts = True
    description = "OpenTelemetry GenAI spans (OTLP/JSON export document, array, or JSONL of documents)"

    def sniff(self, sample: Sample) -> bool:
        return (otlp.is_export(sample) and b"openinference.span.kind" not in sample.head
                and b"langfuse.observation.type" not in sample.head)

    def records(self, src: SourceFile) -> Iterator[RawRecord | BadRecord]:
        unit = "lines" if src.sample.jsonl else "spans"
        return trace_records(regroup(otlp.read_export(src), src.parts), unit,
                             lambda key, members: self._groups(key, members, src), src.parts, otlp.revive)

    def _groups(self, key: str, members: list[Located], src: SourceFile) -> Iterator[SpanGroup | BadRecord]:
        """The trace's spans as one group; a group of spans without a parent as one group per conversation."""
        for out in otlp.group_spans(key, members, span_facts):
            if isinstance(out, BadRecord) or not span_stitch.is_group(key):
                yield out
                continue
            convs = span_stitch.conversations(out)
            if src.parts is not None and convs:
                src.parts.rebuilt(key, {f"{self.name}:{c.key}": [f"{self.name}:{f.source_trace}" for f in c.facts
                                                                  if f.kind == "llm" and f.source_trace]
                                        for c in convs})
            yield from convs or [out]

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        if span_stitch.is_group(record.value.key):
            raise Incomplete("no LLM call among these spans without a parent yet")
        mlflow_spans.name_tool_runs(record.value.facts)
        yield build_trace(record.value, self.name)


def regroup(items: Iterable[Located | BadRecord], parts: PartStore | None) -> Iterator[Located | BadRecord]:
    """Each LLM call or tool span without a parent (an app with no span around its loop) goes to its service's
    group (see span_stitch.py) with the file's other spans and log records of its trace; so do the spans and log
    records of traces an earlier file put in a group (found by their parent or span id), and what earlier files
    stored of the traces this file puts in one."""
    held = list(items)
    moved: dict[str, str] = {}
    for it in held:
        if isinstance(it, Located) and isinstance(it.item, otlp.OtlpSpan) and it.item.parent_id is None \
                and span_kind(it.item) in ("llm", "tool"):
            moved[it.key] = _group_of(it.item)
    if parts is not None:
        moved = {**_stored_groups(held, moved, parts), **moved}
        parts.adopt(moved)
    for it in held:
        if isinstance(it, Located) and it.key in moved:
            it.key = moved[it.key]
        yield it


def _group_of(span: otlp.OtlpSpan) -> str:
    service = span.resource.get("service.name")
    return span_stitch.group_key(service if isinstance(service, str) else None)


def _stored_groups(held: list[Located | BadRecord], moved: dict[str, str], parts: PartStore) -> dict[str, str]:
    """For the traces of the file not moved by it: the group an earlier file put the span a log record names, or
    the parent of a span (one not in this file), in."""
    here = {it.item.span_id for it in held if isinstance(it, Located) and isinstance(it.item, otlp.OtlpSpan)}
    refs: dict[str, str] = {}
    for it in held:
        if not isinstance(it, Located) or it.key in moved:
            continue
        ref = it.item.parent_id if isinstance(it.item, otlp.OtlpSpan) else it.item.span_id
        if ref and ref not in here:
            refs[f"span:{ref}"] = it.key
    owners = parts.owners(sorted(refs)) if refs else {}
    return {refs[name]: owner for name, owner in owners.items() if span_stitch.is_group(owner)}


def span_kind(span: otlp.OtlpSpan) -> str:
    """'tool', 'llm', 'agent' or '' (anything else), from the span's operation and attributes."""
    a = span.attrs
    op = a.get("gen_ai.operation.name")
    if op == "execute_tool" or (op is None and "gen_ai.tool.name" in a):
        return "tool"
    if op in LLM_OPS or (op not in NOT_LLM_OPS and _looks_like_inference(span)):
        return "llm"
    return "agent" if op == "invoke_agent" else ""


def span_facts(span: otlp.OtlpSpan) -> SpanFacts:
    a = span.attrs
    if "gen_ai.operation.name" not in a and mlflow_spans.is_mlflow_span(a):
        return mlflow_spans.span_facts(span)  # MLflow's default OTLP export: its own attributes
    facts = SpanFacts(span.name, span.start, span.end, order=span.span_id, error=otlp.span_error(span))
    facts.session_id = _opt_str(a.get("gen_ai.conversation.id") or a.get("session.id"))
    facts.scores = evaluation_scores(span.events)
    facts.tools = _json_value(a.get("gen_ai.tool.definitions")) or indexed_tools(a)
    facts.source_trace = span.trace_id
    _info(facts, span)
    facts.kind = span_kind(span)
    if facts.kind == "tool":
        facts.tool = _tool_run(span, facts.error)
    elif facts.kind in ("llm", "agent"):
        facts.call = _llm_call(span)
    return facts


def _looks_like_inference(span: otlp.OtlpSpan) -> bool:
    """A span that names no operation is an LLM call when it names a model, or records a prompt. An output alone
    is not one: openlit's `@openlit.trace` function spans put their return value in `gen_ai.output.messages`."""
    keys = ("gen_ai.request.model", "gen_ai.response.model", "gen_ai.input.messages", "gen_ai.prompt",
            "gen_ai.prompt.0.role", "gen_ai.prompt.0.content")
    return (any(k in span.attrs for k in keys) or span.attrs.get("llm.request.type") in ("chat", "completion")
            or any(e.name in MESSAGE_EVENTS or e.name in ("gen_ai.choice", DETAILS_EVENT) for e in span.events))


def _info(facts: SpanFacts, span: otlp.OtlpSpan) -> None:
    a = span.attrs
    for src, dst in (("gen_ai.agent.name", "agent"), ("gen_ai.provider.name", "provider"),
                     ("gen_ai.system", "provider"), ("user.id", "user_id")):
        if isinstance(a.get(src), str):
            facts.info.setdefault(dst, a[src])
    if isinstance(span.resource.get("service.name"), str):
        facts.info["service"] = span.resource["service.name"]


def _tool_run(span: otlp.OtlpSpan, error: str | None) -> ToolRun:
    a = span.attrs
    name = a.get("gen_ai.tool.name") or span.name.removeprefix("execute_tool").strip()
    if not isinstance(name, str) or not name:
        raise ValueError("execute_tool span has no gen_ai.tool.name")
    result = as_text(a.get("gen_ai.tool.call.result"))
    return ToolRun(
        name=name,
        call_id=_opt_str(a.get("gen_ai.tool.call.id")),
        arguments=a.get("gen_ai.tool.call.arguments"),
        result=result if result is not None else error,
        is_error=error is not None,
    )


def _llm_call(span: otlp.OtlpSpan) -> LlmCall:
    a = span.attrs
    c = _content_carrier(span)
    inputs = _parts_messages(c.get("gen_ai.input.messages"), "gen_ai.input.messages")
    inputs = _unless_repeated(_instructions(c.get("gen_ai.system_instructions")), inputs) + inputs
    outputs = _parts_messages(c.get("gen_ai.output.messages"), "gen_ai.output.messages")[:1]
    if not inputs and not outputs:
        inputs, outputs = _deprecated_content(span)
    return LlmCall(
        inputs=inputs,
        outputs=outputs,
        input_tokens=opt_int(a.get("gen_ai.usage.input_tokens", a.get("gen_ai.usage.prompt_tokens"))),
        output_tokens=opt_int(a.get("gen_ai.usage.output_tokens", a.get("gen_ai.usage.completion_tokens"))),
        model=_opt_str(a.get("gen_ai.response.model") or a.get("gen_ai.request.model")),
    )


def _content_carrier(span: otlp.OtlpSpan) -> dict[str, Any]:
    """Where the call's messages are: the span's attributes, else its operation-details event."""
    keys = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions")
    if any(k in span.attrs for k in keys):
        return span.attrs
    return next((e.attrs for e in span.events if e.name == DETAILS_EVENT and any(k in e.attrs for k in keys)),
                span.attrs)


def _instructions(value: Any) -> list[Turn]:
    parts = _json_value(value)
    if parts is None:
        return []
    text = text_of([{"type": p.get("type"), "text": p.get("content")} if isinstance(p, dict) else p
                    for p in (parts if isinstance(parts, list) else [parts])])
    return [Turn("system", text)] if text else []


def _unless_repeated(instructions: list[Turn], inputs: list[Turn]) -> list[Turn]:
    """The system instructions, unless the input messages open with them too (openlit 1.45 records both)."""
    head = []
    for turn in inputs:
        if turn.role != "system":
            break
        head.append(turn.content or "")
    if instructions and head and "\n".join(head).strip() == (instructions[0].content or "").strip():
        return []
    return instructions


def _parts_messages(value: Any, where: str) -> list[Turn]:
    """`[{role, parts: [...]}, ...]` (a structured attribute or its JSON string) as turns."""
    messages = _json_value(value)
    if messages is None:
        return []
    if not isinstance(messages, list):
        raise ValueError(f"{where} must be a list of messages")
    return [t for i, m in enumerate(messages) for t in _parts_turns(m, f"{where}[{i}]")]


def _parts_turns(msg: Any, where: str) -> list[Turn]:
    if not isinstance(msg, dict) or not isinstance(msg.get("parts"), list):
        raise ValueError(f"{where} must be an object with a parts list")
    role = normalize_role(msg.get("role"))
    texts: list[str] = []
    calls: list[CallPart] = []
    answers: list[Turn] = []
    for part in msg["parts"]:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            texts.append(str(part.get("content", "")))
        elif kind == "tool_call":
            calls.append(CallPart(_opt_str(part.get("id")), str(part.get("name") or ""), part.get("arguments")))
        elif kind == "tool_call_response":
            # The schema names the field `response`; the spans doc's example says `result`.
            result = part["response"] if "response" in part else part.get("result")
            answers.append(Turn("tool", as_text(result), tool_call_id=_opt_str(part.get("id"))))
    if any(not c.name for c in calls):
        raise ValueError(f"{where} has a tool_call part without a name")
    if texts or calls or not answers:
        answers.append(Turn(role, "\n".join(texts) if texts else None, calls))
    if isinstance(msg.get("name"), str) and msg["name"]:
        for turn in answers:
            turn.name = msg["name"]
    return answers


def _deprecated_content(span: otlp.OtlpSpan) -> tuple[list[Turn], list[Turn]]:
    """gen_ai.prompt / gen_ai.completion (indexed attributes, whole attributes or content events), else message
    events."""
    prompt, completion = indexed_messages(span.attrs, "gen_ai.prompt."), indexed_messages(span.attrs,
                                                                                           "gen_ai.completion.")
    if prompt or completion:
        return message_turns(prompt, "user"), message_turns(completion, "assistant")[:1]
    prompt, completion = span.attrs.get("gen_ai.prompt"), span.attrs.get("gen_ai.completion")
    for e in span.events:
        if e.name == "gen_ai.content.prompt":
            prompt = e.attrs.get("gen_ai.prompt", prompt)
        elif e.name == "gen_ai.content.completion":
            completion = e.attrs.get("gen_ai.completion", completion)
    inputs = message_turns(_loose_json(prompt), "user")
    outputs = message_turns(_loose_json(completion), "assistant")[:1]
    if inputs or outputs:
        return inputs, outputs
    return _message_events(span.events)


def indexed_messages(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]] | None:
    """OpenLLMetry's indexed attributes as OpenAI messages, in index order: `PREFIX.N.{role, content,
    tool_call_id, name, refusal}` and `PREFIX.N.tool_calls.M.{id, name, arguments}` (opentelemetry-instrumentation-
    openai up to 0.54, `shared/chat_wrappers.py` `_set_prompts` / `_set_completions`). None when there are none."""
    found = _indexed(attrs, prefix)
    return [_indexed_message(fields) for _, fields in sorted(found.items())] if found else None


def _indexed(attrs: dict[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """`PREFIX.N.FIELD` attributes by N; `tool_calls.M.PART` fields as `tool_calls: {M: {PART: value}}`."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        index, _, field = key[len(prefix):].partition(".")
        if not index.isdigit() or not field:
            continue  # prompt_filter_results and other keys that are not an item's
        item = found.setdefault(int(index), {})
        if field.startswith("tool_calls."):
            number, _, part = field[len("tool_calls."):].partition(".")
            if number.isdigit():
                item.setdefault("tool_calls", {}).setdefault(int(number), {})[part] = value
        else:
            item[field] = value
    return found


def _indexed_message(fields: dict[str, Any]) -> dict[str, Any]:
    content = fields.get("content")
    if content is None and isinstance(fields.get("refusal"), str):
        content = fields["refusal"]
    message: dict[str, Any] = {"role": fields.get("role") or "user", "content": _parts_list(content)}
    for key in ("tool_call_id", "name"):
        if fields.get(key) is not None:
            message[key] = fields[key]
    calls = fields.get("tool_calls")
    if isinstance(calls, dict):
        message["tool_calls"] = [{"id": c.get("id"), "function": {"name": c.get("name"),
                                                                   "arguments": c.get("arguments")}}
                                 for _, c in sorted(calls.items())]
    return message


def _parts_list(content: Any) -> Any:
    """A content part list is recorded as its JSON text; other text stays as it is."""
    if isinstance(content, str) and content.startswith("[") and content.endswith("]"):
        try:
            parts = exact_json.loads(content)
        except orjson.JSONDecodeError:
            return content
        if isinstance(parts, list) and parts and all(isinstance(p, dict) and "type" in p for p in parts):
            return parts
    return content


def indexed_tools(attrs: dict[str, Any]) -> list[dict[str, Any]] | None:
    """`llm.request.functions.N.{name, description, parameters}` as OpenAI tool definitions."""
    found = _indexed(attrs, "llm.request.functions.")
    tools = []
    for _, f in sorted(found.items()):
        function = {k: f[k] for k in ("name", "description") if f.get(k) is not None}
        if f.get("parameters") is not None:
            function["parameters"] = _loose_json(f["parameters"])
        tools.append({"type": "function", "function": function})
    return tools or None


def _message_events(events: list[otlp.OtlpEvent]) -> tuple[list[Turn], list[Turn]]:
    inputs: list[Turn] = []
    choices: list[tuple[int, Turn]] = []
    # Log records join a span's own events after them; order all by time (stable for ties).
    for e in sorted(events, key=lambda ev: ev.time or datetime.min):
        if e.name not in MESSAGE_EVENTS and e.name != "gen_ai.choice":
            continue
        body = _event_body(e)
        if e.name == "gen_ai.choice":
            choices.append((opt_int(body.get("index")) or 0, _choice_turn(body)))
            continue
        turn = message_turns({**body, "role": body.get("role") or MESSAGE_EVENTS[e.name]}, "user")[0]
        inputs.append(turn)
    choices.sort(key=lambda c: c[0])
    return inputs, [t for _, t in choices[:1]]


def _event_body(e: otlp.OtlpEvent) -> dict[str, Any]:
    body = e.body if e.body is not None else _json_value(e.attrs.get("gen_ai.event.content"))
    if body is None:
        body = {k: v for k, v in e.attrs.items() if not k.startswith("gen_ai.")}
    if not isinstance(body, dict):
        raise ValueError(f"the body of a {e.name} event must be an object")
    return body


def _choice_turn(body: dict[str, Any]) -> Turn:
    message = body.get("message") if isinstance(body.get("message"), dict) else {}
    # In the deprecated event schema `tool_calls` sits beside `message`; some emitters nest it.
    merged = {"role": "assistant", **message}
    if "tool_calls" in body and "tool_calls" not in message:
        merged["tool_calls"] = body["tool_calls"]
    return message_turns(merged, "assistant")[0]


def evaluation_scores(events: list[otlp.OtlpEvent]) -> list[Score]:
    return [_score(e) for e in events if e.name == EVAL_EVENT]


def _score(e: otlp.OtlpEvent) -> Score:
    a = e.attrs
    name = a.get("gen_ai.evaluation.name")
    if not isinstance(name, str) or not name:
        raise ValueError("gen_ai.evaluation.result event without gen_ai.evaluation.name")
    return Score(
        name=name,
        value=score_value(a.get("gen_ai.evaluation.score.value"), "gen_ai.evaluation.score.value"),
        label=_opt_str(a.get("gen_ai.evaluation.score.label")),
        kind="eval",
        comment=_opt_str(a.get("gen_ai.evaluation.explanation")),
    )


def _json_value(value: Any) -> Any:
    """Structured attributes may arrive as JSON strings (spans cannot yet hold objects)."""
    if isinstance(value, str):
        return exact_json.loads(value)
    return value


def _loose_json(value: Any) -> Any:
    """JSON, else a Python literal (the registry's example for gen_ai.prompt is a repr), else text."""
    if not isinstance(value, str):
        return value
    try:
        return exact_json.loads(value)
    except orjson.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return value


def _opt_str(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value).strip()
