"""MLflow 3 tracing drives a small agent against a fake model on 127.0.0.1 (tests/integration/drive_mlflow.py);
its trace JSON, `search_traces` export, file-store folders and OTLP exports are ingested and compared, field by
field, with what the agent did."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.drive_mlflow import QUESTIONS, TOOL_ERROR
from tests.integration.drive_producers import SYSTEM
from tests.integration.fake_model_server import CALL_ARGS, FINAL_TEXT, TOOL_RESULT, USAGE, final_text
from tracegym.ingest.pipeline import ingest_paths
from tracegym.store import Store, open_store

pytestmark = pytest.mark.slow  # MLflow runs an agent in a subprocess

ROOT = Path(__file__).resolve().parents[2]


def drive(mode: str, out: Path, *args: str) -> None:
    if importlib.util.find_spec("mlflow") is None:
        pytest.skip("mlflow is not installed: pip install -e '.[mlflow]'")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    subprocess.run([sys.executable, "-W", "ignore", "-m", "tests.integration.drive_mlflow", mode, str(out), *args],
                   check=True, env=env, cwd=ROOT, timeout=240, capture_output=True)


@pytest.fixture(scope="module")
def json_exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mlflow") / "json"
    drive("json", out)
    return out


def check_the_agents_runs(store: Store, fmt: str, scored: bool) -> None:
    """The store's two traces, field by field, against the agent's two conversations."""
    traces = store.con.execute("SELECT trace_id, format, outcome, started_at, ended_at, model FROM traces "
                               "ORDER BY started_at").fetchall()
    assert [t[1] for t in traces] == [fmt, fmt] and {t[5] for t in traces} == {"gpt-test"}
    for (tid, _, outcome, started, ended, _), question in zip(traces, QUESTIONS, strict=True):
        city = question.split()[-1].strip("?")
        failed = city == "Atlantis"
        result = TOOL_ERROR if failed else TOOL_RESULT
        messages = store.con.execute("SELECT role, content, tool_call_id, input_tokens, output_tokens, latency_ms "
                                     "FROM messages WHERE trace_id = ? ORDER BY idx", [tid]).fetchall()
        assert [m[:3] for m in messages] == [("system", SYSTEM, None), ("user", question, None),
                                             ("assistant", None, None), ("tool", result, "call_weather_1"),
                                             ("assistant", final_text(city) if failed else FINAL_TEXT, None)]
        assert [(m[3], m[4]) for m in (messages[2], messages[4])] == USAGE
        assert all(m[5] > 0 for m in (messages[2], messages[4]))
        assert started and ended and started < ended
        calls = store.con.execute("SELECT message_idx, call_id, name, arguments::VARCHAR, result, is_error, "
                                  "result_message_idx FROM tool_calls WHERE trace_id = ?", [tid]).fetchall()
        args = json.dumps({**CALL_ARGS, "city": city}, separators=(",", ":"))
        assert calls == [(2, "call_weather_1", "get_weather", args, result, failed, 3)]
        scores = store.con.execute("SELECT name, value, kind, comment FROM scores WHERE trace_id = ?",
                                   [tid]).fetchall()
        if scored:  # a person's feedback on Paris, a judge's with its rationale on Atlantis
            assert scores == ([("task_success", 0.0, "eval", "no forecast given")] if failed
                              else [("task_success", 1.0, "human", None)])
            assert outcome == ("failure" if failed else "success")
        else:
            assert scores == [] and outcome is None


def rows(store: Store) -> dict[str, list[tuple]]:
    q = {"traces": "SELECT * EXCLUDE (source_id) FROM traces", "messages": "SELECT * FROM messages",
         "tool_calls": "SELECT * FROM tool_calls", "scores": "SELECT * FROM scores"}
    return {k: sorted(store.con.execute(sql).fetchall(), key=repr) for k, sql in q.items()}


@pytest.mark.parametrize("export", ["traces.jsonl", "search.json", "mlruns"])
def test_mlflow_trace_json_is_what_the_agent_did(tmp_path: Path, json_exports: Path, export: str) -> None:
    """`Trace.to_json()` lines, `search_traces()`'s DataFrame as JSON, the file store's trace folders (their
    assessments read beside the spans) all give the same two traces."""
    store = open_store(tmp_path / "s.duckdb")
    summary = ingest_paths(store, [str(json_exports / export)])
    assert summary.total("errors") == 0 and summary.total("traces") == 2
    check_the_agents_runs(store, "mlflow", scored=True)


def test_mlflow_trace_json_in_three_files_ingested_newest_first_is_the_whole(tmp_path: Path,
                                                                             json_exports: Path) -> None:
    whole = open_store(tmp_path / "whole.duckdb")
    ingest_paths(whole, [str(json_exports / "traces.jsonl")])
    lines = (json_exports / "traces.jsonl").read_text().splitlines(keepends=True)
    pieces = [tmp_path / "1.jsonl", tmp_path / "2.jsonl", json_exports / "search.json"]
    for piece, line in zip(pieces, lines, strict=False):
        piece.write_text(line)
    store = open_store(tmp_path / "s.duckdb")
    runs = [ingest_paths(store, [str(p)]) for p in reversed(pieces)]
    assert sum(r.total("errors") + r.total("conflicts") for r in runs) == 0
    assert rows(store) == rows(whole)


@pytest.mark.parametrize(("mode", "scored"), [("otlp", False), ("semconv", False)])
def test_mlflow_otlp_export_is_what_the_agent_did(tmp_path: Path, mode: str, scored: bool) -> None:
    """MLflow's own attributes (`mlflow.spanInputs`, …) read like the GenAI semantic conventions; feedback is
    not part of an OTLP export. Its spans cut into three files, ingested newest first, give the same traces."""
    out = tmp_path / mode
    drive(mode, out)
    whole = open_store(tmp_path / "whole.duckdb")
    summary = ingest_paths(whole, [str(out / "spans.jsonl")])
    assert summary.total("errors") == 0 and summary.total("waiting") == 0
    check_the_agents_runs(whole, "otel-genai", scored)
    spans = [(doc, rs, ss, span) for line in (out / "spans.jsonl").read_text().splitlines()
             for doc in [json.loads(line)] for rs in doc["resourceSpans"] for ss in rs["scopeSpans"]
             for span in ss["spans"]]
    thirds = [spans[i::3] for i in range(3)]
    for n, third in enumerate(thirds):
        docs = [{"resourceSpans": [{**rs, "scopeSpans": [{**ss, "spans": [span]}]}]} for _, rs, ss, span in third]
        (tmp_path / f"part{n}.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    store = open_store(tmp_path / "s.duckdb")
    runs = [ingest_paths(store, [str(tmp_path / f"part{n}.jsonl")]) for n in (2, 1, 0)]
    assert sum(r.total("errors") + r.total("conflicts") for r in runs) == 0
    assert rows(store) == rows(whole)
