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
from tracegym.ingest.adapters import mlflow_spans, otlp
from tracegym.ingest.adapters.base import Adapter, SourceFile
from tracegym.ingest.adapters.span_messages import CallPart, Turn, as_text, message_turns, text_of
from tracegym.ingest.adapters.spans import LlmCall, SpanFacts, ToolRun, build_trace, score_value, trace_records
from tracegym.ingest.normalize import normalize_role, opt_int
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
        return trace_records(otlp.read_export(src), unit,
                             lambda key, members: otlp.group_spans(key, members, span_facts), src.parts, otlp.revive)

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        mlflow_spans.name_tool_runs(record.value.facts)
        yield build_trace(record.value, self.name)


def span_facts(span: otlp.OtlpSpan) -> SpanFacts:
    a = span.attrs
    if "gen_ai.operation.name" not in a and mlflow_spans.is_mlflow_span(a):
        return mlflow_spans.span_facts(span)  # MLflow's default OTLP export: its own attributes
    op = a.get("gen_ai.operation.name")
    facts = SpanFacts(span.name, span.start, span.end, order=span.span_id, error=otlp.span_error(span))
    facts.session_id = _opt_str(a.get("gen_ai.conversation.id") or a.get("session.id"))
    facts.scores = evaluation_scores(span.events)
    facts.tools = _json_value(a.get("gen_ai.tool.definitions"))
    _info(facts, span)
    if op == "execute_tool" or (op is None and "gen_ai.tool.name" in a):
        facts.kind = "tool"
        facts.tool = _tool_run(span, facts.error)
    elif op in LLM_OPS or (op not in NOT_LLM_OPS and _looks_like_inference(span)):
        facts.kind = "llm"
        facts.call = _llm_call(span)
    elif op == "invoke_agent":
        facts.kind = "agent"
        facts.call = _llm_call(span)
    return facts


def _looks_like_inference(span: otlp.OtlpSpan) -> bool:
    keys = ("gen_ai.request.model", "gen_ai.response.model", *_CONTENT_KEYS)
    return any(k in span.attrs for k in keys) or any(e.name in MESSAGE_EVENTS or e.name in ("gen_ai.choice",
                                                     DETAILS_EVENT) for e in span.events)


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
    inputs = _instructions(c.get("gen_ai.system_instructions"))
    inputs += _parts_messages(c.get("gen_ai.input.messages"), "gen_ai.input.messages")
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
    return answers


def _deprecated_content(span: otlp.OtlpSpan) -> tuple[list[Turn], list[Turn]]:
    """gen_ai.prompt / gen_ai.completion (attributes or content events), else message events."""
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
