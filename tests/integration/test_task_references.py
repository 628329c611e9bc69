"""References for failures that never had a good reply: `tasks generate --references / --reference-model`, the
set's rejected/ folder and `tasks check --rejected`, on a support team's generated chat log.

Every mined failure here is the agent giving up (three clusters: an invalid address, a refund, an upstream
timeout), cut at the turn that gave up: the recording holds no reply the team's eval pays for. The eval pays for a
reply that names the customer's order id or hands the conversation to a human, and never for a malformed call.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.integration.fake_model_server import fake_openai
from tests.support_log import write_support_log
from tracegym.store import open_store
from tracegym.tasks import load_task_set
from tracegym.tasks.taskset import load_rejected

RULES = """\
rules:
  - name: cannot_help
    description: The agent told the customer it cannot help.
    sql: |
      SELECT trace_id, idx AS message_idx, content AS evidence FROM messages
      WHERE role = 'assistant' AND (contains(content, 'can''t help') OR contains(content, 'try again later'))
"""
CHECKS = '''
import re


def resolves(trajectory):
    """1.0 for a reply that names the customer's order or hands the conversation to a human."""
    if trajectory.malformed_tool_calls:
        return 0.0, {"malformed": trajectory.malformed_tool_calls}
    prompt, attempt = trajectory.messages[:trajectory.prompt_messages], trajectory.messages[trajectory.prompt_messages:]
    orders = set(re.findall(r"A-\\d+", " ".join(m.get("content") or "" for m in prompt if m["role"] == "user")))
    if any(c.name == "handoff_to_human" for c in trajectory.agent_calls()):
        return 1.0, {"handoff": True}
    said = " ".join(m.get("content") or "" for m in attempt if m["role"] == "assistant")
    return float(any(o in said for o in orders)), {"orders": sorted(orders)}
