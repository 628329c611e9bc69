"""OTel GenAI, OpenInference, Langfuse and LangSmith adapters on fixtures written from their public schemas.

No real traces of these formats are in ../shared/data/traces; each fixture names only fields of the
schema files each adapter's docstring names.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from tracegym.ingest.adapters.base import SourceFile
from tracegym.ingest.adapters.span_messages import Turn
from tracegym.ingest.adapters.spans import LlmCall, SpanFacts, SpanGroup, build_trace, outcome_from_scores
from tracegym.ingest.normalize import link_tool_results
from tracegym.ingest.pipeline import detect
from tracegym.ingest.reading import take_sample
from tracegym.ingest.records import BadRecord, RawRecord, Score, Trace
from tracegym.store import open_store

ROLES = {"system", "user", "assistant", "tool"}


def load(path: Path) -> tuple[dict[str, Trace], list[BadRecord], list[str]]:
    """What the pipeline does to one file: detect, group, normalize, link. Returns traces by
    source trace id, bad records and the locators of the good records."""
    sample = take_sample(path)
    adapter = detect(path, sample)
    assert adapter is not None, f"no adapter claimed {path}"
    src = SourceFile(path, "test", sample)
    traces: dict[str, Trace] = {}
    bad: list[BadRecord] = []
    locators: list[str] = []
    for rec in adapter.records(src):
        if isinstance(rec, BadRecord):
            bad.append(rec)
            continue
        locators.append(rec.locator)
        for trace in adapter.to_traces(rec, src):
            link_tool_results(trace)
            traces[trace.metadata["source_trace_id"]] = trace
    return traces, bad, locators


def roles(trace: Trace) -> list[str]:
    return [m.role for m in trace.messages]


def calls(trace: Trace) -> dict[str, object]:
    return {c.name: c for c in trace.tool_calls}


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


# --- OpenTelemetry GenAI -----------------------------------------------------------------------------


def test_otel_current_conventions(fixtures_dir: Path) -> None:
    traces, bad, _ = load(fixtures_dir / "otel" / "current.json")
    assert not bad
    t = traces["4bf92f3577b34da6a3ce929d0e0e4736"]
    assert t.trace_id == "otel-genai:4bf92f3577b34da6a3ce929d0e0e4736"
    # two chat spans whose inputs repeat the history: each turn appears once
    assert roles(t) == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert t.messages[0].content == "You are a weather assistant. Use the tools."
    assert t.messages[-1].content.startswith("It is rainy and 57°F in Paris today.")
    weather, forecast = calls(t)["get_weather"], calls(t)["get_forecast"]
    assert weather.arguments == {"location": "Paris"} and forecast.arguments == {"location": "Paris", "days": 1}
    assert weather.message_idx == forecast.message_idx == 2
    assert (weather.call_id, weather.result, weather.result_message_idx, weather.is_error) == (
        "call_VSPygqKTWdrhaFErNvMV18Yl", "rainy, 57°F", 3, False)
    # the result text carries no "Error:"; the flag comes from the execute_tool span's status
    assert (forecast.result, forecast.result_message_idx, forecast.is_error) == ("forecast service timed out", 4, True)
    assert (t.messages[2].input_tokens, t.messages[2].output_tokens) == (52, 38)
    assert (t.messages[5].input_tokens, t.messages[5].output_tokens) == (131, 24)
    assert t.messages[1].ts == at("2025-01-01T10:00:00.100") and t.messages[2].ts == at("2025-01-01T10:00:01.200")
    assert t.messages[2].latency_ms == pytest.approx(1100)
    assert (t.started_at, t.ended_at) == (at("2025-01-01T10:00:00"), at("2025-01-01T10:00:04"))
    assert t.session_id == "conv_5j66UpCpwteGg4YSxUnt7lPY" and t.model == "gpt-4o-2024-08-06"
    assert [(s.name, s.value, s.label, s.kind) for s in t.scores] == [("task_success", 1.0, "pass", "eval")]
    assert t.outcome == "success"
    assert [tool["name"] for tool in t.tools] == ["get_weather", "get_forecast"]
    assert t.metadata["agent"] == "WeatherBot" and t.metadata["service"] == "weather-agent"


def test_otel_tool_spans_without_captured_content_still_become_calls(fixtures_dir: Path) -> None:
    traces, _, _ = load(fixtures_dir / "otel" / "current.json")
    t = traces["0af7651916cd43dd8448eb211c80319c"]
    # content capture off: each chat span is an assistant turn with only its tokens
    assert roles(t) == ["assistant", "tool", "tool", "assistant"]
    assert [m.content for m in t.messages] == [None, None, "PermissionError: refunds above $100 need approval", None]
    lookup, refund = calls(t)["lookup_order"], calls(t)["issue_refund"]
    assert (lookup.message_idx, lookup.call_id, lookup.result_message_idx, lookup.is_error) == (0, "call_x1", 1, False)
    assert (refund.message_idx, refund.call_id, refund.result_message_idx, refund.is_error) == (0, "call_x2", 2, True)
    assert (t.messages[0].input_tokens, t.messages[3].output_tokens) == (40, 20)
    assert t.outcome is None and t.scores == []


def test_otel_deprecated_prompt_and_completion(fixtures_dir: Path) -> None:
    traces, bad, locators = load(fixtures_dir / "otel" / "deprecated.jsonl")
    assert not bad
    assert "trace 6e0c63257de34c92bf9efcd03927272e (lines 2-3)" in locators
    t = traces["5b8aa5a2d2c872e8321cf37308d69df2"]
    # span 1: gen_ai.content.prompt/completion events; span 2: gen_ai.prompt/completion attributes (Python repr)
    assert [(m.role, m.content) for m in t.messages] == [
        ("system", "You are terse."), ("user", "What is the capital of France?"), ("assistant", "Paris."),
        ("user", "And of Italy?"), ("assistant", "Rome.")]
    assert (t.messages[2].input_tokens, t.messages[2].output_tokens) == (21, 2)  # gen_ai.usage.prompt_tokens
    assert t.model == "gpt-3.5-turbo-0125" and t.metadata["provider"] == "openai"


def test_otel_deprecated_message_events_as_log_records(fixtures_dir: Path) -> None:
    traces, _, _ = load(fixtures_dir / "otel" / "deprecated.jsonl")
    t = traces["6e0c63257de34c92bf9efcd03927272e"]
    assert [(m.role, m.content) for m in t.messages] == [
        ("system", "You are a support agent."), ("user", "Where is order 42?"), ("assistant", None),
        ("tool", "shipped on May 2"), ("assistant", "Order 42 shipped on May 2.")]
    (call,) = t.tool_calls
    assert (call.name, call.call_id, call.arguments, call.message_idx) == (
        "lookup_order", "call_9", {"order_id": 42}, 2)
    assert (call.result, call.result_message_idx, call.is_error) == ("shipped on May 2", 3, False)
    assert [(s.name, s.value, s.kind) for s in t.scores] == [("resolved", 0.0, "eval")]
    assert t.outcome == "failure"


def test_otel_deprecated_events_as_span_events_with_event_content(fixtures_dir: Path) -> None:
    traces, _, _ = load(fixtures_dir / "otel" / "deprecated.jsonl")
    t = traces["7f3a1e52b9c04d8e9a6b2c1d0e4f5a6b"]
    assert [(m.role, m.content) for m in t.messages] == [
        ("system", "You are helpful."), ("user", "Hi"), ("assistant", "Hello! How can I help?")]
    assert t.messages[2].output_tokens == 7


def test_malformed_span_is_quarantined_and_the_rest_of_its_trace_loads(fixtures_dir: Path, cli, store_path) -> None:
    result = cli("ingest", fixtures_dir / "otel" / "malformed_span.json", "--store", store_path, "--json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["traces"], summary["errors"]) == (1, 2)
    with open_store(store_path) as st:
        errors = st.query("SELECT locator, error, raw FROM ingest_errors ORDER BY locator")
        msgs = st.query("SELECT role, content FROM messages ORDER BY idx")
    assert [e["locator"] for e in errors] == ["$ resourceSpans[0].scopeSpans[0].spans[1]",
                                              "$ resourceSpans[0].scopeSpans[0].spans[2]"]
    assert "attributes must be a list" in errors[0]["error"] and "f1f2f3f4f5f60002" in errors[0]["raw"]
    assert "JSONDecodeError" in errors[1]["error"] and "f1f2f3f4f5f60003" in errors[1]["raw"]
    # the two good chat spans: "pong" answered twice is kept twice, the repeated history is not
    assert [(m["role"], m["content"]) for m in msgs] == [
        ("user", "ping"), ("assistant", "pong"), ("user", "again"), ("assistant", "pong")]


def test_bad_line_in_otlp_jsonl_costs_only_that_line(fixtures_dir: Path, tmp_path: Path) -> None:
    lines = (fixtures_dir / "otel" / "deprecated.jsonl").read_text().splitlines()
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join([lines[0], '{"resourceSpans": [{"scopeSpans": [{"spans": [', *lines[1:]]) + "\n")
    traces, bad, _ = load(path)
    assert [b.locator for b in bad] == ["line 2"]
    assert len(traces) == 3


# --- OpenInference -----------------------------------------------------------------------------------


def test_openinference_otlp_spans(fixtures_dir: Path) -> None:
    traces, bad, locators = load(fixtures_dir / "openinference" / "otlp_spans.jsonl")
    assert not bad
    assert "trace 9c5a3b7e1f2d4c6a8b0e2f4a6c8e0a2b (lines 1-2)" in locators  # one trace over two export batches
    t = traces["9c5a3b7e1f2d4c6a8b0e2f4a6c8e0a2b"]
    assert roles(t) == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    search, book = calls(t)["search_trains"], calls(t)["book_train"]
    assert search.arguments == {"from": "Lyon", "to": "Paris", "time": "09:00"}
    assert (search.call_id, search.message_idx, search.result_message_idx, search.is_error) == (
        "call_62136355", 2, 3, False)
    assert json.loads(search.result) == [{"train": "TGV 6604", "departs": "09:04"}]
    assert (book.call_id, book.message_idx, book.result, book.is_error) == (
        "call_62136356", 4, "card declined by issuer", True)
    # from message.contents
    assert t.messages[-1].content == "I could not book TGV 6604: the booking service refused the payment."
    assert (t.messages[2].input_tokens, t.messages[2].output_tokens) == (88, 21)
    assert t.session_id == "26bcd3d2-cad2-443d-a23c-625e47f3324a" and t.model == "gpt-4o-2024-08-06"
    assert sorted((s.name, s.value, s.label, s.kind) for s in t.scores) == [
        ("correctness", 0.0, "incorrect", "human"), ("hallucination", 0.0, "factual", "eval")]
    assert t.outcome == "failure"
    assert t.metadata["user_id"] == "user-7" and len(t.tools) == 2
    follow_up = traces["0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f50"]
    assert follow_up.session_id == t.session_id
    assert [(s.name, s.kind) for s in follow_up.scores] == [("task_success", "eval")]  # trace.annotations, CODE judge
    assert follow_up.outcome == "success"


def test_phoenix_span_json_links_tool_calls_without_ids(fixtures_dir: Path) -> None:
    traces, bad, _ = load(fixtures_dir / "openinference" / "phoenix_spans.jsonl")
    assert not bad
    t = traces["409df945-e058-4829-b240-cfbdd2ff4488"]
    assert roles(t) == ["system", "user", "assistant", "tool", "assistant"]
    (call,) = t.tool_calls
    assert (call.name, call.call_id, call.arguments, call.result, call.result_message_idx) == (
        "multiply", None, {"a": 23, "b": 87}, "2001", 3)
    assert t.messages[-1].content == "The product of 23 times 87 is 2001."
    assert (t.messages[4].input_tokens, t.messages[4].output_tokens) == (259, 14)
    assert t.session_id == "phoenix-session-1" and t.model == "gpt-3.5-turbo-0613"
    assert t.started_at == at("2024-01-11T23:45:17.900")  # -07:00 converted to UTC


# --- Langfuse ----------------------------------------------------------------------------------------


def test_langfuse_trace_with_observations_and_scores(fixtures_dir: Path) -> None:
    (path,) = (fixtures_dir / "langfuse").glob("trace-*.json")
    traces, bad, locators = load(path)
    assert not bad and locators == ["trace c9a8f7e6-d5c4-4b3a-9281-706f5e4d3c2b (item 1)"]
    t = traces["c9a8f7e6-d5c4-4b3a-9281-706f5e4d3c2b"]
    assert roles(t) == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    get_order, refund = calls(t)["get_order"], calls(t)["refund_order"]
    assert (get_order.arguments, get_order.result_message_idx, get_order.is_error) == ({"order_id": "1042"}, 3, False)
    # level ERROR on the TOOL observation flags the call; its text says nothing of an error
    assert (refund.arguments, refund.result, refund.is_error) == (
        {"order_id": "1042", "amount": 89.0}, "refunds service unavailable", True)
    assert (t.messages[2].input_tokens, t.messages[2].output_tokens) == (96, 19)  # usageDetails
    assert (t.messages[4].input_tokens, t.messages[4].output_tokens) == (140, 27)  # deprecated usage
    assert {(s.name, s.kind) for s in t.scores} == {("resolved", "human"), ("helpfulness", "eval"), ("tone", "eval")}
    assert [(s.value, s.label) for s in t.scores if s.name == "tone"] == [(None, "polite")]
    assert t.outcome == "failure"  # resolved: BOOLEAN 0
    assert t.session_id == "ticket-1042" and t.model == "gpt-4o-2024-08-06"
    assert t.metadata["user_id"] == "customer-311" and t.metadata["tags"] == ["refund", "prod"]
    assert (t.started_at, t.ended_at) == (at("2025-01-03T09:00:00"), at("2025-01-03T09:00:07.500"))


def test_langfuse_observation_and_score_rows(fixtures_dir: Path) -> None:
    traces, bad, _ = load(fixtures_dir / "langfuse" / "observations_and_scores.jsonl")
    assert not bad
    t = traces["5f0e1d2c-3b4a-4958-8776-655443322110"]
    assert [(m.role, m.content) for m in t.messages] == [
        ("user", "Translate 'bonjour' to English."), ("assistant", "Hello.")]
    assert [(s.name, s.value, s.label, s.kind) for s in t.scores] == [("correct", 1.0, "True", "eval")]
    assert t.outcome == "success"


# --- LangSmith ---------------------------------------------------------------------------------------


def test_langsmith_runs_and_feedback(fixtures_dir: Path) -> None:
    traces, bad, _ = load(fixtures_dir / "langsmith" / "runs.jsonl")
    assert not bad
    t = traces["1e0b5f6a-0000-4c1d-8e2f-3a4b5c6d7e80"]
    assert roles(t) == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    weather, taxi = calls(t)["get_weather"], calls(t)["book_taxi"]
    assert (weather.call_id, weather.arguments, weather.result, weather.is_error) == (
        "call_L1", {"city": "Oslo"}, "-3°C, snow", False)
    assert (taxi.call_id, taxi.arguments, taxi.result_message_idx, taxi.is_error) == (
        "call_L2", {"to": "airport"}, 5, True)
    assert (t.messages[2].input_tokens, t.messages[2].output_tokens) == (80, 16)
    assert t.messages[-1].content.startswith("It is -3°C with snow in Oslo.")
    assert t.session_id == "thread-88" and t.model == "gpt-4o-mini"
    assert t.metadata["project_id"] == "6f1c4a43-3a0e-4b3e-9d3c-1f2e3d4c5b6a"
    # api -> human (end-user feedback), model -> eval (evaluators), app -> human (annotators)
    assert sorted((s.name, s.value, s.label, s.kind) for s in t.scores) == [
        ("correctness", 0.0, "incorrect", "eval"), ("helpfulness", 0.5, None, "human"),
        ("user_score", 0.0, None, "human")]
    assert t.outcome == "failure"  # correctness: False


def test_langsmith_run_tree(fixtures_dir: Path) -> None:
    traces, bad, _ = load(fixtures_dir / "langsmith" / "run_tree.json")
    assert not bad
    t = traces["2a7c9e1f-0000-4b2d-9e3f-4a5b6c7d8e90"]
    assert [(m.role, m.content) for m in t.messages] == [
        ("system", "Answer in one word."), ("user", "Capital of Australia?"), ("assistant", "Canberra.")]
    assert (t.messages[2].input_tokens, t.messages[2].output_tokens) == (20, 3)
    assert t.session_id == "conv-314" and t.model == "gpt-4o"
    assert t.outcome is None  # feedback_stats are aggregates of unknown source: kept in metadata only
    assert t.metadata["feedback_stats"] == {"correctness": {"n": 1, "avg": 1.0}}


# --- detection, through `tracegym ingest` ------------------------------------------------------------


@pytest.mark.parametrize(
    ("relpath", "fmt", "n_traces"),
    [
        ("otel/current.json", "otel-genai", 2),
        ("otel/deprecated.jsonl", "otel-genai", 3),
        ("openinference/otlp_spans.jsonl", "openinference", 2),
        ("openinference/phoenix_spans.jsonl", "openinference", 1),
        ("langfuse/trace-c9a8f7e6-d5c4-4b3a-9281-706f5e4d3c2b.json", "langfuse", 1),
        ("langfuse/observations_and_scores.jsonl", "langfuse", 1),
        ("langsmith/runs.jsonl", "langsmith", 1),
        ("langsmith/run_tree.json", "langsmith", 1),
    ],
)
def test_each_fixture_is_detected_and_stored(fixtures_dir: Path, cli, store_path, relpath: str, fmt: str,
                                             n_traces: int) -> None:
    result = cli("ingest", fixtures_dir / relpath, "--store", store_path, "--json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert list(summary["by_format"]) == [fmt]
    assert (summary["traces"], summary["errors"]) == (n_traces, 0)
    with open_store(store_path) as st:
        assert {r["role"] for r in st.query("SELECT DISTINCT role FROM messages")} <= ROLES
        assert st.scalar("SELECT count(*) FROM traces WHERE format = ?", [fmt]) == n_traces
    again = json.loads(cli("ingest", fixtures_dir / relpath, "--store", store_path, "--json").stdout)
    assert again["files_skipped_already_ingested"] == 1


# --- conversation rebuilding and outcome -------------------------------------------------------------


def _call(start: int, inputs: list[tuple[str, str]], output: str) -> SpanFacts:
    ts = datetime(2025, 1, 1, 0, 0, start)
    call = LlmCall([Turn(r, c) for r, c in inputs], [Turn("assistant", output)])
    return SpanFacts("chat", ts, ts, kind="llm", call=call)


def test_history_is_deduplicated_but_repeated_turns_are_kept() -> None:
    group = SpanGroup("t", [
        _call(1, [("user", "delete the file?")], "Sure?"),
        _call(2, [("user", "delete the file?"), ("assistant", "Sure?"), ("user", "yes")], "Really?"),
        _call(3, [("user", "delete the file?"), ("assistant", "Sure?"), ("user", "yes"), ("assistant", "Really?"),
                  ("user", "yes")], "Deleted."),
    ])
    trace = build_trace(group, "test")
    assert [m.content for m in trace.messages] == ["delete the file?", "Sure?", "yes", "Really?", "yes", "Deleted."]


def test_truncated_history_does_not_repeat_kept_turns() -> None:
    group = SpanGroup("t", [
        _call(1, [("system", "s"), ("user", "a")], "b"),
        _call(2, [("system", "s"), ("user", "a"), ("assistant", "b"), ("user", "c")], "d"),
        _call(3, [("system", "s"), ("user", "summary of a-b"), ("assistant", "d"), ("user", "e")], "f"),  # a, b dropped
    ])
    trace = build_trace(group, "test")
    assert [m.content for m in trace.messages] == ["s", "a", "b", "c", "d", "summary of a-b", "e", "f"]


def test_trace_without_llm_calls_or_tools_is_refused() -> None:
    with pytest.raises(ValueError, match="no LLM calls or tool executions"):
        build_trace(SpanGroup("t", [SpanFacts("http", None, None)]), "test")


@pytest.mark.parametrize(
    ("scores", "outcome"),
    [
        ([Score("task_success", 1.0)], "success"),
        ([Score("is_correct", None, label="incorrect")], "failure"),
        ([Score("resolved", 0.0), Score("helpfulness", 1.0)], "failure"),
        ([Score("correctness", 0.7)], None),  # not a verdict
        ([Score("success", 1.0), Score("resolved", 0.0)], None),  # sources disagree
        ([Score("helpfulness", 1.0), Score("user_score", 0.0)], None),  # nothing says success or failure
    ],
)
def test_outcome_only_from_clear_verdicts(scores: list[Score], outcome: str | None) -> None:
    assert outcome_from_scores(scores) == outcome


def test_records_of_a_grouped_file_carry_their_raw_spans(fixtures_dir: Path) -> None:
    path = fixtures_dir / "otel" / "deprecated.jsonl"
    sample = take_sample(path)
    adapter = detect(path, sample)
    recs = [r for r in adapter.records(SourceFile(path, "t", sample)) if isinstance(r, RawRecord)]
    by_locator = {r.locator: json.loads(r.raw) for r in recs}
    raw = by_locator["trace 6e0c63257de34c92bf9efcd03927272e (lines 2-3)"]
    assert len(raw) == 3 + 9  # three spans and nine log records


def test_failed_llm_call_adds_no_message_and_is_listed_in_metadata() -> None:
    ok = _call(1, [("user", "hi")], "hello")
    failed = SpanFacts("chat", datetime(2025, 1, 1, 0, 0, 2), None, kind="llm",
                       call=LlmCall([Turn("user", "more")], []), error="RateLimitError: 429")
    trace = build_trace(SpanGroup("t", [ok, failed]), "test")
    assert [(m.role, m.content) for m in trace.messages] == [("user", "hi"), ("assistant", "hello"), ("user", "more")]
    assert trace.metadata["span_errors"] == [{"span": "chat", "error": "RateLimitError: 429"}]


def test_langfuse_trace_io_stands_in_when_generations_are_silent(tmp_path: Path) -> None:
    doc = {"id": "t-io", "timestamp": "2025-01-03T09:00:00Z", "input": {"question": "2+2?"}, "output": "4",
           "observations": [{"id": "o1", "traceId": "t-io", "type": "SPAN", "name": "compute",
                             "startTime": "2025-01-03T09:00:00.1Z", "endTime": "2025-01-03T09:00:00.2Z",
                             "level": "DEFAULT"}],
           "scores": []}
    path = tmp_path / "trace-t-io.json"
    path.write_text(json.dumps(doc))
    traces, bad, _ = load(path)
    assert not bad
    assert [(m.role, m.content) for m in traces["t-io"].messages] == [
        ("user", '{"question":"2+2?"}'), ("assistant", "4")]


def test_history_that_drops_the_text_of_a_tool_calling_message_does_not_repeat_it() -> None:
    # openai-v2 2.3b0: the gen_ai.assistant.message event of the history has the tool calls but not the text.
    from tracegym.ingest.adapters.span_messages import CallPart

    calls = [CallPart("c1", "ls", {}), CallPart("c2", "pwd", {})]
    first = LlmCall([Turn("user", "look")], [Turn("assistant", "Let me look.", calls)])
    second = LlmCall([Turn("user", "look"), Turn("assistant", None, calls), Turn("tool", "a", tool_call_id="c1"),
                      Turn("tool", "b", tool_call_id="c2")], [Turn("assistant", "Done.")])
    ts = [datetime(2025, 1, 1, 0, 0, s) for s in (1, 2)]
    trace = build_trace(SpanGroup("t", [SpanFacts("chat", ts[0], ts[0], kind="llm", call=first),
                                        SpanFacts("chat", ts[1], ts[1], kind="llm", call=second)]), "test")
    assert [(m.role, m.content) for m in trace.messages] == [
        ("user", "look"), ("assistant", "Let me look."), ("tool", "a"), ("tool", "b"), ("assistant", "Done.")]
    assert [(c.message_idx, c.name) for c in trace.tool_calls] == [(1, "ls"), (1, "pwd")]
