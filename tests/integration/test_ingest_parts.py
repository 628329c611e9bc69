"""Span-shaped traces spread over several files or ingests are merged; lines cut across files are joined."""

from __future__ import annotations

import copy
import itertools
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_replace_delete import dump
from tests.support_log import write_support_log
from tracegym.ingest import fragments
from tracegym.ingest.pipeline import ingest_paths
from tracegym.store import Store, open_store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCORED_TRACE = "0af7651916cd43dd8448eb211c80319c"  # no score of its own
WEATHER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def _collector_lines() -> list[str]:
    """A Collector file exporter's JSONL: one export per line, each trace's spans spread over several lines,
    log records (message events, an evaluation) in lines of their own."""
    doc = json.loads((FIXTURES / "otel" / "current.json").read_text())
    lines = []
    for block in doc["resourceSpans"]:
        for scope in block["scopeSpans"]:
            for span in scope["spans"]:
                one = {**copy.deepcopy(block), "scopeSpans": [{**scope, "spans": [span]}]}
                lines.append(json.dumps({"resourceSpans": [one]}))
    lines += (FIXTURES / "otel" / "deprecated.jsonl").read_text().splitlines()
    lines.append(json.dumps(_evaluation_log(SCORED_TRACE, "task_success", 1.0)))
    return lines


def _evaluation_log(trace_id: str, name: str, value: float) -> dict[str, Any]:
    attrs = [{"key": "gen_ai.evaluation.name", "value": {"stringValue": name}},
             {"key": "gen_ai.evaluation.score.value", "value": {"doubleValue": value}}]
    record = {"timeUnixNano": "1735725700000000000", "eventName": "gen_ai.evaluation.result",
              "traceId": trace_id, "spanId": "b7ad6b7169203334", "attributes": attrs}
    return {"resourceLogs": [{"resource": {}, "scopeLogs": [{"scope": {}, "logRecords": [record]}]}]}


def _snapshot(store: Store) -> dict[str, list[tuple]]:
    """Every stored row of every trace, but for the file each came from."""
    q = {
        "traces": "SELECT trace_id, format, session_id, model, started_at, ended_at, outcome, n_messages, tools, "
                  "metadata FROM traces",
        "messages": "SELECT * FROM messages",
        "tool_calls": "SELECT * FROM tool_calls",
        "scores": "SELECT * FROM scores",
    }
    return {k: sorted(store.con.execute(sql).fetchall(), key=repr) for k, sql in q.items()}


def _whole(tmp_path: Path, data: bytes) -> dict[str, list[tuple]]:
    path = tmp_path / "whole" / "otel.jsonl"
    path.parent.mkdir()
    path.write_bytes(data)
    store = open_store(tmp_path / "whole.duckdb")
    ingest_paths(store, [str(path)])
    return _snapshot(store)


@pytest.mark.parametrize("seed", range(6))
def test_a_file_split_at_any_bytes_ingested_in_any_order_gives_the_traces_of_the_whole(
        tmp_path: Path, seed: int) -> None:
    data = ("\n".join(_collector_lines()) + "\n").encode()
    rng = random.Random(seed)
    n = rng.randint(2, 7)
    cuts = sorted(rng.sample(range(1, len(data)), n - 1))
    if seed == 0:  # two cuts inside one line: a piece that is neither a line's start nor its end
        start = data.index(b"\n", 3000) + 1
        cuts = sorted({*cuts[:-2], start + 200, start + 400})
    pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    folder = tmp_path / "pieces"
    folder.mkdir()
    paths = []
    for i, piece in enumerate(pieces):
        paths.append(folder / f"otel-{i}.jsonl")
        paths[-1].write_bytes(piece)
    order = rng.sample(paths, len(paths))
    store = open_store(tmp_path / "pieces.duckdb")
    runs = sorted(rng.sample(range(1, len(order)), min(2, len(order) - 1)))
    summaries = []
    for a, b in zip([0, *runs], [*runs, len(order)], strict=True):  # several ingests, each of some pieces
        summaries.append(ingest_paths(store, [str(p) for p in order[a:b]]))
    summaries.append(ingest_paths(store, [str(p) for p in paths]))  # the same bytes again: nothing changes

    whole = _whole(tmp_path, data)
    assert _snapshot(store) == whole
    assert len(whole["traces"]) == 5
    assert store.scalar("SELECT count(*) FROM ingest_errors") == 0
    assert store.scalar("SELECT count(*) FROM line_fragments WHERE NOT joined") == 0
    _assert_counts_add_up(store, summaries)


