"""Langfuse exports: a trace with its observations and scores, or observation/score tables.

Schema: langfuse/langfuse-python `langfuse/api/commons/types/trace.py`,
`trace_with_full_details.py`, `observation.py`, `observation_level.py`, `score.py`,
`base_score.py`, `score_source.py`, `score_data_type.py`, `usage.py`, and
`ingestion/types/observation_type.py`. Accepted, as one JSON document, an array or JSONL:

- a full trace as `GET /api/public/traces/{id}` returns it (`TraceWithFullDetails`: the
  trace's fields plus `observations` and `scores`). The UI's "Download JSON"
  (`trace-<id>.json`) holds the same three parts; when they come wrapped as
  `{"trace": …, "observations": […], "scores": […]}` that is read too (the FAQ names the
  parts, not the keys, so the wrapper is an assumption);
- observation rows (`{id, traceId, type, startTime, …}`) and score rows (`{id, traceId,
  name, source, dataType, …}`), grouped by `traceId`.

Mapping:
- GENERATION observations give the conversation: `input` (usually OpenAI-style
  messages) and `output`; tokens from `usageDetails.input`/`.output`, else the
  deprecated `usage.input`/`.output` or `promptTokens`/`completionTokens`; model `model`.
  When no generation carries content, the trace's own `input`/`output` stand in.
- TOOL observations give tool results (`name`, `input` as arguments, `output` as
  result). Langfuse records no call id, so they are linked to the assistant's calls
  by name, in order. `level` ERROR (with `statusMessage`) flags the call as an error;
  on other observations it is listed in the trace metadata.
- Scores: `source` ANNOTATION (a person in the Langfuse UI) -> kind human; EVAL
  (Langfuse-run evaluators) and API (posted by code) -> kind eval. `value` is the
  number (1/0 for BOOLEAN), `stringValue` the label, `comment` the comment.
- Session `sessionId`; `userId`, `name`, `tags`, `release`, `version`,
  `environment`, `totalCost` go to metadata.
- Outcome follows the rule in `spans.py`: only a success/correct/resolved-like 0/1 score sets it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from tracegym import exact_json
from tracegym.ingest.adapters import otlp
from tracegym.ingest.adapters.base import Adapter, SourceFile
from tracegym.ingest.adapters.span_messages import as_text, io_turns
from tracegym.ingest.adapters.spans import (
    LlmCall,
    Located,
    SpanFacts,
    SpanGroup,
    ToolRun,
    build_trace,
    facts_or_bad,
    score_value,
    split_bad,
    trace_records,
)
from tracegym.ingest.normalize import opt_int, parse_ts, to_json
from tracegym.ingest.parts import Part
from tracegym.ingest.reading import Sample, iter_json_values
from tracegym.ingest.records import BadRecord, RawRecord, Score, Trace

OTLP_MARK = b"langfuse.observation.type"  # the SDK's own spans (v3 on) carry no gen_ai.* attributes
SCORE_KINDS = {"ANNOTATION": "human", "EVAL": "eval", "API": "eval"}
TRACE_INFO = {"userId": "user_id", "name": "name", "tags": "tags", "release": "release", "version": "version",
              "environment": "environment", "totalCost": "total_cost"}


class LangfuseAdapter(Adapter):
    name = "langfuse"
    upserts = True
    description = "Langfuse trace exports (trace + observations + scores) and observation/score rows"

    def sniff(self, sample: Sample) -> bool:
        if otlp.is_export(sample):
            return OTLP_MARK in sample.head
        first = sample.first
        return isinstance(first, dict) and _shape(first) is not None

    def records(self, src: SourceFile) -> Iterator[RawRecord | BadRecord]:
        unit = "lines" if src.sample.jsonl else "items"
        if otlp.is_export(src.sample):
            return trace_records(otlp.read_export(src), unit, _group, src.parts, _revive)
        return self._row_records(src, unit)

    def _row_records(self, src: SourceFile, unit: str) -> Iterator[RawRecord | BadRecord]:
        rows: list[Located | BadRecord] = []
        for i, rec in enumerate(iter_json_values(src.path, src.sample.jsonl), start=1):
            if isinstance(rec, BadRecord):
                yield rec
                continue
            shape = _shape(rec.value) if isinstance(rec.value, dict) else None
            if shape == "trace":
                yield from _full_trace(rec, i, rows)
            elif shape in ("observation", "score"):
                key = rec.value.get("traceId")
                if not isinstance(key, str) or not key:
                    yield BadRecord(rec.locator, f"{shape} without a traceId", rec.raw or to_json(rec.value))
                    continue
                pos = int(rec.locator.split()[1]) if rec.locator.startswith("line ") else i
                ident = rec.value.get("id") or otlp.record_digest(rec)
                part = Part(f"{shape}:{ident}", f"{otlp.record_digest(rec)}:000000", {"row": [shape, rec.value]})
                rows.append(Located(key, pos, rec.locator, (shape, rec.value), rec.value, part))
            else:
                yield BadRecord(rec.locator, "not a Langfuse trace, observation or score",
                                rec.raw or to_json(rec.value))
        yield from trace_records(rows, unit, _group, src.parts, _revive)

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        yield build_trace(record.value, self.name)


def _shape(obj: dict[str, Any]) -> str | None:
    if isinstance(obj.get("trace"), dict) and isinstance(obj.get("observations"), list):
        return "trace"
    if isinstance(obj.get("observations"), list) and "id" in obj and "timestamp" in obj:
        return "trace"
    if "traceId" in obj and "type" in obj and "startTime" in obj:
        return "observation"
    if "traceId" in obj and "name" in obj and ("dataType" in obj or "source" in obj or "value" in obj):
        return "score"  # the SDK posts {id, traceId, name, value, timestamp}: no source, no data type
    return None


def _revive(doc: Any) -> Any:
    """A stored part read back: an OTLP span or log record, or an observation or score row."""
    return tuple(doc["row"]) if "row" in doc else otlp.revive(doc)


def _group(key: str, members: list[Located]) -> Iterator[SpanGroup | BadRecord]:
    """The trace from the SDK's OTLP spans and from the trace, observation and score rows, whichever it has."""
    spans = [m for m in members if not isinstance(m.item, tuple)]
    rows = [m for m in members if isinstance(m.item, tuple)]
    group = SpanGroup(key, [])
    for out in [*(otlp.group_spans(key, spans, otlp_facts) if spans else []), *_row_group(key, rows)]:
        if isinstance(out, BadRecord):
            yield out
        else:
            group.facts += out.facts
            group.scores += out.scores
            group.session_id = group.session_id or out.session_id
            group.started_at = group.started_at or out.started_at
            group.info.update(out.info)
    heads = [m.item[1] for m in rows if m.item[0] == "trace"]
    if heads:
        _trace_io_fallback(group, heads[0])
    if group.facts or group.scores:
        yield group


