"""`tracegym ingest` on all of ../shared/data/traces: counts, outcomes, flagged errors, idempotency."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from tracegym.cli import app

TRACES = Path(__file__).resolve().parents[3] / "shared" / "data" / "traces"
EXPECTED = {"tau-bench": 200, "mini-swe-agent": 35, "swe-agent": 22, "openhands": 4}
TABLES = ("sources", "traces", "messages", "tool_calls", "scores", "ingest_errors")


def run(*args: object) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """One ingest of the whole folder (about 2 s) shared by the tests that only read it."""
    if not TRACES.is_dir():
        pytest.skip(f"real traces not found at {TRACES} (they live in ../shared beside the checkout)")
    store = tmp_path_factory.mktemp("real") / "store.duckdb"
    result = run("ingest", TRACES, "--store", store, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), store


def query(store: Path, sql: str, params: list[Any] | None = None) -> list[tuple]:
    with duckdb.connect(str(store), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


def counts(store: Path) -> dict[str, int]:
    return {t: query(store, f"SELECT count(*) FROM {t}")[0][0] for t in TABLES}


def test_json_summary_counts_every_format(ingested: tuple[dict[str, Any], Path]) -> None:
    summary, store = ingested
    assert {"files", "traces", "messages", "tool_calls", "errors", "duplicates_skipped", "conflicts",
            "by_format"} <= summary.keys()
    assert {fmt: row["traces"] for fmt, row in summary["by_format"].items() if row["traces"]} == EXPECTED
    assert summary["traces"] == sum(EXPECTED.values())
    assert summary["errors"] == summary["duplicates_skipped"] == summary["conflicts"] == 0
    stored = counts(store)
    assert (summary["messages"], summary["tool_calls"]) == (stored["messages"], stored["tool_calls"])
    for fmt, row in summary["by_format"].items():
        in_store = query(store, "SELECT count(*) FROM traces t JOIN messages m USING (trace_id) WHERE t.format = ?",
                         [fmt])
        assert row["messages"] == in_store[0][0]
    assert stored["ingest_errors"] == 0


def test_companion_files_are_not_errors(ingested: tuple[dict[str, Any], Path]) -> None:
    summary, _ = ingested
    companions = sorted(Path(d["path"]).name for d in summary["details"] if d["status"] == "companion")
    reports = sorted(p.name for p in (TRACES / "mini-swe-agent" / "reports").iterdir())
    assert companions == sorted([*reports, "results_summary.json", "all_preds.jsonl"])


def test_tau_bench_outcomes_calls_and_error_results(ingested: tuple[dict[str, Any], Path]) -> None:
    _, store = ingested
    runs = json.loads((TRACES / "tau-bench" / "gpt-4o-airline.json").read_text())
    outcomes = dict(query(store, "SELECT outcome, count(*) FROM traces WHERE format = 'tau-bench' GROUP BY 1"))
    assert outcomes == {"success": 84, "failure": 116}
    assert sum(r["reward"] >= 1 for r in runs) == 84

    tool_msgs = [m for r in runs for m in r["traj"] if m["role"] == "tool"]
    error_msgs = [m for m in tool_msgs if m["content"].startswith("Error:")]
    calls = query(store, """SELECT c.result, c.is_error, c.result_message_idx FROM tool_calls c
                            JOIN traces t USING (trace_id) WHERE t.format = 'tau-bench'""")
    assert len(calls) == sum(len(m.get("tool_calls") or []) for r in runs for m in r["traj"])
    assert sum(idx is not None for _, _, idx in calls) == len(tool_msgs)  # every result linked to its call
    flagged = [result for result, is_error, _ in calls if is_error]
    assert len(error_msgs) > 0 and sorted(flagged) == sorted(m["content"] for m in error_msgs)


def test_mini_swe_agent_outcomes_come_from_the_reports(ingested: tuple[dict[str, Any], Path]) -> None:
    _, store = ingested
    rows = query(store, "SELECT session_id, outcome, metadata FROM traces WHERE format = 'mini-swe-agent'")
    assert len(rows) == EXPECTED["mini-swe-agent"]
    for instance_id, outcome, metadata in rows:
        report = json.loads((TRACES / "mini-swe-agent" / "reports" / f"{instance_id}.report.json").read_text())
        assert outcome == ("success" if report["resolved"] else "failure")
        assert json.loads(metadata)["tests_status"]["FAIL_TO_PASS"] == report["tests_status"]["FAIL_TO_PASS"]
    resolved = query(store, """SELECT count(*) FILTER (value = 1), count(*) FROM scores s JOIN traces t USING (trace_id)
                               WHERE t.format = 'mini-swe-agent' AND s.name = 'resolved'""")[0]
    assert resolved == (sum(o == "success" for _, o, _ in rows), 35)
    nonzero = query(store, """SELECT count(*) FILTER (NOT is_error) FROM tool_calls c JOIN traces t USING (trace_id)
                              WHERE t.format = 'mini-swe-agent' AND exit_code <> 0""")[0][0]
    assert nonzero == 0


def test_swe_agent_and_openhands_have_no_outcome_but_flag_errors(ingested: tuple[dict[str, Any], Path]) -> None:
    _, store = ingested
    rows = dict(query(store, """SELECT format, count(*) FROM traces WHERE format IN ('swe-agent', 'openhands')
                                AND outcome IS NULL GROUP BY 1"""))
    assert rows == {"swe-agent": 22, "openhands": 4}
    rejected = query(store, """SELECT bool_and(is_error), count(*) FROM tool_calls
                               WHERE result LIKE 'Your proposed edit has introduced new syntax error%'""")[0]
    assert rejected[0] is True and rejected[1] > 0
    assert query(store, "SELECT count(*) FROM tool_calls WHERE exit_code = -1 AND is_error")[0][0] == 1


def test_traces_list_filters_by_outcome_and_rejects_a_misspelt_one(ingested: tuple[dict[str, Any], Path]) -> None:
    _, store = ingested
    listed = run("traces", "list", "--outcome", "failure", "--format", "tau-bench", "--limit", 500, "--store", store,
                 "--json")
    assert len(json.loads(listed.stdout)) == 116
    misspelt = run("traces", "list", "--outcome", "succes", "--store", store)
    assert misspelt.exit_code == 2 and "Did you mean 'success'?" in misspelt.stderr


@pytest.mark.slow  # ingests all the real traces again
def test_reingest_adds_nothing_and_says_so(ingested: tuple[dict[str, Any], Path]) -> None:
    first, store = ingested
    before = counts(store)
    again = run("ingest", TRACES, "--store", store, "--json")
    assert again.exit_code == 0
    summary = json.loads(again.stdout)
    trace_files = sum(d["status"] == "loaded" for d in first["details"])
    assert summary["traces"] == summary["errors"] == 0
    assert summary["files_skipped_already_ingested"] == trace_files == 62
    assert counts(store) == before

    plain = run("ingest", TRACES, "--store", store)
    assert plain.exit_code == 0
    assert "Nothing new" in plain.stderr
    assert counts(store) == before


def test_same_id_with_different_content_is_reported_not_overwritten(
    ingested: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    _, original = ingested
    store = tmp_path / "copy.duckdb"
    shutil.copy(original, store)
    name = "django__django-11551.traj.json"
    run_dir = tmp_path / "run"
    (run_dir / "trajs").mkdir(parents=True)
    shutil.copytree(TRACES / "mini-swe-agent" / "reports", run_dir / "reports")
    traj = json.loads((TRACES / "mini-swe-agent" / "trajs" / name).read_text())
    traj["messages"][2]["content"] += "\n(edited after the fact)"
    (run_dir / "trajs" / name).write_text(json.dumps(traj))

    result = run("ingest", run_dir / "trajs" / name, "--store", store, "--json")
    summary = json.loads(result.stdout)
    assert result.exit_code == 0 and summary["conflicts"] == 1 and summary["traces"] == 0
    (trace_id,) = query(store, "SELECT trace_id FROM traces WHERE session_id = 'django__django-11551'")[0]
    errors = query(store, "SELECT locator, error FROM ingest_errors")
    assert errors == [(f"trace {trace_id}", errors[0][1])] and "different content" in errors[0][1]
    stored = query(store, "SELECT content FROM messages WHERE trace_id = ? AND idx = 2", [trace_id])[0][0]
    assert not stored.endswith("(edited after the fact)")


def test_traces_show_json_gives_json_columns_as_json(ingested: tuple[dict[str, Any], Path]) -> None:
    _, store = ingested
    [(trace_id,)] = query(store, "SELECT trace_id FROM tool_calls WHERE trace_id LIKE 'tau-bench:%' "
                                 "ORDER BY trace_id LIMIT 1")
    shown = json.loads(run("traces", "show", trace_id, "--store", store, "--json").stdout)
    assert shown["trace_id"] == trace_id and shown["messages"]
    assert all(isinstance(call["arguments"], dict) for call in shown["tool_calls"])
    assert shown["metadata"] is None or isinstance(shown["metadata"], dict)
