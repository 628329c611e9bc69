"""examples/evals-learn.yaml on recovery tasks cut from the real traces: what the production agent answered
earns the reward, and degenerate answers (empty, the failure itself) do not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tracegym.tasks.taskset import load_task_set

EVALS = Path(__file__).resolve().parents[2] / "examples" / "evals-learn.yaml"
FORMAT = "Please always provide EXACTLY ONE action in triple backticks"


@pytest.fixture(scope="module")
def recovery_set(tmp_path_factory):
    from typer.testing import CliRunner

    from tests.conftest import TRACES as traces_dir
    from tracegym.cli import app

    if not traces_dir.is_dir():
        pytest.skip(f"real traces not found at {traces_dir}")

    folder = tmp_path_factory.mktemp("learn")
    store, out = folder / "store.duckdb", folder / "set"
    runner = CliRunner()
    for args in (["ingest", str(traces_dir / "mini-swe-agent"), str(traces_dir / "tau-bench")],
                 ["mine", "failures"]):
        assert runner.invoke(app, [*args, "--store", str(store)]).exit_code == 0
    clusters = runner.invoke(app, ["sql", "--store", str(store), "--json",
                                   "SELECT cluster_id, signature FROM clusters WHERE detector IN "
                                   "('format_error', 'tool_error')"])
    chosen = [c for c in json.loads(clusters.stdout)
              if c["signature"].startswith(FORMAT) or c["signature"].startswith("Error: ")]
    args = ["tasks", "generate", "--allow-unredacted",
            "--evals", str(EVALS), "--cuts", "recovery", "--context", "last-exchange",
            "--out", str(out), "--store", str(store)]
    for c in chosen:
        args += ["--cluster", c["cluster_id"]]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return load_task_set(out)


def _score(task_set, task, reply: dict) -> float:
    return task_set.scorer(task).score(task.trajectory([reply], malformed_tool_calls=0)).reward


def _by_format(task_set, fmt: str) -> list:
    tasks = [t for t in task_set.tasks if t.provenance.format == fmt]
    assert tasks, f"no {fmt} recovery tasks"
    return tasks


@pytest.mark.slow  # the module's recovery set: real traces ingested, mined, cut, gated
def test_mini_swe_agent_format_recoveries(recovery_set):
    tasks = _by_format(recovery_set, "mini-swe-agent")
    recorded = [_score(recovery_set, t, t.provenance.recorded_turn.model_dump(exclude_none=True)) for t in tasks]
    # The production agent's answer to the correction: nearly always exactly one action.
    assert sum(recorded) / len(recorded) >= 0.8
    for task in tasks[:5]:
        bad = task.prompt.messages[-2].model_dump(exclude_none=True)  # the reply the correction was about
        assert bad["role"] == "assistant" and _score(recovery_set, task, bad) == 0.0
        assert _score(recovery_set, task, {"role": "assistant", "content": ""}) == 0.0
        assert _score(recovery_set, task, {"role": "assistant", "content": "```bash\n\n```"}) == 0.0


@pytest.mark.slow  # the module's recovery set: real traces ingested, mined, cut, gated
def test_tau_bench_tool_error_recoveries(recovery_set):
    tasks = _by_format(recovery_set, "tau-bench")
    recorded = [_score(recovery_set, t, t.provenance.recorded_turn.model_dump(exclude_none=True)) for t in tasks]
    assert sum(recorded) / len(recorded) >= 0.8  # gpt-4o's answers to the errors
    for task in tasks[:5]:
        failing = task.prompt.messages[-2].model_dump(exclude_none=True)  # the call the tool rejected
        assert failing["tool_calls"] and _score(recovery_set, task, failing) == 0.0
        assert _score(recovery_set, task, {"role": "assistant", "content": "  "}) == 0.0
        invented = {"role": "assistant", "content": "<tool_response>\nError: none\n</tool_response>"}
        assert _score(recovery_set, task, invented) == 0.0
        assert _score(recovery_set, task, {"role": "assistant", "content": "That flight is full; shall I look "
                                                                          "for another one?"}) == 1.0


def test_the_quickstart_embeds_these_evals():
    """The quickstart carries its evals inside the package (examples/ is not installed); they must stay these."""
    import yaml

    from tracegym.commands.quickstart import EVALS_YAML

    assert yaml.safe_load(EVALS_YAML) == yaml.safe_load(EVALS.read_text(encoding="utf-8"))
