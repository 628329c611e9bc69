"""OTLP/JSON exports: decode AnyValue attributes and walk export documents span by span.

The shape (opentelemetry-proto, JSON mapping): `{"resourceSpans": [{"resource":
{"attributes": [...]}, "scopeSpans": [{"scope": {...}, "spans": [{traceId, spanId,
parentSpanId, name, kind, startTimeUnixNano, endTimeUnixNano, attributes: [{key,
value: AnyValue}], events: [{timeUnixNano, name, attributes}], status: {code,
message}}]}]}]}`, and likewise `resourceLogs` / `scopeLogs` / `logRecords` with
`{timeUnixNano, eventName, body, attributes, traceId, spanId}` (before OTLP 1.5 the
event name was the `event.name` attribute). A file is one export document, a JSON
array of them, or JSONL with one per line as the collector's file exporter writes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tracegym.ingest.adapters.base import SourceFile
from tracegym.ingest.adapters.spans import Located, SpanFacts, SpanGroup, facts_or_bad, split_bad
from tracegym.ingest.normalize import parse_ts, to_json
from tracegym.ingest.parts import Part
from tracegym.ingest.reading import Sample, iter_json_values
from tracegym.ingest.records import BadRecord, RawRecord

_HEX_ID = re.compile(r"^[0-9a-fA-F]+$")
_ERROR_CODES = {2, "2", "STATUS_CODE_ERROR", "ERROR"}


@dataclass(slots=True)
class OtlpEvent:
    name: str
    time: datetime | None
    attrs: dict[str, Any]
    body: Any = None  # log records only


@dataclass(slots=True)
class OtlpSpan:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: datetime | None
    end: datetime | None
    attrs: dict[str, Any]
    events: list[OtlpEvent] = field(default_factory=list)
    status_error: bool = False
    status_message: str | None = None
    resource: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class OtlpLog:
    trace_id: str
    span_id: str | None
    event: OtlpEvent


def is_export(sample: Sample) -> bool:
    first = sample.first
    return isinstance(first, dict) and ("resourceSpans" in first or "resourceLogs" in first)


def any_value(value: Any) -> Any:
    """An OTLP AnyValue (`{"stringValue": …}` etc.) as a plain Python value."""
    if not isinstance(value, dict):
        raise ValueError(f"attribute value must be an AnyValue object, got {type(value).__name__}")
    set_kinds = [(k, v) for k, v in value.items() if v is not None]
    if not set_kinds:
        return None
    if len(set_kinds) != 1:
        raise ValueError(f"an AnyValue must hold one value, got keys {sorted(value)}")
    kind, inner = set_kinds[0]
    if kind in ("stringValue", "boolValue", "doubleValue"):
        return inner
    if kind == "intValue":
        return int(inner)  # int64 is a JSON string in the proto3 mapping
    if kind == "arrayValue":
        return [any_value(v) for v in (inner or {}).get("values", [])]
    if kind == "kvlistValue":
        return attributes((inner or {}).get("values", []))
    if kind == "bytesValue":
        return inner
    raise ValueError(f"unknown AnyValue kind {kind!r}")


def attributes(items: Any) -> dict[str, Any]:
    """`[{key, value: AnyValue}]` as a dict."""
    if items is None:
        return {}
    if not isinstance(items, list):
        raise ValueError(f"attributes must be a list, got {type(items).__name__}")
    out: dict[str, Any] = {}
    for kv in items:
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise ValueError("each attribute must be an object with a string key")
        out[kv["key"]] = any_value(kv.get("value", {}))
    return out


def otlp_id(value: Any, what: str, required: bool = True) -> str | None:
    """Span and trace ids: hex as OTLP/JSON writes them; base64 (protobuf's JSON default) converted."""
    if value in (None, ""):
        if required:
            raise ValueError(f"missing {what}")
        return None
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string, got {type(value).__name__}")
    if _HEX_ID.match(value) and len(value) in (16, 32):
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value
    return raw.hex() if len(raw) in (8, 16) else value


def nanos(value: Any, what: str) -> datetime | None:
    if value in (None, "", 0, "0"):
        return None
    if isinstance(value, str):
        if not value.isdigit():
            raise ValueError(f"{what} must be nanoseconds since the epoch, got {value!r}")
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{what} must be an integer, got {type(value).__name__}")
    return parse_ts(value / 1e9)


def parse_event(raw: Any) -> OtlpEvent:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ValueError("a span event must be an object with a name")
    return OtlpEvent(raw["name"], nanos(raw.get("timeUnixNano"), "event time"), attributes(raw.get("attributes")))


def parse_span(raw: Any, resource: dict[str, Any]) -> OtlpSpan:
    if not isinstance(raw, dict):
        raise ValueError(f"a span must be an object, got {type(raw).__name__}")
    events = raw.get("events") or []
    if not isinstance(events, list):
        raise ValueError("span events must be a list")
    status = raw.get("status") or {}
    if not isinstance(status, dict):
        raise ValueError("span status must be an object")
    return OtlpSpan(
        trace_id=otlp_id(raw.get("traceId"), "traceId") or "",
        span_id=otlp_id(raw.get("spanId"), "spanId") or "",
        parent_id=otlp_id(raw.get("parentSpanId"), "parentSpanId", required=False),
        name=str(raw.get("name") or ""),
        start=nanos(raw.get("startTimeUnixNano"), "startTimeUnixNano"),
        end=nanos(raw.get("endTimeUnixNano"), "endTimeUnixNano"),
        attrs=attributes(raw.get("attributes")),
        events=[parse_event(e) for e in events],
        status_error=status.get("code") in _ERROR_CODES,
        status_message=status.get("message") or None,
        resource=resource,
    )


def parse_log(raw: Any) -> OtlpLog:
    if not isinstance(raw, dict):
        raise ValueError(f"a log record must be an object, got {type(raw).__name__}")
    attrs = attributes(raw.get("attributes"))
    name = raw.get("eventName") or attrs.get("event.name") or ""
    body = any_value(raw["body"]) if isinstance(raw.get("body"), dict) else None
    time = nanos(raw.get("timeUnixNano"), "timeUnixNano") or nanos(raw.get("observedTimeUnixNano"), "observedTime")
    return OtlpLog(
        trace_id=otlp_id(raw.get("traceId"), "traceId") or "",
        span_id=otlp_id(raw.get("spanId"), "spanId", required=False),
        event=OtlpEvent(str(name), time, attrs, body),
    )


def read_export(src: SourceFile) -> Iterator[Located | BadRecord]:
    """Every span and log record of the file, located; a malformed one is a bad record."""
    count = 0
    for rec in iter_json_values(src.path, src.sample.jsonl):
        if isinstance(rec, BadRecord):
            yield rec
            continue
        doc = rec.value
        if not isinstance(doc, dict) or not ("resourceSpans" in doc or "resourceLogs" in doc):
            yield BadRecord(rec.locator, "not an OTLP export document (no resourceSpans or resourceLogs)",
                            rec.raw if rec.raw is not None else to_json(doc))
            continue
        line = int(rec.locator.split()[1]) if rec.locator.startswith("line ") else None
        digest = record_digest(rec)
        try:
            for index, (where, raw, resource) in enumerate(_walk(doc, rec.locator)):
                count += 1
                try:
                    item = parse_span(raw, resource) if resource is not None else parse_log(raw)
                except Exception as e:  # noqa: BLE001 - one malformed span must not cost the others
                    yield BadRecord(where, f"{type(e).__name__}: {e}", to_json(raw))
                    continue
                yield Located(item.trace_id, line if line is not None else count, where, item, raw,
                              _part(item, raw, resource, f"{digest}:{index:06d}"))
        except ValueError as e:  # the document's own structure is broken past this point
            yield BadRecord(rec.locator, f"ValueError: {e}", rec.raw if rec.raw is not None else to_json(doc))


def record_digest(rec: RawRecord) -> str:
    """A short digest of a record's text: the `seq` of its parts starts with it, so that parts sort the same
    whichever file (or piece of a rotated file) the record came in."""
    text = rec.raw if rec.raw is not None else to_json(rec.value)
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _part(item: OtlpSpan | OtlpLog, raw: Any, resource: dict[str, Any] | None, seq: str) -> Part:
    if isinstance(item, OtlpSpan):
        return Part(f"span:{item.span_id}", seq, {"span": raw, "resource": resource})
    return Part(f"log:{hashlib.sha1(to_json(raw).encode()).hexdigest()}", seq, {"log": raw})


def revive(doc: Any) -> OtlpSpan | OtlpLog:
    """A stored part (see `_part`) read back."""
    return parse_span(doc["span"], doc["resource"] or {}) if "span" in doc else parse_log(doc["log"])


def _walk(doc: dict[str, Any], locator: str) -> Iterator[tuple[str, Any, dict[str, Any] | None]]:
    """(where, raw, resource attributes) per span; resource None marks a log record."""
    for i, block in enumerate(_list(doc.get("resourceSpans"), "resourceSpans")):
        resource = _resource(block)
        for j, scope in enumerate(_list(block.get("scopeSpans"), "scopeSpans")):
            for k, span in enumerate(_list(_obj(scope).get("spans"), "spans")):
                yield f"{locator} resourceSpans[{i}].scopeSpans[{j}].spans[{k}]", span, resource
    for i, block in enumerate(_list(doc.get("resourceLogs"), "resourceLogs")):
        for j, scope in enumerate(_list(_obj(block).get("scopeLogs"), "scopeLogs")):
            for k, log in enumerate(_list(_obj(scope).get("logRecords"), "logRecords")):
                yield f"{locator} resourceLogs[{i}].scopeLogs[{j}].logRecords[{k}]", log, None


def _obj(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"expected an object, got {type(value).__name__}")
    return value


def _list(value: Any, what: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{what} must be a list, got {type(value).__name__}")
    return value


def _resource(block: Any) -> dict[str, Any]:
    resource = _obj(block).get("resource") or {}
    return attributes(resource.get("attributes")) if isinstance(resource, dict) else {}


def span_error(span: OtlpSpan) -> str | None:
    """What went wrong in a span: an `exception` event, else status ERROR and `error.type`."""
    for e in span.events:
        if e.name == "exception":
            kind, msg = e.attrs.get("exception.type"), e.attrs.get("exception.message")
            return ": ".join(str(x) for x in (kind, msg) if x) or "exception"
    err_type = span.attrs.get("error.type")
    if span.status_error or err_type:
        return ": ".join(str(x) for x in (err_type, span.status_message) if x) or "ERROR"
    return None


def group_spans(
    key: str, members: list[Located], parse: Callable[[OtlpSpan], SpanFacts]
) -> Iterator[SpanGroup | BadRecord]:
    """Attach log records to their spans, then read each span. Logs whose span is not in
    the file (a logs-only export) stand in for that span."""
    spans = {m.item.span_id: m for m in members if isinstance(m.item, OtlpSpan)}
    orphans: dict[str, list[Located]] = {}
    for m in members:
        if isinstance(m.item, OtlpLog):
            target = spans.get(m.item.span_id or "")
            if target is not None:
                target.item.events.append(m.item.event)
            else:
                orphans.setdefault(m.item.span_id or "", []).append(m)
    results = list(facts_or_bad(spans.values(), parse))
    for span_id, logs in orphans.items():
        events = sorted((m.item.event for m in logs), key=lambda e: e.time or datetime.min)
        times = [e.time for e in events if e.time]
        span = OtlpSpan(key, span_id, None, "(log records)", min(times, default=None), max(times, default=None),
                        {}, events)
        results.extend(facts_or_bad([Located(key, logs[0].pos, logs[0].where, span, [m.raw for m in logs])], parse))
    facts, bad = split_bad(results)
    yield from bad
    if facts:
        yield SpanGroup(key, facts)
