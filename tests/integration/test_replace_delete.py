"""`ingest --replace` and `traces delete`: the store ends as a fresh ingest of the final data would leave it."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support_log import SupportLog, write_support_log
from tracegym.store import open_store

BOOKKEEPING = {"_migrations", "store_changes", "mining_runs", "mining_run_clusters", "label_imports", "cluster_parts",
               "deleted_traces"}
"""Tables of what was run when, not of the data: left out of the comparison (cluster parts are compared summed)."""
WHEN = {"ingested_at", "created_at", "labelled_at", "imported_at", "first_imported_at"}
CSAT = ("--outcome", "resolution", "--map", "resolved=success", "--map", "unresolved=failure")


def dump(store: Path, skip: set[str] = frozenset(), without: set[str] = frozenset()) -> dict[str, list[str]]:
    """Every table's rows (sorted), but for bookkeeping tables, the columns saying when, and `skip`."""
    with open_store(store, read_only=True) as st:
        tables = [t for (t,) in st.con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' ORDER BY 1").fetchall()]
        out = {}
        for table in sorted(set(tables) - BOOKKEEPING - without):
            cols = [c for (c,) in st.con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = ? "
                "ORDER BY column_index", [table]).fetchall() if c not in WHEN | skip]
            rows = st.con.execute(f"SELECT {', '.join(f'CAST({c} AS VARCHAR)' for c in cols)} FROM {table}")
            out[table] = sorted(repr(row) for row in rows.fetchall())
        out["cluster_part_sums"] = sorted(repr(row) for row in st.con.execute(
            "SELECT cluster_id, sum(n_traces), sum(n_findings), sum(n_failed), sum(n_known) FROM cluster_parts "
            "GROUP BY cluster_id").fetchall())
    return out


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def run(cli, *args: Any, input: str | None = None, exit_code: int = 0) -> dict[str, Any]:
    result = cli(*args, "--json", input=input)
    assert result.exit_code == exit_code, result.output
    # The test runner echoes the answer typed to a prompt onto stdout, where a terminal would show it.
    return json.loads(result.stdout[result.stdout.index("{"):] if input else result.stdout)


def trace_ids(store: Path, fmt: str) -> dict[str, str]:
    """Session id -> trace id in one format (the trace of a session's calls is named by its first call)."""
    with open_store(store, read_only=True) as st:
        return dict(st.con.execute("SELECT session_id, trace_id FROM traces WHERE format = ?", [fmt]).fetchall())


def broken(log: SupportLog, style: str) -> list[dict[str, Any]]:
    """The log as first exported: session ids under `meta.conv`, which ingest does not read unless told, and the
    timeout family's last reply worded otherwise."""
    last = {s.session_id: s.messages[-1]["content"] for s in log.sessions if s.family == "upstream_timeout"}
    out = []
    for line in lines_of(log.log):
        line = {**{k: v for k, v in line.items() if k != "session_id"}, "meta": {"conv": line["session_id"]}}
        response = line["response"]
        message = response["choices"][0]["message"] if style == "openai" else response["content"][0]
        field = "content" if style == "openai" else "text"
        if message.get(field) is not None and message[field] == last.get(line["meta"]["conv"]):
            message[field] = "Sorry, please try again."
        out.append(line)
    return out


def write_labels(path: Path, ids: list[str]) -> Path:
    with path.open("w", newline="") as f:
        csv.writer(f).writerows([["trace_id", "outcome"], *[[tid, ("success", "failure")[i % 2]]
                                                            for i, tid in enumerate(ids)]])
    return path


