"""The `reference` eval on recovery tasks cut from the real traces (the quickstart's families, bound to the content
evals of examples/evals-learn.yaml): the step production recorded earns it, a copy with another id, flight or file
does not, and replies of the right shape with nothing in them earn little."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tracegym.evals.scorers import ScorerContext, build_scorer
from tracegym.evals.scorers.bash_actions import read_action
from tracegym.evals.scorers.config import load_evals
from tracegym.evals.scorers.recorded import iter_recorded
from tracegym.store import open_store
from tracegym.tasks.taskset import load_task_set

EVALS = Path(__file__).resolve().parents[2] / "examples" / "evals-learn.yaml"
CONTENT = ["--eval", "one_bash_action_and_content", "--eval", "handles_tool_error_and_content"]
_DIGIT = re.compile(r"\d(?=\D*$)")


@pytest.fixture(scope="module")
def learn(tmp_path_factory):
    """The store (mini-swe-agent and τ-bench, mined) and its recovery tasks bound to the content evals, gated."""
    from typer.testing import CliRunner

    from tests.conftest import TRACES
    from tracegym.cli import app
    from tracegym.commands.quickstart import learnable_clusters

    if not TRACES.is_dir():
        pytest.skip(f"real traces not found at {TRACES}")
    folder = tmp_path_factory.mktemp("reference")
    store = folder / "store.duckdb"
    runner = CliRunner()
    for args in (["ingest", str(TRACES / "mini-swe-agent"), str(TRACES / "tau-bench")], ["mine", "failures"]):
        assert runner.invoke(app, [*args, "--store", str(store)]).exit_code == 0
    with open_store(store, read_only=True) as st:
        clusters = [a for c in learnable_clusters(st) for a in ("--cluster", c["cluster_id"])]
    base = ["tasks", "generate", "--allow-unredacted", "--evals", str(EVALS), "--cuts", "recovery", "--context",
            "last-exchange", "--store", str(store), *clusters]
    for out, extra in (("content", CONTENT), ("format", [])):
        result = runner.invoke(app, [*base, "--out", str(folder / out), *extra])
        assert result.exit_code == 0, result.output
    return store, load_task_set(folder / "content"), load_task_set(folder / "format")


def _follows(task_set):
    evals = load_evals(task_set.evals_path)
    return build_scorer(evals.get("follows_success"), ScorerContext(evals.folder), evals)  # no store: as training


def _reward(scorer, task, reply: dict) -> float:
    result = scorer.score(task.trajectory([{"role": "assistant", **reply}], malformed_tool_calls=0))
    assert result.ok, result.error
    return float(result.reward)


def _another(value: str) -> str:
    """The same value with its last digit changed (HAT290 -> HAT291), or with `_b` before a file's extension."""
    if _DIGIT.search(value):
        return _DIGIT.sub(lambda m: str((int(m.group()) + 1) % 10), value)
    stem, dot, ext = value.rpartition(".")
    return f"{stem}_b.{ext}" if dot else f"{value}_b"


def _swapped(task) -> dict | None:
    """The recorded step with one entity replaced by another of its shape: a call's first argument holding a digit,
    a bash block's first path, or the first flight, reservation or amount the prose names."""
    step = task.reference_steps[0]
    if step.calls and "```bash" not in step.text:
        calls = []
        for c in step.calls:
            arguments = dict(c.arguments)
            key = next((k for k, v in arguments.items() if isinstance(v, str) and _DIGIT.search(v)), None)
            if key is not None and not calls:
                arguments[key] = _another(arguments[key])
            calls.append({"id": "c", "type": "function",
                          "function": {"name": c.name, "arguments": json.dumps(arguments)}})
        return {"content": step.text, "tool_calls": calls} if calls != _calls(step) else None
    if "```bash" in step.text:
        paths = sorted(read_action(step.text).paths)
        return {"content": step.text.replace(paths[0], _another(paths[0]))} if paths else None
    found = re.search(r"\b[A-Z]{3}\d{3}\b|\b[A-Z0-9]{6}\b|\$\d+", step.text)
    return {"content": step.text.replace(found.group(), _another(found.group()))} if found else None