def otlp_facts(span: otlp.OtlpSpan) -> SpanFacts:
    """A Langfuse SDK span (OTel, `langfuse.observation.*` attributes) read as the observation it stands for."""
    a = span.attrs
    kind = str(a.get("langfuse.observation.type") or "span").upper()
    obs = {
        "id": span.span_id, "type": kind, "name": span.name,
        "startTime": span.start.isoformat() if span.start else None,
        "endTime": span.end.isoformat() if span.end else None,
        "input": _loose(a.get("langfuse.observation.input")), "output": _loose(a.get("langfuse.observation.output")),
        "model": a.get("langfuse.observation.model.name"),
        "usageDetails": _loose(a.get("langfuse.observation.usage_details")),
        "level": a.get("langfuse.observation.level"), "statusMessage": a.get("langfuse.observation.status_message"),
    }
    if kind == "TOOL" and isinstance(obs["input"], dict) and set(obs["input"]) == {"args", "kwargs"} \
            and not obs["input"]["args"]:
        obs["input"] = obs["input"]["kwargs"]  # @observe records a function's call as {args, kwargs}
    facts = observation_facts(obs)
    facts.error = facts.error or otlp.span_error(span)
    if facts.tool is not None and facts.error and not facts.tool.is_error:
        facts.tool.is_error = True
    session = a.get("session.id") or a.get("langfuse.session.id")
    facts.session_id = str(session) if session else None
    for src, dst in (("user.id", "user_id"), ("langfuse.user.id", "user_id"), ("langfuse.trace.name", "name")):
        if a.get(src) is not None:
            facts.info.setdefault(dst, a[src])
    return facts


def _loose(value: Any) -> Any:
    """Attributes hold JSON text; a value that is not JSON is text."""
    if not isinstance(value, str):
        return value
    try:
        return exact_json.loads(value)
    except orjson.JSONDecodeError:
        return value


def _full_trace(rec: RawRecord, pos: int, rows: list[Located]) -> Iterator[BadRecord]:
    """A trace with its observations and scores, as parts like the rows of other files (the trace's own fields,
    each observation, each score), so that exports taken at different times and score rows posted apart merge."""
    doc = rec.value
    trace = doc["trace"] if isinstance(doc.get("trace"), dict) else doc
    key = trace.get("id")
    if not isinstance(key, str) or not key:
        yield BadRecord(rec.locator, "trace without an id", rec.raw or to_json(doc))
        return
    if rec.locator.startswith("line "):
        pos = int(rec.locator.split()[1])
    digest = otlp.record_digest(rec)
    head = {k: v for k, v in trace.items() if k not in ("observations", "scores")}
    members = [("trace", key, rec.locator, head)]
    members += [("observation", _ident(o), f"{rec.locator} observations[{i}]", o)
                for i, o in enumerate(doc.get("observations") or [])]
    members += [("score", _ident(s), f"{rec.locator} scores[{i}]", s)
                for i, s in enumerate(doc.get("scores") or trace.get("scores") or [])]
    for n, (shape, ident, where, value) in enumerate(members):
        part = Part(f"{shape}:{ident}", f"{digest}:{n:06d}", {"row": [shape, value]})
        rows.append(Located(key, pos, where, (shape, value), value, part))


