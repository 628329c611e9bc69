"""Training reward per failure cluster and the curriculum over clusters, end to end: the tiny model trains on tasks of
two failure clusters mined from the real τ-bench traces. The per-cluster rows agree with the rollouts table, the chart
and the report show them, and a killed-and-resumed curriculum run draws exactly what an uninterrupted one drew."""

from __future__ import annotations

import json
import re
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_train_resume import _metrics, _rollouts, _signal_after_checkpoint
from tests.integration.train_workspace import Workspace, copy_workspace, holdable, tiny_config, write_config

pytestmark = pytest.mark.slow  # `tracegym train` end to end, curriculum and resumed runs


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, tau_workspace_template: Workspace) -> Workspace:
    return holdable(copy_workspace(tau_workspace_template, tmp_path_factory.mktemp("clusters")))


def _two_clusters(ws: Workspace) -> list[str]:
    """The two failure clusters with the most training tasks among those the tiny config's detectors found."""
    from tracegym.tasks.taskset import load_task_set

    counts = Counter(t.provenance.cluster_id for t in load_task_set(ws.task_set).split("train")
                     if t.provenance.detector in ("tool_error", "handoff"))
    return sorted(c for c, _ in counts.most_common(2))


def _config(ws: Workspace, run_dir: Path, tasks: dict[str, Any] | None = None, **overrides: Any) -> dict[str, Any]:
    return tiny_config(ws, run_dir, tasks={"clusters": _two_clusters(ws), "max_tasks": None, **(tasks or {})},
                       **overrides)


