"""OpenInference (Arize Phoenix) spans: OTLP/JSON exports, or Phoenix's own span JSON.

Schema: Arize-ai/openinference `spec/semantic_conventions.md`, `spec/llm_spans.md`,
`spec/tool_calling.md`, `spec/annotations.md`. Attributes are flattened with indexed
prefixes (`llm.input_messages.0.message.role`); Phoenix's span JSON (`{name, context:
{trace_id, span_id}, span_kind, parent_id, start_time, end_time, status_code,
attributes, events}`, as in `llm_spans.md`) may nest them instead. Both are read by
flattening and then rebuilding one tree.

- Spans group by trace id, order by start; `session.id` is the session, `user.id` and
  `agent.name` go to metadata.
- LLM spans (`openinference.span.kind` LLM) give the conversation:
  `llm.input_messages` / `llm.output_messages` (`message.role`, `.content` or
  `.contents.N.message_content.{type,text}`, `.tool_calls.N.tool_call.{id,
  function.name, function.arguments}`, `.tool_call_id`, `.name`; legacy
  `.function_call_name` / `.function_call_arguments_json`), else the completions
  form `llm.prompts` / `llm.choices`, else `input.value` / `output.value`. Tokens
  `llm.token_count.prompt` / `.completion`; model `llm.model_name`, else
  `llm.response.model_name` / `llm.request.model_name`; tools `llm.tools.N.tool.json_schema`.
- TOOL spans give tool results: `tool.name`, call id `tool_call.id` or `tool.id`,
  arguments `input.value`, result `output.value`; linked to the assistant's calls.
- Errors: span status ERROR or `exception.*` events.
- Scores: `annotation.*` / `evaluation.*`, the lists `annotations.N.annotation.*` /
  `evaluations.N.evaluation.*` and their `trace.` / `session.` variants, and
  `gen_ai.evaluation.result` events. Kind human when `annotator_kind` is HUMAN, else eval.
- Outcome follows the rule in `spans.py`: only a success/correct/resolved-like 0/1 score sets it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from tracegym import exact_json
from tracegym.ingest.adapters import otlp
from tracegym.ingest.adapters.base import Adapter, SourceFile
from tracegym.ingest.adapters.otel_genai import evaluation_scores
from tracegym.ingest.adapters.span_messages import CallPart, Turn, as_text, message_turns, text_of
from tracegym.ingest.adapters.spans import LlmCall, Located, SpanFacts, ToolRun, build_trace, score_value, trace_records
from tracegym.ingest.normalize import normalize_role, opt_int, parse_ts, to_json
from tracegym.ingest.reading import Sample, iter_json_values
from tracegym.ingest.records import BadRecord, RawRecord, Score, Trace

SPAN_KIND = "openinference.span.kind"


class OpenInferenceAdapter(Adapter):
    name = "openinference"
    upserts = True
    description = "OpenInference / Arize Phoenix spans (OTLP/JSON export, or Phoenix span JSON/JSONL)"

    def sniff(self, sample: Sample) -> bool:
        if otlp.is_export(sample):
            return SPAN_KIND.encode() in sample.head
        first = sample.first
        return isinstance(first, dict) and _is_phoenix_span(first)

    def records(self, src: SourceFile) -> Iterator[RawRecord | BadRecord]:
        if otlp.is_export(src.sample):
            items: Iterable[Located | BadRecord] = otlp.read_export(src)
            unit = "lines" if src.sample.jsonl else "spans"
        else:
            items, unit = _phoenix_spans(src), "lines" if src.sample.jsonl else "spans"
        return trace_records(items, unit, lambda key, members: otlp.group_spans(key, members, span_facts),
                             src.parts, otlp.revive)

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        yield build_trace(record.value, self.name)


def _is_phoenix_span(obj: dict[str, Any]) -> bool:
    ctx = obj.get("context")
    return (isinstance(ctx, dict) and "trace_id" in ctx and "span_id" in ctx
            and ("span_kind" in obj or "attributes" in obj))


def _phoenix_spans(src: SourceFile) -> Iterator[Located | BadRecord]:
    for i, rec in enumerate(iter_json_values(src.path, src.sample.jsonl), start=1):
        if isinstance(rec, BadRecord):
            yield rec
            continue
        try:
            span = phoenix_span(rec.value)
        except Exception as e:  # noqa: BLE001 - one malformed span must not cost the others
            yield BadRecord(rec.locator, f"{type(e).__name__}: {e}", rec.raw or to_json(rec.value))
            continue
        pos = int(rec.locator.split()[1]) if rec.locator.startswith("line ") else i
        yield Located(span.trace_id, pos, rec.locator, span, rec.value)


def phoenix_span(raw: Any) -> otlp.OtlpSpan:
    """Phoenix's span JSON as an OtlpSpan with flat attributes."""
    if not isinstance(raw, dict) or not _is_phoenix_span(raw):
        raise ValueError("not a Phoenix span: needs context.trace_id, context.span_id and attributes")
    ctx = raw["context"]
    attrs = flatten(raw.get("attributes") or {})
    if raw.get("span_kind"):
        attrs.setdefault(SPAN_KIND, raw["span_kind"])
    events = [
        otlp.OtlpEvent(str(e.get("name")), parse_ts(e.get("timestamp")), flatten(e.get("attributes") or {}))
        for e in raw.get("events") or []
    ]
    return otlp.OtlpSpan(
        trace_id=_id(ctx.get("trace_id"), "context.trace_id"),
        span_id=_id(ctx.get("span_id"), "context.span_id"),
        parent_id=raw.get("parent_id"),
        name=str(raw.get("name") or ""),
        start=parse_ts(raw.get("start_time")),
        end=parse_ts(raw.get("end_time")),
        attrs=attrs,
        events=events,
        status_error=str(raw.get("status_code") or "").upper() == "ERROR",
        status_message=raw.get("status_message") or None,
    )


