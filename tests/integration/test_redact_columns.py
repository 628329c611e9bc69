"""Redaction beyond content: personal data in trace, session and tool-call ids, message names, tool names, tool
schemas and file and folder names is found by `redact check`, replaced store-wide by `ingest --redact` and by
`tracegym redact` with joins and `labels import` by the original session ids still working."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest

from tests.support_log import write_support_log
from tracegym.store import open_store

SESSION = "jane.doe+{}@mailtest.io"
CALL_ID = "ops.desk@calltest.io"
TOOL_KEY = "AKIAQX3MT7PLZ4N2R8WE"
NAME = "grace.hopper@navy-test.io"
DESCRIPTION = "ops-lead@acme-test.io"
DEFAULT = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
FOLDER, FILE = "exports-kim.lee@corp-test.io", "chat-kim.lee@corp-test.io.jsonl"
BROKEN = "broken-sam@corp-test.io.jsonl"
PLANTED = ("jane.doe+", CALL_ID, TOOL_KEY, NAME, DESCRIPTION, DEFAULT, "kim.lee@", "sam@corp")
PLANTED_COLUMNS = {  # where each planted value lands in a store ingested as it is
    ("traces.trace_id", "email"), ("traces.session_id", "email"), ("messages.trace_id", "email"),
    ("tool_calls.trace_id", "email"), ("messages.name", "email"), ("messages.tool_call_id", "email"),
    ("tool_calls.call_id", "email"), ("tool_calls.name", "aws_access_key"), ("traces.tools", "aws_access_key"),
    ("traces.tools", "email"), ("traces.tools", "github_token"), ("sources.path", "email"),
    ("ingest_errors.path", "email"), ("failures.trace_id", "email"),
}
JOINS = """SELECT
    (SELECT count(*) FROM traces JOIN messages USING (trace_id)),
    (SELECT count(*) FROM traces JOIN tool_calls USING (trace_id)),
    (SELECT count(*) FROM messages m JOIN tool_calls c ON m.trace_id = c.trace_id AND m.tool_call_id = c.call_id),
    (SELECT count(*) FROM tool_calls c JOIN messages m ON m.trace_id = c.trace_id AND m.idx = c.message_idx),
    (SELECT count(DISTINCT session_id) FROM traces),
    (SELECT count(*) FROM failures JOIN traces USING (trace_id))"""


def _planted_log(root: Path) -> tuple[Path, Path]:
    """The support log with the values planted where the tests look for them; (its folder, the CSAT file keyed
    by the planted session ids)."""
    log = write_support_log(root / "generated", n_sessions=10)
    folder = root / FOLDER
    folder.mkdir()
    text = re.sub(r"sess-(\d{4})", lambda m: SESSION.format(m[1]), log.log.read_text())
    text = re.sub(r'"(call_[a-z_]+_\d+)"', rf'"\1-{CALL_ID}"', text)
    text = text.replace("lookup_order", f"lookup_order-{TOOL_KEY}")
    text = text.replace('{"role": "user", "content"', f'{{"role": "user", "name": "{NAME}", "content"')
    text = text.replace("Look up an order by id.", f"Look up an order by id. Escalate to {DESCRIPTION}.")
    text = text.replace('"reason": {"type": "string"}', f'"reason": {{"type": "string", "default": "{DEFAULT}"}}')
    (folder / FILE).write_text(text + "{a line cut short\n")
    (folder / BROKEN).write_text("\x00\x01 no format\n")
    csat = root / "csat.csv"
    csat.write_text(re.sub(r"sess-(\d{4})", lambda m: SESSION.format(m[1]), log.csat.read_text()))
    return folder, csat


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _planted_log(tmp_path_factory.mktemp("columns"))


def _joins(store: Path) -> tuple[int, ...]:
    with open_store(store, read_only=True) as st:
        return tuple(st.con.execute(JOINS).fetchone())


def _all_text(store: Path) -> str:
    """Every text, JSON and list value of every table, as one string."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        columns = con.execute("SELECT table_name, column_name FROM duckdb_columns() JOIN duckdb_tables() "
                              "USING (database_name, schema_name, table_name) WHERE data_type IN "
                              "('VARCHAR', 'JSON', 'VARCHAR[]')").fetchall()
        return "\n".join(str(v) for t, c in columns for (v,) in con.execute(f"SELECT {c} FROM {t}").fetchall())
    finally:
        con.close()


