"""`tracegym evals check` lists the traces where the scorer and the production label disagree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.tau_gold import gold_verdicts

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def tau_store(cli, traces_dir, store_path):
    result = cli("ingest", traces_dir / "tau-bench", "--store", store_path, "--json")
    assert result.exit_code == 0, result.output
    return store_path


def test_disagreements_are_the_traces_where_scorer_and_label_differ(cli, tau_store, traces_dir):
    args = ("evals", "check", "--evals", EXAMPLES / "evals.yaml", "--eval", "gold_actions", "--store", tau_store)
    report = json.loads(cli(*args, "--json", "--show-disagreements", "500").stdout)
    expected = {trace for trace, (gold, reward) in gold_verdicts(traces_dir).items() if gold != reward}
    c = report["agreement"]["confusion"]
    assert report["disagreements"] == c["false_positive"] + c["false_negative"] == len(expected) > 0
    rows = report["disagreement_examples"]
    assert [r["trace_id"] for r in rows] == sorted(expected)
    for row in rows:
        assert row["scorer"] != row["label"] and row["reason"].startswith("expected=")
        assert row["scorer"] == ("success" if row["reward"] >= 0.5 else "failure")

    short = json.loads(cli(*args, "--json", "--show-disagreements", "2").stdout)
    assert short["disagreements"] == len(expected) and len(short["disagreement_examples"]) == 2
    table = cli(*args)
    assert table.exit_code == 0
    assert f"Scorer and label disagree on {len(expected)} traces" in table.stdout
    assert ":".join(sorted(expected)[0].split(":")[-2:]) in table.stdout  # the table folds long ids; the end shows


def test_disagreement_reasons_are_short_masked_and_inert(cli, tau_store, tmp_path):
    (tmp_path / "leaky_evals.py").write_text(
        "def leaky(trajectory):\n"
        "    user = trajectory.metadata['task']['user_id']\n"
        "    return 1.0, {'note': f'user {user} paid with card 4526018159083012 \\x1b]52;c;aGk=\\x07', "
        "'steps': 3, 'said': [trajectory.final_answer] * 9}\n")
    evals = tmp_path / "evals.yaml"
    evals.write_text("evals:\n  - {name: leaky, kind: python, function: 'leaky_evals:leaky', python_path: ['.']}\n")
    result = cli("evals", "check", "--evals", evals, "--eval", "leaky", "--store", tau_store, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["disagreements"] == 116  # every failed run scores 1
    for row in report["disagreement_examples"]:
        reason = row["reason"]
        assert len(reason) <= 160 and "\x1b" not in reason and "\x07" not in reason
        assert "4526018159083012" not in reason and "_" not in reason.split(";")[0]  # no user id
        assert "steps=3" in reason
