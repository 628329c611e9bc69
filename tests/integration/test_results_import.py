"""Results of a model trained elsewhere, brought back: `tracegym rollouts import` and `tracegym eval --from-results`.

Two models behind a scripted endpoint on 127.0.0.1 are evaluated by tracegym on τ-bench tasks; the candidate's
samples are then written out as another trainer writes them (a verifiers results JSONL, a TRL prompt/completion/
reward JSONL) and brought back against the same base: the per-cluster table must be the one tracegym computed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.fake_model_server import fake_openai
from tests.integration.task_sets import mentions_task_set
from tests.integration.train_workspace import Workspace, copy_workspace
from tracegym.store import open_store

REPLIES = {"base": ["Let me check.", "I can refund that.", "Sorry, I cannot help."],
           "cand": ["I can refund that.", "A refund is on its way.", "Sorry.", "Refund issued."]}


def _chat(n: int, body: dict[str, Any]) -> dict[str, Any]:
    """Each model cycles through its replies, by the conversation's length and the call's number."""
    replies = REPLIES[body["model"]]
    text = replies[(n + len(body["messages"])) % len(replies)]
    return {"id": f"c{n}", "object": "chat.completion", "created": 1, "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory, tau_workspace_template: Workspace) -> Iterator[tuple[Path, Path, dict[str, Any], str]]:
    """The shared τ-bench workspace's store; a task set on the `mentions` eval; base and cand evaluated by tracegym
    (2 samples) behind the endpoint at the url returned, which serves the module (the base's identity is its url and
    name)."""
    from typer.testing import CliRunner

    from tracegym.cli import app

    tmp = tmp_path_factory.mktemp("import")
    store = copy_workspace(tau_workspace_template, tmp / "ws").store
    task_set = mentions_task_set(store, tmp, top=3, per_cluster=2)
    with fake_openai(_chat) as url:
        args = ("eval", "--tasks", task_set, "--base", f"base@{url}", "--api", f"cand@{url}", "--split", "train",
                "--samples", "2", "--store", store, "--json")
        result = CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        yield store, task_set, json.loads(result.stdout), url


def _samples(store: Path, eval_id: str, model: str) -> list[dict[str, Any]]:
    with open_store(store, read_only=True) as st:
        return st.query("SELECT e.task_id, r.messages, r.n_prompt_messages, e.reward FROM eval_results e JOIN "
                        "rollouts r USING (rollout_id) WHERE e.eval_id = ? AND e.checkpoint LIKE ? "
                        "ORDER BY e.task_id, e.sample_idx", [eval_id, f"{model}@%"])


def _write(path: Path, samples: list[dict[str, Any]], fmt: str) -> Path:
    lines = []
    for i, s in enumerate(samples):
        messages = json.loads(s["messages"])
        prompt, completion = messages[:s["n_prompt_messages"]], messages[s["n_prompt_messages"]:]
        if fmt == "trl":
            lines.append({"prompt": prompt, "completion": completion, "reward": s["reward"], "task_id": s["task_id"]})
        else:  # as vf-eval writes results.jsonl
            lines.append({"example_id": i, "prompt": prompt, "completion": completion, "answer": "",
                          "info": {"task_id": s["task_id"]}, "reward": s["reward"], "error": None,
                          "timing": {"generation_ms": 1.0}, "is_completed": True, "is_truncated": False,
                          "stop_condition": "no_tools_called", "metrics": {"reward": s["reward"]}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _figures(table: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Per group: the cluster, its tasks, and each row's figures and change (labels aside)."""
    keys = ("tasks", "samples", "errors", "reward", "hollow", "pass@1", "pass@k", "change")
    return [(g["cluster_id"], g["tasks"], [tuple(json.dumps(r[k], sort_keys=True) for k in keys) for r in g["rows"]])
            for g in table["groups"]]


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["verifiers", "trl"])
def test_imported_results_give_the_per_cluster_table_tracegym_computed(cli, evaluated, tmp_path, fmt):
    store, folder, table, url = evaluated
    samples = _samples(store, table["eval_id"], "cand")
    assert len({s["reward"] for s in samples}) == 2 and len(table["groups"]) > 2  # rewards and clusters differ
    results = _write(tmp_path / f"{fmt}.jsonl", samples, fmt)
    result = cli("eval", "--tasks", folder, "--base", f"base@{url}", "--from-results", results, "--format", fmt,
                 "--model-name", "trained-elsewhere", "--split", "train", "--store", store, "--json")
    assert result.exit_code == 0, result.output
    imported = json.loads(result.stdout)
    base_reused = f"{len(samples)} of {len(samples)} samples already in the store, 0 to run"
    assert base_reused in result.stderr.replace("\n", " ")
    assert imported["eval_id"] == table["eval_id"] and imported["models"] == ["trained-elsewhere"]
    assert _figures(imported) == _figures(table)
    assert imported["regressions"] == [{**r, "model": "trained-elsewhere"} for r in table["regressions"]]


