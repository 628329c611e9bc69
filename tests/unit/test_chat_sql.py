"""The SQL path for OpenAI-chat JSONL stores exactly what the record-by-record path stores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tracegym.ingest.adapters import openai_chat_sql
from tracegym.ingest.adapters.openai_chat import OpenAIChatAdapter
from tracegym.ingest.normalize import looks_like_error
from tracegym.ingest.pipeline import ingest_paths
from tracegym.store import open_store

TABLES = {
    "traces": "trace_id, source_id, format, session_id, model, started_at, ended_at, outcome, n_messages, "
              "tools::VARCHAR, metadata::VARCHAR",
    "messages": "*",
    "tool_calls": "trace_id, message_idx, call_id, name, arguments::VARCHAR, result, result_message_idx, is_error, "
                  "exit_code",
    "scores": "*",
    "ingest_errors": "source_id, path, locator, error, raw",
    "sources": "source_id, path, format, size_bytes, n_traces, n_messages, n_tool_calls, n_errors, n_duplicates, "
               "n_conflicts",
}


def msg(role: str, content: Any = None, **kw: Any) -> dict[str, Any]:
    return {"role": role, "content": content, **kw}


def call(cid: str | None, name: str, arguments: Any = "{}") -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


def conv(trace_id: Any, messages: list[Any], **kw: Any) -> dict[str, Any]:
    return {"id": trace_id, "model": "gpt-4o", "messages": messages, **kw}


def ask(cid: str, name: str, result: str, args: str = '{"q": 1}') -> list[dict[str, Any]]:
    return [msg("assistant", None, tool_calls=[call(cid, name, args)]), msg("tool", result, tool_call_id=cid)]


# Tool results that test each clause of looks_like_error, in SQL and in Python alike.
RESULTS = [
    "Error: payment declined", "error: lower case", "  \t Error: after spaces",
    "\u00a0\u3000Error: after Unicode spaces",
    "ERROR disk full", "Error", "Errors: plural", "no error here", "",
    "Traceback (most recent call last):\n  File x\nValueError: bad", "ok\nKeyError: 'k'", "ok\n KeyError: indented",
    "ÉchecError: accented name", "résuméException: x", "ok\r\nValueError: after CRLF", "Warning: not an error",
    "x" * 300 + "\nRuntimeError: late in a long result", "\u2028Error: line separator first",
    " " * 250 + "error after many spaces", " " * 250 + "fine after many spaces", "y" * 300 + " Error no colon",
    "\t" * 300 + "error beyond the first 256 characters",
    # Backends' JSON error responses (tracegym.mining.json_errors), and JSON that is none.
    '{"error": {"code": 504, "message": "upstream timeout"}}', '{"status": "error", "message": "bad postcode"}',
    '{"ok": false, "error": "channel_not_found"}', '{"statusCode": 502}', '{"errors": [{"message": "no field"}]}',
    '{"status": "shipped"}', '{"ok": true}', '{"error": null}', '{"error": {}}',
]


SQL, RECORDS, BLANK = "sql", "records", "blank"  # which path each edge line should take


def edge_lines() -> list[tuple[str, str]]:
    """Lines that exercise every reason to leave the SQL path, and tricky ones that stay on it."""
    values = [
        (SQL, conv("tricky-results", [msg("user", "go"),
                                      *[m for i, r in enumerate(RESULTS) for m in ask(f"c{i}", "t", r)]])),
        (SQL, conv("dup-ids", [msg("user", "x"), *ask("same", "a", "first"), *ask("same", "a", "Error: second"),
                               msg("tool", "extra answer", tool_call_id="same")])),
        (SQL, conv("parallel", [msg("system", "s"),
                                msg("assistant", "both", tool_calls=[call("p1", "a"), call("p2", "b")]),
                                msg("tool", "B", tool_call_id="p2"), msg("tool", "Error: A", tool_call_id="p1")])),
        (SQL, conv("roles", [msg(" Developer ", "d"), msg("HUMAN", "h"), msg("ai", "a", tool_calls=[call("r1", "fn")]),
                             msg("function", "f", tool_call_id="r1")], metadata={"session_id": "s-1", "n": 2},
                   tools=[{"type": "function", "function": {"name": "fn", "parameters": {"b": 1, "a": 2}}}])),
        (SQL, conv("refusal", [msg("user", "x"), msg("assistant", None, refusal="no"),
                               msg("assistant", refusal="also no")])),
        (SQL, conv("args", [msg("user", "x"), msg("assistant", None, tool_calls=[
            call("a1", "f", '{"z": 1, "a": [true, null]}'), call("a2", "f", "not json"), call("a3", "f", "  "),
            call("", "f", "{}"), call(None, "f", "{}")])])),
        (SQL, conv("no-calls-null", [msg("user", "x", tool_calls=None), msg("assistant", "y", tool_calls=[])])),
        (SQL, conv("unicode", [msg("user", "café ☕ \U0001F600"), msg("assistant", "naïve")])),
        (SQL, conv("float-metadata", [msg("user", "x")], metadata={"score": 0.5, "big": 1e30, "n": -3})),
        (RECORDS, conv("parts", [msg("user", [{"type": "text", "text": "hi"}]), msg("assistant", "yo")])),
        (RECORDS, conv("unknown-role", [msg("wizard", "x")])),
        (RECORDS, conv("tool-without-id", [msg("assistant", None, tool_calls=[call("n1", "f")]),
                                           msg("tool", "r", name="f")])),
        (RECORDS, conv("answer-before-call", [msg("tool", "early", tool_call_id="b1"),
                                              msg("assistant", None, tool_calls=[call("b1", "f")])])),
        (RECORDS, conv("answer-to-nobody", [msg("assistant", None, tool_calls=[call("k1", "f")]),
                                            msg("tool", "r", tool_call_id="zz", name="f")])),
        (RECORDS, conv("usage", [msg("assistant", "x", usage={"prompt_tokens": 3, "completion_tokens": 1})])),
        (RECORDS, conv("legacy", [msg("assistant", None, function_call={"name": "f", "arguments": "{}"})])),
        (RECORDS, conv("flat-call", [msg("assistant", None,
                                         tool_calls=[{"id": "f1", "name": "f", "arguments": {"a": 1}}])])),
        (RECORDS, conv("no-args", [msg("assistant", None, tool_calls=[{"id": "g1", "function": {"name": "f"}}])])),
        (RECORDS, conv("empty-name", [msg("assistant", None, tool_calls=[call("e1", "")])])),
        (RECORDS, conv(7, [msg("user", "int id")])),
        (RECORDS, conv("", [msg("user", "empty id")])),
        (RECORDS, conv("bad-metadata", [msg("user", "x")], metadata="oops")),
        (RECORDS, conv("bad-tools", [msg("user", "x")], tools={"not": "a list"})),
        (RECORDS, conv("no-messages", [])),
        (RECORDS, conv("null-message", [msg("user", "x"), None])),
        (RECORDS, conv("content-number", [msg("user", 42)])),
        (RECORDS, conv("huge-exponent", [msg("user", "x")], metadata={"v": 1e300})),
        (RECORDS, {"request": {"model": "gpt-4o", "messages": [msg("user", "q")]},
                   "response": {"id": "chatcmpl-1", "object": "chat.completion", "created": 1727000000,
                                "model": "gpt-4o",
                                "choices": [{"index": 0, "message": msg("assistant", "a"), "finish_reason": "stop"}],
                                "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}}),
        (RECORDS, [msg("user", "a bare message list"), msg("assistant", "ok")]),
        (RECORDS, conv("with-user", [msg("user", "x")], user="u-1")),
    ]
    lines = [(path, json.dumps(v, ensure_ascii=False)) for path, v in values]
    lines += [
        (RECORDS, '{"id": "nan", "messages": [{"role": "user", "content": "x"}], "metadata": {"v": NaN}}'),
        (RECORDS, '{"id": "trailing-comma", "messages": [{"role": "user", "content": "x"},]}'),
        (RECORDS, '{"id": "overflow", "messages": [{"role": "user", "content": "x"}], "metadata": {"v": 1e400}}'),
        (RECORDS, '{"id": "surrogate", "messages": [{"role": "user", "content": "\\ud800"}]}'),
        (SQL, '{"id": "escaped-pair", "messages": [{"role": "user", "content": "\\ud83d\\ude00 \\u00e9"}]}'),
        (RECORDS, '{"id": "broken", "messages": ['),
        (RECORDS, "not json at all"),
        (BLANK, "   "),
        (BLANK, ""),
        (SQL, '{"id": "crlf", "messages": [{"role": "user", "content": "windows"}]}\r'),
        (SQL, json.dumps(conv("dup-ids", [msg("user", "a later line with a taken id")]))),
        (SQL, json.dumps(conv("parts", [msg("user", "a taken id, first seen on the record path")]))),
    ]
    return [(text, path) for path, text in lines]


def tau_lines(traces_dir: Path) -> list[str]:
    runs = json.loads((traces_dir / "tau-bench" / "gpt-4o-airline.json").read_text())
    return [json.dumps(conv(f"tau-{i}", r["traj"], metadata={"task_id": str(r["task_id"]), "reward": str(r["reward"])}))
            for i, r in enumerate(runs)]


def dump(store_path: Path) -> dict[str, list[tuple]]:
    with open_store(store_path, read_only=True) as store:
        return {table: sorted(store.con.execute(f"SELECT {cols} FROM {table}").fetchall(), key=repr)
                for table, cols in TABLES.items()}


def ingest_both(path: Path | list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                options: dict[str, Any] | None = None) -> tuple[dict, dict, int]:
    """Ingest the file(s) through the SQL path (in small chunks) and through the record path; count routed lines."""
    paths = [str(p) for p in (path if isinstance(path, list) else [path])]
    routed = []
    parse_line = openai_chat_sql.parse_line
    monkeypatch.setattr(openai_chat_sql, "parse_line", lambda n, line: routed.append(n) or parse_line(n, line))
    monkeypatch.setattr(openai_chat_sql, "CHUNK_BYTES", 1 << 18)
    with open_store(tmp_path / "sql.duckdb") as store:
        for p in paths:
            ingest_paths(store, [p], options=options)
    with monkeypatch.context() as m:
        m.setattr(OpenAIChatAdapter, "bulk_load", lambda self, con, src, sink: False)
        with open_store(tmp_path / "records.duckdb") as store:
            for p in paths:
                ingest_paths(store, [p], options=options)
    return dump(tmp_path / "sql.duckdb"), dump(tmp_path / "records.duckdb"), len(routed)


def test_sql_path_stores_what_the_record_path_stores(traces_dir: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    tau, edges = tau_lines(traces_dir), edge_lines()
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(tau[:100] + [text for text, _ in edges] + tau[100:]) + "\n", encoding="utf-8")

    via_sql, via_records, routed = ingest_both(path, tmp_path, monkeypatch)

    for table in TABLES:
        assert via_sql[table] == via_records[table], table
    # The real runs (which reuse call ids) and the tricky-but-plain lines all took the SQL path.
    assert routed == sum(path == RECORDS for _, path in edges)
    stored = {row[0] for row in via_sql["traces"]}
    assert {f"tau-{i}" for i in range(len(tau))} <= stored
    assert len(via_sql["ingest_errors"]) >= 10 and via_sql["sources"][0][-2] == 2  # two repeated ids


def test_sql_path_flags_the_same_errors_as_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(edge_lines()[0][0] + "\n", encoding="utf-8")
    via_sql, _, routed = ingest_both(path, tmp_path, monkeypatch)
    assert routed == 0
    flags = {row[2]: (row[5], row[7]) for row in via_sql["tool_calls"]}
    assert [flags[f"c{i}"] for i in range(len(RESULTS))] == [(r, looks_like_error(r)) for r in RESULTS]
    assert sum(looks_like_error(r) for r in RESULTS) >= 10


def test_re_sent_traces_are_duplicates_and_edited_ones_conflicts(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    runs = [conv(f"t{i}", [msg("user", f"q{i}"), *ask(f"c{i}", "f", f"r{i}")]) for i in range(5)]
    first, second = tmp_path / "day1.jsonl", tmp_path / "day2.jsonl"
    first.write_text("\n".join(json.dumps(r) for r in runs) + "\n")
    runs[2]["messages"][-1]["content"] = "Error: edited after the fact"
    second.write_text("\n".join(json.dumps(r) for r in [*runs, conv("t5", [msg("user", "new")])]) + "\n")
    via_sql, via_records, routed = ingest_both([first, second], tmp_path, monkeypatch)
    assert via_sql == via_records and routed == 0
    day2 = [row for row in via_sql["sources"] if row[1] == str(second)][0]
    assert day2[4:] == (1, 1, 0, 0, 4, 1)  # traces, messages, tool calls, errors, duplicates, conflicts
    assert [(row[2], row[4]) for row in via_sql["ingest_errors"]] == [("trace t2", "t2")]
    stored = {row[2]: row[5] for row in via_sql["tool_calls"]}
    assert stored["c2"] == "r2"  # the stored trace is kept


def line_field_lines() -> list[str]:
    """Plain conversations with an app's fields beside their messages (tracegym/ingest/adapters/log_line.py)."""
    talk = [msg("user", "x"), msg("assistant", "y")]
    values = [
        conv("iso", talk, session_id="s-1", timestamp="2026-11-03T09:01:38.868Z", latency_ms=2043, user_id="u-1"),
        conv("epoch-ms", talk, conversation_id=42, created_at=1762160498868, duration_ms=12.5),
        conv("seconds", talk, thread_id="t-1", ts=1762160498, latency_s="1.5", userId=7),
        conv("meta-session", talk, metadata={"session_id": "from-metadata", "k": 1}, time="2026-11-03"),
        conv("line-over-meta", talk, sessionId="line", metadata={"session_id": "meta"}),
        conv("unreadable", talk, session_id={"not": "an id"}, timestamp="yesterday", latency_ms=-3, time=12),
        conv("not-a-time", talk, time=12.5, elapsed_ms=None),
        conv("nested", talk, meta={"conv": "n-1", "other": [1, 2]}, startTime="2026-11-03T10:00:00+02:00"),
        conv("nested-int", talk, meta={"conv": 5}),
        conv("nested-missing", talk, meta="flat"),
        conv("odd key", talk, **{"we'ird \"key": {"conv": "odd"}}),
    ]
    return [json.dumps(v) for v in values]


