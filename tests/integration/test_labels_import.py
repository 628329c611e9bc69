"""`tracegym labels import` on the real traces: outcomes and scores from a file kept beside them."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from tracegym.store import open_store

MAP = ("--map", "resolved=success", "--map", "escalated=failure")


@pytest.fixture(scope="module")
def labelled_store_built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """swe-agent and openhands traces (no outcome of their own) and τ-bench (a reward each), mined once."""
    from typer.testing import CliRunner

    from tests.conftest import TRACES
    from tracegym.cli import app

    if not TRACES.is_dir():
        pytest.skip(f"real traces not found at {TRACES} (they live in ../shared beside the checkout)")
    store_path = tmp_path_factory.mktemp("labelled") / "store.duckdb"
    ingests = [["ingest", str(TRACES / folder)] for folder in ("swe-agent", "openhands", "tau-bench")]
    for args in [*ingests, ["mine", "failures"]]:
        result = CliRunner().invoke(app, [*args, "--store", str(store_path), "--json"])
        assert result.exit_code == 0, result.output
    assert not store_path.with_name(store_path.name + ".wal").exists()  # closed: the one file is the whole store
    return store_path


@pytest.fixture
def labelled_store(labelled_store_built: Path, store_path: Path) -> Path:
    """A private copy of the built store for each test, which imports labels into it."""
    shutil.copyfile(labelled_store_built, store_path)
    return store_path


def _query(store_path: Path, sql: str, params: list | None = None) -> list[dict]:
    with open_store(store_path, read_only=True) as st:
        return st.query(sql, params)


def _write_csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="") as f:
        csv.writer(f).writerows([["conversation_id", "resolution", "csat"], *rows])
    return path


def _import(cli, store_path, file, *args: str, code: int = 0) -> dict:
    result = cli("labels", "import", file, "--key", "conversation_id", "--store", store_path, "--json", *args)
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def test_labels_set_outcomes_and_scores_with_their_source_and_reimport_changes_nothing(cli, labelled_store,
                                                                                         tmp_path):
    ids = [r["trace_id"] for r in _query(labelled_store, "SELECT trace_id FROM traces WHERE format = 'swe-agent' "
                                                         "ORDER BY trace_id")]
    assert len(ids) == 22 and not _query(labelled_store, "SELECT 1 FROM traces WHERE format = 'swe-agent' "
                                                         "AND outcome IS NOT NULL")
    wanted = {tid: ("escalated" if i % 3 == 0 else "resolved") for i, tid in enumerate(ids)}
    rows = [[tid, value, "0.25" if value == "escalated" else "0.9"] for tid, value in wanted.items()]
    rows += [["no-such-conversation", "resolved", "1"], [ids[1], "pending", ""], [ids[2], "resolved", "n/a"]]
    file = _write_csv(tmp_path / "reviews.csv", rows)

    # Three rows are not applied: the exit status says so (1), and the 22 good rows are stored.
    report = _import(cli, labelled_store, file, "--outcome", "resolution", "--score", "csat", *MAP, code=1)
    assert report["rows"] == 25 and report["unmatched"] == 1 and report["bad"] == 2 and report["conflicts"] == 0
    assert report["unmatched_examples"] == [{"row": "row 24", "key": "no-such-conversation"}]
    reasons = [b["reason"] for b in report["bad_examples"]]
    assert "'pending' is not mapped" in reasons[0] and "'n/a' is not a number" in reasons[1]
    assert report["labelled_traces"] == 22 and report["changed"] == 22 and not report["already_imported"]

    stored = {r["trace_id"]: r["outcome"] for r in _query(
        labelled_store, "SELECT trace_id, outcome FROM traces WHERE format = 'swe-agent'")}
    assert stored == {tid: "failure" if v == "escalated" else "success" for tid, v in wanted.items()}
    audit = _query(labelled_store, "SELECT * FROM labels JOIN label_imports USING (import_id) WHERE trace_id = ?",
                   [ids[0]])
    assert len(audit) == 1
    assert audit[0]["path"] == str(file.resolve()) and audit[0]["outcome_column"] == "resolution"
    assert audit[0]["score_column"] == "csat" and audit[0]["locator"] == "row 2"
    assert audit[0]["value"] == "escalated" and audit[0]["previous_outcome"] is None
    assert audit[0]["labelled_at"] is not None and audit[0]["imported_at"] is not None
    scores = _query(labelled_store, "SELECT value, kind FROM scores WHERE trace_id = ? AND name = 'csat'", [ids[0]])
    assert scores == [{"value": 0.25, "kind": "human"}]

    again = _import(cli, labelled_store, file, "--outcome", "resolution", "--score", "csat", *MAP, code=1)
    assert again["already_imported"] and again["changed"] == 0 and again["labelled_traces"] == 22
    assert _query(labelled_store, "SELECT count(*) AS n FROM labels")[0]["n"] == 22
    assert _query(labelled_store, "SELECT count(*) AS n FROM scores WHERE name = 'csat'")[0]["n"] == 22
    assert _query(labelled_store, "SELECT count(*) AS n FROM label_imports")[0]["n"] == 1

    shown = cli("labels", "list", "--trace", ids[0], "--store", labelled_store, "--json")
    assert shown.exit_code == 0 and json.loads(shown.stdout)[0]["outcome"] == "failure"


def test_mining_after_labels_uses_the_new_outcomes(cli, labelled_store, tmp_path):
    # Flip every τ-bench trial of task 0 and 1 (session keys: four trials each) to the opposite of its reward.
    before = {r["trace_id"]: r["outcome"] for r in _query(
        labelled_store, "SELECT trace_id, outcome FROM traces WHERE session_id IN ('task-0', 'task-1')")}
    assert len(before) == 8
    lines = [json.dumps({"review": {"session": s}, "verdict": v}) for s, v in (("task-0", "fail"), ("task-1", "pass"))]
    file = tmp_path / "review.jsonl"
    file.write_text("\n".join(lines) + "\n")
    result = cli("labels", "import", file, "--key", "review.session", "--outcome", "verdict", "--match", "session",
                 "--store", labelled_store, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    expected = {tid: "failure" if ":task-0:" in tid else "success" for tid in before}
    assert report["labelled_traces"] == 8
    assert report["changed"] == sum(before[t] != expected[t] for t in before) > 0

    mined = cli("mine", "failures", "--store", labelled_store, "--json")  # no --redetect
    assert mined.exit_code == 0, mined.output
    (failed,) = [c for c in json.loads(mined.stdout)["clusters"] if c["signature"] == "trace outcome: failure"]
    failures = {r["trace_id"] for r in _query(labelled_store, "SELECT trace_id FROM traces WHERE outcome = 'failure'")}
    assert failed["n_traces"] == len(failures)
    found = {r["trace_id"] for r in _query(labelled_store, "SELECT trace_id FROM failures WHERE cluster_id = ?",
                                           [failed["cluster_id"]])}
    assert found == failures and {t for t, o in expected.items() if o == "failure"} <= found
    redetected = cli("mine", "failures", "--store", labelled_store, "--json", "--redetect")
    assert json.loads(redetected.stdout)["clusters"] == json.loads(mined.stdout)["clusters"]


def test_conflicting_rows_are_reported_and_not_applied(cli, labelled_store, tmp_path):
    tid = _query(labelled_store, "SELECT min(trace_id) AS t FROM traces WHERE format = 'openhands'")[0]["t"]
    file = _write_csv(tmp_path / "l.csv", [[tid, "success", ""], [tid, "failure", ""]])
    result = cli("labels", "import", file, "--key", "conversation_id", "--outcome", "resolution",
                 "--store", labelled_store)
    assert result.exit_code == 1, result.output
    assert "1 traces with conflicting rows" in result.stdout
    assert "2 of 2 rows not applied (0 bad, 0 match no trace, 2 conflicting)" in result.stderr
    assert _query(labelled_store, "SELECT outcome FROM traces WHERE trace_id = ?", [tid])[0]["outcome"] is None


@pytest.mark.parametrize(("content", "args", "message"), [
    ("conversation_id,resolution\nx,success\n", ("--outcome", "resolutoin"), "no column 'resolutoin'. Did you mean"),
    ("", ("--outcome", "resolution"), "is empty"),
    ("conversation_id,resolution\n", ("--outcome", "resolution"), "has no data rows"),
    ("conversation_id,resolution\nx,maybe\ny,perhaps\n", ("--outcome", "resolution"), "has no usable row"),
    ("conversation_id,resolution\nx,success\n", ("--outcome", "resolution", "--map", "resolved"), "--map 'resolved'"),
    ("conversation_id,resolution\nx,success\n", (), "--outcome COLUMN, --score COLUMN"),
    ("conversation_id,csat\nx,2\n", ("--outcome", "csat", "--score-range", "1", "5"), "give --score COLUMN too"),
    ("conversation_id,csat\nx,2\n", ("--score", "csat", "--score-range", "5", "1"), "lowest first"),
    ("conversation_id,csat\nx,2\n", ("--score", "csat", "--score-range", "3", "3"), "lowest first"),
])
def test_bad_label_files_exit_2_with_a_clear_message(cli, store_path, tmp_path, content, args, message):
    file = tmp_path / "labels.csv"
    file.write_text(content)
    result = cli("labels", "import", file, "--key", "conversation_id", "--store", store_path, *args)
    assert result.exit_code == 2 and message in result.stderr, result.output


def test_unreadable_label_files_exit_2(cli, store_path, tmp_path):
    latin = tmp_path / "labels.csv"
    latin.write_bytes("conversation_id,resolution\ncaf\xe9,success\n".encode("latin-1"))
    jsonl = tmp_path / "labels.jsonl"
    jsonl.write_text("{not json\n[1, 2]\n")
    for file, message in ((latin, "is not UTF-8"), (jsonl, "has no usable row"),
                          (tmp_path / "labels.xlsx", "does not exist"), (tmp_path / "l.txt", "does not exist")):
        result = cli("labels", "import", file, "--key", "conversation_id", "--outcome", "resolution",
                     "--store", store_path)
        assert result.exit_code == 2 and message in result.stderr, (file, result.output)
    (tmp_path / "l.txt").write_text("a,b\n")
    result = cli("labels", "import", tmp_path / "l.txt", "--key", "a", "--outcome", "b", "--store", store_path)
    assert result.exit_code == 2 and "name it .csv or .jsonl" in result.stderr
