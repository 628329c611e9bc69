"""Logs with one line per API call: calls stitched into conversations by their shared message prefix."""

from __future__ import annotations

import json
from pathlib import Path

from tracegym.ingest.pipeline import ingest_paths
from tracegym.store import open_store

SYSTEM = {"role": "system", "content": "Be brief."}


def _call(n: int, messages: list[dict], reply: dict) -> dict:
    return {"request": {"model": "m", "messages": messages},
            "response": {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1735725600 + n, "model": "m",
                         "choices": [{"index": 0, "message": reply, "finish_reason": "stop"}],
                         "usage": {"prompt_tokens": 10 + n, "completion_tokens": n + 1}}}


def _reply(text: str | None, call: str | None = None) -> dict:
    if call is None:
        return {"role": "assistant", "content": text}
    return {"role": "assistant", "content": text, "tool_calls": [
        {"id": call, "type": "function", "function": {"name": "run", "arguments": '{"cmd": "ls", "n": 1}'}}]}


def _log() -> list[dict]:
    ask = [SYSTEM, {"role": "user", "content": "List files."}]
    first = _reply(None, "c1")
    # The client re-sends the reply in its own form: content "" for None, arguments re-encoded.
    resent = {**first, "content": "", "tool_calls": [{**first["tool_calls"][0], "function": {
        "name": "run", "arguments": '{"n":1,"cmd":"ls"}'}}]}
    turn2 = [*ask, resent, {"role": "tool", "tool_call_id": "c1", "content": "a.txt"}]
    other = [SYSTEM, {"role": "user", "content": "Say hi."}]
    rewritten = [SYSTEM, {"role": "user", "content": "List files, briefly."}]  # an edited history: a new one
    return [_call(0, ask, first), _call(1, other, _reply("hi")), _call(2, turn2, _reply("One file: a.txt.")),
            _call(2, turn2, _reply("One file: a.txt.")), _call(3, rewritten, _reply("a.txt"))]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_calls_of_one_conversation_are_one_trace_and_others_their_own(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s.duckdb")
    log = _write(tmp_path / "calls.jsonl", _log())
    summary = ingest_paths(store, [str(log)])
    assert (summary.total("traces"), summary.total("stitched"), summary.total("duplicates"),
            summary.total("errors")) == (3, 1, 1, 0)
    rows = store.con.execute("SELECT trace_id, metadata->>'call_ids' FROM traces ORDER BY trace_id").fetchall()
    assert rows == [("chatcmpl-0", '["chatcmpl-0","chatcmpl-2"]'), ("chatcmpl-1", '["chatcmpl-1"]'),
                    ("chatcmpl-3", '["chatcmpl-3"]')]
    got = store.con.execute("SELECT role, content, input_tokens, output_tokens FROM messages "
                            "WHERE trace_id = 'chatcmpl-0' ORDER BY idx").fetchall()
    assert got == [("system", "Be brief.", None, None), ("user", "List files.", None, None),
                   ("assistant", None, 10, 1), ("tool", "a.txt", None, None), ("assistant", "One file: a.txt.", 12, 3)]
    assert store.con.execute("SELECT message_idx, result FROM tool_calls").fetchall() == [(2, "a.txt")]
    assert [f.status for f in ingest_paths(store, [str(log)]).files] == ["already ingested"]


def test_a_grown_log_replaces_the_conversations_it_extends(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s.duckdb")
    calls = _log()
    ingest_paths(store, [str(_write(tmp_path / "part.jsonl", calls[:1]))])
    summary = ingest_paths(store, [str(_write(tmp_path / "whole.jsonl", calls))])
    assert (summary.total("conflicts"), summary.total("merged"), summary.total("traces")) == (0, 1, 2)
    assert store.scalar("SELECT count(*) FROM messages WHERE trace_id = 'chatcmpl-0'") == 5
    assert summary.total("messages") == store.scalar("SELECT count(*) FROM messages") - 3


def test_a_log_whose_stored_calls_say_otherwise_keeps_the_conflict_rule(tmp_path: Path) -> None:
    """The same call ids, but the stored first call got another reply: not the same conversation logged further."""
    store = open_store(tmp_path / "s.duckdb")
    calls = _log()
    other = _call(0, calls[0]["request"]["messages"], _reply("Nothing to list."))
    ingest_paths(store, [str(_write(tmp_path / "part.jsonl", [other]))])
    summary = ingest_paths(store, [str(_write(tmp_path / "whole.jsonl", calls))])
    assert (summary.total("conflicts"), summary.total("merged")) == (1, 0)
    assert store.scalar("SELECT count(*) FROM messages WHERE trace_id = 'chatcmpl-0'") == 3
