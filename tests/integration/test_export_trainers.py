"""`tracegym tasks export --to verifiers|trl` on a support team's generated chat log, with the real packages.

The task set is gated: the team's eval pays for a reply that names the customer's order or hands the conversation
to a human, and a --references file supplies one per session (text for odd sessions, a hand-off call for even
ones, so both single-reply and tool-call references are exported). Every exported reward must be the one
`tracegym tasks check` gives the same reply.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.integration.fake_model_server import fake_openai
from tests.integration.test_task_references import CHECKS, RULES
from tests.support_log import write_support_log
from tracegym.store import open_store

EVALS = """\
version: 1
evals:
  - name: resolves
    kind: python
    function: support_checks:resolves
    python_path: ["."]
    applies_to: {formats: [openai-chat]}
  - name: has_capital
    kind: match
    mode: regex
    expected: "[A-Z]"
    case_sensitive: true
    applies_to: {formats: [openai-chat], by_default: false}
  - name: csat
    kind: label
    score: csat
    applies_to: {formats: [openai-chat], by_default: false}
"""


def _invoke(*args: Any) -> Any:
    from typer.testing import CliRunner

    from tracegym.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def support(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The store, a gated task set (`set`) bound to `resolves`, and an ungated one (`capital`) bound to a reward a
    random model earns by chance, for training."""
    root = tmp_path_factory.mktemp("export")
    log = write_support_log(root / "log", n_sessions=20, request_metadata=True)
    (root / "rules.yaml").write_text(RULES)
    store = root / "store.duckdb"
    for args in (["ingest", log.log], ["mine", "failures", "--rules", root / "rules.yaml"]):
        assert _invoke(*args, "--store", store).exit_code == 0
    (root / "evals").mkdir()
    (root / "evals" / "support_checks.py").write_text(CHECKS)
    (root / "evals" / "evals.yaml").write_text(EVALS)
    with open_store(store, read_only=True) as st:
        found = st.query("SELECT DISTINCT f.cluster_id, t.session_id FROM failures f JOIN traces t USING (trace_id) "
                         "WHERE f.detector = 'cannot_help' ORDER BY t.session_id")
    refs = [{"session_id": r["session_id"], "reply": f"Order A-{1000 + int(r['session_id'][5:])}: reopened for you."}
            if int(r["session_id"][-1]) % 2 else
            {"session_id": r["session_id"], "reply": "", "tool_calls": [{"type": "function", "function": {
                "name": "handoff_to_human", "arguments": '{"reason": "refund"}'}}]} for r in found]
    (root / "refs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in refs))
    picked = [a for c in sorted({r["cluster_id"] for r in found}) for a in ("--cluster", c)]
    common = ["tasks", "generate", "--allow-unredacted", "--evals", root / "evals" / "evals.yaml", "--store", store,
              "--keep-near-duplicates", *picked]
    result = _invoke(*common, "--out", root / "set", "--references", root / "refs.jsonl", "--heldout", "0.3")
    assert result.exit_code == 0, result.output
    result = _invoke(*common, "--out", root / "capital", "--no-gates", "--eval", "has_capital")
    assert result.exit_code == 0, result.output
    return {"root": root, "store": store, "set": root / "set", "capital": root / "capital"}


def _export(support: dict[str, Path], fmt: str, out: Path, *args: Any, task_set: str = "set") -> dict[str, Any]:
    result = _invoke("tasks", "export", support[task_set], "--to", fmt, "--out", out, "--split", "all",
                     "--store", support["store"], "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _checked(support: dict[str, Path]) -> dict[str, dict[str, float]]:
    """`tracegym tasks check`: each task's probe rewards by kind."""
    result = _invoke("tasks", "check", support["set"], "--store", support["store"], "--json")
    assert result.exit_code == 0, result.output
    return {t["task_id"]: {p["kind"]: p["reward"] for p in t["probes"]} for t in json.loads(result.stdout)["tasks"]}


def _rows(data: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (data / "rows.jsonl").read_text().splitlines()]


def _module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"exported_{path.parent.name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_export_is_self_contained_names_its_version_and_keeps_ids_and_gates(support, tmp_path):
    from tracegym.tasks import load_task_set

    summary = _export(support, "trl", tmp_path / "trl")
    task_set = load_task_set(support["set"])
    assert summary["tracegym_version"] == "0.1.0" and summary["seconds"] >= 0
    assert summary["counts"]["rows"] == len(task_set.tasks) == 12
    assert summary["counts"]["train"] + summary["counts"]["heldout"] == 12 and summary["counts"]["heldout"] > 0
    data = tmp_path / "trl" / "tracegym_data"
    assert json.loads((data / "export.json").read_text())["task_set_sha256"] == summary["task_set_sha256"]
    entries = {e.task_id: e for e in task_set.manifest.tasks}
    for row in _rows(data):
        entry = entries[row["task_id"]]
        assert (row["cluster_id"], row["split"], row["harness"]) == (entry.cluster_id, entry.split, "replay")
        assert row["gates"] == {"gated": True, "threshold": 1.0, "passed": True, "reference": entry.reference,
                                "reference_trace": entry.reference_trace, "hackable": entry.hackable}
        assert row["reference_source"] == entry.reference and row["reference"]
        assert row["scorer"] == {"evals_file": "evals.yaml", "evals": {"resolves": 1.0}, "reward_eval": "resolves"}
    # The eval's own module travels with it: the export scores with the task set and its evals folder gone.
    moved = tmp_path / "elsewhere"
    shutil.move(tmp_path / "trl", moved)
    hidden = support["root"] / "evals-hidden"
    (support["root"] / "evals").rename(hidden)
    try:
        reward = _module(moved / "reward.py")
        rows = _rows(moved / "tracegym_data")
        assert reward.reward([], [r["reference"] for r in rows], [r["task_id"] for r in rows]) == [1.0] * 12
    finally:
        hidden.rename(support["root"] / "evals")


def test_export_refuses_a_taken_folder_and_an_unknown_format_with_the_fix(support, tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    result = _invoke("tasks", "export", support["set"], "--to", "trl", "--out", tmp_path / "taken",
                     "--store", support["store"])
    assert result.exit_code == 2 and "--force" in result.stderr
    assert (tmp_path / "taken" / "notes.txt").read_text() == "mine"
    result = _invoke("tasks", "export", support["set"], "--to", "verifier", "--out", tmp_path / "new",
                     "--store", support["store"])
    assert result.exit_code == 2 and "Did you mean 'verifiers'" in result.stderr and not (tmp_path / "new").exists()
    assert not list(tmp_path.glob(".*export-*"))  # nothing half-written is left beside it


def test_trl_reward_scores_each_task_as_tasks_check_does(support, tmp_path):
    from datasets import load_from_disk

    _export(support, "trl", tmp_path / "trl")
    dataset = load_from_disk(str(tmp_path / "trl" / "dataset"))
    assert set(dataset.column_names) >= {"prompt", "task_id", "cluster_id", "reference"}
    assert all(m["role"] in ("system", "user", "assistant") and isinstance(m["content"], str)
               for p in dataset["prompt"] for m in p)
    assert "<tools>" in dataset["prompt"][0][0]["content"]  # a replay task's model sees its tools
    reward = _module(tmp_path / "trl" / "reward.py")
    checked = _checked(support)
    ids = dataset["task_id"]
    assert reward.reward(dataset["prompt"], dataset["reference"], ids) == [checked[t]["reference"] for t in ids]
    assert reward.reward(dataset["prompt"], [""] * len(ids), ids) == [checked[t]["empty"] for t in ids]
    assert {checked[t]["reference"] for t in ids} == {1.0} and {checked[t]["empty"] for t in ids} == {0.0}


def _play(rows: list[dict[str, Any]], mode: str) -> Any:
    """A scripted model: each task's reference replies in order (then a closing word), or empty replies."""
    def reply(n: int, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        row = next(r for r in rows if [m.get("content") for m in messages[:len(r["prompt"])]]
                   == [m["content"] for m in r["prompt"]])
        turn = sum(m["role"] == "assistant" for m in messages[len(row["prompt"]):])
        message: dict[str, Any] = {"role": "assistant", "content": ""}
        if mode == "reference" and turn < len(row["reference"]):
            ref = row["reference"][turn]
            message = {"role": "assistant", "content": ref["content"] or None,
                       **({"tool_calls": ref["tool_calls"]} if ref["tool_calls"] else {})}
        elif mode == "reference":
            message["content"] = "Is there anything else?"
        return {"id": f"c{n}", "object": "chat.completion", "created": 1, "model": body["model"],
                "choices": [{"index": 0, "message": message,
                             "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    return reply


@pytest.mark.slow  # verifiers' import and `pip install` of the exported package: ~25 s
def test_verifiers_env_installs_loads_and_scores_as_tasks_check_does(support, tmp_path, monkeypatch):
    import verifiers as vf
    from openai import AsyncOpenAI
    from verifiers.clients import OpenAIChatCompletionsClient

    summary = _export(support, "verifiers", tmp_path / "env")
    name = summary["name"]
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--target",
                    str(site), str(tmp_path / "env")], check=True)
    monkeypatch.syspath_prepend(str(site))
    env = vf.load_environment(name)
    assert type(env).__name__ == "TracegymHarnessEnv"  # replay tasks: the harness answers the tool calls
    rows = _rows(site / name / "tracegym_data")
    checked = _checked(support)
    for mode in ("reference", "empty"):
        with fake_openai(_play(rows, mode)) as url:
            client = OpenAIChatCompletionsClient(AsyncOpenAI(base_url=url, api_key="unused"))
            results = env.evaluate_sync(client, "scripted", num_examples=-1, rollouts_per_example=1)
        outputs = results["outputs"]
        infos = [o["info"] if isinstance(o["info"], dict) else json.loads(o["info"]) for o in outputs]
        assert sorted(i["task_id"] for i in infos) == sorted(checked)
        assert all(i["cluster_id"] and i["gates"]["passed"] for i in infos)
        assert [o["reward"] for o in outputs] == [checked[i["task_id"]][mode] for i in infos], mode


@pytest.mark.slow  # verifiers' import: ~15 s
def test_chat_tasks_export_as_a_single_turn_env_without_tools(support, tmp_path, monkeypatch):
    import verifiers as vf
    from openai import AsyncOpenAI
    from verifiers.clients import OpenAIChatCompletionsClient

    harness = tmp_path / "harness.yaml"
    harness.write_text("run_as: {replay: chat}\n")
    name = _export(support, "verifiers", tmp_path / "env", "--harness-config", harness, task_set="capital")["name"]
    monkeypatch.syspath_prepend(str(tmp_path / "env"))  # the package folder itself, as an installed one
    env = vf.load_environment(name, split="train")
    assert isinstance(env, vf.SingleTurnEnv)
    assert all(json.loads(info)["tool_defs"] == [] for info in env.dataset["info"])  # chat gives no tools
    for text, reward in (("Fine by me.", 1.0), ("fine by me.", 0.0)):  # has_capital: a capital letter pays
        def reply(n: int, body: dict[str, Any], text: str = text) -> dict[str, Any]:
            return {"id": f"c{n}", "object": "chat.completion", "created": 1, "model": body["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                 "finish_reason": "stop"}]}
        with fake_openai(reply) as url:
            client = OpenAIChatCompletionsClient(AsyncOpenAI(base_url=url, api_key="unused"))
            outputs = env.evaluate_sync(client, "scripted", num_examples=-1, rollouts_per_example=1)["outputs"]
        assert outputs and {o["reward"] for o in outputs} == {reward}


def test_an_export_refuses_a_scorer_it_cannot_run_and_another_tracegym(support, tmp_path):
    from tracegym.environments.runtime import ExportedTasks
    from tracegym.errors import ExportError

    result = _invoke("tasks", "generate", "--allow-unredacted", "--evals", support["root"] / "evals" / "evals.yaml",
                     "--store", support["store"], "--top", "1", "--no-gates", "--eval", "csat", "--out",
                     tmp_path / "labelled")
    assert result.exit_code == 0, result.output
    labelled = tmp_path / "labelled"
    out = tmp_path / "out"
    assert _invoke("tasks", "export", labelled, "--to", "trl", "--out", out, "--split", "all",
                   "--store", support["store"]).exit_code == 0
    with pytest.raises(ExportError, match="label eval .* Fix: bind the tasks to evals"):
        ExportedTasks(out / "tracegym_data")
    good = tmp_path / "good"
    _export(support, "trl", good)
    manifest = good / "tracegym_data" / "export.json"
    manifest.write_text(manifest.read_text().replace('"tracegym_version": "0.1.0"', '"tracegym_version": "9.9"'))
    with pytest.raises(ExportError, match=r"pip install tracegym==9\.9"):
        ExportedTasks(good / "tracegym_data")


@pytest.mark.slow  # TRL's import (vLLM's, with it) and two GRPO steps of the tiny model on CPU: ~45 s
def test_trl_grpo_trainer_runs_two_steps_on_the_export_with_tracegym_rewards(support, tmp_path):
    import asyncio

    from datasets import load_from_disk
    from trl import GRPOConfig, GRPOTrainer

    from tracegym.harnesses.config import HarnessFactory
    from tracegym.harnesses.gates import ScriptedPolicy
    from tracegym.harnesses.runner import EpisodeJob, EpisodeLimits, run_episode
    from tracegym.harnesses.taskrun import TaskScorers
    from tracegym.models.sampling import SamplingParams
    from tracegym.models.tiny import tiny_policy
    from tracegym.tasks import load_task_set
    from tracegym.tasks.probes import ProbeReply

    harness = tmp_path / "harness.yaml"
    harness.write_text("run_as: {replay: chat}\n")  # short prompts: no tool schemas for the tiny model to read
    _export(support, "trl", tmp_path / "trl", "--harness-config", harness, task_set="capital")
    exported = _module(tmp_path / "trl" / "reward.py")
    seen: list[tuple[str, str, float | None]] = []

    def reward(prompts: list[Any], completions: list[Any], task_id: list[str], **kwargs: Any) -> list[float | None]:
        rewards = exported.reward(prompts, completions, task_id, **kwargs)
        seen.extend((t, c[-1]["content"], r) for t, c, r in zip(task_id, completions, rewards, strict=True))
        return rewards

    model, tokenizer = tiny_policy(seed=0)
    args = GRPOConfig(output_dir=str(tmp_path / "grpo"), max_steps=2, per_device_train_batch_size=2,
                      num_generations=2, max_completion_length=8, use_cpu=True, report_to=[], save_strategy="no",
                      seed=0, logging_steps=1)
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=reward, args=args,
                          train_dataset=load_from_disk(str(tmp_path / "trl" / "dataset")))
    trainer.train()
    assert trainer.state.global_step == 2 and len(seen) == 4
    # tracegym's own scorer, harness and task set (not the export's copy) on the same completions.
    task_set = load_task_set(support["capital"])
    specs, scorers = {t.task_id: t for t in task_set.tasks}, TaskScorers(task_set)
    from tracegym.harnesses.config import HarnessConfig

    factory = HarnessFactory(HarnessConfig(run_as={"replay": "chat"}))

    async def score(task_id: str, text: str) -> float | None:
        episode = await run_episode(ScriptedPolicy([ProbeReply(text)]), factory.make(specs[task_id], "e"),
                                    EpisodeJob(specs[task_id]), SamplingParams(), EpisodeLimits(max_turns=1),
                                    scorers(specs[task_id]))
        return episode.reward

    assert [r for _, _, r in seen] == [asyncio.run(score(t, text)) for t, text, _ in seen]
    assert {r for _, _, r in seen} == {0.0, 1.0}  # the random model's replies earn both: the comparison bites
