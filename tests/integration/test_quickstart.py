"""`tracegym quickstart`, shortened to one GRPO step and one eval sample. The same path as the README's first
command: the learnable failure families are mined and turned into tasks, training changes the weights and stores
each cluster's reward per step, the evaluation compares per cluster, and the report shows the clusters. SmolLM2 (a
random tiny model gives every group equal rewards here, so nothing would train)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file


@pytest.mark.slow
def test_quickstart_trains_on_the_learnable_families_and_reports_per_cluster(cli, traces_dir, tmp_path):
    from tracegym.models.load import ensure_smollm2
    from tracegym.store import open_store

    traces = tmp_path / "traces"
    for fmt in ("mini-swe-agent", "tau-bench"):
        shutil.copytree(traces_dir / fmt, traces / fmt)
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
