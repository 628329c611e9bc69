"""`tracegym mine failures` and `tracegym failures show` on the real public traces.

Each expectation is recomputed from the raw files (not from the store), so a
detector that finds too much or too little fails the test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tracegym.cli import app

TRACES = Path(__file__).resolve().parents[3] / "shared" / "data" / "traces"
TAU_FILE = Path("tau-bench") / "gpt-4o-airline.json"
MINI = Path("mini-swe-agent")


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """All real traces ingested and mined once through the CLI; the JSON output and the store path."""
    if not TRACES.is_dir():
        pytest.skip(f"real traces not found at {TRACES} (they live in ../shared beside the checkout)")
    store = tmp_path_factory.mktemp("mine") / "store.duckdb"
    runner = CliRunner()
    ingested = runner.invoke(app, ["ingest", str(TRACES), "--store", str(store), "--json"], catch_exceptions=False)
    assert ingested.exit_code == 0, ingested.stderr
    result = runner.invoke(app, ["mine", "failures", "--store", str(store), "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return {"store": store, "data": json.loads(result.stdout), "traces": TRACES}


def _clusters(mined: dict[str, Any], detector: str, contains: str) -> list[dict[str, Any]]:
    return [c for c in mined["data"]["clusters"] if c["detector"] == detector and contains in c["signature"]]


def _findings(mined: dict[str, Any], cluster_id: str) -> list[dict[str, Any]]:
    from tracegym.store import open_store

    with open_store(mined["store"], read_only=True) as st:
        return st.query("SELECT * FROM failures WHERE cluster_id = ?", [cluster_id])


def _tau_runs(traces: Path) -> list[dict[str, Any]]:
    return json.loads((traces / TAU_FILE).read_text())


def _tau_id(run: dict[str, Any]) -> str:
    return f"tau-bench:gpt-4o-airline:task-{run['task_id']}:trial-{run['trial']}"


@pytest.mark.parametrize("phrase", [
    "Error: payment amount does not add up",
    "Error: gift card balance is not enough",
    "Error: flight ",  # "Error: flight HAT030 not available on date 2024-05-13", numbers and dates differing
])
def test_tau_bench_error_families_are_one_cluster_each(mined, phrase):
    clusters = _clusters(mined, "tool_error", phrase)
    assert len(clusters) == 1, [c["signature"] for c in clusters]
    expected = {_tau_id(run) for run in _tau_runs(mined["traces"])
                if any(m.get("role") == "tool" and (m.get("content") or "").startswith(phrase) for m in run["traj"])}
    assert len(expected) > 1
    assert {f["trace_id"] for f in _findings(mined, clusters[0]["cluster_id"])} == expected
    assert clusters[0]["n_traces"] == len(expected)


def test_flight_not_available_signature_strips_flight_number_and_date(mined):
    (cluster,) = _clusters(mined, "tool_error", "Error: flight ")
    assert cluster["signature"] == "Error: flight <id> not available on date <date>"


def test_unneeded_transfer_to_human_agents_handoffs_are_found(mined):
    unneeded, needed = set(), set()
    for run in _tau_runs(mined["traces"]):
        called = any(call["function"]["name"] == "transfer_to_human_agents"
                     for m in run["traj"] for call in (m.get("tool_calls") or []))
        gold = {a["name"] for a in run["info"]["task"]["actions"]}
        if called:
            (needed if "transfer_to_human_agents" in gold else unneeded).add(_tau_id(run))
    assert unneeded and needed
    (cluster,) = _clusters(mined, "handoff", "unneeded hand-off: transfer_to_human_agents")
    found = {f["trace_id"] for f in _findings(mined, cluster["cluster_id"])}
    assert found == unneeded
    assert not found & needed
    assert cluster["n_failed"] < cluster["n_traces"]  # τ-bench rewards some hand-offs it did not ask for


def _mini_trajs(traces: Path) -> dict[str, dict[str, Any]]:
    return {p.name.removesuffix(".traj.json"): json.loads(p.read_text())
            for p in sorted((traces / MINI / "trajs").glob("*.traj.json"))}


def test_mini_swe_agent_format_corrections_are_found(mined):
    corrections = {}
    for instance, traj in _mini_trajs(mined["traces"]).items():
        n = sum(1 for m in traj["messages"] if m["role"] == "user"
                and str(m["content"]).startswith("Please always provide EXACTLY ONE action"))
        if n:
            corrections[instance] = n
    assert corrections
    clusters = _clusters(mined, "format_error", "EXACTLY ONE action")
    assert [c["signature"] for c in clusters] == [
        "Please always provide EXACTLY ONE action in triple backticks, found <n> actions."]
    findings = _findings(mined, clusters[0]["cluster_id"])
    assert {f["trace_id"].rsplit(":", 1)[1] for f in findings} == set(corrections)
    assert len(findings) == sum(corrections.values())


@pytest.mark.parametrize(("group", "words"), [
    ("FAIL_TO_PASS", "target tests still fail"),
    ("PASS_TO_PASS", "patch broke passing tests"),
])
def test_mini_swe_agent_failing_tests_are_found(mined, group, words):
    failing = {}
    for report in sorted((mined["traces"] / MINI / "reports").glob("*.report.json")):
        tests = json.loads(report.read_text())["tests_status"][group]["failure"]
        if tests:
            failing[report.name.removesuffix(".report.json")] = tests
    assert failing
    (cluster,) = _clusters(mined, "failing_tests", words)
    findings = {f["trace_id"].rsplit(":", 1)[1]: f for f in _findings(mined, cluster["cluster_id"])
                if f["trace_id"].startswith("mini-swe-agent:")}
    assert set(findings) == set(failing)
    for instance, tests in failing.items():
        assert tests[0] in findings[instance]["evidence"]
    assert cluster["failure_rate"] == 1.0  # a failing target test means the instance is unresolved


def test_clusters_are_ranked_by_score_and_mining_again_keeps_ids(mined):
    clusters = mined["data"]["clusters"]
    assert [c["rank"] for c in clusters] == list(range(1, len(clusters) + 1))
    # Specific clusters first, then the catch-alls (outcome, failing tests), each part by score.
    assert all((a["catch_all"], -a["score"]) <= (b["catch_all"], -b["score"])
               for a, b in zip(clusters, clusters[1:], strict=False))
    catch_alls = {c["signature"] for c in clusters if c["catch_all"]}
    assert {"trace outcome: failure", "target tests still fail (FAIL_TO_PASS)"} <= catch_alls
    assert all(c["detector"] in ("outcome", "failing_tests") for c in clusters if c["catch_all"])
    (outcome,) = _clusters(mined, "outcome", "trace outcome: failure")
    assert outcome["score"] == max(c["score"] for c in clusters)  # by score alone it would rank first
    again = CliRunner().invoke(app, ["mine", "failures", "--store", str(mined["store"]), "--json"],
                               catch_exceptions=False)
    assert again.exit_code == 0
    data = json.loads(again.stdout)
    assert data["findings"] == mined["data"]["findings"]  # replaced, not appended
    assert [c["cluster_id"] for c in data["clusters"]] == [c["cluster_id"] for c in clusters]


def test_failures_show_prints_evidence_and_example_traces(mined, cli):
    (cluster,) = _clusters(mined, "tool_error", "Error: payment amount does not add up")
    shown = cli("failures", "show", cluster["cluster_id"][:6], "--store", mined["store"], "--json")
    assert shown.exit_code == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["cluster"]["cluster_id"] == cluster["cluster_id"]
    assert data["evidence"] and all("payment amount does not add up" in e["evidence"] for e in data["evidence"])
    assert data["cluster"]["example_trace_id"] in {e["trace_id"] for e in data["evidence"]}
    text = cli("failures", "show", cluster["cluster_id"], "--store", mined["store"])
    assert cluster["signature"] in text.stdout and "tracegym traces show" in text.stdout


def test_failures_show_unknown_cluster_is_a_clear_error(mined, cli):
    result = cli("failures", "show", "nosuchcluster", "--store", mined["store"])
    assert result.exit_code == 2
    assert "No cluster 'nosuchcluster'" in result.stderr


def test_mine_failures_table_lists_top_clusters(mined, cli):
    result = cli("mine", "failures", "--store", mined["store"], "--top", "5")
    assert result.exit_code == 0, result.stderr
    assert mined["data"]["clusters"][0]["cluster_id"] in result.stdout
    assert "findings in" in result.stderr
