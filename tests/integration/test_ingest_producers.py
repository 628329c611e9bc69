"""Real telemetry libraries drive a small agent against a fake model on 127.0.0.1; what they export is ingested
and compared, field by field, with what the agent did (tests/integration/drive_producers.py)."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.drive_producers import (
    CONVERSATIONS,
    QUESTION,
    REFUND_ERROR,
    REFUND_QUESTION,
    REFUND_SYSTEM,
    REFUND_TOOLS,
    SYSTEM,
    TOOLS,
    get_weather,
)
from tests.integration.fake_model_server import (
    CALL_ARGS,
    CHECKING,
    FINAL_TEXT,
    NOT_REFUNDED,
    ORDER_ARGS,
    ORDER_RESULT,
    REFUND_ARGS,
    REFUND_USAGE,
    TOOL_RESULT,
    USAGE,
    final_text,
)
from tracegym.ingest.pipeline import ingest_paths
from tracegym.store import Store, open_store

pytestmark = pytest.mark.slow  # real telemetry libraries drive an agent in subprocesses

ROOT = Path(__file__).resolve().parents[2]
NEEDS = {"otel": "opentelemetry.instrumentation.openai_v2", "openinference": "openinference.instrumentation.openai",
         "langfuse": "langfuse", "langsmith": "langsmith", "calls": "anthropic",
         "openai-agents": "openinference.instrumentation.openai_agents",
         "openllmetry": "opentelemetry.instrumentation.openai.shared", "openlit": "opentelemetry.sdk.trace"}
CASES = [("otel", "span_only", "otel-genai"), ("otel", "event_only", "otel-genai"),
         ("otel", "span_and_event", "otel-genai"), ("openinference", "", "openinference"),
         ("openinference", "responses", "openinference"),
         ("langfuse", "", "langfuse"), ("langsmith", "", "langsmith"),
         ("openai-agents", "responses", "openinference"), ("openllmetry", "", "otel-genai"),
         ("openlit", "", "otel-genai")]
SAYS_CHECKING = {"responses", "openlit"}  # whose model says a few words beside its tool call


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


def _drive(producer: str, capture: str, out: Path) -> None:
    if not _importable(NEEDS[producer]):
        pytest.skip(f"{NEEDS[producer]} is not installed: pip install -e '.[interop]'")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    subprocess.run([sys.executable, "-W", "ignore", "-m", "tests.integration.drive_producers", producer, str(out),
                    capture], check=True, env=env, cwd=ROOT, timeout=120, capture_output=True)


@pytest.fixture(scope="module")
def driven(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], Path]:
    """What a producer exported, driven once per module for each (producer, capture); read, never written to."""
    done: dict[tuple[str, str], Path] = {}

    def export(producer: str, capture: str) -> Path:
        if (producer, capture) not in done:
            out = tmp_path_factory.mktemp(producer) / "export"
            _drive(producer, capture, out)
            done[(producer, capture)] = out
        return done[(producer, capture)]

    return export


@pytest.mark.parametrize(("producer", "capture", "fmt"), CASES)
def test_what_a_real_producer_exports_is_what_the_agent_did(tmp_path: Path, producer: str, capture: str,
                                                            fmt: str, driven: Callable[[str, str], Path]) -> None:
    out = driven(producer, capture)
    store = open_store(tmp_path / "s.duckdb")
    summary = ingest_paths(store, [str(out)])
    assert [f.format for f in summary.files if f.status == "loaded"] and summary.total("errors") == 0
    _check_what_the_agent_did(store, fmt, capture or producer, scored=producer in ("otel", "langfuse"))


def _check_what_the_agent_did(store: Store, fmt: str, capture: str, scored: bool) -> None:
    """The store's one trace, field by field, against the agent's run (`drive_producers.agent`)."""
    (tid, got_fmt, outcome, started, ended, meta), = store.con.execute(
        "SELECT trace_id, format, outcome, started_at, ended_at, metadata FROM traces").fetchall()
    assert got_fmt == fmt
    messages = store.con.execute("SELECT role, content, tool_call_id, input_tokens, output_tokens, latency_ms "
                                 "FROM messages ORDER BY idx").fetchall()
    roles = [m[0] for m in messages]
    has_system = roles[0] == "system"
    assert roles == ["system"] * has_system + ["user", "assistant", "tool", "assistant"]
    body = messages[has_system:]
    assert body[0][1] == QUESTION and (not has_system or messages[0][1] == SYSTEM)
    assert body[2][1] == TOOL_RESULT and body[3][1] == FINAL_TEXT
    if capture in SAYS_CHECKING:  # the reply's text and call are one turn
        assert body[1][1] == CHECKING
    assert [(m[3], m[4]) for m in (body[1], body[3])] == USAGE
    assert all(m[5] and m[5] > 0 for m in (body[1], body[3]))  # the calls' latencies
    assert started and ended and started <= ended
    calls = store.con.execute("SELECT message_idx, name, arguments::VARCHAR, result, is_error, result_message_idx "
                              "FROM tool_calls").fetchall()
    assert calls == [(has_system + 1, "get_weather", json.dumps(CALL_ARGS, separators=(",", ":")), TOOL_RESULT,
                      False, has_system + 2)]
    if scored:  # the agent scored its run: a log record, a posted score, feedback
        assert outcome == "success"
        assert store.con.execute("SELECT name, value FROM scores").fetchall() == [("task_success", 1.0)]
    assert "content_not_captured" not in meta


def _check_the_refund(store: Store, producer: str) -> None:
    """The refund task's three calls (`drive_producers.REFUND_TASK`), field by field: issue_refund's backend timed
    out, and its call is stored failed, with the error the agent sent back as its result."""
    (got_fmt, started, ended, tools, meta), = store.con.execute(
        "SELECT format, started_at, ended_at, tools, metadata FROM traces").fetchall()
    assert got_fmt == "otel-genai" and started and ended and started <= ended
    assert "content_not_captured" not in meta
    said = CHECKING if producer == "openlit" else None  # openlit's model says a few words beside its calls
    named = producer == "openlit"  # its agent names the tool in each tool message; OpenLLMetry records no name
    rows = store.con.execute("SELECT role, content, tool_call_id, name FROM messages ORDER BY idx").fetchall()
    assert rows == [("system", REFUND_SYSTEM, None, None), ("user", REFUND_QUESTION, None, None),
                    ("assistant", said, None, None),
                    ("tool", ORDER_RESULT, "call_lookup_order_1", "lookup_order" if named else None),
                    ("assistant", said, None, None),
                    ("tool", REFUND_ERROR, "call_issue_refund_2", "issue_refund" if named else None),
                    ("assistant", NOT_REFUNDED, None, None)]
    replies = store.con.execute("SELECT input_tokens, output_tokens, latency_ms FROM messages "
                                "WHERE role = 'assistant' ORDER BY idx").fetchall()
    assert [r[:2] for r in replies] == REFUND_USAGE and all(r[2] > 0 for r in replies)
    calls = store.con.execute("SELECT message_idx, call_id, name, arguments::VARCHAR, result, is_error, "
                              "result_message_idx FROM tool_calls ORDER BY message_idx").fetchall()
    assert calls == [(2, "call_lookup_order_1", "lookup_order", _compact(ORDER_ARGS), ORDER_RESULT, False, 3),
                     (4, "call_issue_refund_2", "issue_refund", _compact(REFUND_ARGS), REFUND_ERROR, True, 5)]
    assert (json.loads(tools) if tools else None) == (None if producer == "openlit" else REFUND_TOOLS)


def _compact(value: object) -> str:
    """JSON as the store's JSON column prints it: keys sorted, no spaces."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _check(store: Store, producer: str, capture: str) -> None:
    if capture == "refund":
        _check_the_refund(store, producer)
    else:
        _check_what_the_agent_did(store, "otel-genai", capture or producer, scored=producer == "otel")


