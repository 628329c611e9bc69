"""`--references FILE`: JSON Lines and CSV rows read into replies, every bad row reported by line at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tracegym.errors import ConfigError
from tracegym.tasks.references import read_references

HANDOFF = {"name": "handoff_to_human", "arguments": {"reason": "refund"}}


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_jsonl_rows_name_a_trace_a_session_or_a_cluster(tmp_path):
    lines = [{"trace_id": "t-1", "reply": "Order A-1 ships today."},
             {"session_id": 42, "reply": "", "tool_calls": [HANDOFF]},
             {"cluster_id": "c1", "reply": "Handing over.", "tool_calls": json.dumps(
                 [{"id": "call_9", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 1}"}}])}]
    path = _write(tmp_path, "refs.jsonl", "\n".join(json.dumps(line) for line in lines) + "\n\n")
    rows = read_references(path).rows
    assert [(r.line, r.key, r.value) for r in rows] == [(1, "trace_id", "t-1"), (2, "session_id", "42"),
                                                         (3, "cluster_id", "c1")]
    assert rows[0].reply.content == "Order A-1 ships today." and rows[0].reply.tool_calls is None
    handoff = rows[1].reply
    assert handoff.content is None and handoff.tool_calls[0].id == "ref_2_0"
    assert (handoff.tool_calls[0].function.name, json.loads(handoff.tool_calls[0].function.arguments)) == (
        "handoff_to_human", {"reason": "refund"})
    assert rows[2].reply.tool_calls[0].id == "call_9"
    assert rows[2].reference("file:refs.jsonl").detail == "line 3, cluster_id c1"


def test_csv_rows_take_tool_calls_as_json_and_count_lines_of_quoted_replies(tmp_path):
    text = ('\ufefftrace_id,session_id,cluster_id,reply,tool_calls\n'
            't-1,,,"Two lines:\nOrder A-1.",\n'
            ',s-2,,,"[{""name"": ""handoff_to_human"", ""arguments"": ""{}""}]"\n')
    rows = read_references(_write(tmp_path, "refs.csv", text)).rows
    assert [(r.line, r.key, r.value) for r in rows] == [(2, "trace_id", "t-1"), (4, "session_id", "s-2")]
    assert rows[0].reply.content == "Two lines:\nOrder A-1."
    assert rows[1].reply.tool_calls[0].function.name == "handoff_to_human"


def test_every_bad_row_is_reported_by_its_line_in_one_error(tmp_path):
    lines = ['{"trace_id": "t-1", "reply": "ok"}',
             'not json',
             '["a", "list"]',
             '{"reply": "for nothing"}',
             '{"trace_id": "t-2", "session_id": "s", "reply": "both"}',
             '{"trace_id": "t-3", "reply": "", "tool_calls": "[{"}',
             '{"trace_id": "t-4", "reply": "x", "tool_calls": [{"name": "f", "arguments": "{oops"}]}',
             '{"trace_id": "t-5", "reply": ""}',
             '{"trace_id": "t-6", "repyl": "typo"}',
             '{"trace_id": "t-1", "reply": "again"}',
             '{"trace_id": ["t-7"], "reply": "a list id"}']
    with pytest.raises(ConfigError) as caught:
        read_references(_write(tmp_path, "refs.jsonl", "\n".join(lines)))
    message = str(caught.value)
    assert "10 bad rows, nothing was generated" in message
    for expected in ("line 2: not JSON", "line 3: a JSON list, not an object",
                     "line 4: names none of trace_id, session_id, cluster_id", "line 5: names both trace_id and",
                     "line 6: tool_calls is not JSON", "line 7: tool_calls[0].arguments is not JSON",
                     "line 8: an empty reply without tool calls",
                     "line 9: unknown field 'repyl' (Did you mean 'reply'?)",
                     "line 10: trace_id 't-1' again (line 1 gives it already)", "line 11: trace_id is a JSON list"):
        assert expected in message
    assert "line 1:" not in message and "Fix:" in message


@pytest.mark.parametrize(("name", "text", "said"), [
    ("refs.csv", "trace_id,text\nt-1,hi\n", "no reply column; unknown column 'text'"),
    ("refs.csv", "reply\nhi\n", "no trace_id or session_id or cluster_id column"),
    ("refs.csv", "trace_id,reply\nt-1,a,b\n", "line 2: more cells than the header's 2 columns"),
    ("refs.jsonl", "\n\n", "no rows"),
    ("refs.txt", "trace_id,reply\n", "unknown file type .txt"),
])
def test_a_file_that_cannot_serve_says_what_is_wrong(tmp_path, name, text, said):
    with pytest.raises(ConfigError, match="--references") as caught:
        read_references(_write(tmp_path, name, text))
    assert said in str(caught.value)


def test_a_missing_or_undecodable_file_is_a_user_error(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        read_references(tmp_path / "absent.jsonl")
    (tmp_path / "latin.csv").write_bytes("trace_id,reply\nt-1,caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8"):
        read_references(tmp_path / "latin.csv")