@pytest.mark.parametrize("key", [None, "meta.conv", "$.we'ird \"key.conv", "metadata.k", "tools[0]"])
def test_sql_path_reads_an_apps_line_fields_as_the_record_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               key: str | None) -> None:
    path = tmp_path / "app.jsonl"
    path.write_text("\n".join(line_field_lines()) + "\n", encoding="utf-8")
    options = {} if key is None else {"session_key": key}
    via_sql, via_records, routed = ingest_both(path, tmp_path, monkeypatch, options)
    for table in TABLES:
        assert via_sql[table] == via_records[table], table
    assert routed == 0 and len(via_sql["traces"]) == 11
    sessions = {row[0]: row[3] for row in via_sql["traces"]}
    if key is None:
        assert (sessions["iso"], sessions["epoch-ms"], sessions["meta-session"], sessions["line-over-meta"],
                sessions["unreadable"]) == ("s-1", "42", "from-metadata", "line", None)
        started = {row[0]: row[5] for row in via_sql["traces"]}
        assert started["iso"].isoformat() == "2026-11-03T09:01:38.868000" and started["not-a-time"] is None
    elif key == "meta.conv":
        assert {t: s for t, s in sessions.items() if s} == {"nested": "n-1", "nested-int": "5"}
    elif key.startswith("$.we"):
        assert {t: s for t, s in sessions.items() if s} == {"odd key": "odd"}


