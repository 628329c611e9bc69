"""Per-call logs as apps write them: session id, time, latency and user read from the log line beside the call."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support_log import write_support_log
from tracegym.store import open_store

STYLES = ["openai", "anthropic"]


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def ingest(cli, store: Path, *args: Any) -> dict[str, Any]:
    result = cli("ingest", *args, "--store", store, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=None)


@pytest.mark.parametrize("style", STYLES)
def test_sessions_times_latency_and_users_are_read_from_the_log_line(cli, tmp_path: Path, style: str) -> None:
    log = write_support_log(tmp_path / "log", style=style)
    summary = ingest(cli, tmp_path / "s.duckdb", log.log)
    assert (summary["traces"], summary["traces_without_session"]) == (40, 0)

    lines = lines_of(log.log)
    with open_store(tmp_path / "s.duckdb", read_only=True) as st:
        traces = st.query("SELECT trace_id, session_id, started_at, ended_at, metadata->>'user_id' AS user_id "
                          "FROM traces ORDER BY session_id")
        replies = st.query("SELECT t.session_id, m.ts, m.latency_ms FROM messages m JOIN traces t USING (trace_id) "
                           "WHERE m.role = 'assistant' ORDER BY t.session_id, m.idx")
        per_session = dict(st.con.execute("SELECT session_id, count(*) FROM messages JOIN traces USING (trace_id) "
                                          "GROUP BY session_id").fetchall())
    assert [t["session_id"] for t in traces] == [s.session_id for s in log.sessions]
    # Each session is one trace holding exactly that session's conversation (system prompt included).
    assert per_session == {s.session_id: len(s.messages) for s in log.sessions}
    by_session: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        by_session.setdefault(line["session_id"], []).append(line)
    for trace in traces:
        calls = by_session[trace["session_id"]]
        assert trace["started_at"] == utc(calls[0]["timestamp"])
        assert trace["ended_at"] == (utc(calls[-1]["timestamp"]) if len(calls) > 1 else None)
        assert trace["user_id"] == calls[0]["user_id"]
    want = [(line["session_id"], utc(line["timestamp"]), float(line["latency_ms"]))
            for line in sorted(lines, key=lambda line: (line["session_id"], line["timestamp"]))]
    assert [(r["session_id"], r["ts"], r["latency_ms"]) for r in replies] == want


@pytest.mark.parametrize("style", STYLES)
def test_labels_import_by_session_matches_every_surveyed_session(cli, tmp_path: Path, style: str) -> None:
    log = write_support_log(tmp_path / "log", style=style)
    ingest(cli, tmp_path / "s.duckdb", log.log)
    result = cli("labels", "import", log.csat, "--key", "session_id", "--outcome", "resolution",
                 "--map", "resolved=success", "--map", "unresolved=failure", "--store", tmp_path / "s.duckdb", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    surveyed = [s for s in log.sessions if s.stars is not None]
    assert (report["labelled_traces"], report["unmatched"], report["rows"]) == (len(surveyed), 0, len(surveyed))
    with open_store(tmp_path / "s.duckdb", read_only=True) as st:
        outcomes = dict(st.con.execute("SELECT session_id, outcome FROM traces").fetchall())
    want = {s.session_id: "success" if s.family in ("resolved", "handed_off") else "failure" for s in surveyed}
    assert {sid: outcomes[sid] for sid in want} == want


def nested_sessions(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The log as an app that keeps its session id under `meta.conv` writes it."""
    return [{**{k: v for k, v in line.items() if k != "session_id"}, "meta": {"conv": line["session_id"]}}
            for line in lines]


@pytest.mark.parametrize(("style", "key"), [("openai", "meta.conv"), ("anthropic", "$.meta.conv")])
def test_session_key_names_a_nested_field_and_the_summary_counts_traces_without(cli, tmp_path: Path, style: str,
                                                                               key: str) -> None:
    log = write_support_log(tmp_path / "log", style=style)
    nested = write_lines(tmp_path / "nested.jsonl", nested_sessions(lines_of(log.log)))

    without = cli("ingest", nested, "--store", tmp_path / "a.duckdb")
    assert without.exit_code == 0, without.output
    assert "40 of the 40 traces stored have no session id" in " ".join(without.stderr.split())
    assert "--session-key PATH" in " ".join(without.stderr.split())
    labels = cli("labels", "import", log.csat, "--key", "session_id", "--outcome", "resolution", "--map",
                 "resolved=success", "--map", "unresolved=failure", "--store", tmp_path / "a.duckdb")
    assert labels.exit_code == 1, labels.output  # every row was left unapplied
    hint = " ".join(labels.stderr.split())
    assert "No stored trace has a session id" in hint and "--session-key PATH" in hint
    summary = ingest(cli, tmp_path / "b.duckdb", nested, "--session-key", key)
    assert (summary["traces"], summary["traces_without_session"]) == (40, 0)
    with open_store(tmp_path / "b.duckdb", read_only=True) as st:
        sessions = sorted(sid for (sid,) in st.con.execute("SELECT session_id FROM traces").fetchall())
    assert sessions == [s.session_id for s in log.sessions]


