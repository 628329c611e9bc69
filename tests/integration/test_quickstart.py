"""`tracegym quickstart`, shortened to one GRPO step and one eval sample, on part of the traces (a third of
τ-bench's conversations, half of mini-swe-agent's runs). The same path as the README's first command: the learnable
failure families are mined and turned into tasks, training changes the weights and stores each cluster's reward per
step, the evaluation compares per cluster, and the report shows the clusters. SmolLM2 (a random tiny model gives
every group equal rewards here, so nothing would train)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file


def _part_of(traces_dir: Path, traces: Path) -> Path:
    """Every third τ-bench conversation and every other mini-swe-agent run (its trajectory and report), so that
    the held-out set still has tasks of both families."""
    (traces / "tau-bench").mkdir(parents=True)
    conversations = json.loads((traces_dir / "tau-bench" / "gpt-4o-airline.json").read_text(encoding="utf-8"))
    (traces / "tau-bench" / "gpt-4o-airline.json").write_text(json.dumps(conversations[::3]), encoding="utf-8")
    source, runs = traces_dir / "mini-swe-agent", traces / "mini-swe-agent"
    (runs / "trajs").mkdir(parents=True)
    (runs / "reports").mkdir()
    shutil.copy(source / "results_summary.json", runs / "results_summary.json")
    for trajectory in sorted((source / "trajs").glob("*.traj.json"))[::2]:
        report = f"{trajectory.name.removesuffix('.traj.json')}.report.json"
        shutil.copy(trajectory, runs / "trajs" / trajectory.name)
        shutil.copy(source / "reports" / report, runs / "reports" / report)
    return traces


@pytest.mark.slow
def test_quickstart_trains_on_the_learnable_families_and_reports_per_cluster(cli, traces_dir, tmp_path):
    from tracegym.models.load import ensure_smollm2
    from tracegym.store import open_store

    traces = _part_of(traces_dir, tmp_path / "traces")
    workdir = tmp_path / "qs"
    result = cli("quickstart", "--traces", traces, "--workdir", workdir, "--steps", "1", "--samples", "1")
    assert result.exit_code == 0, result.output
    report = Path(result.stdout.strip().splitlines()[-1].removeprefix("Report: "))  # the comparison table before
    assert report == (workdir / "report.html").resolve() and report.is_file()
    page = report.read_text()
    assert "Training reward per failure cluster" in page

    with open_store(workdir / "store.duckdb", read_only=True) as st:
        clusters = {r["cluster_id"]: r for r in st.query(
            "SELECT DISTINCT t.cluster_id, tr.format FROM tasks t JOIN traces tr ON tr.trace_id = t.source_trace_id "
            "WHERE t.task_set_id = 'quickstart'")}
        stored = {r["key"] for r in st.query("SELECT DISTINCT key FROM metrics WHERE key LIKE 'cluster/%/reward'")}
        compared = st.query("SELECT count(DISTINCT checkpoint_id) AS n FROM eval_results")[0]["n"]
    assert {c["format"] for c in clusters.values()} == {"mini-swe-agent", "tau-bench"}
    assert stored and stored <= {f"cluster/{c}/reward" for c in clusters}
    assert compared == 2  # the base model and the checkpoint

    [checkpoint] = sorted((workdir / "run" / "checkpoints").glob("step-*"))
    before = load_file(ensure_smollm2() / "model.safetensors")
    after = load_file(checkpoint / "model.safetensors")
    assert any(not torch.equal(before[k], after[k]) for k in before)  # GRPO moved the weights
