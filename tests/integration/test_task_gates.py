"""Reward gates on the real traces: `tasks generate` probes each task and leaves out those whose reward a
reference cannot earn or a degenerate reply can; `tasks check` runs the same gates on a written set.

The tasks are τ-bench's tool errors and mini-swe-agent's format errors, cut at the agent's answer to the failure
(the quickstart's families). Each gate has a task that must fail it: evals.yaml variants of `handles_tool_error`
that pay for an empty reply, for the recorded failing call (retried unchanged), or for nothing at all.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.integration.learn_store import learn_store as mined_store
from tracegym.tasks import load_task_set
from tracegym.tasks.taskset import load_rejected

pytestmark = pytest.mark.slow  # `tasks generate` runs every gate's episodes on the real traces

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LEARN = ("--cuts", "recovery", "--context", "last-exchange", "--heldout", "0.3")
GATE_EVALS = '''
from tracegym.evals.families import TOOL_MARKUP, reply_text


def _checks(trajectory):
    calls = trajectory.agent_calls()
    failed = [(c.name, c.arguments) for c in trajectory.tool_calls()[:-len(calls) or None]
              if str(c.result or "").startswith("Error")]
    text = reply_text(trajectory).strip()
    return {"empty": not calls and not text, "malformed": bool(trajectory.malformed_tool_calls),
            "retried_unchanged": any((c.name, c.arguments) in failed for c in calls),
            "tool_markup": bool(TOOL_MARKUP.search(text))}


def _flawed(trajectory):
    """The flaw applies to the tasks of even τ-bench task ids; the others are scored as handles_tool_error."""
    return int(trajectory.metadata["task_id"]) % 2 == 0


def pays_empty(trajectory):
    checks = _checks(trajectory)
    if _flawed(trajectory):
        checks.pop("empty")
    return float(not any(checks.values()))


def pays_retry(trajectory):
    checks = _checks(trajectory)
    if _flawed(trajectory):
        checks.pop("retried_unchanged")
    return float(not any(checks.values()))


def pays_nothing(trajectory):
    return 0.0 if _flawed(trajectory) else float(not any(_checks(trajectory).values()))
'''


@pytest.fixture(scope="module")
def learn_store(tmp_path_factory) -> tuple[Path, list[dict]]:
    """mini-swe-agent and τ-bench ingested and mined; the quickstart's learnable clusters."""
    store = tmp_path_factory.mktemp("gates") / "store.duckdb"
    return store, mined_store(store)


def _tau(clusters: list[dict]) -> list[str]:
    return [c["cluster_id"] for c in clusters if c["source_format"] == "tau-bench"]


def _cut(task) -> tuple[str, int]:
    """A task's identity across sets (its id hashes in the set's name)."""
    return task.provenance.trace_id, task.provenance.cut_message_idx