@pytest.mark.parametrize("key", ["meta..conv", "$", "meta.[x]", " "])
def test_a_bad_session_key_is_one_clear_error_and_changes_nothing(cli, tmp_path: Path, key: str) -> None:
    log = write_support_log(tmp_path / "log", n_sessions=5)
    ingest(cli, tmp_path / "s.duckdb", log.log)
    before = (tmp_path / "s.duckdb").read_bytes()
    other = write_support_log(tmp_path / "other", n_sessions=5, seed=1)
    result = cli("ingest", other.log, "--session-key", key, "--store", tmp_path / "s.duckdb")
    assert result.exit_code == 2
    assert result.stderr.startswith("Configuration error:") and "--session-key" in result.stderr
    assert "Traceback" not in result.stderr
    assert (tmp_path / "s.duckdb").read_bytes() == before


def _call(sid: str, n: int, prior: list[dict[str, Any]], reply: str, at: str) -> dict[str, Any]:
    response = {"id": f"chatcmpl-{sid}-{n}", "object": "chat.completion", "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                             "finish_reason": "stop"}]}
    return {"timestamp": at, "session_id": sid, "request": {"model": "m", "messages": prior}, "response": response}


def test_two_sessions_that_start_alike_are_not_stitched_together(cli, tmp_path: Path) -> None:
    """Both say "hi" and get "Hello!"; the second session's next call comes first. Without its session id, that
    call would go on with the first session's conversation (the older of two identical ones)."""
    hi = [{"role": "user", "content": "hi"}]
    greeted = [*hi, {"role": "assistant", "content": "Hello!"}]
    log = write_lines(tmp_path / "chat.jsonl", [
        _call("A", 1, hi, "Hello!", "2026-11-03T09:00:00Z"),
        _call("B", 1, hi, "Hello!", "2026-11-03T09:00:01Z"),
        _call("B", 2, [*greeted, {"role": "user", "content": "refund please"}], "Refund done.", "2026-11-03T09:00:02Z"),
        _call("A", 2, [*greeted, {"role": "user", "content": "where is my order"}], "Shipped.", "2026-11-03T09:00:03Z"),
    ])
    summary = ingest(cli, tmp_path / "s.duckdb", log)
    assert (summary["traces"], summary["calls_stitched"]) == (2, 2)
    with open_store(tmp_path / "s.duckdb", read_only=True) as st:
        rows = st.con.execute("SELECT t.session_id, string_agg(m.content, ' | ' ORDER BY m.idx) FROM traces t "
                              "JOIN messages m USING (trace_id) GROUP BY t.session_id ORDER BY 1").fetchall()
    assert rows == [("A", "hi | Hello! | where is my order | Shipped."),
                    ("B", "hi | Hello! | refund please | Refund done.")]


def test_unreadable_line_fields_are_kept_in_the_metadata(cli, tmp_path: Path) -> None:
    line = _call("S", 1, [{"role": "user", "content": "hi"}], "Hello!", "yesterday")
    line.update(latency_ms="fast", user="u-7", conversation_id="ignored: session_id comes first")
    summary = ingest(cli, tmp_path / "s.duckdb", write_lines(tmp_path / "chat.jsonl", [line]))
    assert (summary["traces"], summary["errors"]) == (1, 0)
    with open_store(tmp_path / "s.duckdb", read_only=True) as st:
        session, started, metadata = st.con.execute("SELECT session_id, started_at, metadata FROM traces").fetchone()
    assert (session, started) == ("S", None)
    assert {k: json.loads(metadata)[k] for k in ("timestamp", "latency_ms", "user_id")} == {
        "timestamp": "yesterday", "latency_ms": "fast", "user_id": "u-7"}