@pytest.mark.slow
@pytest.mark.parametrize("style", ["openai", "anthropic"])
def test_replace_leaves_the_store_as_a_fresh_ingest_of_the_fixed_log(cli, tmp_path: Path, style: str) -> None:
    log = write_support_log(tmp_path / "log", style=style)
    first = write_lines(tmp_path / "export.jsonl", broken(log, style))
    a, b = tmp_path / "a.duckdb", tmp_path / "b.duckdb"

    assert run(cli, "ingest", first, "--store", a)["traces_without_session"] == 40
    with open_store(a, read_only=True) as st:
        ids = sorted(tid for (tid,) in st.con.execute("SELECT trace_id FROM traces").fetchall())
    labels = write_labels(tmp_path / "review.csv", ids[:10])
    review = ("labels", "import", labels, "--key", "trace_id", "--outcome", "outcome", "--match", "trace")
    run(cli, *review, "--store", a)
    run(cli, "mine", "failures", "--store", a)
    stored = dump(a)

    plain = cli("ingest", log.log, "--store", a)  # the fixed log, without --replace: nothing changes, and it says so
    assert plain.exit_code == 0, plain.output
    said = " ".join(plain.stderr.split())
    assert "40 stored traces differ from these files (8 in content, 32 only in session, times or metadata, " \
        "counted as duplicates)" in said
    assert "`tracegym ingest --replace` replaces them" in said and "Nothing new" not in said
    now = dump(a)
    assert len(now["ingest_errors"]) == 8 and all("conflict:" in row for row in now["ingest_errors"])
    assert {k: v for k, v in now.items() if k not in ("sources", "ingest_errors")} == \
        {k: v for k, v in stored.items() if k not in ("sources", "ingest_errors")}

    replaced = run(cli, "ingest", log.log, "--replace", "--store", a)
    assert (replaced["traces_replaced"], replaced["traces"], replaced["traces_without_session"]) == (40, 40, 0)
    run(cli, "labels", "import", log.csat, "--key", "session_id", *CSAT, "--store", a)
    run(cli, "mine", "failures", "--store", a)

    run(cli, "ingest", log.log, "--store", b)
    run(cli, *review, "--store", b)
    run(cli, "labels", "import", log.csat, "--key", "session_id", *CSAT, "--store", b)
    run(cli, "mine", "failures", "--store", b)

    after, fresh = dump(a), dump(b)
    after["sources"] = [row for row in after["sources"] if str(first) not in row]
    assert after == fresh
    assert len(fresh["labels"]) == 10 + sum(s.stars is not None for s in log.sessions)
    with open_store(a, read_only=True) as st:
        change = st.query("SELECT * FROM store_changes")
    assert [(c["action"], c["n_traces"], json.loads(c["removed"])["traces"]) for c in change] == [("replace", 40, 40)]
    assert sorted(json.loads(change[0]["removed_trace_ids"])) == ids and change[0]["changed_by"]
    assert json.loads(change[0]["selection"])["file"] == str(log.log)


def test_a_file_ingested_before_is_read_again_only_with_replace(cli, tmp_path: Path) -> None:
    log = write_support_log(tmp_path / "log", n_sessions=5)
    store = tmp_path / "s.duckdb"
    run(cli, "ingest", log.log, "--store", store)
    again = cli("ingest", log.log, "--store", store)
    assert "Nothing new: everything here was already in the store (`--replace` reads ingested files again)" in \
        " ".join(again.stderr.split())
    before = dump(store)
    replaced = run(cli, "ingest", log.log, "--replace", "--store", store)
    assert (replaced["traces_replaced"], replaced["files_skipped_already_ingested"]) == (5, 0)
    assert dump(store) == before


def without_sessions(log: SupportLog, gone: set[str], path: Path) -> Path:
    return write_lines(path, [line for line in lines_of(log.log) if line["session_id"] not in gone])


