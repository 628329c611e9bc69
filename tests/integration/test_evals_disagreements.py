"""`tracegym evals check` lists the traces where the scorer and the production label disagree."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WRITES = {"book_reservation", "cancel_reservation", "update_reservation_flights", "update_reservation_baggages",
          "update_reservation_passengers", "send_certificate"}


@pytest.fixture
def tau_store(cli, traces_dir, store_path):
    result = cli("ingest", traces_dir / "tau-bench", "--store", store_path, "--json")
    assert result.exit_code == 0, result.output
    return store_path


def _disagreeing_runs(traces_dir: Path) -> set[str]:
    """τ-bench runs whose write actions match the gold ones but whose reward is not 1, or the reverse; from the
    raw file, sharing no code with tracegym."""
    runs = json.loads((traces_dir / "tau-bench" / "gpt-4o-airline.json").read_text())

    def norm(v):
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return [norm(x) for x in v] if isinstance(v, list) else v

    def key(name, args):
        return json.dumps([name, norm(args)], sort_keys=True)

    ids = set()
    for run in runs:
        gold = Counter(key(a["name"], a["kwargs"]) for a in run["info"]["task"]["actions"] if a["name"] in WRITES)
        made: Counter = Counter()
        for i, m in enumerate(run["traj"]):
            for c in m.get("tool_calls") or []:
                rejected = (run["traj"][i + 1].get("content") or "").startswith("Error")
                if c["function"]["name"] in WRITES and not rejected:
                    made[key(c["function"]["name"], json.loads(c["function"]["arguments"]))] += 1
        if (gold == made) != (run["reward"] == 1.0):
            ids.add(f"tau-bench:gpt-4o-airline:task-{run['task_id']}:trial-{run['trial']}")
    return ids


def test_disagreements_are_the_traces_where_scorer_and_label_differ(cli, tau_store, traces_dir):
    args = ("evals", "check", "--evals", EXAMPLES / "evals.yaml", "--eval", "gold_actions", "--store", tau_store)
    report = json.loads(cli(*args, "--json", "--show-disagreements", "500").stdout)
    expected = _disagreeing_runs(traces_dir)
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
        "    return 1.0, {'note': f'user {user} paid with card 4111111111111111 \\x1b]52;c;aGk=\\x07', "
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
        assert "4111111111111111" not in reason and "_" not in reason.split(";")[0]  # no user id
        assert "steps=3" in reason