def test_invalid_utf8_lines_are_reported_and_the_rest_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = [json.dumps(conv(f"ok-{i}", [msg("user", "x"), msg("assistant", "y")])) for i in range(3)]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(good[0].encode() + b"\n" + b'{"id": "bad", "messages": [{"role": "user", "content": "\xff"}]}\n'
                     + "\n".join(good[1:]).encode())  # no final newline either
    via_sql, via_records, _ = ingest_both(path, tmp_path, monkeypatch)
    assert via_sql == via_records
    assert [row[0] for row in via_sql["traces"]] == ["ok-0", "ok-1", "ok-2"]
    assert [(row[2], row[3].split(":")[0]) for row in via_sql["ingest_errors"]] == [("line 2", "UnicodeDecodeError")]


def test_a_line_longer_than_a_chunk_is_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    long = json.dumps(conv("long", [msg("user", "x" * 300_000), *ask("l1", "f", "Error: " + "y" * 200_000)]))
    path = tmp_path / "long.jsonl"
    path.write_text(long + "\n" + json.dumps(conv("short", [msg("user", "s")])) + "\n")
    via_sql, via_records, routed = ingest_both(path, tmp_path, monkeypatch)
    assert via_sql == via_records and routed == 0
    assert [row[0] for row in via_sql["traces"]] == ["long", "short"]


