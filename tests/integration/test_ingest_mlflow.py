"""MLflow 3 tracing drives a small agent against a fake model on 127.0.0.1 (tests/integration/drive_mlflow.py);
its trace JSON, `search_traces` export, file-store folders and OTLP exports are ingested and compared, field by
field, with what the agent did."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
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
                   check=True, env=env, cwd=ROOT, timeout=600, capture_output=True)


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


@pytest.fixture
def mlflow_server(tmp_path: Path) -> Iterator[str]:
    """`mlflow server` on a free port of 127.0.0.1, its store in tmp_path; its URL once it answers."""
    if importlib.util.find_spec("mlflow") is None:
        pytest.skip("mlflow is not installed: pip install -e '.[mlflow]'")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # Without litellm, as where it is not installed (see drive_mlflow.main): the server prices the spans it is
    # sent, and its worker process would import litellm for that, which takes minutes on a busy machine. An
    # import of it fails in the server's processes; MLflow then uses its own price table.
    blocker = tmp_path / "no_litellm" / "litellm"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('litellm is left out of this test server')\n")
    env = {**os.environ, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1", "PYTHONPATH": str(blocker.parent),
           "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}  # no background job workers: tracing needs none
    log = (tmp_path / "server.log").open("wb")
    server = subprocess.Popen([sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
                               "--workers", "1", "--backend-store-uri", f"sqlite:///{tmp_path / 'mlflow.db'}",
                               "--default-artifact-root", str(tmp_path / "artifacts")],
                              stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2):
                    break
            except OSError:
                assert server.poll() is None, (tmp_path / "server.log").read_text()[-3000:]
                time.sleep(0.5)
        else:
            pytest.fail("mlflow server did not answer within 120 s")
        yield url
    finally:  # the server and the worker processes it started, all of its session
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()


def test_traces_pulled_from_a_running_mlflow_server_incrementally(tmp_path: Path, mlflow_server: str, cli,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent traced into a real MLflow server; `ingest mlflow+http://…` pulls its traces with their feedback,
    a page of the trace list at a time. Pulling again fetches nothing and changes nothing; feedback added on the
    server since is pulled with its trace, which replaces the stored one."""
    monkeypatch.setattr("tracegym.ingest.mlflow_pull.PAGE", 1)  # one trace a page: the pages are followed
    drive("server", tmp_path / "out", mlflow_server)
    source, db = "mlflow+" + mlflow_server, str(tmp_path / "s.duckdb")
    first = cli("ingest", source, "--experiment", "weather", "--since", "1d", "--store", db, "--json")
    assert first.exit_code == 0, first.stderr
    assert json.loads(first.stdout)["pull"]["traces_fetched"] == 2
    store = open_store(tmp_path / "s.duckdb")
    check_the_agents_runs(store, "mlflow", scored=True)
    before = rows(store)
    store.close()
    again = cli("ingest", source, "--experiment", "weather", "--store", db, "--json")
    assert json.loads(again.stdout)["pull"] == {**json.loads(first.stdout)["pull"], "traces_fetched": 0,
                                                "traces_unchanged": 2}
    paris = json.loads((tmp_path / "out" / "ids.json").read_text())[0]
    feedback = {"assessment": {"assessment_name": "helpful", "trace_id": paris, "feedback": {"value": 0.5},
                               "source": {"source_type": "HUMAN", "source_id": "reviewer"}}}
    request = urllib.request.Request(f"{mlflow_server}/api/3.0/mlflow/traces/{paris}/assessments", method="POST",
                                     data=json.dumps(feedback).encode(), headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=30).close()
    third = cli("ingest", source, "--experiment", "weather", "--store", db, "--json")
    assert json.loads(third.stdout)["pull"]["traces_fetched"] == 1
    store = open_store(tmp_path / "s.duckdb")
    after = rows(store)
    assert sorted(store.con.execute("SELECT name, value FROM scores WHERE trace_id = ?", [f"mlflow:{paris}"])
                  .fetchall()) == [("helpful", 0.5), ("task_success", 1.0)]
    assert after["messages"] == before["messages"] and after["tool_calls"] == before["tool_calls"]
    assert store.scalar("SELECT count(*) FROM mlflow_pulls") == 2


def test_a_pull_from_no_server_or_no_experiment_says_so_and_stores_nothing(tmp_path: Path, cli) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = cli("ingest", f"mlflow+http://127.0.0.1:{port}", "--experiment", "weather", "--store",
                 tmp_path / "s.duckdb")
    assert result.exit_code == 2 and "Could not reach the MLflow server" in result.stderr
    assert cli("ingest", "mlflow+http://127.0.0.1:1", "--store", tmp_path / "s.duckdb").exit_code == 2
    assert "--since" in cli("ingest", f"mlflow+http://127.0.0.1:{port}", "--experiment", "w", "--since", "soon",
                            "--store", tmp_path / "s.duckdb").stderr