def _id(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty string")
    return value


# ---------------------------------------------------------------- attribute trees


def flatten(value: Any, prefix: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    """Nested dicts and lists of objects to dotted keys (`a.0.b`); lists of scalars stay values."""
    out = {} if out is None else out
    if isinstance(value, dict):
        for k, v in value.items():
            flatten(v, f"{prefix}{k}.", out)
    elif isinstance(value, list) and any(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            flatten(v, f"{prefix}{i}.", out)
    elif prefix:
        out[prefix[:-1]] = value
    return out


def unflatten(flat: dict[str, Any]) -> dict[str, Any]:
    """Dotted keys to a tree; objects whose keys are all indices become lists."""
    root: dict[str, Any] = {}
    for key, value in flat.items():
        *path, leaf = key.split(".")
        node: Any = root
        for part in path:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                break  # a value already sits where this key needs an object: keep the value
        else:
            if not isinstance(node.get(leaf), dict):
                node[leaf] = value
    return _lists(root)


def _lists(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    items = {k: _lists(v) for k, v in node.items()}
    if items and all(k.isdigit() for k in items):
        return [items[k] for k in sorted(items, key=int)]
    return items


def get(tree: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(tree, dict):
            return None
        tree = tree.get(part)
    return tree


def _as_list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{where} must be a list")
    return value


# ---------------------------------------------------------------- spans


def span_facts(span: otlp.OtlpSpan) -> SpanFacts:
    tree = unflatten(span.attrs)
    kind = str(span.attrs.get(SPAN_KIND) or "").upper()
    facts = SpanFacts(span.name, span.start, span.end, order=span.span_id, error=otlp.span_error(span))
    facts.session_id = _opt_str(get(tree, "session.id"))
    facts.scores = _scores(tree) + evaluation_scores(span.events)
    for path, key in (("user.id", "user_id"), ("agent.name", "agent"), ("llm.provider", "provider")):
        if get(tree, path) is not None:
            facts.info[key] = get(tree, path)
    if isinstance(span.resource.get("service.name"), str):
        facts.info["service"] = span.resource["service.name"]
    if kind == "LLM":
        facts.kind = "llm"
        facts.call = _llm_call(tree)
        facts.tools = _tool_definitions(tree)
    elif kind == "TOOL":
        facts.kind = "tool"
        facts.tool = _tool_run(tree, span, facts.error)
    return facts


def _llm_call(tree: dict[str, Any]) -> LlmCall:
    inputs = [_turn(m, f"llm.input_messages.{i}") for i, m in enumerate(_as_list(get(tree, "llm.input_messages"),
                                                                                 "llm.input_messages"))]
    outputs = [_turn(m, f"llm.output_messages.{i}") for i, m in enumerate(_as_list(get(tree, "llm.output_messages"),
                                                                                   "llm.output_messages"))]
    if _is_responses_span(tree):
        # The Responses API's output items (text, each function call) are recorded as one message each: they are
        # one assistant turn, and so are the runs of them that later calls send back as input.
        inputs, outputs = _joined_items(inputs), _joined_items(outputs)
    outputs = outputs[:1]  # Chat Completions: one message per choice; the conversation goes on with the first
    if not inputs:
        inputs = [Turn("user", get(p, "prompt.text")) for p in _as_list(get(tree, "llm.prompts"), "llm.prompts")]
    if not outputs:
        outputs = [Turn("assistant", get(c, "completion.text"))
                   for c in _as_list(get(tree, "llm.choices"), "llm.choices")][:1]
    if not inputs and not outputs:
        inputs = _value_turns(get(tree, "input.value"), "user")
        outputs = _value_turns(get(tree, "output.value"), "assistant")[:1]
    model = get(tree, "llm.model_name") or get(tree, "llm.response.model_name") or get(tree, "llm.request.model_name")
    return LlmCall(
        inputs=inputs,
        outputs=outputs,
        input_tokens=opt_int(get(tree, "llm.token_count.prompt")),
        output_tokens=opt_int(get(tree, "llm.token_count.completion")),
        model=_opt_str(model),
    )


def _is_responses_span(tree: dict[str, Any]) -> bool:
    """Whether the span recorded a Responses API call: its `output.value` is a `response` object."""
    value = get(tree, "output.value")
    if not isinstance(value, str) or not value.startswith("{") or '"response"' not in value:
        return False  # not parsed: chat spans' outputs can be large
    try:
        parsed = exact_json.loads(value)
    except orjson.JSONDecodeError:
        return False
    return isinstance(parsed, dict) and parsed.get("object") == "response"


def _joined_items(turns: list[Turn]) -> list[Turn]:
    """Consecutive assistant turns (the output items of one response) as one turn: texts, then calls, in order."""
    out: list[Turn] = []
    for turn in turns:
        last = out[-1] if out else None
        if last is None or turn.role != "assistant" or last.role != "assistant":
            out.append(turn)
            continue
        texts = [t for t in (last.content, turn.content) if t]
        out[-1] = Turn("assistant", "\n".join(texts) if texts else None, [*last.tool_calls, *turn.tool_calls])
    return out


def _turn(item: Any, where: str) -> Turn:
    m = get(item, "message")
    if not isinstance(m, dict):
        raise ValueError(f"{where} has no message.* attributes")
    content = m.get("content")
    if content is None and m.get("contents") is not None:
        content = [get(c, "message_content") for c in _as_list(m.get("contents"), f"{where}.message.contents")]
    calls = [_call(get(tc, "tool_call"), f"{where}.message.tool_calls")
             for tc in _as_list(m.get("tool_calls"), f"{where}.message.tool_calls")]
    if m.get("function_call_name"):
        calls.append(CallPart(None, str(m["function_call_name"]), m.get("function_call_arguments_json")))
    return Turn(
        role=normalize_role(m.get("role")),
        content=text_of(content),
        tool_calls=calls,
        tool_call_id=_opt_str(m.get("tool_call_id")),
        name=_opt_str(m.get("name")),
    )


def _call(tc: Any, where: str) -> CallPart:
    name = get(tc, "function.name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where} has a tool call without tool_call.function.name")
    return CallPart(_opt_str(get(tc, "id")), name, get(tc, "function.arguments"))


def _value_turns(value: Any, role: str) -> list[Turn]:
    """`input.value` / `output.value`: a request or response JSON with messages, else plain text."""
    if not isinstance(value, str) or not value:
        return []
    try:
        parsed = exact_json.loads(value)
    except orjson.JSONDecodeError:
        return [Turn(role, value)]
    if isinstance(parsed, dict) and any(isinstance(parsed.get(k), list) for k in ("messages", "choices")):
        return message_turns(parsed, role)
    return [Turn(role, value)]


def _tool_definitions(tree: dict[str, Any]) -> list[Any] | None:
    tools = _as_list(get(tree, "llm.tools"), "llm.tools")
    schemas = [get(t, "tool.json_schema") for t in tools]
    out = [exact_json.loads(s) if isinstance(s, str) else s for s in schemas if s is not None]
    return out or None


def _tool_run(tree: dict[str, Any], span: otlp.OtlpSpan, error: str | None) -> ToolRun:
    name = get(tree, "tool.name") or span.name
    if not isinstance(name, str) or not name:
        raise ValueError("TOOL span has no tool.name")
    result = as_text(get(tree, "output.value"))
    return ToolRun(
        name=name,
        call_id=_opt_str(get(tree, "tool_call.id") or get(tree, "tool.id")),
        arguments=get(tree, "input.value"),
        result=result if result is not None else error,
        is_error=error is not None,
    )


def _scores(tree: dict[str, Any]) -> list[Score]:
    found: list[tuple[str, Any]] = []
    for scope in (tree, tree.get("trace"), tree.get("session")):
        if not isinstance(scope, dict):
            continue
        for word in ("annotation", "evaluation"):
            found += [(f"{word}s", get(item, word)) for item in _as_list(scope.get(f"{word}s"), f"{word}s")]
    for word in ("annotation", "evaluation"):
        if isinstance(tree.get(word), dict):
            found.append((word, tree[word]))
    return [_score(obj, where) for where, obj in found]


def _score(obj: Any, where: str) -> Score:
    name = get(obj, "name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where} result without a name")
    kind = "human" if str(obj.get("annotator_kind") or "").upper() == "HUMAN" else "eval"
    return Score(
        name=name,
        value=score_value(obj.get("score"), f"{where}.score"),
        label=_opt_str(obj.get("label")),
        kind=kind,
        comment=_opt_str(obj.get("explanation")),
    )


def _opt_str(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value).strip()
