"""User rules (--rules FILE): loading, error messages with file, line and fix, and running them."""

from __future__ import annotations

import textwrap

import pytest

from tracegym.errors import ConfigError
from tracegym.mining import mine_failures
from tracegym.mining.rule_files import load_rules


def _write(tmp_path, text: str):
    path = tmp_path / "rules.yaml"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


@pytest.fixture
def refunds(store):
    """Three traces with refund calls of different amounts; r1 failed."""
    for trace_id, amount, outcome in (("r1", 900, "failure"), ("r2", 750, "success"), ("r3", 20, "success")):
        store.con.execute("INSERT INTO traces (trace_id, outcome, metadata) VALUES (?, ?, '{}')", [trace_id, outcome])
        store.con.execute(
            "INSERT INTO tool_calls (trace_id, message_idx, name, arguments, result) VALUES (?, 3, 'refund', ?, 'ok')",
            [trace_id, f'{{"amount": {amount}, "order": "ORD-{amount}"}}'],
        )
    return store


GOOD = """
    rules:
      - name: refund_over_limit
        description: A refund above the policy limit of 500.
        sql: |
          SELECT trace_id, message_idx, 'refund of ' || (arguments->>'amount') || ' for ' || (arguments->>'order')
                 AS evidence
          FROM tool_calls
          WHERE name = 'refund' AND CAST(arguments->>'amount' AS DOUBLE) > 500;
"""


def test_a_rule_runs_beside_the_built_ins(tmp_path, refunds):
    summary = mine_failures(refunds, rules=_write(tmp_path, GOOD))
    assert summary.by_detector["refund_over_limit"] == 2
    rows = refunds.query("SELECT trace_id, message_idx, signature, evidence FROM failures "
                         "WHERE detector = 'refund_over_limit' ORDER BY trace_id")
    assert [(r["trace_id"], r["message_idx"]) for r in rows] == [("r1", 3), ("r2", 3)]
    # Without a signature column the evidence is normalised: one cluster for both refunds.
    assert {r["signature"] for r in rows} == {"refund of <n> for ORD-<n>"}
    (cluster,) = [c for c in summary.clusters if c.detector == "refund_over_limit"]
    assert (cluster.n_traces, cluster.n_failed, cluster.n_known) == (2, 1, 2)


def test_a_rule_may_give_its_own_signature_and_be_a_verdict(tmp_path, refunds):
    path = _write(tmp_path, """
        rules:
          - name: big_refund
            verdict: true
            sql: SELECT trace_id, 'big refund' AS signature, arguments AS evidence FROM tool_calls
                 WHERE CAST(arguments->>'amount' AS DOUBLE) > 500
    """)
    summary = mine_failures(refunds, rules=path)
    (cluster,) = [c for c in summary.clusters if c.detector == "big_refund"]
    assert cluster.signature == "big refund"
    assert cluster.n_failed == 2  # a verdict rule's findings count as failures (r2 succeeded otherwise)


def test_loaded_rule_knows_its_line(tmp_path):
    (rule,) = load_rules(_write(tmp_path, GOOD))
    assert rule.where.endswith("rules.yaml:4")


@pytest.mark.parametrize(("text", "line", "words"), [
    ("rules:\n  - name: x\n    sql: [unclosed\n", 4, ["invalid YAML", "Fix: check the indentation"]),
    ("rules:\n  - name: a_rule\n    sq: SELECT 1\n", 3, ["rules.0.sq", "remove 'sq'", "Did you mean 'sql'?"]),
    ("rules:\n  - name: a_rule\n    description: no sql\n", 2, ["rules.0.sql", "Field required", "add 'sql'"]),
    ("rules:\n  - name: Refund Limit\n    sql: SELECT 1\n", 2, ["not a detector name", "'refund_limit'"]),
    ("rules:\n  - name: tool_error\n    sql: SELECT 1\n", 2, ["built-in detector", "'tool_error_custom'"]),
    ("rules:\n  - name: a\n    sql: SELECT 1\n  - name: a\n    sql: SELECT 2\n", 4, ["comes earlier"]),
    ("rules:\n  - name: a\n    sql: SELECT 1\n    verdict: maybe\n", 4, ["rules.0.verdict", "boolean"]),
    ("rules: []\n", 1, ["rules", "at least 1"]),
    ("", 1, ["empty"]),
])
def test_bad_rules_files_name_the_file_line_and_fix(tmp_path, text, line, words):
    path = tmp_path / "rules.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_rules(path)
    message = str(e.value)
    assert f"{path}:{line}:" in message
    assert "Fix:" in message or "Did you mean" in message
    for word in words:
        assert word in message


def test_missing_rules_file(tmp_path):
    with pytest.raises(ConfigError, match="No rules file at .*nope.yaml"):
        load_rules(tmp_path / "nope.yaml")


@pytest.mark.parametrize(("sql", "words"), [
    ("SELEC trace_id FROM traces", ["does not parse", "syntax error"]),
    ("SELECT trace_id, 'x' AS evidence FROM tracez", ["DuckDB cannot run the SQL", "tracez", "Fix:"]),
    ("SELECT trace_id, outcome AS evidense FROM traces",
     ["no evidence column", "Is 'evidense' meant to be 'evidence'?"]),
    ("DELETE FROM traces", ["must be one SELECT", "DELETE"]),
    ("SELECT trace_id, 'a' AS evidence FROM traces; DROP TABLE traces", ["must be one SELECT", "DROP"]),
])
def test_bad_rule_sql_names_the_rule_and_duckdb_message(tmp_path, refunds, sql, words):
    path = _write(tmp_path, f"""
        rules:
          - name: broken
            sql: "{sql}"
    """)
    mine_failures(refunds)
    before = refunds.scalar("SELECT count(*) FROM failures")
    with pytest.raises(ConfigError) as e:
        mine_failures(refunds, rules=path)
    message = str(e.value)
    assert f"{path}:3: rule 'broken'" in message
    for word in words:
        assert word in message
    # Nothing changed: the earlier findings and every table are still there.
    assert refunds.scalar("SELECT count(*) FROM failures") == before
    assert refunds.scalar("SELECT count(*) FROM traces") == 3


def test_a_rule_failing_while_running_rolls_back(tmp_path, refunds):
    path = _write(tmp_path, """
        rules:
          - name: bad_cast
            sql: SELECT trace_id, CAST(result AS INTEGER) AS evidence FROM tool_calls
    """)
    mine_failures(refunds)
    before = refunds.query("SELECT * FROM clusters ORDER BY rank")
    with pytest.raises(ConfigError, match=r"rules.yaml:3: rule 'bad_cast' failed while running: .*Conversion"):
        mine_failures(refunds, rules=path)
    assert refunds.query("SELECT * FROM clusters ORDER BY rank") == before
    assert not refunds.query("SELECT table_name FROM duckdb_tables() WHERE temporary")  # the shared scans too


def test_cli_reports_a_bad_rules_file(tmp_path, cli, refunds):
    path = _write(tmp_path, "rules:\n  - name: a_rule\n    sq: SELECT 1\n")
    result = cli("mine", "failures", "--rules", path, "--store", refunds.path)
    assert result.exit_code == 2
    assert "rules.yaml:3" in result.stderr and "sql" in result.stderr