def _train(cli, ws: Workspace, tmp_path: Path, config: dict[str, Any]) -> str:
    result = cli("train", "--allow-unredacted",
                 write_config(tmp_path / "run.yaml", config), "--store", ws.store, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["run_id"]


def _per_cluster(ws: Workspace, run_id: str) -> tuple[dict[tuple[int, str], tuple[float, int]],
                                                      dict[tuple[int, str], tuple[float, int]]]:
    """(step, cluster) -> (mean reward, episodes): as stored in metrics, and as SQL over the rollouts table gives it."""
    from tracegym.store import open_store
    from tracegym.training.metrics import read_metrics

    with open_store(ws.store, read_only=True) as store:
        metrics = read_metrics(store, run_id)
        rows = store.query(
            "SELECT r.train_step AS step, coalesce(t.cluster_id, 'none') AS cluster, avg(r.reward) AS mean, "
            "count(*) AS n FROM rollouts r JOIN tasks t USING (task_set_id, task_id) "
            "WHERE r.run_id = ? AND r.train_use <> 'stale' AND r.reward IS NOT NULL GROUP BY ALL", [run_id])
    stored = {}
    for key, values in metrics.items():
        if match := re.fullmatch(r"cluster/(\w+)/reward", key):
            for step, mean in values.items():
                stored[(step, match[1])] = (mean, int(metrics[f"cluster/{match[1]}/episodes"][step]))
    return stored, {(r["step"], r["cluster"]): (r["mean"], r["n"]) for r in rows}


def _hollow_agrees(ws: Workspace, run_id: str) -> int:
    """Each stored cluster/<id>/hollow equals the share of that step's scored rollouts of the cluster that the
    hollow-reply detectors flag, judged again from the rollouts table; returns how many (step, cluster) pairs."""
    from tracegym.store import open_store
    from tracegym.training.metrics import read_metrics
    from tracegym.training.replies import hollow_findings

    with open_store(ws.store, read_only=True) as store:
        metrics = read_metrics(store, run_id)
        rows = store.query(
            "SELECT r.train_step AS step, coalesce(t.cluster_id, 'none') AS cluster, r.messages, r.n_prompt_messages, "
            "t.spec->'$.replay' AS replay FROM rollouts r JOIN tasks t USING (task_set_id, task_id) "
            "WHERE r.run_id = ? AND r.train_use <> 'stale' AND r.reward IS NOT NULL", [run_id])
    flagged: dict[tuple[int, str], list[bool]] = {}
    for r in rows:
        results = (c.get("result") for c in json.loads(r["replay"] or "[]"))
        found = hollow_findings(json.loads(r["messages"]), r["n_prompt_messages"], results)
        flagged.setdefault((r["step"], r["cluster"]), []).append(bool(found))
    for (step, cluster), flags in flagged.items():
        assert metrics[f"cluster/{cluster}/hollow"][step] == pytest.approx(sum(flags) / len(flags)), (step, cluster)
        assert 0 < metrics[f"cluster/{cluster}/distinct"][step] <= 1
        assert metrics[f"cluster/{cluster}/reply_tokens"][step] > 0
    return len(flagged)


def _assert_agree(stored: dict, from_rollouts: dict) -> None:
    assert stored.keys() == from_rollouts.keys()
    for key, (mean, n) in from_rollouts.items():
        assert stored[key] == (pytest.approx(mean), n), key


def test_per_cluster_rewards_agree_with_the_rollouts_and_show_in_the_chart_and_report(workspace: Workspace,
                                                                                      tmp_path: Path, cli) -> None:
    """With dynamic sampling, so that set-aside groups count as the module doc of training/cluster_reward.py says."""
    config = _config(workspace, tmp_path / "run", steps=3, checkpoint_every=3,
                     grpo={"dynamic_sampling": True, "max_sampling_rounds": 3})
    run_id = _train(cli, workspace, tmp_path, config)
    stored, from_rollouts = _per_cluster(workspace, run_id)
    _assert_agree(stored, from_rollouts)
    assert _hollow_agrees(workspace, run_id) == len(stored), "hollow shares beside every per-cluster reward"
    assert {step for step, _ in stored} == {3, 4, 5}
    assert {cluster for _, cluster in stored} == set(_two_clusters(workspace)), "both clusters were sampled"

    from tracegym.store import open_store

    with open_store(workspace.store, read_only=True) as store:
        uses = {r["train_use"] for r in store.query("SELECT DISTINCT train_use FROM rollouts WHERE run_id = ?",
                                                     [run_id])}
        curriculum = store.scalar("SELECT count(*) FROM metrics WHERE run_id = ? AND key LIKE 'curriculum/%'",
                                  [run_id])
    assert "set_aside" in uses, "the test covers set-aside groups"
    assert curriculum == 0, "uniform sampling records no curriculum weights"

    plots = tmp_path / "plots"
    shown = cli("runs", "show", tmp_path / "run", "--plot", plots, "--store", workspace.store, "--json")
    assert shown.exit_code == 0, shown.stderr
    assert (plots / "clusters.png").stat().st_size > 10_000
    rows = json.loads(shown.stdout)["clusters"]
    assert sorted(r["cluster_id"] for r in rows) == _two_clusters(workspace)
    assert all(r["signature"] and r["formats"] == "tau-bench" and r["draw_weight"] is None for r in rows)
    assert sum(r["episodes"] for r in rows) == sum(n for _, n in stored.values())
    text = cli("runs", "show", tmp_path / "run", "--store", workspace.store)
    assert "Training reward per failure cluster" in text.stdout and "cluster/" not in text.stdout
    named = text.stderr.replace("\n", "").split(" or ")[-1].strip()  # the run's config file, as `runs show` names it
    assert named.endswith("train_config.json") and Path(named).is_file()

    report = tmp_path / "report.html"
    assert cli("report", tmp_path / "run", "--out", report, "--store", workspace.store).exit_code == 0
    html = report.read_text()
    section = html[html.index("<h2>Training reward per failure cluster</h2>"):html.index("<h2>Charts</h2>")]
    assert 'alt="Training reward per failure cluster"' in section
    assert all(f"<code>{c}</code>" in section for c in _two_clusters(workspace))


def test_an_asynchronous_curriculum_run_stores_its_weights_and_per_cluster_rewards(workspace: Workspace,
                                                                                   tmp_path: Path, cli) -> None:
    """The sampler process draws through the curriculum the trainer's thread updates (timing-dependent by design)."""
    config = _config(workspace, tmp_path / "run", {"sampling": "clusters", "curriculum": {"floor": 0.5}},
                     steps=3, checkpoint_every=3, **{"async": {"max_staleness": 1}})
    run_id = _train(cli, workspace, tmp_path, config)
    stored, from_rollouts = _per_cluster(workspace, run_id)
    _assert_agree(stored, from_rollouts)

    from tracegym.store import open_store
    from tracegym.training.metrics import read_metrics

    with open_store(workspace.store, read_only=True) as store:
        metrics = read_metrics(store, run_id)
    weights = {k: v for k, v in metrics.items() if k.startswith("curriculum/")}
    assert sorted(weights) == [f"curriculum/{c}/weight" for c in _two_clusters(workspace)]
    for step in (3, 4, 5):
        assert sum(w[step] for w in weights.values()) == pytest.approx(1.0)
        assert all(w[step] >= 0.25 for w in weights.values()), "the floor: at least floor / clusters"


@pytest.mark.usefixtures("one_thread")
def test_a_killed_and_resumed_curriculum_run_draws_what_an_uninterrupted_one_draws(workspace: Workspace,
                                                                                  tmp_path: Path, cli) -> None:
    """As test_train_resume does for the uniform order: run A uninterrupted, run B killed with SIGKILL while held on
    step 5, after its step-4 checkpoint (2 warm-start steps + 2 GRPO steps) and resumed. The curriculum's weights after
    the resume depend on the per-cluster rewards of steps 3-4, which the resumed process reads back from the store."""
    settings = {"steps": 6, "checkpoint_every": 2, "keep_checkpoints": 10, "grpo": {"batch_groups": 3}}
    tasks = {"sampling": "clusters", "curriculum": {"weighting": "learnability", "ema": 0.5, "floor": 0.1}}
    run_a, run_b = tmp_path / "a", tmp_path / "b"
    config_a = write_config(tmp_path / "a.yaml", _config(workspace, run_a, tasks, **settings))
    config_b = write_config(tmp_path / "b.yaml", _config(workspace, run_b, tasks, **settings))

    assert cli("train", "--allow-unredacted", config_a, "--store", workspace.store).exit_code == 0
    code, stderr = _signal_after_checkpoint(config_b, workspace.store, run_b, step=4)
    assert code == -signal.SIGKILL, stderr
    assert (run_b / "checkpoints" / "latest").read_text().strip() == "step-000004", "killed while on step 5"
    resumed = cli("train", "--allow-unredacted", config_b, "--resume", "--store", workspace.store)
    assert resumed.exit_code == 0, resumed.stderr

    a, b = _metrics(workspace.store, run_a), _metrics(workspace.store, run_b)
    assert sorted(b) == sorted(a) == list(range(1, 9))
    for step in range(1, 9):
        assert b[step] == a[step], f"step {step} differs"
    assert _rollouts(workspace.store, run_b) == _rollouts(workspace.store, run_a), "the same tasks, the same episodes"
    clusters = _two_clusters(workspace)
    weights = [a[5][f"curriculum/{c}/weight"] for c in clusters]
    assert weights != pytest.approx([0.5, 0.5]), "the weights after the resume come from the steps before it"

    from tracegym.store import open_store

    run_id = json.loads((run_b / "run.json").read_text())["run_id"]
    with open_store(workspace.store, read_only=True) as store:
        twice = store.query("SELECT step, key FROM metrics WHERE run_id = ? GROUP BY ALL HAVING count(*) > 1",
                            [run_id])
    assert twice == [], "a resumed run forgets the rows after its checkpoint before writing them again"
