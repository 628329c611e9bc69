"""`tracegym evals check` on the real τ-bench runs, and the agreement arithmetic it reports."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.integration.tau_gold import gold_verdicts
from tracegym.evals.scorers.agreement import Scored, agreement, cohen_kappa, distribution, no_signal
from tracegym.evals.scorers.trajectory import ScoreResult

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_cohen_kappa_matches_a_worked_example():
    # 20 agree-yes, 15 agree-no, 5 + 10 disagreements: p_o = 0.7, p_e = 0.5, kappa = 0.4.
    assert cohen_kappa(tp=20, fp=5, fn=10, tn=15) == pytest.approx(0.4)
    assert cohen_kappa(tp=10, fp=0, fn=0, tn=0) is None  # one class only: chance agreement is perfect


def test_agreement_figures():
    labels = [True, True, True, False, False, False]
    predicted = [True, True, False, True, False, False]
    a = agreement(labels, predicted)
    assert a["confusion"] == {"true_positive": 2, "false_positive": 1, "false_negative": 1, "true_negative": 2}
    assert a["accuracy"] == pytest.approx(4 / 6) and a["precision"] == pytest.approx(2 / 3)
    assert a["recall"] == pytest.approx(2 / 3) and a["cohen_kappa"] == pytest.approx(1 / 3)


def test_distribution_and_no_signal():
    d = distribution([0.0, 0.0, 0.5, 1.0])
    assert d["mean"] == 0.375 and d["median"] == 0.25 and d["distinct_values"] == 3
    assert d["histogram"]["0.0-0.1"] == 2 and d["histogram"]["0.9-1.0"] == 1

    def s(task: str, label: bool, reward: float) -> Scored:
        return Scored(f"{task}-{reward}-{label}", task, label, ScoreResult(reward))

    scored = [s("a", True, 1.0), s("a", False, 1.0), s("b", True, 1.0), s("b", False, 0.0), s("c", True, 0.3)]
    ns = no_signal(scored)
    assert ns["tasks"] == 3 and ns["tasks_with_2plus_attempts"] == 2
    assert ns["fraction_no_signal"] == 0.5 and ns["fraction_no_signal_production"] == 0.0


@pytest.fixture
def tau_store(cli, traces_dir, store_path):
    result = cli("ingest", traces_dir / "tau-bench", "--store", store_path, "--json")
    assert result.exit_code == 0, result.output
    return store_path


def _check(cli, store_path, *args: str) -> dict:
    result = cli("evals", "check", "--evals", EXAMPLES / "evals.yaml", "--store", store_path, "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_gold_actions_scorer_agrees_with_tau_bench_rewards(cli, tau_store, traces_dir):
    report = _check(cli, tau_store, "--eval", "gold_actions", "--format", "tau-bench")
    assert report["traces"] == 200 and report["scorer_errors"] == 0
    c = report["agreement"]["confusion"]
    expected = Counter(gold_verdicts(traces_dir).values())
    assert (c["true_positive"], c["false_positive"], c["false_negative"], c["true_negative"]) == (
        expected[(True, True)], expected[(True, False)], expected[(False, True)], expected[(False, False)])
    assert report["agreement"]["accuracy"] > 0.9 and report["agreement"]["cohen_kappa"] > 0.8
    assert report["reward"]["distinct_values"] == 2  # all-or-nothing
    ns = report["no_signal"]
    assert ns["tasks"] == 50 and ns["tasks_with_2plus_attempts"] == 50
    assert 0.0 <= ns["fraction_no_signal"] <= 1.0


def test_replaying_the_recorded_reward_agrees_perfectly(cli, tau_store):
    report = _check(cli, tau_store, "--eval", "recorded_reward")
    assert report["agreement"]["accuracy"] == 1.0 and report["agreement"]["cohen_kappa"] == 1.0
    ns = report["no_signal"]
    assert ns["fraction_no_signal"] == ns["fraction_no_signal_production"]


def test_a_crashing_eval_is_counted_and_listed_not_fatal(cli, tau_store, tmp_path):
    (tmp_path / "flaky_evals.py").write_text(
        "def flaky(trajectory):\n"
        "    if trajectory.trace_id.endswith('trial-0'):\n"
        "        raise KeyError('no reservation')\n"
        "    return 1.0\n")
    evals = tmp_path / "evals.yaml"
    evals.write_text("evals:\n  - {name: flaky, kind: python, function: 'flaky_evals:flaky', python_path: ['.']}\n")
    result = cli("evals", "check", "--evals", evals, "--eval", "flaky", "--store", tau_store, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["scorer_errors"] == 50 and report["scored"] == 150
    assert report["agreement"]["n"] == 150 and report["reward"]["mean"] == 1.0
    assert "KeyError: 'no reservation'" in report["errors"][0]["error"]


def test_check_table_output_and_user_errors(cli, tau_store):
    result = cli("evals", "check", "--evals", EXAMPLES / "evals.yaml", "--store", tau_store, "--eval", "tau_reward",
                 "--threshold", "1")
    assert result.exit_code == 0 and "Cohen" not in result.stderr
    assert "cohen_kappa" in result.stdout and "Confusion matrix" in result.stdout
    missing = cli("evals", "check", "--evals", EXAMPLES / "evals.yaml", "--store", tau_store, "--eval", "gold_action")
    assert missing.exit_code == 2 and "Did you mean 'gold_actions'" in missing.stderr
    none = cli("evals", "check", "--evals", EXAMPLES / "evals.yaml", "--store", tau_store, "--eval", "gold_actions",
               "--format", "swe-agent")
    assert none.exit_code == 2 and "No traces with an outcome of format swe-agent" in none.stderr