def _evals(folder: Path, function: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gate_evals.py").write_text(GATE_EVALS)
    path = folder / "evals.yaml"
    path.write_text(f"version: 1\nevals:\n  - name: answer\n    kind: python\n    function: gate_evals:{function}\n"
                    "    python_path: ['.']\n    applies_to: {formats: [tau-bench]}\n")
    return path


def _generate(cli, store: Path, clusters: list[str], evals: Path, out: Path, *args: str):
    picked = [a for c in clusters for a in ("--cluster", c)]
    return cli("tasks", "generate", "--allow-unredacted", "--evals", evals, "--out", out, "--store", store, "--json",
               *LEARN, *picked, *args)


def test_generate_reports_gate_counts_per_cluster_and_keeps_the_learnable_tasks(cli, learn_store, tmp_path):
    store, clusters = learn_store[0], [c["cluster_id"] for c in learn_store[1]]
    chat = tmp_path / "harness.yaml"
    chat.write_text("run_as: {shell: chat}\n")  # as the quickstart trains
    result = _generate(cli, store, clusters, EXAMPLES / "evals-learn.yaml", tmp_path / "learn",
                       "--harness-config", chat)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    gates = summary["gates"]
    assert set(gates["clusters"]) == set(clusters) and gates["checked"] == summary["tasks"] > 100
    # Every learnable task has a reference that earns its reward, and no degenerate reply earns it.
    assert gates["rejected"] == 0 and summary["rejected_by_gates"] == 0
    manifest = load_task_set(tmp_path / "learn").manifest
    assert manifest.gates is not None and manifest.gates.threshold == 1.0
    assert {c.cluster_id: c.gates.checked for c in manifest.clusters} == {
        c: g["checked"] for c, g in gates["clusters"].items()}
    ungated = _generate(cli, store, clusters, EXAMPLES / "evals-learn.yaml", tmp_path / "plain", "--no-gates")
    assert json.loads(ungated.stdout)["gates"] is None
    assert load_task_set(tmp_path / "plain").manifest.clusters[0].gates is None


@pytest.mark.parametrize(("function", "reason"), [("pays_empty", "empty_pays"),
                                                  ("pays_retry", "failing_action_pays"),
                                                  ("pays_nothing", "reference_fails")])
def test_each_gate_rejects_exactly_the_tasks_that_must_fail_it(cli, learn_store, tmp_path, function, reason):
    """Each flawed eval is flawed on the tasks of even τ-bench task ids only: those, and only those, go."""
    store, clusters = learn_store[0], _tau(learn_store[1])
    evals = _evals(tmp_path / "e", function)
    assert _generate(cli, store, clusters, evals, tmp_path / "all", "--no-gates").exit_code == 0
    drafted = load_task_set(tmp_path / "all").tasks
    flawed = {_cut(t) for t in drafted if int(t.metadata["task_id"]) % 2 == 0}
    assert 0 < len(flawed) < len(drafted)
    result = _generate(cli, store, clusters, evals, tmp_path / "set")
    assert result.exit_code == 0, result.output
    gates = json.loads(result.stdout)["gates"]
    assert {r for g in gates["clusters"].values() for r in g["reasons"]} == {reason}
    assert gates["rejected"] == sum(g["reasons"].get(reason, 0) for g in gates["clusters"].values()) == len(flawed)
    kept = load_task_set(tmp_path / "set")
    assert {_cut(t) for t in kept.tasks} == {_cut(t) for t in drafted} - flawed
    assert sum(c.gates.rejected for c in kept.manifest.clusters) == kept.manifest.counts["rejected_by_gates"]


def test_a_set_whose_every_task_fails_holds_only_its_rejected_tasks(cli, learn_store, tmp_path):
    store, clusters = learn_store[0], _tau(learn_store[1])
    evals = _evals(tmp_path / "e", "pays_nothing")
    evals.write_text(evals.read_text().replace("pays_nothing", "_checks"))  # a dict of checks, not a reward
    result = _generate(cli, store, clusters, evals, tmp_path / "set")
    said = " ".join(result.stderr.split())
    assert result.exit_code == 2 and said.startswith("No task passed the gates:")
    assert "reference_fails)" in said and "--no-gates" in said and "--references" in said
    assert load_task_set(tmp_path / "set").tasks == []
    assert len(load_rejected(tmp_path / "set")) == len(list((tmp_path / "set" / "rejected" / "tasks").iterdir()))


def test_tasks_check_fails_after_an_eval_edit_that_pays_for_an_empty_reply(cli, learn_store, tmp_path):
    store, clusters = learn_store[0], _tau(learn_store[1])
    evals = _evals(tmp_path / "e", "pays_retry")
    evals.write_text(evals.read_text().replace("pays_retry", "pays_empty").replace(
        "gate_evals:pays_empty", "tracegym.evals.families:handles_tool_error"))
    assert _generate(cli, store, clusters, evals, tmp_path / "set").exit_code == 0
    ok = cli("tasks", "check", tmp_path / "set", "--store", store, "--json")
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["rejected"] == 0
    copy = tmp_path / "set" / "evals.yaml"
    shutil.copy(tmp_path / "e" / "gate_evals.py", tmp_path / "set" / "gate_evals.py")
    text = copy.read_text().replace("tracegym.evals.families:handles_tool_error", "gate_evals:pays_empty")
    copy.write_text(text)
    failed = cli("tasks", "check", tmp_path / "set", "--store", store, "--json", "--failed")
    assert failed.exit_code == 1
    report = json.loads(failed.stdout)
    flawed = {t.task_id for t in load_task_set(tmp_path / "set").tasks if int(t.metadata["task_id"]) % 2 == 0}
    assert report["rejected"] == len(report["tasks"]) == len(flawed) < report["checked"]
    assert {t["task_id"] for t in report["tasks"]} == flawed
    assert all(t["reasons"] == ["empty_pays"] for t in report["tasks"])
    table = cli("tasks", "check", tmp_path / "set", "--store", store)
    assert table.exit_code == 1 and "Per cluster" in table.stdout and "empty_pays" in table.stdout
