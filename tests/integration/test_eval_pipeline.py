"""Train a few steps, evaluate base and checkpoints, and check the per-cluster table and the lineage
against the store, recomputed here in SQL."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.integration.train_workspace import Workspace, copy_workspace, tiny_config, write_config


@pytest.fixture(scope="module")
def trained(
    tmp_path_factory: pytest.TempPathFactory, tau_workspace_template: Workspace
) -> tuple[Workspace, Path, dict[str, Any]]:
    """A workspace, a run of 2 warm-start and 4 GRPO steps, and `tracegym eval RUN` (base and final checkpoint)."""
    from typer.testing import CliRunner

    from tracegym.cli import app

    root = tmp_path_factory.mktemp("evalpipe")
    ws = copy_workspace(tau_workspace_template, root)
    config = write_config(root / "run.yaml", tiny_config(ws, root / "run"))
    runner = CliRunner()
    result = runner.invoke(app, ["train", "--allow-unredacted",
                                 str(config), "--store", str(ws.store)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    result = runner.invoke(app, ["eval", str(root / "run"), str(root / "run" / "checkpoints" / "step-000002"),
                                 "--tasks", str(ws.task_set), "--samples", "3", "--store", str(ws.store), "--json"],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return ws, root / "run", json.loads(result.stdout)


def _per_task(store: Any, eval_id: str, checkpoint_id: str) -> dict[str, dict[str, Any]]:
    rows = store.query("SELECT task_id, any_value(cluster_id) AS cluster_id, avg(coalesce(reward, 0)) AS reward, "
                       "avg(CAST(pass AS DOUBLE)) AS pass_rate, count(*) AS n FROM eval_results "
                       "WHERE eval_id = ? AND checkpoint_id = ? GROUP BY task_id", [eval_id, checkpoint_id])
    return {r["task_id"]: r for r in rows}


@pytest.mark.slow
def test_per_cluster_table_matches_the_store(trained: tuple[Workspace, Path, dict[str, Any]]) -> None:
    from tracegym.store import open_store

    ws, _, table = trained
    assert table["base"] == "tiny-model" and table["models"] == ["run/step-000006", "run/step-000002"]
    assert all(c["ran"] == c["total"] == table["tasks"] * 3 for c in table["counts"].values())
    with open_store(ws.store, read_only=True) as st:
        ids = {r["checkpoint"]: r["checkpoint_id"] for r in
               st.query("SELECT checkpoint, checkpoint_id FROM eval_models WHERE eval_id = ?", [table["eval_id"]])}
        figures = {label: _per_task(st, table["eval_id"], cid) for label, cid in ids.items()}
        checkpoint_steps = {r["step"] for r in st.query(
            "SELECT DISTINCT step FROM eval_results WHERE eval_id = ? AND run_id IS NOT NULL", [table["eval_id"]])}
    assert checkpoint_steps == {2, 6}
    base = figures["tiny-model"]
    assert all(f["n"] == 3 for per_task in figures.values() for f in per_task.values())
    clusters = {f["cluster_id"] for f in base.values()}
    groups = {g["cluster_id"]: g for g in table["groups"]}
    assert set(groups) == clusters | {None} and len(clusters) >= 2
    for cluster_id, group in groups.items():
        tasks = [t for t, f in base.items() if cluster_id is None or f["cluster_id"] == cluster_id]
        assert group["tasks"] == len(tasks)
        for row in group["rows"]:
            mine = figures[row["model"]]
            expected = sum(mine[t]["reward"] for t in tasks) / len(tasks)
            assert row["reward"]["value"] == pytest.approx(expected)
            assert row["reward"]["low"] <= row["reward"]["value"] <= row["reward"]["high"]
            assert row["pass@1"]["value"] == pytest.approx(sum(mine[t]["pass_rate"] for t in tasks) / len(tasks))
            if row["model"] == "tiny-model":
                assert row["change"] is None
                continue
            diff = expected - sum(base[t]["reward"] for t in tasks) / len(tasks)
            assert row["change"]["reward"]["diff"] == pytest.approx(diff)
            assert 0 < row["change"]["reward"]["p_value"] <= 1
    expected_regressions = sorted((label, t) for label, per_task in figures.items() if label != "tiny-model"
                                  for t, f in per_task.items() if base[t]["pass_rate"] >= 0.5 > f["pass_rate"])
    assert sorted((r["model"], r["task_id"]) for r in table["regressions"]) == expected_regressions


@pytest.mark.slow
def test_lineage_follows_a_cluster_to_eval_results(trained: tuple[Workspace, Path, dict[str, Any]], cli) -> None:
    from tracegym.store import open_store

    ws, run_dir, table = trained
    run_id = json.loads((run_dir / "run.json").read_text())["run_id"]
    with open_store(ws.store, read_only=True) as st:
        # The cluster the run trained on most, and held-out tasks of it that were evaluated.
        cluster = st.scalar("SELECT t.cluster_id FROM rollouts r JOIN tasks t USING (task_set_id, task_id) "
                            "WHERE r.run_id = ? AND t.cluster_id IN (SELECT cluster_id FROM eval_results) "
                            "GROUP BY 1 ORDER BY count(*) DESC LIMIT 1", [run_id])
        view = st.query("SELECT * FROM lineage WHERE cluster_id = ?", [cluster])
        trained_on = st.query("SELECT task_id, count(*) FILTER (WHERE train_use = 'trained') AS n, "
                              "avg(reward) FILTER (WHERE train_use = 'trained') AS reward, count(*) AS sampled "
                              "FROM rollouts WHERE run_id = ? AND task_id IN (SELECT task_id FROM tasks "
                              "WHERE cluster_id = ?) GROUP BY task_id", [run_id, cluster])
        steps = [r["step"] for r in st.query("SELECT step FROM checkpoints WHERE run_id = ? ORDER BY step", [run_id])]
        final_id = st.scalar("SELECT checkpoint_id FROM eval_models WHERE eval_id = ? AND step = 6",
                             [table["eval_id"]])
        evaluated = _per_task(st, table["eval_id"], final_id)
        base_id = st.scalar("SELECT checkpoint_id FROM eval_models WHERE eval_id = ? AND base_checkpoint_id IS NULL",
                            [table["eval_id"]])
        base = _per_task(st, table["eval_id"], base_id)
    assert cluster is not None and trained_on
    assert {r["run_id"] for r in view} == {run_id}
    assert sorted({r["checkpoint_step"] for r in view}) == steps
    for t in trained_on:
        rows = [r for r in view if r["task_id"] == t["task_id"]]
        assert rows and all(r["train_rollouts"] == t["n"] and r["sampled_rollouts"] == t["sampled"] for r in rows)
        assert all(r["train_reward"] == pytest.approx(t["reward"]) if t["n"] else
                   r["train_reward"] is None for r in rows)
    final_rows = [r for r in view if r["checkpoint_step"] == 6 and r["eval_samples"] is not None]
    assert final_rows, "the final checkpoint's results on the cluster's held-out tasks are in the view"
    for r in final_rows:
        assert r["split"] == "heldout" and r["eval_samples"] == 3 and r["eval_id"] == table["eval_id"]
        assert r["eval_reward"] == pytest.approx(evaluated[r["task_id"]]["reward"])
        assert r["base_eval_reward"] == pytest.approx(base[r["task_id"]]["reward"])

    result = cli("lineage", cluster[:6], "--store", ws.store, "--json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["cluster"]["cluster_id"] == cluster
    assert summary["runs"][0]["rollouts"] == sum(t["n"] for t in trained_on)
    final = next(c for c in summary["checkpoints"] if c["step"] == 6)
    assert final["tasks"] == len(final_rows)
    assert final["eval_reward"] == pytest.approx(sum(r["eval_reward"] for r in final_rows) / len(final_rows))


@pytest.mark.slow
def test_runs_list_and_show_know_the_evaluation(trained: tuple[Workspace, Path, dict[str, Any]], cli,
                                                tmp_path: Path) -> None:
    ws, run_dir, table = trained
    listed = json.loads(cli("runs", "list", "--store", ws.store, "--json").stdout)
    assert listed[0]["status"] == "completed" and listed[0]["evaluations"] == 1 and listed[0]["step"] == 6
    shown = cli("runs", "show", str(run_dir), "--plot", tmp_path / "plots", "--store", ws.store, "--json")
    assert shown.exit_code == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["evaluation"]["eval_id"] == table["eval_id"]
    assert {m["key"] for m in data["metrics"]} >= {"reward/mean", "train/grad_norm", "warmup/loss"}
    assert {p.name for p in (tmp_path / "plots").iterdir()} >= {"reward.png", "eval.png", "grad_norm.png"}


class _FakeChatCompletions(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that always answers 'Hello.' (the remote API is the true boundary)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "Hello."},
                                        "finish_reason": "stop"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeChatCompletions)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


@pytest.mark.slow
def test_an_api_baseline_is_compared_and_earlier_samples_are_reused(
        trained: tuple[Workspace, Path, dict[str, Any]], endpoint: str, cli) -> None:
    ws, run_dir, table = trained
    result = cli("eval", run_dir, "--api", f"fake-model@{endpoint}", "--tasks", ws.task_set, "--samples", "3",
                 "--store", ws.store, "--json")
    assert result.exit_code == 0, result.stderr
    again = json.loads(result.stdout)
    assert again["eval_id"] == table["eval_id"], "same task set and settings: the same evaluation"
    counts = again["counts"]
    assert counts["tiny-model"]["ran"] == 0 and counts["run/step-000006"]["ran"] == 0
    api_label = next(label for label in counts if label.startswith("fake-model@"))
    assert counts[api_label]["ran"] == again["tasks"] * 3
    overall = again["groups"][0]["rows"]
    api = next(r for r in overall if r["model"] == api_label)
    # 'Hello.' starts with a capital letter: the match eval passes every sample.
    assert api["reward"]["value"] == 1.0 and api["pass@1"]["value"] == 1.0 and api["errors"] == 0
    assert api["change"]["reward"]["diff"] == pytest.approx(1.0 - overall[0]["reward"]["value"])


@pytest.mark.slow
def test_auto_precision_is_recorded_as_what_it_resolves_to(trained: tuple[Workspace, Path, dict[str, Any]],
                                                           cli) -> None:
    from tracegym.models.precision import resolve_precision
    from tracegym.store import open_store

    ws, run_dir, table = trained  # evaluated in fp32
    result = cli("eval", run_dir, "--tasks", ws.task_set, "--samples", "3", "--store", ws.store, "--json",
                 "--precision", "auto")
    assert result.exit_code == 0, result.stderr
    again = json.loads(result.stdout)
    with open_store(ws.store, read_only=True) as st:
        settings = json.loads(st.query("SELECT settings FROM evaluations WHERE eval_id = ?",
                                       [again["eval_id"]])[0]["settings"])
    resolved = resolve_precision("auto", "cpu")
    assert settings["precision"] == resolved != "auto"
    # The precision decides samples, so the eval id (and which stored samples are reused) follows it.
    assert (again["eval_id"] == table["eval_id"]) == (resolved == "fp32")


@pytest.mark.slow
def test_groups_too_small_for_a_verdict_are_named(trained: tuple[Workspace, Path, dict[str, Any]], cli) -> None:
    ws, run_dir, table = trained
    small = [g["cluster_id"] for g in table["groups"] if g["tasks"] < 6]
    assert small, "the tiny workspace has clusters of fewer than 6 held-out tasks"
    result = cli("eval", run_dir, "--tasks", ws.task_set, "--samples", "3", "--store", ws.store)
    said = " ".join(result.stderr.split())
    assert result.exit_code == 0 and "Too few tasks to tell any change from noise" in said
    assert all(c in said for c in small if c is not None) and "at least 6 tasks" in said


@pytest.mark.slow
def test_the_header_says_why_fewer_tasks_are_evaluated_than_held_out(
        trained: tuple[Workspace, Path, dict[str, Any]], cli) -> None:
    """The run's config filters tasks by detector, caps them at 8 and leaves out prompts over 400 tokens; the
    header says how many of the held-out split that left out, and why (it said only 'N tasks')."""
    from tracegym.tasks.taskset import load_task_set

    ws, run_dir, table = trained
    held_out = len(load_task_set(ws.task_set).split("heldout"))
    evaluated = table["groups"][0]["tasks"]
    result = cli("eval", run_dir, "--tasks", ws.task_set, "--samples", "3", "--store", ws.store)
    said = " ".join(result.stderr.split())
    assert result.exit_code == 0 and evaluated < held_out
    assert f"on {evaluated} heldout tasks" in said and f"{held_out - evaluated} of the {held_out} left out: " in said
    assert "outside the config's tasks.clusters, detectors or max_tasks" in said
