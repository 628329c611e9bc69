"""MLflow 3 traces as JSON: `Trace.to_json()`, `mlflow.search_traces()` exports, the file store's trace folders.

Schema: mlflow/mlflow `mlflow/entities/trace.py` (`{"info": TraceInfo, "data": {"spans": [...]}}`),
`trace_info.py`, `span.py` (`{trace_id, span_id, parent_span_id, name, start_time_unix_nano,
end_time_unix_nano, events, status: {code, message}, attributes}`, ids base64 as protobuf's JSON writes them)
and `assessment.py`. A file holds one trace, a JSON array of them, or one per line; a row of the DataFrame
`search_traces` returns (`df.to_json(orient="records")`) carries the trace as JSON text in its `trace` column.
The file store (`mlruns/<experiment>/traces/<trace id>/`) keeps the spans in `artifacts/traces.json` and the
rest beside it: `trace_info.yaml`, `tags/`, `request_metadata/` and `assessments/*.yaml`, read with it.

Spans are read by `mlflow_spans.py`. The trace id is MLflow's (`tr-…`). Assessments: feedback becomes a score
(kind human for a HUMAN source, else eval; a bool is 1/0, a number its value, text its label; the rationale its
comment), and the outcome follows `spans.py`'s rule (a pass/fail-like score); expectations and invalidated
(overridden) feedback are not scores. Session and user: the trace metadata `mlflow.trace.session` /
`mlflow.trace.user`; tags that are not MLflow's own go to the metadata.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml

from tracegym import exact_json
from tracegym.ingest.adapters import mlflow_spans, otlp
from tracegym.ingest.adapters.base import Adapter, SourceFile
from tracegym.ingest.adapters.spans import SpanFacts, SpanGroup, build_trace, score_value
from tracegym.ingest.normalize import parse_ts
from tracegym.ingest.reading import Sample, iter_json_values
from tracegym.ingest.records import BadRecord, RawRecord, Score, Trace

FORMAT = "mlflow"
_MARKERS = (b'"mlflow.spanType"', b'"mlflow.traceRequestId"', b'mlflow.trace_schema.version')


class MlflowAdapter(Adapter):
    name = FORMAT
    description = "MLflow 3 traces (Trace.to_json, search_traces exports, the file store's traces.json)"

    def sniff(self, sample: Sample) -> bool:
        first = sample.first
        if not isinstance(first, dict):
            return False
        if isinstance(first.get("info"), dict) and isinstance(first.get("data"), dict):
            return "trace_id" in first["info"] and "spans" in first["data"]
        if "trace" in first and "trace_id" in first:
            return any(m in sample.head for m in _MARKERS)
        return isinstance(first.get("spans"), list) and any(m in sample.head for m in _MARKERS)

    def records(self, src: SourceFile) -> Iterator[RawRecord | BadRecord]:
        beside = _file_store_info(src.path)
        for rec in iter_json_values(src.path, src.sample.jsonl):
            if isinstance(rec, BadRecord):
                yield rec
                continue
            value = rec.value
            if isinstance(value, dict) and "trace" in value and "info" not in value:
                trace = value["trace"]
                value = exact_json.loads(trace) if isinstance(trace, str) else trace
            if isinstance(value, dict) and "info" not in value and isinstance(value.get("spans"), list):
                value = {"info": beside, "data": value}
            yield RawRecord(rec.locator, value, rec.raw)

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        yield build_trace(trace_group(record.value), FORMAT)


def trace_group(doc: Any) -> SpanGroup:
    """One MLflow trace (`{"info", "data": {"spans"}}`) as the facts of its spans."""
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), dict):
        raise ValueError("not an MLflow trace: no data object")
    info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
    spans = doc["data"].get("spans")
    if not isinstance(spans, list):
        raise ValueError("data.spans must be a list")
    facts = [_facts(s, i) for i, s in enumerate(spans)]
    key = info.get("trace_id") or info.get("request_id") or next((f.info.get("trace_id") for f in facts), None)
    if not isinstance(key, str) or not key:
        raise ValueError("the trace has no info.trace_id and its spans no mlflow.traceRequestId")
    for f in facts:
        f.info.pop("trace_id", None)
    mlflow_spans.name_tool_runs(facts)
    meta = info.get("trace_metadata") or info.get("request_metadata") or {}
    meta = meta if isinstance(meta, dict) else {}
    group = SpanGroup(key, facts, scores=_scores(info.get("assessments")),
                      session_id=_opt_str(meta.get("mlflow.trace.session")),
                      started_at=parse_ts(info.get("request_time")))
    group.info = _trace_info(info, meta)
    return group


def _facts(raw: Any, index: int) -> SpanFacts:
    if not isinstance(raw, dict):
        raise ValueError(f"data.spans[{index}] must be an object, got {type(raw).__name__}")
    attrs = raw.get("attributes") or {}
    if not isinstance(attrs, dict):
        raise ValueError(f"data.spans[{index}].attributes must be an object")
    status = raw.get("status") if isinstance(raw.get("status"), dict) else {}
    span = otlp.OtlpSpan(
        trace_id=otlp.otlp_id(raw.get("trace_id"), "trace_id") or "",
        span_id=otlp.otlp_id(raw.get("span_id"), "span_id") or "",
        parent_id=otlp.otlp_id(raw.get("parent_span_id"), "parent_span_id", required=False),
        name=str(raw.get("name") or ""),
        start=otlp.nanos(raw.get("start_time_unix_nano"), "start_time_unix_nano"),
        end=otlp.nanos(raw.get("end_time_unix_nano"), "end_time_unix_nano"),
        attrs=attrs,
        events=[_event(e) for e in raw.get("events") or []],
        status_error=status.get("code") in ("STATUS_CODE_ERROR", "ERROR", 2),
        status_message=status.get("message") or None,
    )
    facts = mlflow_spans.span_facts(span)
    facts.order = f"{index:06d}"
    request_id = mlflow_spans.attr(attrs, "mlflow.traceRequestId")
    if isinstance(request_id, str):
        facts.info["trace_id"] = request_id
    return facts


def _event(raw: Any) -> otlp.OtlpEvent:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ValueError("a span event must be an object with a name")
    attrs = raw.get("attributes") or {}
    return otlp.OtlpEvent(raw["name"], otlp.nanos(raw.get("timestamp"), "event timestamp"),
                          attrs if isinstance(attrs, dict) else {})


def _scores(assessments: Any) -> list[Score]:
    out = []
    for a in assessments if isinstance(assessments, list) else []:
        feedback = a.get("feedback") if isinstance(a, dict) else None
        if not isinstance(feedback, dict) or a.get("valid") is False or feedback.get("error"):
            continue
        name = a.get("assessment_name") or a.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError("an assessment without assessment_name")
        value = feedback.get("value")
        source = a.get("source") if isinstance(a.get("source"), dict) else {}
        numeric = isinstance(value, (bool, int, float))
        out.append(Score(name, score_value(value, f"assessment {name}") if numeric else None,
                         label=None if numeric or value is None else str(value),
                         kind="human" if source.get("source_type") == "HUMAN" else "eval",
                         comment=_opt_str(a.get("rationale"))))
    return out


def _trace_info(info: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    location = info.get("trace_location")
    experiment = location.get("mlflow_experiment") if isinstance(location, dict) else None
    if isinstance(experiment, dict) and experiment.get("experiment_id"):
        out["experiment_id"] = str(experiment["experiment_id"])
    if isinstance(info.get("state"), str):
        out["state"] = info["state"]
    if _opt_str(meta.get("mlflow.trace.user")):
        out["user_id"] = meta["mlflow.trace.user"]
    tags = info.get("tags") if isinstance(info.get("tags"), dict) else {}
    own = {k: v for k, v in tags.items() if not str(k).startswith("mlflow.")}
    if own:
        out["tags"] = own
    if isinstance(tags.get("mlflow.traceName"), str):
        out["trace_name"] = tags["mlflow.traceName"]
    return out


def file_store_sidecar(path: Path) -> bool:
    """A file the file store keeps beside a trace's spans, one per tag or metadata key: read with the spans
    (`_file_store_info`), not on its own."""
    return path.parent.name in ("tags", "request_metadata") and (path.parent.parent / "trace_info.yaml").is_file()


def _file_store_info(path: Path) -> dict[str, Any]:
    """The trace info the file store keeps beside `artifacts/traces.json`; empty for any other file."""
    folder = path.parent.parent
    beside = folder / "trace_info.yaml"
    if path.name != "traces.json" or path.parent.name != "artifacts" or not beside.is_file() or beside.is_symlink():
        return {}  # (links are not followed: a trace folder could otherwise pull in any file of the machine)
    info = yaml.safe_load(beside.read_text(encoding="utf-8")) or {}
    if not isinstance(info, dict):
        return {}
    info["tags"] = _key_files(folder / "tags")
    info["trace_metadata"] = _key_files(folder / "request_metadata")
    folder_a = folder / "assessments"
    files = sorted(folder_a.glob("*.yaml")) if folder_a.is_dir() else []
    info["assessments"] = [yaml.safe_load(f.read_text(encoding="utf-8")) for f in files if not f.is_symlink()]
    return info


def _key_files(folder: Path) -> dict[str, str]:
    """A file-store folder of one file per key, its text the value."""
    if not folder.is_dir():
        return {}
    return {f.name: f.read_text(encoding="utf-8") for f in sorted(folder.iterdir())
            if f.is_file() and not f.is_symlink()}


def _opt_str(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None