def _labels_apply_every_row(cli, csat: Path, store: Path) -> None:
    result = cli("labels", "import", csat, "--key", "session_id", "--score", "stars", "--score-range", "1", "5",
                 "--store", store, "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == 0, result.output
    assert report["unmatched"] == 0 and report["labelled_traces"] == report["rows"] > 0


@pytest.mark.slow  # ingests a support log
def test_check_names_every_column_a_planted_value_is_in_and_never_prints_it(cli, planted, tmp_path):
    folder, _ = planted
    store = tmp_path / "plain.duckdb"
    assert cli("ingest", folder, "--store", store).exit_code == 0
    check = cli("redact", "check", "--store", store, "--json")
    assert check.exit_code == 1
    hits = json.loads(check.stdout)["hits"]
    assert PLANTED_COLUMNS <= {(h["where"], h["rule"]) for h in hits}
    assert not [v for v in PLANTED if v in check.stdout]
    table = cli("redact", "check", "--store", store)
    assert table.exit_code == 1 and "traces.session_id (email)" in table.stderr
    assert "tool_calls.name (aws_access_key)" in table.stderr
    assert not [v for v in PLANTED if v in table.output]


@pytest.mark.slow  # ingests a support log twice, imports labels
def test_ingest_redact_replaces_ids_names_schemas_and_paths_and_joins_hold(cli, planted, tmp_path):
    folder, csat = planted
    plain, redacted = tmp_path / "plain.duckdb", tmp_path / "redacted.duckdb"
    assert cli("ingest", folder, "--store", plain).exit_code == 0
    result = cli("ingest", folder, "--redact", "--store", redacted, "--json")
    assert result.exit_code == 0, result.output
    assert cli("redact", "check", "--store", redacted).exit_code == 0
    text = _all_text(redacted)
    assert not [v for v in PLANTED if v in text]
    assert f"/{FOLDER}/" not in text and "/<EMAIL_" in text  # the path's folders kept, its e-mail parts replaced
    with open_store(redacted, read_only=True) as st:
        for (tools,) in st.con.execute("SELECT CAST(tools AS VARCHAR) FROM traces").fetchall():
            assert json.loads(tools)[0]["type"] == "function"  # the schema is still JSON
    assert _joins(redacted) == _joins(plain)
    _labels_apply_every_row(cli, csat, redacted)


@pytest.mark.slow  # ingests, redacts in place, imports labels
def test_redact_in_place_covers_the_same_columns_and_labels_still_match(cli, planted, tmp_path):
    folder, csat = planted
    store = tmp_path / "store.duckdb"
    assert cli("ingest", folder, "--store", store).exit_code == 0
    before = _joins(store)
    result = cli("redact", "--store", store, "--json")
    assert result.exit_code == 0, result.output
    assert not [v for v in PLANTED if v in result.stdout]  # the report names traces by their redacted ids
    assert cli("redact", "check", "--store", store).exit_code == 0
    assert not [v for v in PLANTED if v in _all_text(store)]
    assert _joins(store) == before
    _labels_apply_every_row(cli, csat, store)


def test_a_column_a_later_migration_adds_is_checked_and_redacted(cli, tmp_path):
    store = tmp_path / "store.duckdb"
    with open_store(store) as st:
        st.con.execute("CREATE TABLE notes (trace_id VARCHAR, tags VARCHAR[], body JSON)")
        st.con.execute("INSERT INTO notes VALUES ('t1', ['ok', 'call +44 20 7946 0958'], ?)",
                       ['{"by": "al@ex-test.io"}'])
    check = cli("redact", "check", "--store", store, "--json")
    assert check.exit_code == 1
    assert {h["where"] for h in json.loads(check.stdout)["hits"]} == {"notes.tags", "notes.body"}
    assert cli("redact", "--store", store).exit_code == 0
    assert cli("redact", "check", "--store", store).exit_code == 0
    with open_store(store, read_only=True) as st:
        tags, body = st.con.execute("SELECT tags, CAST(body AS VARCHAR) FROM notes").fetchone()
    assert tags[0] == "ok" and tags[1].startswith("call <PHONE_") and json.loads(body)["by"].startswith("<EMAIL_")