@pytest.mark.slow
def test_delete_leaves_the_store_as_a_fresh_ingest_without_the_deleted_traces(cli, tmp_path: Path) -> None:
    log = write_support_log(tmp_path / "oa", style="openai")
    other = write_support_log(tmp_path / "an", style="anthropic", seed=1)
    a, b = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    run(cli, "ingest", log.log, other.log, "--store", a)
    run(cli, "labels", "import", log.csat, "--key", "session_id", *CSAT, "--match", "session", "--format",
        "openai-chat", "--store", a)
    run(cli, "mine", "failures", "--store", a)
    with open_store(a, read_only=True) as st:
        assert st.scalar("SELECT count(*) FROM clusters")
    by_session = trace_ids(a, "openai-chat")

    by_source = run(cli, "traces", "delete", "--source", other.log, "--yes", "--store", a)
    assert (by_source["traces"], by_source["removed"]["traces"], by_source["removed"]["sources"]) == (40, 40, 1)
    pair = ["sess-0003", "sess-0011"]
    declined = cli("traces", "delete", *[by_session[s] for s in pair], "--store", a, input="n\n")
    assert declined.exit_code == 1 and "Nothing was deleted" in declined.stderr
    by_id = run(cli, "traces", "delete", *[by_session[s] for s in pair], "--store", a, input="y\n")
    assert by_id["removed"]["labels"] == sum(s.stars is not None for s in log.sessions if s.session_id in pair)
    starts = {}
    for line in lines_of(log.log):
        starts.setdefault(line["session_id"], line["timestamp"])
    cut = sorted(starts.values())[10]
    by_date = run(cli, "traces", "delete", "--before", cut, "--yes", "--store", a)
    early = {s for s, at in starts.items() if at < cut}
    assert by_date["traces"] == len(early - set(pair))

    gone = early | set(pair)
    run(cli, "ingest", without_sessions(log, gone, tmp_path / "rest.jsonl"), "--store", b)
    unmatched = any(s.stars is not None and s.session_id in gone for s in log.sessions)
    run(cli, "labels", "import", log.csat, "--key", "session_id", *CSAT, "--match", "session", "--format",
        "openai-chat", "--store", b, exit_code=int(unmatched))  # rows of deleted sessions match no trace
    run(cli, "mine", "failures", "--store", b)
    # The other file is another file: its record and the traces' source ids differ by construction.
    assert dump(a, skip={"source_id"}, without={"sources"}) == dump(b, skip={"source_id"}, without={"sources"})
    with open_store(a, read_only=True) as st:
        changes = st.query("SELECT action, selection, n_traces FROM store_changes ORDER BY changed_at")
        examples = st.con.execute("SELECT count(*) FROM clusters ANTI JOIN traces ON trace_id = example_trace_id"
                                  ).fetchone()[0]
    assert [(c["action"], next(iter(json.loads(c["selection"]))), c["n_traces"]) for c in changes] == [
        ("delete", "source", 40), ("delete", "ids", 2), ("delete", "before", by_date["traces"])]
    assert examples == 0


@pytest.mark.parametrize(("args", "said"), [
    (["chatcmpl-nope"], "No trace 'chatcmpl-nope' in the store"),
    (["chatcmpl-sess-0001-2", "chatcmpl-nope"], "No trace 'chatcmpl-nope' in the store"),
    (["--before", "last tuesday"], "--before 'last tuesday' is not a date"),
    (["--source", "elsewhere.jsonl"], "No ingested file 'elsewhere.jsonl'"),
    ([], "Say which traces to delete"),
    (["chatcmpl-sess-0001-2", "--before", "2026-11-01"], "not IDs and --before together"),
])
def test_bad_input_to_delete_is_one_clear_error_and_changes_nothing(cli, tmp_path: Path, args: list[str],
                                                                   said: str) -> None:
    log = write_support_log(tmp_path / "log", n_sessions=5)
    store = tmp_path / "s.duckdb"
    run(cli, "ingest", log.log, "--store", store)
    before = dump(store)
    result = cli("traces", "delete", *args, "--yes", "--store", store)
    assert result.exit_code == 2, result.output
    assert said in " ".join(result.stderr.split()) and "Traceback" not in result.stderr
    assert result.stdout == ""
    assert dump(store) == before
    with open_store(store, read_only=True) as st:
        assert st.scalar("SELECT count(*) FROM store_changes") == 0


def test_nothing_started_before_the_date_deletes_nothing(cli, tmp_path: Path) -> None:
    log = write_support_log(tmp_path / "log", n_sessions=5)
    store = tmp_path / "s.duckdb"
    run(cli, "ingest", log.log, "--store", store)
    result = run(cli, "traces", "delete", "--before", "2020-01-01T00:00:00+00:00", "--store", store)
    assert (result["traces"], result["change_id"]) == (0, None)
    with open_store(store, read_only=True) as st:
        assert (st.scalar("SELECT count(*) FROM traces"), st.scalar("SELECT count(*) FROM store_changes")) == (5, 0)
