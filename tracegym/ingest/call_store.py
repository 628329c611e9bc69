"""Logs of API calls across files: conversations stored by earlier files, continued or grown by later ones.

A file's calls are stitched into conversations by tracegym/ingest/stitch.py. What
an earlier file stored is found two ways:

- A conversation of the file whose first call goes on with a stored conversation
  (its request starts with the stored messages and last reply, by the stitching
  rule) continues it: a log rotated or cut into files, ingested in order. For this,
  each stored conversation keeps a row in `span_parts` (`part_key` 'calls': the
  chain hash of its messages and last reply, and where each call's reply sits).
  The stored conversation is taken only when it has the same session id (or none
  on both sides) and none of its calls is in the file (a
  file that holds them re-stitches them itself), and by one conversation of the file
  at most (the first, as calls in one file go on with a conversation).
- A conversation the file holds with more calls than stored (a log that grew since
  its last ingest) replaces the stored one (`grown_calls`).

- A stored conversation whose first call goes on with a conversation of the file (its
  request starts with the file's conversation and last reply: the pieces ingested out of
  order, a later one first) is taken into it (`following`): the stored trace, which holds
  the whole conversation, becomes the file's conversation's, under the id of its first
  call, as in the whole log, and the stored one is removed once it is stored, its labels
  moved to it (`removal.retire_joined`). For this the tip also keeps `head`, the chain
  hashes of the conversation's first request. Of several such, a stored conversation goes
  with the file's conversation it goes on with longest, and a conversation takes the
  earliest stored one.

In the first two cases the trace keeps the stored id and replaces the stored one.
With redaction no tips are kept: their hashes are of the unredacted messages.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from tracegym import exact_json
from tracegym.ingest.normalize import to_json
from tracegym.ingest.records import Message, Score, ToolCall, Trace
from tracegym.ingest.stitch import PART_KEY, Later, Stored, Tip, chain

LABEL_SCORE = "kind = 'human' AND starts_with(coalesce(comment, ''), 'label import ')"
"""Scores that `labels import` set (tracegym/labels/apply.py), not the trace's own."""