def _calls(step) -> list[dict]:
    return [{"id": "c", "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
            for c in step.calls]


@pytest.mark.slow  # the module's task sets: real traces ingested, mined, cut, gated twice
def test_the_recorded_step_earns_1_and_a_copy_naming_another_entity_less(learn):
    _, task_set, _ = learn
    follows = _follows(task_set)
    checked = {"mini-swe-agent": 0, "tau-bench": 0}
    for task in task_set.tasks:
        if task.reference_steps[0].source == "recorded_turn":
            assert _reward(follows, task, task.provenance.recorded_turn.model_dump(exclude_none=True)) == 1.0
        swapped = _swapped(task)
        if swapped is not None:
            assert _reward(follows, task, swapped) < 1.0, (task.task_id, swapped)
            checked[task.provenance.format] += 1
    assert all(n >= 10 for n in checked.values()), checked


@pytest.mark.slow  # the module's task sets
def test_empty_no_op_and_deflecting_replies_earn_little(learn):
    _, task_set, _ = learn
    follows = _follows(task_set)
    for task in task_set.tasks:
        assert _reward(follows, task, {"content": ""}) == 0.0
        for no_op in ("```bash\ntrue\n```", "Let me check.\n\n```bash\necho ok\n```"):
            assert _reward(follows, task, {"content": no_op}) < 0.5
        assert _reward(follows, task, {"content": "I'm sorry, I can't help with that."}) < 0.5


@pytest.mark.slow  # the module's task sets
def test_arguments_the_successful_trials_disagree_on_count_less(learn):
    """A τ-bench task whose recorded call has arguments every successful trial of its task id used, and arguments
    they did not: changing one of the first costs more than changing one of the second."""
    store, task_set, _ = learn
    follows = _follows(task_set)
    found = [(task, call) for task in task_set.tasks if task.provenance.format == "tau-bench"
             for call in task.reference_steps[0].calls[:1]
             if call.weights and set(call.arguments) - set(call.weights)]
    assert found, "no τ-bench task whose reference call has both agreed and disputed arguments"
    for task, call in found:
        with open_store(store, read_only=True) as st:
            trials = [t for t in iter_recorded(st, "format = 'tau-bench' AND outcome = 'success'")
                      if t.task_key() == task.provenance.source_task and t.trace_id != task.provenance.trace_id]
        used = [[c.arguments for c in t.calls if c.name == call.name and not c.is_error] for t in trials]
        used = [u for u in used if u]
        for key, value in call.arguments.items():  # disputed: some successful trial never used this value
            others = [any(args.get(key) == value for args in u) for u in used]
            assert (key in call.weights) == (not all(others)), (key, call.weights)
        agreed = next(k for k in call.arguments if k not in call.weights)
        disputed = min(call.weights, key=lambda k: call.weights[k])
        assert (_reward(follows, task, _changed(call, agreed)) < _reward(follows, task, _changed(call, disputed))
                < 1.0)


def _changed(call, key: str) -> dict:
    """A reply making `call` with argument `key` changed."""
    arguments = {**call.arguments, key: _another(str(call.arguments[key]))}
    return {"content": None, "tool_calls": [{"id": "c", "type": "function",
                                             "function": {"name": call.name, "arguments": json.dumps(arguments)}}]}


@pytest.mark.slow  # the module's task sets
def test_the_combined_evals_score_form_and_content_and_bind_only_when_named(learn):
    from tracegym.harnesses.taskrun import TaskScorers

    _, task_set, plain = learn
    scorers = TaskScorers(task_set)  # as a training run's samplers build them: no store
    for fmt, name, hollow in (("mini-swe-agent", "one_bash_action_and_content", "```bash\necho ok\n```"),
                              ("tau-bench", "handles_tool_error_and_content", "I'm sorry, I can't help with that.")):
        task = next(t for t in task_set.tasks if t.provenance.format == fmt
                    and t.reference_steps[0].source == "recorded_turn")
        assert [e.name for e in task.scorer.evals] == [name]
        recorded = scorers(task).score(task.trajectory([task.provenance.recorded_turn.model_dump(exclude_none=True)],
                                                       malformed_tool_calls=0))
        assert recorded.reward == 1.0 and set(recorded.components) == {name.split("_and_")[0], "follows_success"}
        shaped = scorers(task).score(task.trajectory([{"role": "assistant", "content": hollow}],
                                                     malformed_tool_calls=0))
        assert shaped.components[name.split("_and_")[0]] == 1.0 and 0.5 <= shaped.reward < 0.75
    # Without --eval the form checks alone are bound, and the task files carry no reference steps.
    assert {e.name for t in plain.tasks for e in t.scorer.evals} == {"one_bash_action", "handles_tool_error"}
    assert not any(t.reference_steps for t in plain.tasks)


@pytest.mark.slow  # the module's store
def test_evals_check_compares_recorded_turns_with_successful_trials(cli, learn):
    store, _, _ = learn
    result = cli("evals", "check", "--evals", EVALS, "--eval", "follows_success", "--format", "tau-bench",
                 "--store", store, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["scored"] > 0 and report["scored"] + report["scorer_errors"] == report["traces"]
    assert all("no other successful attempt" in e["error"] for e in report["errors"])
    # A trace's reward does not depend on which traces the scorer saw before (it caches each task's successes).
    evals = load_evals(EVALS)
    with open_store(store, read_only=True) as st:
        traces = list(iter_recorded(st, "format = 'tau-bench' AND outcome IS NOT NULL"))
        forward, backward = (build_scorer(evals.get("follows_success"), ScorerContext(evals.folder, st), evals)
                             for _ in range(2))
        ahead = {t.trace_id: forward.score(t.trajectory()).reward for t in traces}
        behind = {t.trace_id: backward.score(t.trajectory()).reward for t in reversed(traces)}
    assert ahead == behind and sum(r is not None for r in ahead.values()) == report["scored"]