@pytest.mark.slow
def test_rollouts_import_keeps_good_lines_names_bad_ones_and_feeds_lineage(cli, evaluated, tmp_path):
    store, folder, table, url = evaluated
    samples = _samples(store, table["eval_id"], "cand")
    results = _write(tmp_path / "r.jsonl", samples, "verifiers")
    with results.open("a") as f:
        f.write("{not json\n")
        f.write(json.dumps({"prompt": "hi", "completion": "yo", "reward": 1.0, "info": {"task_id": "nope"}}) + "\n")
        f.write(json.dumps({"prompt": "hi", "completion": "yo", "reward": "1", "info": {"task_id": "x"}}) + "\n")
    first = cli("rollouts", "import", results, "--task-set", folder, "--model", "m", "--store", store, "--json")
    assert first.exit_code == 0, first.output
    report = json.loads(first.stdout)
    n = len(samples)
    assert report["samples"] == n and not report["already_imported"]
    assert [b.split(":")[0] for b in report["lines_left_out"]] == [f"line {n + 1}", f"line {n + 2}", f"line {n + 3}"]
    assert "is not in task set" in report["lines_left_out"][1] and "not a finite number" in report["lines_left_out"][2]
    second = cli("rollouts", "import", results, "--task-set", folder, "--model", "m", "--store", store, "--json")
    assert second.exit_code == 0, second.output
    again = json.loads(second.stdout)
    assert again["already_imported"] and again["run_id"] == report["run_id"]
    with open_store(store, read_only=True) as st:
        stored = st.query("SELECT task_id, reward, train_use FROM rollouts WHERE run_id = ? ORDER BY task_id, "
                          "sample_idx", [report["run_id"]])
        assert [(r["task_id"], r["reward"]) for r in stored] == [(s["task_id"], s["reward"]) for s in samples]
        assert {r["train_use"] for r in stored} == {"imported"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    failed = cli("rollouts", "import", bad, "--task-set", folder, "--store", store)
    assert failed.exit_code == 2 and "no sample could be imported" in failed.stderr and "line 1" in failed.stderr
    assert cli("eval", "--tasks", folder, "--base", f"base@{url}", "--from-results", results, "--model-name",
               "m", "--split", "train", "--store", store).exit_code == 0
    cluster = next(g["cluster_id"] for g in table["groups"] if g["cluster_id"])
    lineage = cli("lineage", cluster, "--store", store, "--json")
    assert lineage.exit_code == 0, lineage.output
    checkpoints = [c for c in json.loads(lineage.stdout)["checkpoints"] if c["run_id"] == report["run_id"]]
    assert len(checkpoints) == 1 and checkpoints[0]["checkpoint"] == "m" and checkpoints[0]["eval_reward"] is not None
    assert checkpoints[0]["base_eval_reward"] is not None
