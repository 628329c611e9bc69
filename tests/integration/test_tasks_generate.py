"""`tracegym tasks generate` on the real τ-bench runs: valid, traceable, round-tripping, deterministic tasks.

Generated with --no-gates: under replay, few τ-bench failure cuts can earn `tau_reward` (the recording cannot
answer the gold writes a failed run never made), and these tests are about what generation writes; the gates
have tests of their own (test_task_gates.py)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tracegym.evals.scorers import ScorerContext, build_scorer
from tracegym.evals.scorers.config import load_evals
from tracegym.evals.scorers.recorded import iter_recorded
from tracegym.store import open_store
from tracegym.tasks import dump_spec, load_spec, load_task_set

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EVALS = EXAMPLES / "evals.yaml"
GENERATE = ("tasks", "generate", "--no-gates", "--allow-unredacted")


@pytest.fixture(scope="module")
def tau_store_built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """τ-bench ingested, with two hand-made clusters: every failed run, and every tool error; built once."""
    from typer.testing import CliRunner

    from tests.conftest import TRACES
    from tracegym.cli import app

    if not TRACES.is_dir():
        pytest.skip(f"real traces not found at {TRACES} (they live in ../shared beside the checkout)")
    store_path = tmp_path_factory.mktemp("tau-store") / "store.duckdb"
    ingested = CliRunner().invoke(app, ["ingest", str(TRACES / "tau-bench"), "--store", str(store_path)])
    assert ingested.exit_code == 0, ingested.output
    with open_store(store_path) as st:
        st.con.execute("""
            INSERT INTO failures (trace_id, detector, signature, evidence, message_idx, cluster_id)
            SELECT trace_id, 'outcome', 'trace outcome: failure', 'reward 0', NULL, 'c-outcome'
            FROM traces WHERE outcome = 'failure';
            INSERT INTO failures (trace_id, detector, signature, evidence, message_idx, cluster_id)
            SELECT trace_id, 'tool_error', 'tool error', left(result, 80), result_message_idx, 'c-toolerr'
            FROM tool_calls WHERE is_error AND result_message_idx IS NOT NULL;
            INSERT INTO clusters (cluster_id, detector, signature, n_traces, n_findings, rank, example_trace_id)
            SELECT cluster_id, any_value(detector), any_value(signature), count(DISTINCT trace_id), count(*),
                   CASE cluster_id WHEN 'c-outcome' THEN 1 ELSE 2 END, min(trace_id)
            FROM failures GROUP BY cluster_id;
        """)
    assert not store_path.with_name(store_path.name + ".wal").exists()  # closed: the one file is the whole store
    return store_path


@pytest.fixture
def tau_store(tau_store_built: Path, store_path: Path) -> Path:
    """A private copy of the built store (a copy takes milliseconds, an ingest seconds): tests write to it."""
    shutil.copyfile(tau_store_built, store_path)
    return store_path


def _generate(cli, store: Path, out: Path, *args: str) -> dict:
    result = cli(*GENERATE, "--evals", EVALS, "--out", out, "--store", store, "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow  # validates and round-trips every task of two clusters
def test_every_task_validates_names_its_trace_and_round_trips(cli, tau_store, tmp_path):
    summary = _generate(cli, tau_store, tmp_path / "tasks" / "tau", "--cluster", "c-outcome", "--cluster", "c-tool")
    task_set = load_task_set(tmp_path / "tasks" / "tau")  # validates every file against TaskSpec
    assert summary["tasks"] == len(task_set.tasks) > 100
    with open_store(tau_store, read_only=True) as st:
        traces = {r["trace_id"] for r in st.query("SELECT trace_id FROM traces")}
        registered = st.query("SELECT task_id, split, source_trace_id, path FROM tasks WHERE task_set_id = 'tau'")
        assert st.scalar("SELECT n_tasks FROM task_sets WHERE task_set_id = 'tau'") == len(task_set.tasks)
    assert {r["task_id"] for r in registered} == {t.task_id for t in task_set.tasks}
    for spec, entry in zip(task_set.tasks, task_set.manifest.tasks, strict=True):
        assert spec.provenance.trace_id in traces and entry.trace_id == spec.provenance.trace_id
        assert load_spec(Path("again.yaml"), dump_spec(spec)) == spec
        assert spec.harness == "replay" and spec.scorer.evals[0].name == "tau_reward"
    assert {t.provenance.cluster_id for t in task_set.tasks} == {"c-outcome", "c-toolerr"}


@pytest.mark.slow  # generates three task sets
def test_generation_is_deterministic_for_the_same_store_and_seed(cli, tau_store, tmp_path):
    args = ("--cluster", "c-toolerr", "--name", "tau", "--seed", "7", "--max-tasks-per-cluster", "30")
    _generate(cli, tau_store, tmp_path / "a", *args)
    _generate(cli, tau_store, tmp_path / "b", *args)
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    _generate(cli, tau_store, tmp_path / "c", "--cluster", "c-toolerr", "--name", "tau", "--seed", "8",
              "--max-tasks-per-cluster", "30")
    first, other = load_task_set(tmp_path / "a"), load_task_set(tmp_path / "c")
    assert [(t.task_id, t.split) for t in first.tasks] != [(t.task_id, t.split) for t in other.tasks]


@pytest.mark.slow  # generates and compares every held-out task with training
def test_heldout_tasks_have_no_twin_in_training(cli, tau_store, tmp_path):
    _generate(cli, tau_store, tmp_path / "s", "--cluster", "c-outcome", "--cluster", "c-toolerr", "--heldout", "0.3")
    tasks = load_task_set(tmp_path / "s").tasks
    sides: dict[str, set[str]] = {}
    for t in tasks:
        sides.setdefault(t.provenance.source_task, set()).add(t.split)
    assert all(len(s) == 1 for s in sides.values())
    held = sum(1 for t in tasks if t.split == "heldout")
    assert 0.1 < held / len(tasks) < 0.5


def test_near_duplicates_are_merged_into_one_task(cli, tau_store, tmp_path):
    summary = _generate(cli, tau_store, tmp_path / "d", "--cluster", "c-outcome")
    tasks = load_task_set(tmp_path / "d").tasks
    merged = [t for t in tasks if t.provenance.duplicates]
    assert merged and summary["drafts_merged"] == sum(len(t.provenance.duplicates) for t in merged)
    with open_store(tau_store, read_only=True) as st:
        by_trace = {t.trace_id: t for t in iter_recorded(st)}
    for task in merged:
        for dup in task.provenance.duplicates:
            twin = by_trace[dup.trace_id]
            assert twin.task_key() == task.provenance.source_task
            # Same first request, up to case and spacing: the recorded conversations really are twins.
            first_user = next(m["content"] for m in twin.messages if m["role"] == "user")
            assert " ".join(first_user.casefold().split()) == " ".join(
                task.prompt.messages[0].content.casefold().split())


@pytest.mark.slow
def test_cut_modes_and_short_contexts(cli, tau_store, tmp_path):
    one = _generate(cli, tau_store, tmp_path / "one", "--cluster", "c-toolerr")
    turns = _generate(cli, tau_store, tmp_path / "turns", "--cluster", "c-toolerr", "--cuts", "turns",
                      "--max-cuts", "3")
    assert one["tasks"] < turns["tasks"] <= 3 * one["failures"]
    _generate(cli, tau_store, tmp_path / "short", "--cluster", "c-toolerr", "--context", "last-user",
              "--system-max-chars", "400")
    for t in load_task_set(tmp_path / "short").tasks:
        assert t.prompt.context == "last-user" and t.prompt.messages[0].role == "user"
        assert len(t.prompt.system) < 460 and t.prompt.system_chars > 400
    full = {t.provenance.trace_id: t for t in load_task_set(tmp_path / "one").tasks}
    short = {t.provenance.trace_id: t for t in load_task_set(tmp_path / "short").tasks}
    assert sum(t.prompt.dropped_messages for t in short.values()) > 0
    assert all(len(short[k].prompt.messages) <= len(full[k].prompt.messages) for k in short)


def test_tools_replay_and_the_recorded_turn(cli, tau_store, tmp_path):
    _generate(cli, tau_store, tmp_path / "r", "--cluster", "c-toolerr")
    task = load_task_set(tmp_path / "r").tasks[0]
    tools = {t.name: t for t in task.tools}
    assert {"book_reservation", "get_user_details", "cancel_reservation"} <= set(tools)
    assert tools["get_user_details"].source == "inferred"
    assert tools["get_user_details"].parameters["required"] == ["user_id"]
    assert task.replay and all(c.result is not None for c in task.replay)
    turn = task.provenance.recorded_turn
    assert turn.role == "assistant" and turn.tool_calls  # the failing call the agent made
    assert task.provenance.failure_message_idx == task.provenance.cut_message_idx + 1


def test_recovery_cuts_end_the_prompt_with_the_error(cli, tau_store, tmp_path):
    _generate(cli, tau_store, tmp_path / "rec", "--cluster", "c-toolerr", "--cuts", "recovery")
    tasks = load_task_set(tmp_path / "rec").tasks
    assert tasks
    for task in tasks:
        last = task.prompt.messages[-1]
        assert last.role == "tool" and last.content.startswith("Error")  # what the agent now answers
        assert task.provenance.cut_message_idx > task.provenance.failure_message_idx


def test_tasks_score_like_the_traces_they_came_from(cli, tau_store, tmp_path):
    """The prompt plus the recorded rest of the trace, scored from the task set, equals scoring the trace."""
    _generate(cli, tau_store, tmp_path / "sc", "--cluster", "c-outcome", "--max-tasks-per-cluster", "40")
    task_set = load_task_set(tmp_path / "sc")
    evals = load_evals(task_set.evals_path)
    gold = build_scorer(evals.get("gold_actions"), ScorerContext(evals.folder), evals)
    with open_store(tau_store, read_only=True) as st:
        traces = {t.trace_id: t for t in iter_recorded(st)}
    rewards = []
    for task in task_set.tasks:
        trace = traces[task.provenance.trace_id]
        attempt = task.trajectory(trace.openai_messages()[task.provenance.cut_message_idx:])
        bound = task_set.scorer(task)  # tau_reward: gold actions and outputs, by weight
        assert bound.score(attempt) == bound.score(trace.trajectory())
        assert gold.score(attempt) == gold.score(trace.trajectory())
        rewards.append(bound.score(attempt).reward)
    assert len(task_set.tasks) == 40 and set(rewards) <= {0.0, 0.5, 1.0} and len(set(rewards)) > 1


def _reply(tool: str) -> list[dict]:
    return [{"role": "assistant", "content": None,
             "tool_calls": [{"id": "x", "type": "function", "function": {"name": tool, "arguments": "{}"}}]}]


def test_next_gold_tool_scores_what_the_trace_had_left_to_do(cli, tau_store, tmp_path):
    """examples/evals-train.yaml's two rewards on real tasks cut mid-episode: gold_tool pays any gold tool,
    next_gold_tool only one the trace had not yet called (successfully) before the cut."""
    out = tmp_path / "next"
    result = cli(*GENERATE, "--evals", EXAMPLES / "evals-train.yaml", "--eval", "next_gold_tool", "--out",
                 out, "--store", tau_store, "--cluster", "c-toolerr", "--context", "last-user")
    assert result.exit_code == 0, result.output
    task_set = load_task_set(out)
    evals = load_evals(task_set.evals_path)
    plain = build_scorer(evals.get("gold_tool"), ScorerContext(evals.folder), evals)
    done_checked = left_checked = 0
    for task in task_set.tasks:
        gold = [a["name"] for a in task.metadata["task"]["actions"]]
        made = [c.name for c in task.prior_calls()]
        left = [g for g in gold if gold.count(g) > made.count(g)]
        remaining = task_set.scorer(task)
        for tool in sorted(set(gold) - set(left)):  # every gold call of this tool was made before the cut
            attempt = task.trajectory(_reply(tool))
            assert (plain.score(attempt).reward, remaining.score(attempt).reward) == (1.0, 0.0), (task.task_id, tool)
            done_checked += 1
        if left:
            attempt = task.trajectory(_reply(left[0]))
            assert plain.score(attempt).reward == remaining.score(attempt).reward == 1.0, task.task_id
            left_checked += 1
        text = task.trajectory([{"role": "assistant", "content": "Done."}])
        assert remaining.score(text).reward == float(not left) and plain.score(text).reward == float(not gold)
    assert done_checked > 20 and left_checked > 20


def test_eval_binding(cli, tau_store, tmp_path):
    _generate(cli, tau_store, tmp_path / "w", "--cluster", "c-toolerr", "--eval", "gold_actions:2", "--eval", "outputs")
    evals = load_task_set(tmp_path / "w").tasks[0].scorer.evals
    assert [(e.name, e.weight) for e in evals] == [("gold_actions", 2.0), ("outputs", 1.0)]
    only_chat = tmp_path / "chat-evals.yaml"
    only_chat.write_text("evals:\n  - name: a\n    kind: match\n    mode: exact\n    expected: x\n"
                         "    applies_to: {harnesses: [chat]}\n")
    result = cli(*GENERATE, "--evals", only_chat, "--out", tmp_path / "x", "--store", tau_store,
                 "--cluster", "c-toolerr")
    assert result.exit_code == 2 and "No eval in" in result.stderr and not (tmp_path / "x").exists()


def test_templates_can_be_overridden_and_are_checked(cli, tau_store, tmp_path):
    from tracegym.tasks.render import DEFAULT_TEMPLATES

    mine = tmp_path / "tpl"
    mine.mkdir()
    text = (DEFAULT_TEMPLATES / "task.yaml.j2").read_text()
    (mine / "task.yaml.j2").write_text("# Reviewed by the airline team; trace: {{ spec.provenance.trace_id }}\n" + text)
    _generate(cli, tau_store, tmp_path / "t", "--cluster", "c-toolerr", "--templates", mine)
    first = sorted((tmp_path / "t" / "tasks").glob("*.yaml"))[0]
    assert first.read_text().startswith("# Reviewed by the airline team; trace: tau-bench:")
    (mine / "task.yaml.j2").write_text(text.replace('{{ data | pick("metadata") | yaml }}', ""))
    dropped = cli(*GENERATE, "--evals", EVALS, "--out", tmp_path / "t2", "--store", tau_store,
                  "--cluster", "c-toolerr", "--templates", mine)
    assert dropped.exit_code == 2 and "loads as something else" in dropped.stderr
    (mine / "task.yaml.j2").write_text("{{ spec.task_id }\n")
    broken = cli(*GENERATE, "--evals", EVALS, "--out", tmp_path / "t3", "--store", tau_store,
                 "--cluster", "c-toolerr", "--templates", mine)
    assert broken.exit_code == 2 and "task.yaml.j2:1: template error" in broken.stderr
    assert not (tmp_path / "t2").exists() and not (tmp_path / "t3").exists()


def test_user_errors_name_the_file_line_and_fix(cli, tau_store, tmp_path):
    bad = tmp_path / "evals.yaml"
    bad.write_text("evals:\n  - name: gold\n    kind: tool_calls\n    expected_from: metadata.task.actions\n"
                   "    partial: true\n")
    result = cli(*GENERATE, "--evals", bad, "--out", tmp_path / "o", "--store", tau_store, "--top", "1")
    assert result.exit_code == 2
    assert f"{bad}:5: evals.0.tool_calls.partial: Extra inputs are not permitted" in result.stderr
    unknown = cli(*GENERATE, "--evals", EVALS, "--out", tmp_path / "o", "--store", tau_store,
                  "--cluster", "c-outcone")
    assert unknown.exit_code == 2 and "Did you mean 'c-outcome'" in unknown.stderr
    _generate(cli, tau_store, tmp_path / "o", "--top", "1", "--max-tasks-per-cluster", "3")
    again = cli(*GENERATE, "--evals", EVALS, "--out", tmp_path / "o", "--store", tau_store, "--top", "1")
    assert again.exit_code == 2 and "already exists. Fix: pass --force" in again.stderr


def test_no_clusters_says_to_mine_first(cli, traces_dir, store_path, tmp_path):
    cli("ingest", traces_dir / "tau-bench", "--store", store_path)
    result = cli(*GENERATE, "--evals", EVALS, "--out", tmp_path / "o", "--store", store_path, "--top", "2")
    assert result.exit_code == 2 and "run `tracegym mine failures` first" in result.stderr


def test_list_and_show(cli, tau_store, tmp_path):
    _generate(cli, tau_store, tmp_path / "ls", "--cluster", "c-toolerr")
    sets = json.loads(cli("tasks", "list", "--store", tau_store, "--json").stdout)
    assert [s["name"] for s in sets] == ["ls"]
    tasks = json.loads(cli("tasks", "list", "ls", "--store", tau_store, "--json").stdout)
    shown = cli("tasks", "show", tasks[0]["task_id"], "--store", tau_store)
    assert shown.exit_code == 0 and f"task_id: {tasks[0]['task_id']}" in shown.stdout
    assert json.loads(cli("tasks", "show", tasks[0]["task_id"], "--store", tau_store, "--json").stdout)[
        "provenance"]["trace_id"] == tasks[0]["source_trace_id"]


@pytest.mark.slow
def test_ingest_mine_generate_end_to_end(cli, traces_dir, store_path, tmp_path):
    assert cli("ingest", traces_dir / "tau-bench", "--store", store_path).exit_code == 0
    mined = cli("mine", "failures", "--store", store_path, "--json")
    assert mined.exit_code == 0, mined.output
    summary = _generate(cli, store_path, tmp_path / "mined", "--top", "3", "--context", "last-user")
    task_set = load_task_set(tmp_path / "mined")
    ranked = json.loads(mined.stdout)["clusters"][:3]
    assert [c.cluster_id for c in task_set.manifest.clusters] == [c["cluster_id"] for c in ranked]
    assert summary["tasks"] == len(task_set.tasks) > 0
    assert all(t.provenance.cluster_id in {c["cluster_id"] for c in ranked} for t in task_set.tasks)
    # Every chosen cluster is covered: by tasks of its own, or merged into another cluster's task at the same cut.
    covered = {t.provenance.cluster_id for t in task_set.tasks}
    covered |= {d.cluster_id for t in task_set.tasks for d in t.provenance.duplicates}
    assert covered == {c["cluster_id"] for c in ranked}


def test_tau2_bench_failures_become_tasks_scored_by_the_example_tau2_eval(cli, fixtures_dir, store_path, tmp_path):
    """τ²-bench results (a fixture written from its public schema) through ingest, mining and generation with the
    example evals: the tasks are bound to `tau2_actions`, which scores them as it scores their source traces."""
    assert cli("ingest", fixtures_dir / "tau2-bench" / "results.json", "--store", store_path).exit_code == 0
    assert cli("mine", "failures", "--store", store_path).exit_code == 0
    out = tmp_path / "tau2"
    result = cli(*GENERATE, "--out", out, "--evals", EVALS, "--top", "4", "--store", store_path)
    assert result.exit_code == 0, result.stderr
    task_set = load_task_set(out)
    assert task_set.tasks and all([e.name for e in t.scorer.evals] == ["tau2_actions"] for t in task_set.tasks)
    with open_store(store_path, read_only=True) as st:
        traces = {t.trace_id: t for t in iter_recorded(st)}
    for task in task_set.tasks:
        trace = traces[task.provenance.trace_id]
        attempt = task.trajectory(trace.openai_messages()[task.provenance.cut_message_idx:])
        assert task_set.scorer(task).score(attempt) == task_set.scorer(task).score(trace.trajectory())
    evals = load_evals(EVALS)
    scorer = build_scorer(evals.get("tau2_actions"), ScorerContext(evals.folder), evals)
    rewards = {trace_id: scorer.score(trace.trajectory()).reward for trace_id, trace in traces.items()}
    # Simulations 1 and 3 cancelled EHGLP3 as task 0's action says; simulation 2 first asked for business class,
    # then passed only the reservation id, which τ²-bench's rule compares: a match.
    assert rewards == {"0b6a2e6c-1f7e-4d8e-9d43-6f7a5b1c0a01": 1.0, "0b6a2e6c-1f7e-4d8e-9d43-6f7a5b1c0a02": 1.0,
                       "0b6a2e6c-1f7e-4d8e-9d43-6f7a5b1c0a03": 1.0}


@pytest.mark.slow  # generates two task sets of two clusters
def test_a_split_that_holds_nothing_out_says_so(cli, tau_store, tmp_path):
    """Both clusters hold failures of most τ-bench tasks, so by cluster every task joins one group."""
    result = cli(*GENERATE, "--evals", EVALS, "--out", tmp_path / "c", "--store", tau_store, "--json",
                 "--cluster", "c-outcome", "--cluster", "c-toolerr", "--split-by", "cluster")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["heldout"] == 0
    assert "Nothing is held out" in result.stderr and "--split-by task" in result.stderr
    quiet = cli(*GENERATE, "--evals", EVALS, "--out", tmp_path / "t", "--store", tau_store, "--json",
                "--cluster", "c-outcome", "--cluster", "c-toolerr")
    assert json.loads(quiet.stdout)["heldout"] > 0 and "Nothing is held out" not in quiet.stderr