def test_chunks_read_into_one_buffer_hold_every_line_once(tmp_path: Path) -> None:
    """A file longer than a chunk is read into one reused buffer: each chunk, read before the next one is asked
    for, holds exactly its lines, a line longer than a chunk included, and the last line without its newline."""
    lines = [b'{"n": %d, "pad": "%s"}' % (i, b"z" * (i * 37 % 900)) for i in range(400)]
    lines[150] = b'{"long": "' + b"x" * 9000 + b'"}'  # longer than a chunk: the chunk grows to hold it
    lines[151] = b""
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"\n".join(lines))  # no final newline
    assert path.stat().st_size > 4 * 4096
    seen: list[tuple[int, bytes]] = []
    for chunk in openai_chat_sql.iter_line_chunks(path, chunk_bytes=4096):
        assert isinstance(chunk, openai_chat_sql.LineChunk)
        count = len(chunk.starts) - 1
        seen += [(n, chunk.line(n)) for n in range(chunk.first_lineno, chunk.first_lineno + count)]
        assert chunk.arrow()["line"].to_pylist() == [line.decode() for _, line in seen[-count:]]
    assert seen == [(i + 1, line + (b"\n" if i < len(lines) - 1 else b"")) for i, line in enumerate(lines)]


def test_python_whitespace_class_is_str_isspace() -> None:
    """The RE2 class used for str.strip()/lstrip() matches exactly the characters Python strips."""
    con = duckdb.connect()
    matched = {
        cp for (cp,) in con.execute(
            "SELECT cp FROM (SELECT range AS cp FROM range(1, 55296) "
            "UNION ALL SELECT range FROM range(57344, 1114112)) "
            f"WHERE regexp_full_match(chr(cp::INTEGER), '[{openai_chat_sql._PY_SPACE}]')"
        ).fetchall()
    }
    assert matched == {cp for cp in range(1, 0x110000) if chr(cp).isspace() and not 0xD800 <= cp <= 0xDFFF}