def test_a_line_joined_from_pieces_is_recorded_under_the_pieces_paths(tmp_path: Path) -> None:
    data = ("\n".join(_collector_lines()) + "\n").encode()
    cut = data.index(b"\n", 3000) + 200  # inside a line
    first, second = tmp_path / "otel-0.jsonl", tmp_path / "otel-1.jsonl"
    first.write_bytes(data[:cut])
    second.write_bytes(data[cut:])
    store = open_store(tmp_path / "s.duckdb")
    summary = ingest_paths(store, [str(first), str(second)])
    joined = f"{first} + {second}"
    # the line is stored before the lines after it in the second piece
    assert [f.path for f in summary.files] == [str(first), f"line joined from {joined}", str(second)]
    paths = [p for (p,) in store.con.execute("SELECT path FROM sources ORDER BY ingested_at").fetchall()]
    assert sorted(paths) == sorted([str(first), str(second), joined])


@pytest.mark.parametrize(("order", "fmt"), [("newest first", None), ("newest first", "otel-genai"),
                                            ("middle first", None), ("in order", "otel-genai")])
def test_pieces_without_a_newline_are_kept_until_their_neighbours_arrive(tmp_path: Path, order: str,
                                                                         fmt: str | None) -> None:
    """The first line cut twice, so that the first piece (the line's start, at the start of the file) and the second
    (its middle) hold no newline; each piece ingested alone, also with --format: nothing is reported as an unknown
    format or lost, and the store ends as the whole file's."""
    data = ("\n".join(_collector_lines()) + "\n").encode()
    end = data.index(b"\n")
    cuts = [end // 3, 2 * end // 3, data.index(b"\n", end + 1) + 40]
    folder = tmp_path / "pieces"
    folder.mkdir()
    paths = []
    for i, (a, b) in enumerate(zip([0, *cuts], [*cuts, len(data)], strict=True)):
        paths.append(folder / f"otel-{i}.jsonl")
        paths[-1].write_bytes(data[a:b])
    assert b"\n" not in paths[0].read_bytes() and b"\n" not in paths[1].read_bytes()
    runs = {"newest first": [3, 2, 1, 0], "middle first": [1, 2, 0, 3], "in order": [0, 1, 2, 3]}[order]
    store = open_store(tmp_path / "pieces.duckdb")
    summaries = []
    for i in runs:
        summaries.append(ingest_paths(store, [str(paths[i])], fmt=fmt))
        files = [e for (e,) in store.con.execute("SELECT error FROM ingest_errors WHERE locator = 'file'").fetchall()]
        assert all(e == fragments.WAITING for e in files), files  # a piece waits: not an unknown format
    assert _snapshot(store) == _whole(tmp_path, data)
    assert store.scalar("SELECT count(*) FROM ingest_errors") == 0
    assert store.scalar("SELECT count(*) FROM line_fragments WHERE NOT joined") == 0
    _assert_counts_add_up(store, summaries)


def _otlp_bytes() -> bytes:
    """The Collector's lines written as UTF-8 (not \\u escapes), so that a cut can fall inside a character."""
    return ("\n".join(json.dumps(json.loads(line), ensure_ascii=False) for line in _collector_lines()) + "\n").encode()


def _chat_bytes(folder: Path) -> bytes:
    """A per-call chat log (its calls stitched into conversations), with characters of two and three bytes."""
    log = write_support_log(folder, n_sessions=4)
    lines = [json.dumps(json.loads(line), ensure_ascii=False).replace("Acme", "Acmé ☕")
             for line in log.log.read_text().splitlines()]
    return ("\n".join(lines) + "\n").encode()


def _byte_cuts(data: bytes, plan: tuple[str, ...], rng: random.Random) -> tuple[bytes, list[int]]:
    """The data (without its last newline for "no final newline") and cut points of the kinds `plan` names, each at
    a random place of its kind."""
    if "no final newline" in plan:
        data = data.rstrip(b"\n")
    newlines = [i for i, b in enumerate(data) if b == 10]
    cuts: list[int] = []
    for kind in plan:
        if kind == "inside":  # two cuts in one line: the piece between is the middle of the line, no newline in it
            start, end = rng.choice([(a + 1, b) for a, b in zip(newlines, newlines[1:], strict=False) if b - a > 400])
            first = rng.randrange(start + 20, end - 200)
            cuts += [first, first + rng.randint(1, 150)]
        elif kind == "no final newline":  # the last line cut twice: its last piece is the data's last bytes
            first = rng.randrange(newlines[-1] + 20, len(data) - 200)
            cuts += [first, first + rng.randint(1, 150)]
        elif kind == "blank piece":  # a line cut just before its newline, the newline a piece of its own
            nl = rng.choice(newlines[:-1])
            cuts += [nl, nl + 1]
        elif kind == "blank end":  # the data's last line cut just before its newline
            cuts.append(newlines[-1])
        elif kind == "blank inside":  # the space between two members in the middle of a line, a piece of its own
            space = rng.choice([i for i in range(1, len(data) - 1) if data[i - 1:i + 2] == b', "'])
            cuts += [space, space + 1]
        elif kind in ("before [", "before {"):  # a piece of a line that opens as a JSON document would
            cuts.append(rng.choice([i for i in range(1, len(data)) if data[i] == ord(kind[-1]) and data[i - 1] != 10]))
        elif kind == "after newline":
            cuts.append(rng.choice(newlines[:-1]) + 1)
        elif kind == "before newline":
            cuts.append(rng.choice(newlines[1:]))
        else:  # inside a character of two or more bytes: before one of its continuation bytes
            cuts.append(rng.choice([i for i, b in enumerate(data) if 0x80 <= b < 0xC0]))
    return data, sorted(set(cuts))


def _write_pieces(folder: Path, data: bytes, cuts: list[int]) -> list[Path]:
    folder.mkdir()
    paths = []
    for i, (a, b) in enumerate(zip([0, *cuts], [*cuts, len(data)], strict=True)):
        paths.append(folder / f"part-{i}.jsonl")
        paths[-1].write_bytes(data[a:b])
        assert a < b, "a cut plan must leave something in every piece"
    return paths


BYTE_SPLITS = [  # (data, seed, cuts, order of the ingests, --format)
    ("otlp", 0, ("inside",), "newest first", None),
    ("otlp", 1, ("inside", "in a character"), "shuffled", "otel-genai"),
    ("otlp", 2, ("after newline", "in a character"), "in order", None),
    ("otlp", 3, ("before newline", "inside"), "shuffled", None),
    ("otlp", 4, ("no final newline",), "newest first", "otel-genai"),
    ("otlp", 5, ("no final newline", "in a character"), "shuffled", None),
    ("chat", 0, ("inside",), "in order", None),
    ("chat", 1, ("in a character", "no final newline"), "in order", "openai-chat"),
    ("otlp", 6, ("blank piece", "blank inside", "inside"), "shuffled", None),
    ("otlp", 7, ("blank end", "blank piece"), "newest first", "otel-genai"),
    ("chat", 2, ("blank piece", "blank inside", "blank end"), "in order", None),
    ("chat", 3, ("before [", "before {"), "in order", None),
    ("chat", 4, ("before [", "before ["), "in order", "openai-chat"),
    ("chat", 5, ("before [", "before {", "inside"), "in order", None),
    ("otlp", 8, ("before [", "before {", "before ["), "newest first", None),
    ("otlp", 9, ("before [", "inside"), "shuffled", "otel-genai"),
    ("otlp", 10, ("before {", "before [", "before {"), "in order", "otel-genai"),
]


@pytest.mark.parametrize(("kind", "seed", "plan", "order", "fmt"), BYTE_SPLITS)
def test_a_byte_split_ingested_piece_by_piece_stores_the_whole_file(
        tmp_path: Path, kind: str, seed: int, plan: tuple[str, ...], order: str, fmt: str | None) -> None:
    """Real files cut at random bytes of each kind (a piece that is the middle of one line, a file that ends or
    starts mid-line, a cut next to a newline or inside a UTF-8 character, the data's last line without a newline),
    each piece its own ingest, in order, newest first or shuffled (a chat log in order: its calls are stitched in
    the order they were made), also with --format: the store holds what the whole file gives, row by row, nothing
    reported, nothing waiting; ingesting the pieces again changes nothing."""
    rng = random.Random(seed)
    data, cuts = _byte_cuts(_otlp_bytes() if kind == "otlp" else _chat_bytes(tmp_path / "log"), plan, rng)
    paths = _write_pieces(tmp_path / "pieces", data, cuts)
    if "inside" in plan or "no final newline" in plan:
        assert any(b"\n" not in p.read_bytes() for p in paths)
    if "in a character" in plan:
        assert any(0x80 <= data[c] < 0xC0 for c in cuts)
    for kind in {"before [", "before {"} & set(plan):
        assert any(p.read_bytes().startswith(kind[-1].encode()) for p in paths)
    runs = {"in order": paths, "newest first": paths[::-1], "shuffled": rng.sample(paths, len(paths))}[order]
    store = open_store(tmp_path / "pieces.duckdb")
    summaries = [ingest_paths(store, [str(p)], fmt=fmt) for p in runs]
    assert store.con.execute("SELECT path, locator, error FROM ingest_errors").fetchall() == []
    assert store.scalar("SELECT count(*) FROM line_fragments WHERE NOT joined") == 0
    assert store.scalar("SELECT sum(n_errors) FROM sources") == 0
    whole = _whole(tmp_path, data)
    assert _snapshot(store) == whole
    _assert_counts_add_up(store, summaries)

    again = ingest_paths(store, [str(p) for p in paths], fmt=fmt)
    assert {f.status for f in again.files} <= {"already ingested", "blank"}  # a blank piece has nothing to store
    assert _snapshot(store) == whole


@pytest.mark.parametrize(("doc", "pretty"), [("anthropic/conversations.json", False),
                                             ("anthropic/conversations.json", True), ("otel/current.json", False)])
def test_a_document_after_an_unfinished_line_is_read_as_its_own(tmp_path: Path, doc: str, pretty: bool) -> None:
    """A chat log whose last line was cut off inside a string (the start of a JSON value, so the line is open),
    and after it in its folder a JSON document that opens with `[` or `{`: the document is no piece of that line
    (the line and it are no JSON, nor the start of any), so it is read as the whole document it is, with nothing
    reported about it; the cut line waits as the start of a line."""
    log = _chat_bytes(tmp_path / "log")
    last = log.rindex(b"\n", 0, len(log) - 1) + 1
    cut = log.index(b'"content": "', last) + len('"content": "So')
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a-chat.jsonl").write_bytes(log[:cut])
    value = json.loads((FIXTURES / doc).read_text())
    text = json.dumps(value, indent=2) if pretty else json.dumps(value)
    (folder / "b-doc.json").write_text(text)
    assert fragments._json_start(log[last:cut]) and not fragments.continues_a_line(folder / "b-doc.json")
    store = open_store(tmp_path / "s.duckdb")
    ingest_paths(store, [str(folder)])
    assert store.con.execute("SELECT parse_filename(path), locator, error FROM ingest_errors").fetchall() == [
        ("a-chat.jsonl", f"line {log[:cut].count(10) + 1}", fragments.PIECE["trail"])]
    (tmp_path / "alone").mkdir()
    (tmp_path / "alone" / "doc.json").write_text(text)
    alone = open_store(tmp_path / "alone.duckdb")
    ingest_paths(alone, [str(tmp_path / "alone" / "doc.json")])
    mixed, own = _snapshot(store), _snapshot(alone)
    assert own["traces"] and own["messages"]
    for table, rows in own.items():
        assert set(rows) <= set(mixed[table]), table


@pytest.mark.slow
@pytest.mark.parametrize(("blank", "where"), [(b" \r\n", "middle"), (b"\n", "end")])
def test_a_blank_piece_joins_its_neighbours_in_every_order(tmp_path: Path, blank: bytes, where: str) -> None:
    """Lines ending in `blank`, one cut just before its end (in the middle of the data, or the data's last line) so
    that the end is a piece of its own, nothing but whitespace and a newline: every order of the pieces, each its
    own ingest, stores the whole file's traces, with nothing reported and nothing waiting."""
    data = blank.join(_otlp_bytes().split(b"\n"))
    ends = [i for i in range(len(data)) if data.startswith(blank, i)]
    mid = ends[len(ends) // 2]
    paths = _write_pieces(tmp_path / "pieces", data, [mid, mid + len(blank)] if where == "middle" else [ends[-1]])
    assert paths[1].read_bytes() == blank
    whole = _whole(tmp_path, data)
    for k, order in enumerate(itertools.permutations(paths)):
        with open_store(tmp_path / f"s-{k}.duckdb") as store:
            summaries = [ingest_paths(store, [str(p)]) for p in order]
            assert store.con.execute("SELECT path, locator, error FROM ingest_errors").fetchall() == [], order
            assert store.scalar("SELECT count(*) FROM line_fragments WHERE NOT joined") == 0
            assert _snapshot(store) == whole
            _assert_counts_add_up(store, summaries)


def test_a_blank_file_alone_is_empty_not_an_unknown_format(tmp_path: Path, cli) -> None:
    """A file of nothing but whitespace with no file before it in its folder is reported as empty (exit 2, nothing
    stored); after a file whose line it ends, it is a blank piece: nothing reported, exit 0."""
    (tmp_path / "alone").mkdir()
    alone = tmp_path / "alone" / "a.jsonl"
    alone.write_bytes(b"  \n\n")
    done = cli("ingest", alone, "--store", tmp_path / "a.duckdb", "--json")
    assert done.exit_code == 2
    assert json.loads(done.stdout)["details"][0]["status"] == "failed"
    with open_store(tmp_path / "a.duckdb") as store:
        assert store.con.execute("SELECT error FROM ingest_errors").fetchall() == [
            ("empty file: nothing but whitespace",)]
    paths = _write_pieces(tmp_path / "pieces", _otlp_bytes(), [len(_otlp_bytes()) - 1])
    done = cli("ingest", paths[1], "--store", tmp_path / "b.duckdb", "--json")
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout)["files_blank"] == 1
    with open_store(tmp_path / "b.duckdb") as store:
        assert store.scalar("SELECT count(*) FROM ingest_errors") == 0


def test_a_piece_whose_neighbour_never_arrives_says_so(tmp_path: Path) -> None:
    """The start of a line and its middle are kept, each reported as a piece waiting for its line (not as bad JSON
    or an unknown format) until the piece with the line's end arrives."""
    data, cuts = _byte_cuts(_otlp_bytes(), ("inside",), random.Random(0))
    paths = _write_pieces(tmp_path / "pieces", data, cuts)
    store = open_store(tmp_path / "s.duckdb")
    summary = ingest_paths(store, [str(paths[0]), str(paths[1])]).to_dict()
    assert summary["line_pieces_waiting"] == 2 and summary["files_waiting"] == 1
    errors = dict(store.con.execute("SELECT path, error FROM ingest_errors").fetchall())
    assert errors == {str(paths[0]): fragments.PIECE["trail"], str(paths[1]): fragments.WAITING}
    assert store.scalar("SELECT count(*) FROM line_fragments WHERE NOT joined") == 2
    assert ingest_paths(store, [str(paths[2])]).to_dict()["line_pieces_waiting"] == 0
    assert store.scalar("SELECT count(*) FROM ingest_errors") == 0
    assert _snapshot(store) == _whole(tmp_path, data)


def test_a_piece_deleted_by_source_and_ingested_again_gives_the_whole_file(tmp_path: Path, cli) -> None:
    """`traces delete --source` of one piece removes the traces of its whole lines and its record (the line joined
    from it and the next piece stays: it is recorded under both paths); ingesting the piece again restores them, its
    cut line found joined already."""
    data, cuts = _byte_cuts(_chat_bytes(tmp_path / "log"), ("inside",), random.Random(3))
    paths = _write_pieces(tmp_path / "pieces", data, cuts)
    db = tmp_path / "s.duckdb"
    with open_store(db) as store:
        ingest_paths(store, [str(p) for p in paths])
        pieces_traces = store.scalar("SELECT count(*) FROM traces WHERE source_id = "
                                     "(SELECT source_id FROM sources WHERE path = ?)", [str(paths[0])])
    assert pieces_traces > 0
    done = cli("traces", "delete", "--source", paths[0], "--yes", "--store", db, "--json")
    assert done.exit_code == 0, done.stderr
    whole = _whole(tmp_path, data)
    with open_store(db) as store:
        assert store.scalar("SELECT count(*) FROM sources WHERE path = ?", [str(paths[0])]) == 0
        assert _snapshot(store) != whole
        ingest_paths(store, [str(paths[0])])
        assert store.con.execute("SELECT path, locator, error FROM ingest_errors").fetchall() == []
        assert store.scalar("SELECT count(*) FROM line_fragments WHERE NOT joined") == 0
        assert _snapshot(store) == whole


def test_the_cli_joins_a_line_whose_last_piece_ends_the_data_newest_first(tmp_path: Path) -> None:
    """`tracegym ingest` run as a user runs it, one process per piece, the last first: the data's last line cut
    twice, with no newline after it."""
    data, cuts = _byte_cuts(_otlp_bytes(), ("no final newline",), random.Random(7))
    paths = _write_pieces(tmp_path / "pieces", data, cuts)
    db = tmp_path / "s.duckdb"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    for path in paths[::-1]:
        done = subprocess.run([sys.executable, "-m", "tracegym.cli", "ingest", str(path), "--store", str(db),
                               "--json"], capture_output=True, text=True, env=env, timeout=120, check=False)
        assert done.returncode == 0, done.stderr  # a piece kept to wait for its line is no failure
    assert json.loads(done.stdout)["details"][0]["path"].startswith("line joined from ")
    with open_store(db) as store:
        assert store.scalar("SELECT count(*) FROM ingest_errors") == 0
        assert _snapshot(store) == _whole(tmp_path, data)


def _assert_counts_add_up(store: Store, summaries: list[Any]) -> None:
    """What the ingests reported, and what `sources` holds, adds up to what is stored: a trace rebuilt by a later
    file is counted once, and each file (a line joined from pieces too) is recorded under its own path(s)."""
    stored = [store.scalar(f"SELECT count(*) FROM {t}") for t in ("traces", "messages", "tool_calls")]
    assert [sum(s.total(k) for s in summaries) for k in ("traces", "messages", "tool_calls")] == stored
    assert list(store.con.execute(
        "SELECT sum(n_traces), sum(n_messages), sum(n_tool_calls) FROM sources").fetchone()) == stored
    for (path,) in store.con.execute("SELECT path FROM sources").fetchall():
        assert all(Path(p).is_file() for p in path.split(" + ")), path


def test_a_score_in_a_logs_file_attaches_to_the_trace_from_the_spans_file(tmp_path: Path) -> None:
    lines = _collector_lines()
    logs, spans = tmp_path / "logs.jsonl", tmp_path / "spans.jsonl"
    logs.write_text(lines[-1] + "\n")
    spans.write_text("\n".join(lines[:-1]) + "\n")
    store = open_store(tmp_path / "s.duckdb")
    first = ingest_paths(store, [str(logs)]).files[0]
    assert (first.status, first.traces, first.waiting, first.errors) == ("loaded", 0, 1, 0)
    ingest_paths(store, [str(spans)])
    tid = f"otel-genai:{SCORED_TRACE}"
    assert store.con.execute("SELECT name, value FROM scores WHERE trace_id = ?", [tid]).fetchall() == [
        ("task_success", 1.0)]
    assert store.scalar("SELECT outcome FROM traces WHERE trace_id = ?", [tid]) == "success"


def test_a_file_that_grew_between_ingests_completes_its_traces(tmp_path: Path) -> None:
    lines = _collector_lines()
    path = tmp_path / "otel.jsonl"
    path.write_text("\n".join(lines[:3]) + "\n")  # the first spans of the first trace, as exported so far
    store = open_store(tmp_path / "s.duckdb")
    early = ingest_paths(store, [str(path)]).files[0]
    assert early.traces == 1
    tid = f"otel-genai:{WEATHER_TRACE}"
    before = store.scalar("SELECT n_messages FROM traces WHERE trace_id = ?", [tid])
    path.write_text("\n".join(lines) + "\n")
    messages = store.scalar("SELECT count(*) FROM messages")
    later = ingest_paths(store, [str(path)]).files[0]
    assert (later.merged, later.conflicts) == (1, 0)
    assert later.messages == store.scalar("SELECT count(*) FROM messages") - messages  # what it added, once
    assert store.scalar("SELECT count(*) FROM traces WHERE trace_id = ?", [tid]) == 1
    assert store.scalar("SELECT n_messages FROM traces WHERE trace_id = ?", [tid]) > before
    assert _snapshot(store) == _whole(tmp_path, path.read_bytes())



def test_with_redaction_the_kept_parts_are_redacted_and_numbered_alike_across_ingests(
        tmp_path: Path, cli) -> None:
    """Parts are kept to rebuild a trace when a later file adds to it: with --redact they are kept redacted, and a
    value gets one placeholder in every ingest (a trace's own numbering restarts with each ingest, so the parts
    are numbered as the store is)."""
    lines = [line.replace("Weather in Paris today", "Weather in Paris today for ada.lovelace@example.com")
             for line in _collector_lines()]
    planted = [i for i, line in enumerate(lines) if "ada.lovelace@example.com" in line]
    assert len(planted) >= 2, "the address is in several spans of the trace"
    cut = (planted[0] + planted[-1]) // 2 + 1  # spans of the trace on both sides
    store = tmp_path / "s.duckdb"
    for i, part in enumerate((lines[:cut], lines[cut:])):
        path = tmp_path / f"otel-{i}.jsonl"
        path.write_text("\n".join(part) + "\n")
        assert cli("ingest", "--redact", path, "--store", store).exit_code == 0
    with open_store(store, read_only=True) as st:
        assert st.scalar("SELECT count(*) FROM span_parts") > 0
        assert st.scalar("SELECT count(*) FROM span_parts WHERE contains(doc, 'lovelace')") == 0
        assert st.scalar("SELECT count(*) FROM messages WHERE contains(content, 'lovelace')") == 0
        shown = {row[0] for row in st.con.execute(
            "SELECT unnest(regexp_extract_all(content, '<EMAIL[^>]*>')) FROM messages").fetchall()}
        assert st.scalar("SELECT count(*) FROM line_fragments") == 0
    assert len(shown) == 1, shown


def test_redacting_a_store_in_place_covers_kept_parts_and_pieces_of_lines(tmp_path: Path, cli) -> None:
    """`tracegym redact` over a store ingested unredacted rewrites the parts kept to rebuild traces and the pieces
    of a line waiting for the rest, byte-exact around what it replaced (the piece ends inside a character), so the
    line still joins when its rest arrives."""
    lines = [line.replace("Weather in Paris today", "Weather in Paris today for ada.lovelace@example.com, café")
             for line in _collector_lines()]
    data = ("\n".join(lines) + "\n").encode()
    at = data.index("café".encode(), 5000) + 4  # inside the é of the second line with the address
    first, second = tmp_path / "otel-0.jsonl", tmp_path / "otel-1.jsonl"
    first.write_bytes(data[:at])
    store = tmp_path / "s.duckdb"
    ingested = cli("ingest", first, "--store", store)
    assert ingested.exit_code == 0, ingested.output
    with open_store(store, read_only=True) as st:
        assert st.scalar("SELECT count(*) FROM span_parts WHERE contains(doc, 'lovelace')") > 0
        [(trail,)] = st.con.execute("SELECT text FROM line_fragments WHERE side = 'trail'").fetchall()
        assert b"lovelace" in trail and trail.endswith(b"caf\xc3")

    redacted = cli("redact", "--store", store, "--json")
    assert redacted.exit_code == 0, redacted.output
    assert cli("redact", "check", "--store", store).exit_code == 0
    with open_store(store, read_only=True) as st:
        assert st.scalar("SELECT count(*) FROM span_parts WHERE contains(doc, 'lovelace')") == 0
        [(trail,)] = st.con.execute("SELECT text FROM line_fragments WHERE side = 'trail'").fetchall()
        assert b"lovelace" not in trail and b"<EMAIL_" in trail and trail.endswith(b"caf\xc3")

    second.write_bytes(data[at:])
    assert cli("ingest", second, "--store", store).exit_code == 0
    with open_store(store, read_only=True) as st:
        assert st.scalar("SELECT count(*) FROM line_fragments WHERE NOT joined") == 0
        joined = st.scalar("SELECT count(*) FROM messages WHERE contains(content, 'café') AND "
                           "contains(content, '<EMAIL_')")
        assert joined > 0 and st.scalar("SELECT count(*) FROM ingest_errors") == 0


LANGSMITH_TRACE = "1e0b5f6a-0000-4c1d-8e2f-3a4b5c6d7e80"


@pytest.mark.parametrize("feedback_first", [True, False])
def test_langsmith_feedback_naming_only_its_run_attaches_from_a_file_of_its_own(
        tmp_path: Path, feedback_first: bool) -> None:
    """Feedback without a trace id, on a child run: found through the stored runs, or kept under the run's id
    until the runs arrive."""
    lines = (FIXTURES / "langsmith" / "runs.jsonl").read_text().splitlines()
    stray = [line for line in lines if '"trace_id": null' in line]
    assert len(stray) == 1 and '"run_id": "1e0b5f6a-0005' in stray[0]
    runs, feedback = tmp_path / "runs.jsonl", tmp_path / "feedback.jsonl"
    runs.write_text("\n".join(line for line in lines if line not in stray) + "\n")
    feedback.write_text(stray[0] + "\n")
    store = open_store(tmp_path / "s.duckdb")
    first, second = (feedback, runs) if feedback_first else (runs, feedback)
    done = [ingest_paths(store, [str(first)]).files[0], ingest_paths(store, [str(second)]).files[0]]
    assert [(f.errors, f.conflicts) for f in done] == [(0, 0), (0, 0)]
    assert [f.waiting for f in done] == ([1, 0] if feedback_first else [0, 0])
    assert _snapshot(store) == _whole(tmp_path, ("\n".join(lines) + "\n").encode())
    tid = f"langsmith:{LANGSMITH_TRACE}"
    assert ("correctness", 0.0) in store.con.execute("SELECT name, value FROM scores WHERE trace_id = ?",
                                                    [tid]).fetchall()
    assert store.scalar("SELECT outcome FROM traces WHERE trace_id = ?", [tid]) == "failure"


def test_a_langsmith_run_listed_while_running_is_completed_by_a_later_export(tmp_path: Path) -> None:
    """`list_runs` while the agent runs gives the root without its end or outputs and some children; a later
    export the finished runs. The trace is the one of the later export."""
    lines = (FIXTURES / "langsmith" / "runs.jsonl").read_text().splitlines()
    runs = [json.loads(line) for line in lines if '"run_type"' in line]
    running = {**runs[0], "end_time": None, "outputs": None, "status": "pending"}
    early, late = tmp_path / "early.jsonl", tmp_path / "late.jsonl"
    early.write_text("\n".join(json.dumps(r) for r in [running, *runs[1:3]]) + "\n")
    late.write_text("\n".join(lines) + "\n")
    store = open_store(tmp_path / "s.duckdb")
    first = ingest_paths(store, [str(early)]).files[0]
    second = ingest_paths(store, [str(late)]).files[0]
    assert (first.traces, second.traces, second.merged, second.conflicts) == (1, 0, 1, 0)
    assert _snapshot(store) == _whole(tmp_path, late.read_bytes())


LANGFUSE_DOC = FIXTURES / "langfuse" / "trace-c9a8f7e6-d5c4-4b3a-9281-706f5e4d3c2b.json"


def test_a_langfuse_trace_document_merges_with_observation_and_score_rows_in_any_order(tmp_path: Path) -> None:
    """A full trace exported while the agent ran (its first observations, no scores yet), the later observations
    and the scores as rows in files of their own: in any order, the trace of the whole export."""
    doc = json.loads(LANGFUSE_DOC.read_text())
    key = doc["id"]
    early = {**doc, "observations": doc["observations"][:3], "scores": []}
    files = {"early.json": json.dumps(early),
             "observations.jsonl": "".join(json.dumps({**o, "traceId": key}) + "\n" for o in doc["observations"][3:]),
             "scores.jsonl": "".join(json.dumps(s) + "\n" for s in doc["scores"])}
    whole = _whole(tmp_path, LANGFUSE_DOC.read_bytes())
    assert len(whole["traces"]) == 1 and len(whole["scores"]) == 3
    for n, order in enumerate(itertools.permutations(files)):
        folder = tmp_path / f"run-{n}"
        folder.mkdir()
        store = open_store(folder / "s.duckdb")
        for name in order:
            (folder / name).write_text(files[name])
            done = ingest_paths(store, [str(folder / name)]).files[0]
            assert (done.errors, done.conflicts) == (0, 0), order
        assert _snapshot(store) == whole, order


def test_a_later_export_of_a_langfuse_trace_completes_the_earlier_one(tmp_path: Path) -> None:
    doc = json.loads(LANGFUSE_DOC.read_text())
    early = tmp_path / "early" / "trace.json"
    early.parent.mkdir()
    early.write_text(json.dumps({**doc, "observations": doc["observations"][:4], "scores": doc["scores"][:1]}))
    store = open_store(tmp_path / "s.duckdb")
    assert ingest_paths(store, [str(early)]).files[0].traces == 1
    later = ingest_paths(store, [str(LANGFUSE_DOC)]).files[0]
    assert (later.traces, later.merged, later.conflicts) == (0, 1, 0)
    assert ingest_paths(store, [str(LANGFUSE_DOC)]).files[0].status == "already ingested"
    assert _snapshot(store) == _whole(tmp_path, LANGFUSE_DOC.read_bytes())


@pytest.mark.parametrize("order", ["in order", "newest first"])
def test_replace_of_a_byte_split_files_pieces_leaves_the_store_as_it_was(tmp_path: Path, cli, order: str) -> None:
    """`ingest --replace` of the pieces of a chat log cut inside a line reads the line joined from them again: the
    store ends as the first ingest left it; after `traces delete` of every trace, it restores them all. (Newest
    first, a piece's `sources` row counts what its ingest brought, which differs when the conversations it goes on
    with are stored already: compared apart from those counts.)"""
    data, cuts = _byte_cuts(_chat_bytes(tmp_path / "log"), ("inside", "after newline"), random.Random(11))
    paths = _write_pieces(tmp_path / "pieces", data, cuts)
    given = [str(p) for p in (paths if order == "in order" else paths[::-1])]
    db = tmp_path / "s.duckdb"

    def content() -> dict[str, list[str]]:
        if order == "in order":
            return dump(db)
        with open_store(db, read_only=True) as store:
            sources = sorted(store.con.execute("SELECT source_id, path, format FROM sources").fetchall())
        return {**dump(db, without={"sources"}), "sources": [repr(row) for row in sources]}

    assert cli("ingest", *given, "--store", db).exit_code == 0
    first = content()
    assert len(first["traces"]) >= 4 and any(" + " in row for row in first["sources"])
    assert cli("ingest", "--replace", *given, "--store", db).exit_code == 0
    assert content() == first
    with open_store(db) as store:
        ids = [t for (t,) in store.con.execute("SELECT trace_id FROM traces").fetchall()]
    assert cli("traces", "delete", *ids, "--yes", "--store", db).exit_code == 0
    with open_store(db) as store:
        assert store.scalar("SELECT count(*) FROM traces") == 0
    assert cli("ingest", "--replace", *given, "--store", db).exit_code == 0
    assert content() == first