@pytest.mark.parametrize("producer", ["openllmetry", "openlit"])
def test_a_tool_that_fails_arrives_as_a_failed_call_with_its_error(
        tmp_path: Path, producer: str, driven: Callable[[str, str], Path]) -> None:
    """A refund conversation of three calls whose second tool fails: the error reaches tracegym only as the
    `tool` message of the next call's input (neither producer records tool spans), and is stored as other
    formats' tool errors are: the call flagged `is_error`, its result the text the model was sent."""
    store = open_store(tmp_path / "s.duckdb")
    summary = ingest_paths(store, [str(driven(producer, "refund"))])
    assert [f.format for f in summary.files if f.status == "loaded"] and summary.total("errors") == 0
    _check_the_refund(store, producer)


def _rows(store: Store) -> dict[str, list[tuple]]:
    """Every stored row of every trace, but for the file each came from."""
    q = {"traces": "SELECT * EXCLUDE (source_id) FROM traces", "messages": "SELECT * FROM messages",
         "tool_calls": "SELECT * FROM tool_calls", "scores": "SELECT * FROM scores"}
    return {k: sorted(store.con.execute(sql).fetchall(), key=repr) for k, sql in q.items()}


def test_openllmetry_indexed_attributes_give_the_tools_and_openlit_keeps_tool_names(
        tmp_path: Path, driven: Callable[[str, str], Path]) -> None:
    """OpenLLMetry's `llm.request.functions.N.*` are the tools offered; openlit's tool messages keep their `name`,
    and its `@openlit.trace` function span (a return value in `gen_ai.output.messages`) is no LLM call."""
    for producer in ("openllmetry", "openlit"):
        out = driven(producer, "")
        store = open_store(tmp_path / f"{producer}.duckdb")
        assert ingest_paths(store, [str(out)]).total("errors") == 0
        tools, spans = store.con.execute("SELECT tools, metadata->>'spans' FROM traces").fetchone()
        names = [n for (n,) in store.con.execute("SELECT name FROM messages WHERE role = 'tool'").fetchall()]
        if producer == "openllmetry":
            assert json.loads(tools) == TOOLS and names == [None]
        else:
            assert tools is None and names == ["get_weather"] and spans == "3"