@pytest.mark.parametrize("key", [None, "id", "metadata.app"])
def test_lines_with_the_same_fields_are_read_alike_but_keep_their_own_ids(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         key: str | None) -> None:
    path = tmp_path / "app.jsonl"
    talk = [msg("user", "x"), msg("assistant", "y")]
    fields = {"metadata": {"app": "bot", "n": 1}, "timestamp": "2026-11-03T09:01:38Z", "latency_ms": 5}
    path.write_text("\n".join(json.dumps(conv(tid, talk, **fields)) for tid in ("a", "b", "c")) + "\n")
    options = {} if key is None else {"session_key": key}
    via_sql, via_records, routed = ingest_both(path, tmp_path, monkeypatch, options)
    for table in TABLES:
        assert via_sql[table] == via_records[table], table
    sessions = {row[0]: row[3] for row in via_sql["traces"]}
    assert routed == 0 and sessions == {"a": {"id": "a", "metadata.app": "bot"}.get(key or ""),
                                        "b": {"id": "b", "metadata.app": "bot"}.get(key or ""),
                                        "c": {"id": "c", "metadata.app": "bot"}.get(key or "")}


REPEATED = [  # keys repeated in one object, written by hand (json.dumps never repeats one)
    '{"id": "top-first", "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": null, '
    '"tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}]}, {"role": "tool", '
    '"tool_call_id": "c1", "content": "ok"}], "model": "m1", "id": "top-last"}',
    '{"id": "in-message", "messages": [{"role": "user", "content": "first {not an object}", "content": "last"}, '
    '{"role": "assistant", "content": "x", "tool_calls": [{"id": "c1", "function": {"name": "f", '
    '"arguments": "{}"}}], "content": "after the calls"}, {"role": "tool", "tool_call_id": "zz", '
    '"tool_call_id": "c1", "content": "r"}]}',
    '{"id": "in-call", "messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": "c0", '
    '"function": {"name": "f", "arguments": "{\\"a\\": 1}", "name": "g", "arguments": "{\\"a\\": 2}"}, '
    '"id": "c2"}]}, {"role": "tool", "tool_call_id": "c2", "content": "done"}]}',
    '{"id": "line-fields", "session_id": "s-first", "messages": [{"role": "user", "content": "q"}], '
    '"metadata": {"k": 1}, "session_id": "s-last", "metadata": {"k": 2}}',
    '{"id": "plain", "messages": [{"role": "user", "content": "no key repeated"}]}',
]


def test_a_repeated_key_reads_as_its_last_value_on_either_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As Python's json (and JSON.parse) read it: the last value wins, whichever path reads the line."""
    path = tmp_path / "repeated" / "chat.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join(REPEATED) + "\n")
    python = tmp_path / "python" / "chat.jsonl"  # the same lines as json.loads reads them, each key once
    python.parent.mkdir()
    python.write_text("\n".join(json.dumps(json.loads(line)) for line in REPEATED) + "\n")
    via_sql, via_records, routed = ingest_both(path, tmp_path, monkeypatch)
    with open_store(tmp_path / "python.duckdb") as store:
        ingest_paths(store, [str(python)])
    expected = dump(tmp_path / "python.duckdb")
    for table in ("traces", "messages", "tool_calls"):
        assert _content(table, via_sql) == _content(table, via_records) == _content(table, expected), table
    assert routed == len(REPEATED) - 1  # the plain line stays on the SQL path
    assert {row[0] for row in via_sql["traces"]} == {"top-last", "in-message", "in-call", "line-fields", "plain"}


def _content(table: str, dumped: dict[str, list[tuple]]) -> list[tuple]:
    """The table's rows, without the file each came from (`traces.source_id`)."""
    return [(row[0], *row[2:]) if table == "traces" else row for row in dumped[table]]
