"""`rollouts list/show` and `runs list/show` on rollouts stored by the real `tracegym run` path: τ-bench traces
ingested and mined, tasks generated, a tiny model run through the replay harness."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.conftest import TRACES, on_a_terminal
from tracegym.cli import app

pytestmark = pytest.mark.slow  # the module's rollouts come from `tracegym run` end to end

EVALS = Path(__file__).resolve().parents[2] / "examples" / "evals.yaml"
HOSTILE = "ok \x1b]52;c;ZXZpbA==\x07 \x1b[2J\x9b31m \u202eevil"


def _cli(*args: Any) -> Any:
    result = CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    """Store, task-set folder and `tracegym run --json` summary: 2 tasks x 2 samples by a tiny model."""
    from tracegym.models.tiny import smollm2_tokenizer, tiny_llama
    from tracegym.store import open_store

    if not TRACES.is_dir():
        pytest.skip(f"real traces not found at {TRACES}")
    root = tmp_path_factory.mktemp("viewers")
    store = root / "store.duckdb"
    _cli("ingest", TRACES / "tau-bench", "--store", store)
    _cli("mine", "failures", "--store", store)
    with open_store(store, read_only=True) as st:
        cluster = st.scalar("SELECT cluster_id FROM clusters WHERE detector = 'tool_error' ORDER BY rank LIMIT 1")
    tasks = root / "tasks" / "tau"
    # Ungated: under replay few failure cuts can earn tau_reward (docs/reward-gates.md); the viewers are the point.
    _cli("tasks", "generate", "--allow-unredacted", "--no-gates", "--evals", EVALS, "--out", tasks, "--store", store,
         "--cluster", cluster, "--context", "last-user", "--system-max-chars", "600")
    tokenizer = smollm2_tokenizer()
    model = tiny_llama(len(tokenizer), seed=1, eos_token_id=tokenizer.eos_token_id, max_positions=8192)
    model.save_pretrained(root / "tiny")
    tokenizer.save_pretrained(root / "tiny")
    summary = json.loads(_cli("run", tasks, "--model", root / "tiny", "--limit", 2, "-k", 2, "--max-turns", 2,
                              "--max-new-tokens", 8, "--seed", 3, "--store", store, "--json").stdout)
    return store, tasks, summary


def test_runs_list_and_show_cover_tracegym_run(ran):
    store, _, summary = ran
    listed = json.loads(_cli("runs", "list", "--store", store, "--json").stdout)
    [row] = [r for r in listed if r["run_id"] == summary["run_id"]]
    assert row["kind"] == "run" and row["episodes"] == 4 and row["task_set_id"] == "tau"
    assert row["mean_reward"] == pytest.approx(summary["overall"]["mean_reward"])

    shown = json.loads(_cli("runs", "show", summary["run_id"][:-2], "--store", store, "--json").stdout)
    assert shown["run"]["run_id"] == summary["run_id"] and len(shown["rollouts"]) == 4
    expected = {t["task_id"]: t for t in summary["tasks"]}
    assert {t["task_id"] for t in shown["tasks"]} == set(expected)
    for task in shown["tasks"]:
        want = expected[task["task_id"]]
        assert (task["samples"], task["scored"], task["harness_errors"]) == (want["samples"], want["scored"],
                                                                            want["harness_errors"])
        assert task["mean_reward"] == pytest.approx(want["mean_reward"])
    text = _cli("runs", "show", summary["run_id"], "--store", store).stdout
    assert "(tracegym run)" in text and "Per task" in text


def test_rollouts_list_filters_by_run_task_and_reward(ran):
    store, _, summary = ran
    every = json.loads(_cli("rollouts", "list", "--run", summary["run_id"], "--store", store, "--json").stdout)
    assert len(every) == 4 and {r["kind"] for r in every} == {"run"}
    task = every[0]["task_id"]
    only = json.loads(_cli("rollouts", "list", "--task", task, "--store", store, "--json").stdout)
    assert {r["task_id"] for r in only} == {task} and len(only) == 2
    top = max(r["reward"] for r in every)
    high = json.loads(_cli("rollouts", "list", "--min-reward", top, "--store", store, "--json").stdout)
    assert sorted(r["rollout_id"] for r in high) == sorted(r["rollout_id"] for r in every if r["reward"] >= top)
    low = json.loads(_cli("rollouts", "list", "--max-reward", -1, "--store", store, "--json").stdout)
    assert low == []
    clash = CliRunner().invoke(app, ["rollouts", "list", "--unscored", "--min-reward", "0", "--store", str(store)])
    assert clash.exit_code == 2 and "--unscored" in clash.stderr


def test_rollouts_show_puts_the_reply_beside_the_recorded_turn(ran):
    from tracegym.episodes.rollout_table import read_rollouts
    from tracegym.store import open_store
    from tracegym.tasks.taskset import load_task_set

    store, tasks, summary = ran
    with open_store(store, read_only=True) as st:
        episode = read_rollouts(st, run_id=summary["run_id"])[0]
    spec = {t.task_id: t for t in load_task_set(tasks).tasks}[episode.task_id]
    view = json.loads(_cli("rollouts", "show", episode.rollout_id[:10], "--store", store, "--json").stdout)
    assert view["rollout"]["rollout_id"] == episode.rollout_id and view["rollout"]["reward"] == episode.reward
    assert view["reply"] == episode.messages[episode.n_prompt_messages]
    assert view["recorded_turn"] == spec.provenance.recorded_turn.model_dump(exclude_none=True)
    assert view["source"]["trace_id"] == spec.provenance.trace_id
    assert view["scorer_details"] == episode.scorer_details and view["scorer_details"]

    text = _cli("rollouts", "show", episode.rollout_id, "--store", store).stdout
    assert "model's reply" in text and f"trace {spec.provenance.trace_id}" in text
    recorded_call = spec.provenance.recorded_turn.tool_calls[0].function.name
    assert f"→ {recorded_call}(" in text and "Scorer details" in text
    missing = CliRunner().invoke(app, ["rollouts", "show", "nope", "--store", str(store)])
    assert missing.exit_code == 2 and "No rollout 'nope'" in missing.stderr


def test_rollouts_show_neutralises_hostile_model_output(ran, tmp_path):
    """A reply and scorer details holding terminal escapes (clipboard write, screen clear, C1 CSI, bidi
    override) are shown as escapes, in rich output on a real terminal and in JSON."""
    import shutil

    from tracegym.store import open_store

    store, _, summary = ran
    copy = tmp_path / "store.duckdb"
    shutil.copyfile(store, copy)
    with open_store(copy) as st:
        rollout_id, messages, n_prompt = st.con.execute(
            "SELECT rollout_id, messages, n_prompt_messages FROM rollouts WHERE run_id = ? LIMIT 1",
            [summary["run_id"]]).fetchone()
        messages = json.loads(messages)
        messages[n_prompt] = {"role": "assistant", "content": HOSTILE}
        st.con.execute("UPDATE rollouts SET messages = ?, scorer_details = ? WHERE rollout_id = ?",
                       [json.dumps(messages), json.dumps({"judge": {"why": HOSTILE}}), rollout_id])

    shown = on_a_terminal("rollouts", "show", rollout_id, "--store", copy)
    for raw in ("\x1b]52", "\x1b[2J", "\x9b", "\u202e", "\x07"):
        assert raw not in shown
    assert shown.count("\\x1b]52;c;ZXZpbA==\\x07") == 2 and "\\u202eevil" in shown
    as_json = _cli("rollouts", "show", rollout_id, "--store", copy, "--json").stdout
    assert not any(c in as_json for c in ("\x1b", "\x9b", "\u202e", "\x07"))
    view = json.loads(as_json)
    assert view["reply"]["content"] == HOSTILE and view["scorer_details"]["judge"]["why"] == HOSTILE