@pytest.mark.parametrize(("producer", "capture"), [("openllmetry", ""), ("openlit", ""), ("openllmetry", "refund"),
                                                 ("openlit", "refund")])
def test_an_export_split_into_three_files_ingested_newest_first_is_the_whole(
        tmp_path: Path, producer: str, capture: str, driven: Callable[[str, str], Path]) -> None:
    out = driven(producer, capture)
    lines = [line for f in sorted(out.iterdir()) for line in f.read_text().splitlines(keepends=True)]
    whole = open_store(tmp_path / "whole.duckdb")
    ingest_paths(whole, [str(out)])
    folder = tmp_path / "pieces"
    folder.mkdir()
    cuts = [len(lines) // 3, 2 * len(lines) // 3]
    pieces = []
    for i, (a, b) in enumerate(zip([0, *cuts], [*cuts, len(lines)], strict=True)):
        pieces.append(folder / f"spans-{i}.jsonl")
        pieces[-1].write_text("".join(lines[a:b]))
    store = open_store(tmp_path / "pieces.duckdb")
    runs = [ingest_paths(store, [str(p)]) for p in reversed(pieces)]
    assert sum(r.total("errors") + r.total("conflicts") for r in runs) == 0
    assert _rows(store) == _rows(whole)
    _check(store, producer, capture)


@pytest.mark.parametrize("producer", ["openlit", "openllmetry"])
def test_llm_calls_without_a_parent_span_are_stitched_into_their_conversations_in_any_order(
        tmp_path: Path, producer: str, driven: Callable[[str, str], Path]) -> None:
    """A plain loop under an instrumented client, no span around it: each call is a trace of its own. The
    interleaved conversations come back one trace each, tool results linked, also from three files ingested
    newest first and in a shuffled order, each run of its own."""
    out = driven(producer, "conversations")
    whole = open_store(tmp_path / "whole.duckdb")
    assert ingest_paths(whole, [str(out)]).total("errors") == 0
    said = CHECKING if producer == "openlit" else None  # openlit's model says a few words beside its calls
    traces = whole.con.execute("SELECT trace_id, metadata->>'calls' FROM traces").fetchall()
    assert len(traces) == len(CONVERSATIONS)
    by_question = {}
    for tid, n_calls in traces:
        rows = whole.con.execute("SELECT role, content, input_tokens, output_tokens FROM messages "
                                 "WHERE trace_id = ? ORDER BY idx", [tid]).fetchall()
        calls = whole.con.execute("SELECT message_idx, arguments::VARCHAR, result, is_error, result_message_idx "
                                  "FROM tool_calls WHERE trace_id = ? ORDER BY message_idx", [tid]).fetchall()
        by_question[rows[1][1]] = (rows, calls, n_calls)
    for questions in CONVERSATIONS:
        rows, calls, n_calls = by_question[questions[0]]
        messages, did = _conversation(questions)
        assert [r[:2] for r in rows] == [(role, said if role == "assistant" and text is None else text)
                                         for role, text in messages]
        assert [c[:3] for c in calls] == did and [c[4] for c in calls] == [c[0] + 1 for c in did]
        assert not any(c[3] for c in calls)
        assert [(r[2], r[3]) for r in rows if r[0] == "assistant"] == [USAGE[0], USAGE[1]] * len(questions)
        assert n_calls == str(2 * len(questions))
    lines = (out / "spans.jsonl").read_text().splitlines(keepends=True)
    folder = tmp_path / "pieces"
    folder.mkdir()
    pieces = []
    for i, (a, b) in enumerate(zip([0, 4, 9], [4, 9, len(lines)], strict=True)):
        pieces.append(folder / f"spans-{i}.jsonl")
        pieces[-1].write_text("".join(lines[a:b]))
    for name, order in (("newest first", pieces[::-1]), ("shuffled", [pieces[1], pieces[2], pieces[0]])):
        store = open_store(tmp_path / f"{name}.duckdb")
        runs = [ingest_paths(store, [str(p)]) for p in order]
        assert sum(r.total("errors") + r.total("conflicts") for r in runs) == 0, name
        assert _rows(store) == _rows(whole), name


def test_a_langsmith_trace_sent_in_parts_is_merged_whatever_the_order(tmp_path: Path) -> None:
    """The SDK posts a run when it starts and patches it when it ends; feedback names only its run. Each request
    of one traced agent run in a file of its own, with the feedback in another, ingested in any order over
    several runs, gives the trace of the runs as the service stores them."""
    out = tmp_path / "export"
    _drive("langsmith", "split", out)
    whole = open_store(tmp_path / "whole.duckdb")
    assert ingest_paths(whole, [str(out / "runs.jsonl"), str(out / "feedback.jsonl")]).total("errors") == 0
    _check_what_the_agent_did(whole, "langsmith", "", scored=True)
    pieces = [*sorted((out / "sent").iterdir()), out / "feedback.jsonl"]
    assert len(pieces) >= 4
    for seed in range(4):
        rng = random.Random(seed)
        order = rng.sample(pieces, len(pieces))
        if seed == 0:  # the feedback before the runs, the root's end before its start
            order = [pieces[-1], *reversed(pieces[:-1])]
        store = open_store(tmp_path / f"s{seed}.duckdb")
        cut = rng.randint(1, len(order) - 1)
        runs = [ingest_paths(store, [str(p) for p in part]) for part in (order[:cut], order[cut:], pieces)]
        assert sum(r.total("errors") + r.total("conflicts") for r in runs) == 0, order
        assert [f.status for f in runs[-1].files] == ["already ingested"] * len(pieces)
        assert _rows(store) == _rows(whole), order


def test_content_never_captured_is_stored_as_missing_and_flagged(tmp_path: Path) -> None:
    out = tmp_path / "export"
    _drive("otel", "no_content", out)
    store = open_store(tmp_path / "s.duckdb")
    ingest_paths(store, [str(out)])
    meta = store.scalar("SELECT metadata->>'content_not_captured' FROM traces")
    assert "messages" in meta
    assert store.scalar("SELECT count(*) FROM messages WHERE role = 'assistant' AND content IS NOT NULL") == 0
    tokens = store.con.execute("SELECT input_tokens, output_tokens FROM messages WHERE role = 'assistant' "
                               "ORDER BY idx").fetchall()
    assert tokens == USAGE


def _conversation(questions: tuple[str, ...]) -> tuple[list[tuple[str, str | None]], list[tuple[int, str, str]]]:
    """What the agent said and did in one conversation of the script: (role, content) per message, and
    (message_idx, arguments, result) per get_weather call."""
    messages: list[tuple[str, str | None]] = [("system", SYSTEM)]
    calls = []
    for question in questions:
        city = question.split()[-1].strip("?")
        calls.append((len(messages) + 1, json.dumps({"city": city}, separators=(",", ":")), get_weather(city)))
        messages += [("user", question), ("assistant", None), ("tool", get_weather(city)),
                     ("assistant", final_text(city))]
    return messages, calls


@pytest.fixture(scope="module")
def call_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The openai and anthropic SDKs' calls, one JSONL line each (`drive_producers.calls`), driven once."""
    out = tmp_path_factory.mktemp("calls") / "export"
    _drive("calls", "", out)
    return out


def test_a_log_of_api_calls_gives_one_trace_per_conversation(tmp_path: Path, call_logs: Path) -> None:
    out = call_logs
    store = open_store(tmp_path / "s.duckdb")
    summary = ingest_paths(store, [str(out)])
    assert summary.total("errors") == 0 and summary.total("conflicts") == 0
    assert {f.format for f in summary.files} == {"openai-chat", "anthropic-messages"}
    for fmt in ("openai-chat", "anthropic-messages"):
        traces = store.con.execute("SELECT trace_id, metadata->>'calls' FROM traces WHERE format = ?",
                                   [fmt]).fetchall()
        assert len(traces) == len(CONVERSATIONS)
        by_question = {}
        for tid, n_calls in traces:
            rows = store.con.execute("SELECT role, content, input_tokens, output_tokens FROM messages "
                                     "WHERE trace_id = ? ORDER BY idx", [tid]).fetchall()
            calls = store.con.execute("SELECT message_idx, arguments::VARCHAR, result, is_error FROM tool_calls "
                                      "WHERE trace_id = ? ORDER BY message_idx", [tid]).fetchall()
            by_question[rows[1][1]] = (rows, calls, n_calls)
        for questions in CONVERSATIONS:
            rows, calls, n_calls = by_question[questions[0]]
            messages, did = _conversation(questions)
            assert [r[:2] for r in rows] == messages
            assert [c[:3] for c in calls] == did and not any(c[3] for c in calls)
            replies = [(r[2], r[3]) for r in rows if r[0] == "assistant"]
            assert replies == [USAGE[0], USAGE[1]] * len(questions)  # each reply's tokens, from its own call
            assert n_calls == str(2 * len(questions))
    again = ingest_paths(store, [str(out)])
    assert [f.status for f in again.files] == ["already ingested"] * 2


def test_a_log_of_api_calls_that_grew_since_its_last_ingest_extends_its_conversations(
        tmp_path: Path, call_logs: Path) -> None:
    """The log as it was part way through the conversations, then the whole log at the same path: each stored
    conversation is replaced by its longer self, as if the whole log had been ingested once."""
    out = call_logs
    for name in ("chat_calls.jsonl", "anthropic_calls.jsonl"):
        lines = (out / name).read_text().splitlines(keepends=True)
        whole = open_store(tmp_path / f"whole-{name}.duckdb")
        ingest_paths(whole, [str(out / name)])
        log = tmp_path / name
        store = open_store(tmp_path / f"grown-{name}.duckdb")
        for n in (4, 7, len(lines)):  # cuts between calls of the interleaved conversations
            log.write_text("".join(lines[:n]))
            done = ingest_paths(store, [str(log)]).files[0]
            assert (done.errors, done.conflicts) == (0, 0), n
        assert done.merged == len(CONVERSATIONS) - 1  # the third, of one question, was done by line 7
        assert _rows(store) == _rows(whole)
        assert [f.path for f in ingest_paths(store, [str(log)]).files if f.status == "already ingested"]


@pytest.mark.parametrize("cuts", [(3, 6), (1, 2, 5, 9)])
def test_a_log_of_api_calls_cut_into_files_ingested_in_order_gives_the_conversations_of_the_whole(
        tmp_path: Path, call_logs: Path, cuts: tuple[int, ...]) -> None:
    """Rotated or `split` at line boundaries, the pieces ingested in order, one ingest each: each conversation
    goes on across the pieces under its first call's id, as in the whole log."""
    for name in ("chat_calls.jsonl", "anthropic_calls.jsonl"):
        lines = (call_logs / name).read_text().splitlines(keepends=True)
        whole = open_store(tmp_path / f"whole-{name}.duckdb")
        ingest_paths(whole, [str(call_logs / name)])
        store = open_store(tmp_path / f"pieces-{cuts}-{name}.duckdb")
        folder = tmp_path / f"pieces-{cuts}-{name}"
        folder.mkdir()
        summaries = []
        for i, (a, b) in enumerate(zip([0, *cuts], [*cuts, len(lines)], strict=True)):
            piece = folder / f"{name}.{i}"
            piece.write_text("".join(lines[a:b]))
            summaries.append(ingest_paths(store, [str(piece)]))
        assert sum(s.total("errors") + s.total("conflicts") for s in summaries) == 0
        assert _rows(store) == _rows(whole)
        assert sum(s.total("traces") for s in summaries) == len(CONVERSATIONS)