'''
EVALS = """\
version: 1
evals:
  - name: resolves
    kind: python
    function: support_checks:resolves
    python_path: ["."]
    applies_to: {formats: [openai-chat]}
"""


@pytest.fixture(scope="module")
def support_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    """The log ingested and mined with the rule above; each gave-up cluster's session ids."""
    from typer.testing import CliRunner

    from tracegym.cli import app

    folder = tmp_path_factory.mktemp("support")
    log = write_support_log(folder / "log", n_sessions=20, request_metadata=True)
    (folder / "rules.yaml").write_text(RULES)
    store = folder / "store.duckdb"
    for args in (["ingest", str(log.log)], ["mine", "failures", "--rules", str(folder / "rules.yaml")]):
        result = CliRunner().invoke(app, [*args, "--store", str(store)])
        assert result.exit_code == 0, result.output
    with open_store(store, read_only=True) as st:
        rows = st.query("SELECT f.cluster_id, t.session_id FROM failures f JOIN traces t USING (trace_id) "
                        "WHERE f.detector = 'cannot_help' ORDER BY t.session_id")
    clusters: dict[str, list[str]] = {}
    for row in rows:
        clusters.setdefault(row["cluster_id"], []).append(row["session_id"])
    assert sorted(len(s) for s in clusters.values()) == [4, 4, 4]
    return store, clusters


@pytest.fixture
def workspace(support_store, tmp_path: Path) -> tuple[Path, Path, dict[str, list[str]]]:
    """A private copy of the store (generation registers task sets in it) and the evals file."""
    store, clusters = support_store
    shutil.copyfile(store, tmp_path / "store.duckdb")
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "support_checks.py").write_text(CHECKS)
    (tmp_path / "evals" / "evals.yaml").write_text(EVALS)
    return tmp_path / "store.duckdb", tmp_path / "evals" / "evals.yaml", clusters


def _generate(cli, workspace, out: Path, *args: str):
    store, evals, clusters = workspace
    picked = [a for c in clusters for a in ("--cluster", c)]
    # Every session is its own task here: the sessions differ only in ids and amounts, which merging would join.
    return cli("tasks", "generate", "--allow-unredacted", "--evals", evals, "--out", out, "--store", store, *picked,
               "--keep-near-duplicates", *args)


def _said(result) -> str:
    """stderr on one line: rich wraps it at the terminal's width."""
    return " ".join(result.stderr.split())


def _order(session_id: str) -> int:
    """A session's order number (sess-0007 orders A-1007)."""
    return 1000 + int(session_id.removeprefix("sess-"))


def _trace_of(store: Path, session_id: str) -> str:
    with open_store(store, read_only=True) as st:
        return st.scalar("SELECT trace_id FROM traces WHERE session_id = ?", [session_id])


def test_without_references_every_task_is_rejected_and_the_rejected_folder_says_why(cli, workspace, tmp_path):
    store = workspace[0]
    result = _generate(cli, workspace, tmp_path / "set")
    assert result.exit_code == 2
    assert "No task passed the gates" in result.stderr and "Not found" not in result.stderr
    for named in ("--references", "--reference-model", f"tasks check {tmp_path / 'set'} --rejected"):
        assert named in _said(result)
    rejected = load_rejected(tmp_path / "set")
    assert rejected is not None and len(rejected) == 12
    assert all(set(r["reasons"]) <= {"no_reference", "reference_fails"} and r["reasons"] for r in rejected)
    assert load_task_set(tmp_path / "set").tasks == []
    assert len(list((tmp_path / "set" / "rejected" / "tasks").glob("*.yaml"))) == 12
    with open_store(store, read_only=True) as st:  # nothing to train on is registered
        assert st.scalar("SELECT count(*) FROM task_sets") == 0
    listed = cli("tasks", "check", tmp_path / "set", "--rejected", "--json")
    assert listed.exit_code == 0, listed.output
    assert [r["task_id"] for r in json.loads(listed.stdout)["rejected"]] == [r["task_id"] for r in rejected]
    table = cli("tasks", "check", tmp_path / "set", "--rejected")
    assert table.exit_code == 0 and "no_reference 4" in table.stdout and "12 rejected tasks" in _said(table)


def test_a_references_file_serves_tasks_by_trace_session_and_cluster(cli, workspace, tmp_path):
    store, _, clusters = workspace
    timeout, refund = (next(c for c, s in clusters.items() if s[0] == first) for first in ("sess-0001", "sess-0003"))
    refs = tmp_path / "refs.jsonl"
    rows = [
        {"session_id": "sess-0001", "reply": "The lookup of order A-1001 timed out; I am retrying it now."},
        {"trace_id": _trace_of(store, "sess-0006"), "reply": "Order A-1006 could not be looked up; retrying."},
        {"cluster_id": refund, "reply": "", "tool_calls": [
            {"type": "function", "function": {"name": "handoff_to_human", "arguments": '{"reason": "refund"}'}}]},
        {"trace_id": _trace_of(store, "sess-0008"), "reply": "Sorry."},  # the trace's row wins over its cluster's
        {"trace_id": "no-such-trace", "reply": "Order A-1 is fine."},
    ]
    refs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = _generate(cli, workspace, tmp_path / "set", "--references", refs, "--json")
    assert result.exit_code == 0, result.output
    assert "1 of the 5 rows" in _said(result) and "trace_id no-such-trace (line 5)" in _said(result)
    summary = json.loads(result.stdout)
    assert summary["gates"]["references_file"]["unmatched_rows"] == 1
    task_set = load_task_set(tmp_path / "set")
    written = {t.provenance.trace_id: t for t in task_set.tasks}
    expected = {_trace_of(store, s) for s in ("sess-0001", "sess-0006", "sess-0003", "sess-0013", "sess-0018")}
    assert set(written) == expected
    by_entry = {e.trace_id: e for e in task_set.manifest.tasks}
    assert {by_entry[t].reference for t in expected} == {f"file:{refs}"}
    details = {t: written[t].provenance.reference.detail for t in written}
    assert details[_trace_of(store, "sess-0001")] == "line 1, session_id sess-0001"
    assert details[_trace_of(store, "sess-0013")] == f"line 3, cluster_id {refund}"
    assert task_set.manifest.gates.references_file == str(refs)
    counts = {c.cluster_id: c.gates for c in task_set.manifest.clusters}
    assert counts[timeout].references == {f"file:{refs}": 2, "none": 2}
    # The rejected tasks are beside the set, never in it; the refund whose own row says "Sorry." fails with it.
    rejected = {r["task_id"]: r for r in load_rejected(tmp_path / "set")}
    assert len(rejected) == 7 and not set(rejected) & {t.task_id for t in task_set.tasks}
    sorry = next(r for r in rejected.values() if r["reasons"] == ["reference_fails"])
    assert sorry["probes"][0]["replies"] == [{"text": "Sorry.", "tool_calls": []}]
    assert sorry["probes"][0]["reward"] == 0.0
    # `tasks check` plays the supplied references again, from the specs.
    checked = cli("tasks", "check", tmp_path / "set", "--store", store, "--json")
    assert checked.exit_code == 0, checked.output
    assert {t["probes"][0]["source"] for t in json.loads(checked.stdout)["tasks"]} == {f"file:{refs}"}


def _scripted_chat(n: int, body: dict) -> dict:
    """Names the customer's order when its number is a multiple of 3; otherwise gives up again."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    order = re.search(r"A-(\d+)", user).group(0)
    text = f"I have reopened order {order} for you." if int(order[2:]) % 3 == 0 else "Sorry, I can't help."
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}


def test_a_reference_model_behind_an_endpoint_supplies_references_and_counts_what_it_missed(cli, workspace, tmp_path):
    clusters = workspace[2]
    with fake_openai(_scripted_chat) as url:
        result = _generate(cli, workspace, tmp_path / "set", "--reference-model", f"scripted@{url}",
                           "--reference-samples", "2", "--json")
    assert result.exit_code == 0, result.output
    missed = {c: sum(_order(s) % 3 != 0 for s in sessions) for c, sessions in clusters.items()}
    assert sorted(missed.values()) == [2, 3, 3]
    gates = json.loads(result.stdout)["gates"]["clusters"]
    assert {c: (g["model_sampled"], g["model_none_passed"]) for c, g in gates.items()} == {
        c: (4, missed[c]) for c in clusters}
    for cluster, n in missed.items():
        assert f"cluster {cluster}: no passing reference for {n} of 4 tasks (2 samples each)" in _said(result)
    task_set = load_task_set(tmp_path / "set")
    assert len(task_set.tasks) == 12 - sum(missed.values())
    name = f"scripted@{url.split('://', 1)[1]}"
    assert {t.provenance.reference.source for t in task_set.tasks} == {f"model:{name}"}
    assert all(t.provenance.reference.detail == "sample 1 of 2, reward 1" for t in task_set.tasks)
    assert task_set.manifest.gates.reference_model == name and task_set.manifest.gates.reference_samples == 2
    searched = [r["model_search"] for r in load_rejected(tmp_path / "set")]
    assert all(s["samples"] == 2 and s["passed"] == 0 and s["rewards"] == [0.0, 0.0] for s in searched)


@pytest.mark.slow  # samples 8 episodes of up to 512 tokens from a (tiny) model on the CPU
def test_a_tiny_random_model_finds_no_reference_and_says_so(cli, workspace, tmp_path):
    from tracegym.models.tiny import tiny_policy

    model, tokenizer = tiny_policy(seed=0)
    model.save_pretrained(tmp_path / "tiny-model")
    tokenizer.save_pretrained(tmp_path / "tiny-model")
    store, evals, clusters = workspace
    timeout = next(c for c, s in clusters.items() if s[0] == "sess-0001")
    result = cli("tasks", "generate", "--allow-unredacted", "--evals", evals, "--out", tmp_path / "set", "--store",
                 store, "--cluster", timeout, "--reference-model", tmp_path / "tiny-model",
                 "--reference-samples", "2", "--keep-near-duplicates")
    assert result.exit_code == 2
    assert f"cluster {timeout}: no passing reference for 4 of 4 tasks (2 samples each)" in _said(result)
    assert f"no passing reply for 4 of 4 tasks of cluster {timeout}" in _said(result)
    searched = [r["model_search"] for r in load_rejected(tmp_path / "set")]
    # Every sample ran and was scored (no policy or harness error): the model's replies just earn nothing.
    assert len(searched) == 4 and all(s["rewards"] == [0.0, 0.0] and not s["errors"] for s in searched)


@pytest.mark.parametrize(("name", "text", "said"), [
    ("refs.csv", "session_id,answer\nsess-0001,hi\n", "no reply column; unknown column 'answer'"),
    ("refs.jsonl", '{"trace_id": "x", "reply": "a"}\n{"trace_id": "y", "reply": "", "tool_calls": "[{"}\n'
                   '{"session_id": "z", "reply": "b", "tool_calls": [{"name": "f", "arguments": "{oops"}]}\n',
     "2 bad rows, nothing was generated:\n  line 2: tool_calls is not JSON"),
    ("refs.csv", 'cluster_id,reply,tool_calls\nc1,ok,"[{""name"": ""f""}]"\nc1,again,\n',
     "line 3: cluster_id 'c1' again (line 2 gives it already)"),
])
def test_a_bad_references_file_stops_before_anything_runs(cli, workspace, tmp_path, name, text, said):
    (tmp_path / name).write_text(text)
    result = _generate(cli, workspace, tmp_path / "set", "--references", tmp_path / name)
    assert result.exit_code == 2 and said in result.stderr, result.stderr
    assert not (tmp_path / "set").exists()


def test_a_references_file_of_unknown_ids_only_warns_and_changes_nothing(cli, workspace, tmp_path):
    (tmp_path / "refs.csv").write_text("trace_id,reply\nnot-a-trace,Order A-1001 is on its way.\n")
    result = _generate(cli, workspace, tmp_path / "set", "--references", tmp_path / "refs.csv")
    assert result.exit_code == 2 and "No task passed the gates" in result.stderr
    assert "1 of the 1 rows" in _said(result) and "matched no task" in _said(result)
    # A set that holds no task is replaced without --force: the next try writes over it.
    again = _generate(cli, workspace, tmp_path / "set", "--references", tmp_path / "refs.csv")
    assert again.exit_code == 2 and "already exists" not in again.stderr


def test_a_reference_file_holding_an_email_is_refused_beside_a_redacted_store(cli, workspace, tmp_path: Path) -> None:
    store, evals, clusters = workspace
    assert cli("redact", "--store", store).exit_code == 0
    session = next(iter(clusters.values()))[0]
    refs = tmp_path / "refs.jsonl"
    refs.write_text(json.dumps({"session_id": session, "reply": "I've emailed you at jane.doe@example.org."}) + "\n")
    picked = [a for c in clusters for a in ("--cluster", c)]
    result = cli("tasks", "generate", "--evals", evals, "--out", tmp_path / "set", "--store", store, *picked,
                 "--references", refs)
    assert result.exit_code == 2, result.output
    assert "line 1" in _said(result) and "email" in _said(result) and "jane.doe" not in _said(result)
    assert not (tmp_path / "set").exists()