def _ident(row: Any) -> str:
    """A row's id, else a digest of its content."""
    ident = row.get("id") if isinstance(row, dict) else None
    return ident if isinstance(ident, str) and ident else hashlib.sha1(to_json(row).encode()).hexdigest()


def _row_group(key: str, members: list[Located]) -> Iterator[SpanGroup | BadRecord]:
    observations = [m for m in members if m.item[0] == "observation"]
    facts, bad = split_bad(facts_or_bad([Located(m.key, m.pos, m.where, m.item[1], m.raw) for m in observations],
                                        observation_facts))
    scores = []
    for m in members:
        if m.item[0] != "score":
            continue
        try:
            scores.append(langfuse_score(m.item[1]))
        except (ValueError, TypeError, AttributeError) as e:
            bad.append(BadRecord(m.where, f"{type(e).__name__}: {e}", to_json(m.raw)))
    yield from bad
    heads = [m.item[1] for m in members if m.item[0] == "trace"]
    if facts or scores or heads:
        head = heads[0] if heads else {}
        yield SpanGroup(key, facts, scores, session_id=_opt_str(head.get("sessionId")),
                        started_at=parse_ts(head.get("timestamp")), info=_trace_info(head))


def _trace_info(trace: dict[str, Any]) -> dict[str, Any]:
    return {dst: trace[src] for src, dst in TRACE_INFO.items() if trace.get(src) is not None}


def _trace_io_fallback(group: SpanGroup, trace: dict[str, Any]) -> None:
    """Without generation content, the trace's own input and output are the conversation."""
    if any(f.kind == "llm" and f.call and (f.call.inputs or f.call.outputs) for f in group.facts):
        return
    inputs, outputs = io_turns(trace.get("input"), "user"), io_turns(trace.get("output"), "assistant")[:1]
    if inputs or outputs:
        start = parse_ts(trace.get("timestamp"))
        group.facts.append(SpanFacts("trace input/output", start, None, order="", kind="llm",
                                     call=LlmCall(inputs, outputs)))


def observation_facts(obs: Any) -> SpanFacts:
    if not isinstance(obs, dict):
        raise ValueError(f"an observation must be an object, got {type(obs).__name__}")
    kind, oid = obs.get("type"), obs.get("id")
    if not isinstance(kind, str) or not isinstance(oid, str):
        raise ValueError("an observation needs a string id and type")
    start = parse_ts(obs.get("startTime"))
    if start is None:
        raise ValueError("an observation needs a startTime")
    error = (obs.get("statusMessage") or "ERROR") if obs.get("level") == "ERROR" else None
    facts = SpanFacts(obs.get("name"), start, parse_ts(obs.get("endTime")), order=oid, error=error)
    kind = kind.upper()
    if kind == "GENERATION":
        facts.kind = "llm"
        facts.call = _generation(obs)
    elif kind == "TOOL":
        facts.kind = "tool"
        facts.tool = _tool(obs, error)
    elif kind == "AGENT" and obs.get("name"):
        facts.info["agent"] = obs["name"]
    return facts


def _generation(obs: dict[str, Any]) -> LlmCall:
    details = obs.get("usageDetails") if isinstance(obs.get("usageDetails"), dict) else {}
    usage = obs.get("usage") if isinstance(obs.get("usage"), dict) else {}
    return LlmCall(
        inputs=io_turns(obs.get("input"), "user"),
        outputs=io_turns(obs.get("output"), "assistant")[:1],
        input_tokens=opt_int(_first(details, "input", "prompt_tokens", "input_tokens")
                             or _first(usage, "input") or obs.get("promptTokens")),
        output_tokens=opt_int(_first(details, "output", "completion_tokens", "output_tokens")
                              or _first(usage, "output") or obs.get("completionTokens")),
        model=_opt_str(obs.get("model")),
    )


def _first(d: dict[str, Any], *keys: str) -> Any:
    """The first of `keys` that `d` holds (usage details keep the provider's names as the SDK received them)."""
    return next((d[k] for k in keys if d.get(k) is not None), None)


def _tool(obs: dict[str, Any], error: str | None) -> ToolRun:
    name = obs.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("a TOOL observation needs a name")
    result = as_text(obs.get("output"))
    return ToolRun(name, None, obs.get("input"), result if result is not None else error, is_error=error is not None)


def langfuse_score(raw: Any) -> Score:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ValueError("a score must be an object with a name")
    source = str(raw.get("source") or "API").upper()  # what the SDK posts has none: it came through the API
    if source not in SCORE_KINDS:
        raise ValueError(f"unknown score source {raw.get('source')!r} (expected API, EVAL or ANNOTATION)")
    return Score(
        name=raw["name"],
        value=score_value(raw.get("value"), "score value"),
        label=_opt_str(raw.get("stringValue")),
        kind=SCORE_KINDS[source],
        comment=_opt_str(raw.get("comment")),
    )


def _opt_str(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value)