class StoredCalls:
    """The conversations of one call-log format that earlier files stored, for one file's load."""

    def __init__(self, con: duckdb.DuckDBPyConnection, fmt: str) -> None:
        self.con, self.fmt = con, fmt

    def continued(self, heads: list[list[str]], sessions: list[str | None], seen: set[str]) -> list[Stored | None]:
        """For each conversation's first-call hashes and session id, the stored conversation of that session whose
        tip is the longest among them (see the module's docstring for which are taken)."""
        rows = [(n, pos, h) for n, hashes in enumerate(heads) for pos, h in enumerate(hashes)]
        if not rows:
            return [None] * len(heads)
        staged_heads = pa.table({"n": pa.array([r[0] for r in rows], pa.int64()),  # noqa: F841 - read by name
                                 "pos": pa.array([r[1] for r in rows], pa.int64()),
                                 "hash": pa.array([r[2] for r in rows], pa.string()),
                                 "session_id": pa.array([sessions[r[0]] for r in rows], pa.string())})
        found = self.con.execute(
            """SELECT s.n, p.trace_id, p.doc, t.metadata->'call_ids', t.started_at FROM staged_heads s
               JOIN span_parts p ON p.part_key = ? AND p.doc->>'tip' = s.hash
               JOIN traces t ON t.trace_id = p.trace_id AND t.format = ?
                            AND t.session_id IS NOT DISTINCT FROM s.session_id
               ORDER BY s.n, s.pos DESC, p.trace_id""", [PART_KEY, self.fmt]).fetchall()
        out: list[Stored | None] = [None] * len(heads)
        taken: set[str] = set()
        for n, tid, doc, call_ids, started in found:
            ids = exact_json.loads(call_ids) if call_ids is not None else []
            if out[n] is not None or tid in taken or not isinstance(ids, list) or seen.intersection(ids):
                continue
            taken.add(tid)
            tip = exact_json.loads(doc)
            out[n] = Stored(tid, started, ids, self._replies(tid, tip["replies"]), tip.get("head"))
        return out

    def following(self, tips: list[str], sessions: list[str | None], seen: set[str]) -> list[Later | None]:
        """For each conversation's tip and session id, the stored conversation of that session whose first request
        starts with it (see the module's docstring for which are taken)."""
        if not tips:
            return []
        staged_tips = pa.table({"n": pa.array(range(len(tips)), pa.int64()),  # noqa: F841 - read by name
                                "tip": pa.array(tips, pa.string()), "session_id": pa.array(sessions, pa.string())})
        found = self.con.execute(
            """WITH heads AS (SELECT trace_id, doc, unnest(from_json(doc->'head', '["VARCHAR"]')) AS hash
                              FROM span_parts WHERE part_key = ?)
               SELECT s.n, h.trace_id, h.doc, t.metadata->'call_ids' FROM staged_tips s
               JOIN heads h ON h.hash = s.tip
               JOIN traces t ON t.trace_id = h.trace_id AND t.format = ?
                            AND t.session_id IS NOT DISTINCT FROM s.session_id
               ORDER BY t.started_at, h.trace_id, s.n""", [PART_KEY, self.fmt]).fetchall()
        chosen: dict[int, tuple[str, Tip, list[str]]] = {}
        by_stored: dict[str, list[tuple[int, Tip, list[str]]]] = {}
        for n, tid, doc, call_ids in found:
            ids = exact_json.loads(call_ids) if call_ids is not None else []
            if isinstance(ids, list) and not seen.intersection(ids):
                tip = exact_json.loads(doc)
                by_stored.setdefault(tid, []).append((n, Tip(tip["tip"], tip["replies"], tip["head"]), ids))
        for tid, candidates in by_stored.items():  # earliest first: each goes with the longest conversation left
            free = [c for c in candidates if c[0] not in chosen]
            if free:
                n, tip, ids = max(free, key=lambda c: (_position(c[1], tips[c[0]]), -c[0]))
                chosen[n] = (tid, tip, ids)
        out: list[Later | None] = [None] * len(tips)
        for n, (tid, tip, ids) in chosen.items():
            out[n] = Later(self._trace(tid), ids, tip)
        return out

    def _replies(self, trace_id: str, at: list[int]) -> list[tuple[int, Message]]:
        rows = self.con.execute(
            "SELECT idx, role, content, tool_call_id, name, input_tokens, output_tokens, latency_ms, ts "
            "FROM messages WHERE trace_id = ? AND list_contains(?, idx) ORDER BY idx", [trace_id, at]).fetchall()
        return [(row[0], Message(*row[1:])) for row in rows]

    def _trace(self, trace_id: str) -> Trace:
        """A stored trace whole, as ingest made it: its own scores and outcome, not what labels set."""
        fmt, session, model, started, ended, outcome, tools, metadata = self.con.execute(
            "SELECT format, session_id, model, started_at, ended_at, outcome, tools, metadata FROM traces "
            "WHERE trace_id = ?", [trace_id]).fetchone()
        (labelled, before) = self.con.execute(
            "SELECT count(*), arg_min(previous_outcome, labelled_at) FROM labels "
            "WHERE trace_id = ? AND outcome IS NOT NULL", [trace_id]).fetchone()
        trace = Trace(trace_id, fmt, session_id=session, model=model, started_at=started, ended_at=ended,
                      outcome=before if labelled else outcome,
                      tools=exact_json.loads(tools) if tools is not None else None,
                      metadata=exact_json.loads(metadata) if metadata is not None else {})
        trace.messages = [Message(*row) for row in self.con.execute(
            "SELECT role, content, tool_call_id, name, input_tokens, output_tokens, latency_ms, ts FROM messages "
            "WHERE trace_id = ? ORDER BY idx", [trace_id]).fetchall()]
        trace.tool_calls = [ToolCall(idx, call_id, name, exact_json.loads(args) if args is not None else None, *rest)
                            for idx, call_id, name, args, *rest in self.con.execute(
            "SELECT message_idx, call_id, name, arguments, result, result_message_idx, is_error, exit_code "
            "FROM tool_calls WHERE trace_id = ? ORDER BY message_idx, rowid", [trace_id]).fetchall()]
        trace.scores = [Score(*row) for row in self.con.execute(
            f"SELECT name, value, label, kind, comment FROM scores WHERE trace_id = ? AND NOT ({LABEL_SCORE}) "
            "ORDER BY rowid", [trace_id]).fetchall()]
        return trace

    def keep(self, source_id: str, tips: dict[str, Tip]) -> None:
        """Keep the tips of the file's conversations that it stored (new, continued or grown)."""
        if not tips:
            return
        staged_ids = pa.table({"trace_id": pa.array(list(tips), pa.string())})  # noqa: F841 - read by name
        stored = [tid for (tid,) in self.con.execute(
            "SELECT trace_id FROM traces SEMI JOIN staged_ids USING (trace_id) WHERE source_id = ?",
            [source_id]).fetchall()]
        if not stored:
            return
        staged_tips = pa.table({  # noqa: F841 - read by name
            "trace_id": pa.array(stored, pa.string()), "part_key": pa.array([PART_KEY] * len(stored), pa.string()),
            "seq": pa.array([""] * len(stored), pa.string()),
            "doc": pa.array([to_json(_doc(tips[t])) for t in stored], pa.string()),
            "source_id": pa.array([source_id] * len(stored), pa.string())})
        self.con.execute("DELETE FROM span_parts WHERE part_key = ? AND trace_id IN "
                         "(SELECT trace_id FROM staged_tips)", [PART_KEY])
        self.con.execute("INSERT INTO span_parts SELECT * FROM staged_tips")


