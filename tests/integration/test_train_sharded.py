"""`tracegym train` with `parallel: {kind: fsdp, world_size: 2}`: two gloo ranks on this CPU, through the real runner,
replay harness and scorer. Checkpoints are whole Hugging Face folders; a run SIGKILLed after a checkpoint resumes
sharded and continues the uninterrupted run's curve exactly."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
import torch

from tests.integration.test_train_resume import _metrics, _signal_after_checkpoint, _weights
from tests.integration.train_workspace import Workspace, copy_workspace, tiny_config, write_config

SHARDED = {"warmup": {"steps": 0}, "steps": 4, "checkpoint_every": 2, "keep_checkpoints": 10,
           "parallel": {"kind": "fsdp", "world_size": 2}, "optim": {"micro_batch_tokens": 256}}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, tau_workspace_template: Workspace) -> Workspace:
    return copy_workspace(tau_workspace_template, tmp_path_factory.mktemp("sharded"))


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
def test_a_sharded_run_trains_as_one_process_and_resumes_after_sigkill(workspace: Workspace, tmp_path: Path,
                                                                       cli) -> None:
    single, run_a, run_b = tmp_path / "single", tmp_path / "a", tmp_path / "b"
    settings = {**SHARDED, "parallel": {"kind": "none"}}
    write_config(tmp_path / "single.yaml", tiny_config(workspace, single, **settings))
    config_a = write_config(tmp_path / "a.yaml", tiny_config(workspace, run_a, **SHARDED))
    config_b = write_config(tmp_path / "b.yaml", tiny_config(workspace, run_b, **SHARDED))
    single_run = cli("train", str(tmp_path / "single.yaml"), "--allow-unredacted", "--store", str(workspace.store))
    assert single_run.exit_code == 0
    result = cli("train", str(config_a), "--allow-unredacted", "--store", str(workspace.store), "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["step"] == 4

    one, a = _metrics(workspace.store, single), _metrics(workspace.store, run_a)
    assert sorted(a) == [1, 2, 3, 4] and a[1]["train/optimizer_steps"] == 1, "the first step trained"
    # The same weights sample the same first batch; two ranks' loss is one process's, to float rounding.
    assert a[1]["reward/mean"] == one[1]["reward/mean"]
    assert a[1]["train/loss"] == pytest.approx(one[1]["train/loss"], rel=0, abs=1e-5)
    assert a[1]["train/grad_norm"] == pytest.approx(one[1]["train/grad_norm"], rel=1e-4)
    # Checkpoints hold the whole weights, under the model's names.
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(run_a / "checkpoints" / "step-000004", local_files_only=True)
    assert model.state_dict().keys() == _weights(single / "checkpoints" / "step-000004").keys() | {"lm_head.weight"}

    code, _ = _signal_after_checkpoint(config_b, workspace.store, run_b, step=2)
    assert code == -signal.SIGKILL, "the run finished before it could be killed"
    resumed = cli("train", str(config_b), "--allow-unredacted", "--resume", "--store", str(workspace.store))
    assert resumed.exit_code == 0, resumed.stderr
    b = _metrics(workspace.store, run_b)
    assert sorted(b) == [1, 2, 3, 4]
    for step in range(1, 5):
        assert b[step] == a[step], f"step {step} differs"
    wa, wb = _weights(run_a / "checkpoints" / "step-000004"), _weights(run_b / "checkpoints" / "step-000004")
    assert wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)
