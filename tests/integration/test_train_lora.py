"""`tracegym train` with model.lora on the tiny model: warm start and GRPO train the adapter alone, checkpoints are
peft adapter folders, `--resume` continues from one and `tracegym eval` evaluates them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from tests.integration.train_workspace import Workspace, copy_workspace, tiny_config, write_config

LORA = {"r": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj", "up_proj", "down_proj"]}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, tau_workspace_template: Workspace) -> Workspace:
    return copy_workspace(tau_workspace_template, tmp_path_factory.mktemp("lora"))


def test_a_lora_run_trains_the_adapter_and_its_checkpoints_evaluate(workspace: Workspace, tmp_path: Path,
                                                                    cli) -> None:
    from safetensors.torch import load_file

    from tracegym.models.load import load_model

    run = tmp_path / "run"
    config = write_config(tmp_path / "run.yaml", tiny_config(workspace, run, steps=2, model={
        "ref": str(workspace.tiny_model), "lora": LORA}))
    result = cli("train", str(config), "--allow-unredacted", "--store", str(workspace.store), "--json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["step"] == 4
    base = load_model(workspace.tiny_model)
    adapter_size = sum(4 * (m.in_features + m.out_features) for n, m in base.named_modules()
                       if n.rsplit(".", 1)[-1] in LORA["target_modules"])
    assert summary["trainable_parameters"] == adapter_size

    final = run / "checkpoints" / "step-000004"
    assert (final / "adapter_config.json").is_file() and not (final / "model.safetensors").exists()
    assert all(".lora_" in k for k in load_file(final / "adapter_model.safetensors"))
    merged = load_model(final)
    assert merged.state_dict().keys() == base.state_dict().keys()
    moved = [k for k, v in merged.state_dict().items() if not torch.equal(v, base.state_dict()[k])]
    assert moved and all(k.rsplit(".", 2)[-2] in LORA["target_modules"] for k in moved), "only adapted layers"

    from tracegym.store import open_store
    from tracegym.training.metrics import read_metrics

    with open_store(workspace.store, read_only=True) as store:
        metrics = read_metrics(store, summary["run_id"])
    assert metrics["sync/adapter_bytes"] == {3: 4.0 * adapter_size, 4: 4.0 * adapter_size}  # fp32 samplers

    more = write_config(tmp_path / "more.yaml", tiny_config(workspace, run, steps=3, model={
        "ref": str(workspace.tiny_model), "lora": LORA}))
    resumed = cli("train", str(more), "--allow-unredacted", "--resume", "--store", str(workspace.store), "--json")
    assert resumed.exit_code == 0, resumed.stderr
    assert json.loads(resumed.stdout)["step"] == 5

    evaluated = cli("eval", str(run), "--tasks", str(workspace.task_set), "--samples", "2", "--store",
                    str(workspace.store), "--json")
    assert evaluated.exit_code == 0, evaluated.stderr
    assert "step-000005" in evaluated.stdout
