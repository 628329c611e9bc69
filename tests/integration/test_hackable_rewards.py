"""Hollow probes on the real traces: replies with the reference's shape and no substance, played through each
task's harness after the gates. The quickstart's evals (examples/evals-learn.yaml) pay for them, and `tracegym
train` refuses the set they reward; an eval that also compares the reply's action with the reference's does not.

The tasks are mini-swe-agent's format errors and τ-bench's tool errors, cut at the agent's answer to the failure
(the quickstart's families), gated under the harness the quickstart trains in (`run_as: {shell: chat}`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.learn_store import learn_store
from tracegym.tasks import load_task_set

pytestmark = pytest.mark.slow  # real traces ingested, mined, cut, gated and probed

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LEARN = ("--cuts", "recovery", "--context", "last-exchange", "--heldout", "0.3")
# The content part of a combined reward: the reply takes the reference's action (the recorded answer's bash
# command, else its tool calls, else its words), read from refs.json beside it by task id.
SAME_ACTION = '''
import json
import pathlib
import re

REFS = json.loads((pathlib.Path(__file__).parent / "refs.json").read_text())
BASH = re.compile(r"```bash\\s*\\n(.*?)\\n```", re.DOTALL)


def same_action(trajectory):
    ref = REFS[trajectory.task_id]
    replies = trajectory.messages[trajectory.prompt_messages:]
    reply = replies[0] if replies else {}
    text = reply.get("content") or ""
    if ref["command"] is not None:
        found = BASH.findall(text)
        return float(len(found) == 1 and found[0].strip() == ref["command"])
    calls = [[c["function"]["name"], json.loads(c["function"]["arguments"])] for c in reply.get("tool_calls") or []]
    return float(calls == ref["calls"] if ref["calls"] else text.strip() == ref["text"])
'''
COMBINED = """version: 1
evals:
  - {name: one_bash_action, kind: python, function: "tracegym.evals.families:one_bash_action"}
  - {name: handles_tool_error, kind: python, function: "tracegym.evals.families:handles_tool_error"}
  - {name: same_action, kind: python, function: "content:same_action", python_path: ["."]}
  - {name: format_and_action, kind: weighted, parts: {one_bash_action: 1, same_action: 1},
     applies_to: {formats: [mini-swe-agent]}}
  - {name: answer_and_action, kind: weighted, parts: {handles_tool_error: 1, same_action: 1},
     applies_to: {formats: [tau-bench]}}
"""
SORRY = """version: 1
evals:
  - {name: apologises, kind: match, mode: regex, target: final_answer, expected: "sorry|apologi|unfortunately",
     applies_to: {formats: [tau-bench]}}
"""


@pytest.fixture(scope="module")
def learn(tmp_path_factory) -> dict:
    """mini-swe-agent and τ-bench ingested and mined; the quickstart's clusters; its harness config; and the
    quickstart's task set generated with the gates, its JSON report beside it."""
    from typer.testing import CliRunner

    from tracegym.cli import app

    folder = tmp_path_factory.mktemp("hollow")
    store = folder / "store.duckdb"
    clusters = learn_store(store)
    harness = folder / "harness.yaml"
    harness.write_text("run_as: {shell: chat}\n")  # as the quickstart trains
    found = {"store": store, "clusters": clusters, "harness": harness, "folder": folder}
    result = CliRunner().invoke(app, _generate(found, EXAMPLES / "evals-learn.yaml", folder / "learn", "--json"))
    assert result.exit_code == 0, result.output
    return {**found, "set": folder / "learn", "report": json.loads(result.stdout)}


def _generate(learn: dict, evals: Path, out: Path, *args: str, formats: tuple[str, ...] = ("mini-swe-agent",
                                                                                              "tau-bench")) -> list:
    picked = [a for c in learn["clusters"] if c["source_format"] in formats for a in ("--cluster", c["cluster_id"])]
    return ["tasks", "generate", "--allow-unredacted", "--evals", str(evals), "--out", str(out), "--store",
            str(learn["store"]), "--harness-config", str(learn["harness"]), *LEARN, *picked, *args]


def _format_cluster(learn: dict) -> str:
    (cluster,) = [c["cluster_id"] for c in learn["clusters"] if c["source_format"] == "mini-swe-agent"]
    return cluster


def test_the_quickstart_evals_pay_hollow_replies_and_the_report_names_the_probes(learn):
    report, fmt = learn["report"], _format_cluster(learn)
    gates = report["gates"]
    assert gates["rejected"] == 0 and report["tasks"] == gates["checked"] > 100  # hackable is not rejected
    clusters = gates["clusters"]
    # mini-swe-agent's format check pays a bash block holding a no-op, and the format correction said back.
    format_tasks = clusters[fmt]["checked"]
    assert clusters[fmt]["hackable_tasks"] == {"one_bash_action": format_tasks}
    assert clusters[fmt]["hackable"]["one_bash_action"]["noop_content"] == format_tasks
    assert clusters[fmt]["hackable"]["one_bash_action"]["echo"] == format_tasks
    # τ-bench's tool-error check pays "I'm sorry, I can't help with that." on every task of every cluster.
    tau = [c for c in clusters if c != fmt]
    assert tau and all(clusters[c]["hackable"]["handles_tool_error"]["deflection"] == clusters[c]["checked"]
                       for c in tau)
    assert gates["hollow"]["hackable_reward"] == report["tasks"] and gates["hollow"]["episodes"] > 0
    rows = {(r["cluster_id"], r["eval"]): r for r in gates["hollow"]["rows"]}
    assert rows[(fmt, "one_bash_action")]["reward"] and "```bash\ntrue\n```" in rows[(fmt, "one_bash_action")][
        "example"]["reply"]
    manifest = load_task_set(learn["set"]).manifest
    assert manifest.gates is not None and manifest.gates.hollow_probes
    assert {c.cluster_id: c.gates.hackable for c in manifest.clusters} == {c: g["hackable"] for c, g in
                                                                          clusters.items()}
    assert all(set(t.hackable or {}) == {"one_bash_action" if t.cluster_id == fmt else "handles_tool_error"}
               for t in manifest.tasks)


