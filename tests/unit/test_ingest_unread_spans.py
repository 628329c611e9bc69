"""A trace whose spans are none of them an LLM call or a tool execution that the format reads waits for a file
with its calls, and says so: what it holds, and that its producer may write what tracegym does not read."""

from __future__ import annotations

import json
from pathlib import Path


def _span(span_id: str, parent: str | None, name: str, attrs: dict[str, str]) -> dict:
    return {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": span_id, "parentSpanId": parent or "",
            "name": name, "startTimeUnixNano": "1735725600000000000", "endTimeUnixNano": "1735725601000000000",
            "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()]}


def test_spans_that_no_reader_knows_leave_a_trace_waiting_that_says_what_it_holds(tmp_path: Path, cli) -> None:
    spans = [_span("eee19b7ec3c1b174", None, "agent run", {"acme.kind": "agent"}),
             _span("eee19b7ec3c1b175", "eee19b7ec3c1b174", "model call", {"acme.kind": "llm",
                                                                          "acme.prompt": "Weather in Paris?"})]
    export = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "acme"},
                                                                                  "spans": spans}]}]}
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(export) + "\n")
    result = cli("ingest", path, "--store", tmp_path / "s.duckdb", "--json")
    data = json.loads(result.stdout)
    assert (data["traces"], data["traces_waiting"]) == (0, 1)
    assert data["waiting_why"] == ["trace 5b8efff798038103d269b633813fc60c (line 1): no LLM calls or tool executions "
                                   "in this trace yet: its 2 spans ('agent run', 'model call') are none of them an "
                                   "LLM call or a tool execution this format reads"]
    shown = cli("ingest", path, "--store", tmp_path / "t.duckdb").stderr
    assert "1 of them hold spans that are none of them an LLM call" in " ".join(shown.split())