def _doc(tip: Tip) -> dict[str, object]:
    doc: dict[str, object] = {"tip": tip.tip, "replies": tip.replies}
    if tip.head is not None:
        doc["head"] = tip.head
    return doc


def _position(tip: Tip, hash_: str) -> int:
    """How far into the stored conversation's first request the file's conversation reaches."""
    return tip.head.index(hash_) if tip.head is not None else -1


def grown_calls(con: duckdb.DuckDBPyConnection, traces: list[Trace]) -> set[str]:
    """The ids of `traces` (stitched conversations) stored with fewer calls: the stored calls are the first of
    the new trace's, and its messages (compared as calls are) begin the new trace's, so it is the same
    conversation, logged further since (or continued by this file)."""
    new = {t.trace_id: t for t in traces}
    staged_ids = pa.table({"trace_id": pa.array(list(new), pa.string())})  # noqa: F841 - read by name in SQL
    rows = con.execute("SELECT trace_id, metadata->'call_ids' FROM traces SEMI JOIN staged_ids USING (trace_id) "
                       "WHERE (metadata->'call_ids') IS NOT NULL").fetchall()
    grown = set()
    for tid, stored in rows:
        before, after = exact_json.loads(stored), new[tid].metadata.get("call_ids") or []
        if not (isinstance(before, list) and len(before) < len(after) and after[:len(before)] == before):
            continue
        old = _stored(con, tid)
        hashes = chain(new[tid])
        if len(old.messages) < len(hashes) and chain(old)[-1] == hashes[len(old.messages)]:
            grown.add(tid)
    return grown


def _stored(con: duckdb.DuckDBPyConnection, trace_id: str) -> Trace:
    """What `chain` reads of a stored trace: its tools, messages and tool calls."""
    (tools,) = con.execute("SELECT tools FROM traces WHERE trace_id = ?", [trace_id]).fetchone()
    trace = Trace(trace_id, "", tools=exact_json.loads(tools) if tools is not None else None)
    for role, content, call_id in con.execute("SELECT role, content, tool_call_id FROM messages "
                                              "WHERE trace_id = ? ORDER BY idx", [trace_id]).fetchall():
        trace.messages.append(Message(role, content, call_id))
    for idx, call_id, name, arguments in con.execute(
            "SELECT message_idx, call_id, name, arguments FROM tool_calls WHERE trace_id = ? "
            "ORDER BY message_idx, rowid", [trace_id]).fetchall():
        trace.tool_calls.append(ToolCall(idx, call_id, name, exact_json.loads(arguments) if arguments else None))
    return trace