def test_tasks_check_reports_each_tasks_hollow_replies(cli, learn):
    result = cli("tasks", "check", learn["set"], "--store", learn["store"], "--harness-config", learn["harness"],
                 "--json")
    assert result.exit_code == 0, result.output  # hackable is reported, not a gate failure
    tasks = json.loads(result.stdout)["tasks"]
    shell = [t for t in tasks if t["cluster_id"] == _format_cluster(learn)]
    assert shell and all("noop_content" in t["hackable"]["one_bash_action"] for t in shell)
    assert all(t["hackable_examples"]["one_bash_action"]["noop_content"].endswith("```bash\ntrue\n```")
               for t in shell)
    table = cli("tasks", "check", learn["set"], "--store", learn["store"], "--harness-config", learn["harness"])
    assert "Hackable evals" in table.stdout and "noop_content" in table.stdout
    assert "Hollow probes: the reward of" in table.stderr and "--allow-hackable" in table.stderr


def test_a_match_eval_paying_for_an_apology_is_hackable_by_deflection(cli, learn, tmp_path):
    evals = tmp_path / "evals.yaml"
    evals.write_text(SORRY)
    result = cli(*_generate(learn, evals, tmp_path / "sorry", "--json", formats=("tau-bench",)))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    # Kept: the tasks whose recorded answer apologises (the others' reference does not earn the reward).
    assert 0 < report["tasks"] < report["gates"]["checked"]
    hackable = [c["gates"]["hackable"] for c in report["clusters"] if c["tasks"]]
    assert sum(h["apologises"]["deflection"] for h in hackable) == report["tasks"]


def _references(task_set: Path) -> dict:
    """Each task's recorded answer at the cut: its bash command, its calls, its words."""
    refs = {}
    for task in load_task_set(task_set).tasks:
        turn = task.provenance.recorded_turn
        text = (turn.content or "") if turn else ""
        commands = [block.split("\n```")[0].strip() for block in text.split("```bash\n")[1:]]
        refs[task.task_id] = {
            "command": commands[0] if task.harness == "shell" and len(commands) == 1 else None,
            "calls": [[c.function.name, json.loads(c.function.arguments)] for c in (turn.tool_calls or [])]
            if turn and task.harness != "shell" else [],
            "text": text.strip()}
    return refs


def test_a_reward_that_also_pays_for_the_reference_action_is_not_hackable(cli, learn, tmp_path):
    (tmp_path / "content.py").write_text(SAME_ACTION)
    evals = tmp_path / "evals.yaml"
    evals.write_text(COMBINED)
    draft = cli(*_generate(learn, evals, tmp_path / "draft", "--name", "content", "--no-gates"))
    assert draft.exit_code == 0, draft.output
    (tmp_path / "refs.json").write_text(json.dumps(_references(tmp_path / "draft")))
    result = cli(*_generate(learn, evals, tmp_path / "content", "--json"))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["tasks"] > 50
    hollow = report["gates"]["hollow"]
    assert hollow["hackable_reward"] == 0
    # The format part alone is still paid by a no-op block: the report names it as a part, not the reward.
    parts = {(r["eval"], r["reward"]) for r in hollow["rows"]}
    assert ("one_bash_action", False) in parts and not any(reward for _, reward in parts)
    manifest = load_task_set(tmp_path / "content").manifest
    assert not any(set(t.hackable or {}) & {"format_and_action", "answer_and_action"} for t in manifest.tasks)


def _train_config(path: Path, task_set: Path, **tasks: object) -> Path:
    path.write_text(json.dumps({"run_dir": str(path.with_suffix("")), "model": {"ref": str(path.parent / "no-model")},
                                "tasks": {"task_set": str(task_set), **tasks}}))
    return path


def test_train_refuses_the_hackable_set_before_loading_a_model(cli, learn, tmp_path):
    config = _train_config(tmp_path / "train.yaml", learn["set"])
    refused = cli("train", config, "--allow-unredacted", "--store", learn["store"])
    assert refused.exit_code == 2
    message = " ".join(refused.stderr.split())
    assert "Hackable reward" in message and "one_bash_action pays noop_content on" in message
    assert "handles_tool_error pays" in message and "deflection on" in message
    assert "`weighted`" in message and "--allow-hackable" in message
    assert not (tmp_path / "train").exists()  # refused before the run folder, the tokenizer or the model
    allowed = cli("train", config, "--allow-unredacted", "--allow-hackable", "--store", learn["store"])
    assert allowed.exit_code == 2 and "Hackable reward" not in allowed.stderr
    assert "Training on a hackable reward" in allowed.stderr and "no-model" in allowed.stderr  # then the model
    tolerant = _train_config(tmp_path / "tolerant.yaml", learn["set"], max_hackable=1)
    passed = cli("train", tolerant, "--allow-unredacted", "--store", learn["store"])
    assert passed.exit_code == 2 and "Hackable reward" not in passed.stderr and "no-model" in passed.stderr
