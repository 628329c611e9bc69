"""`tracegym train` with `parallel: {kind: fsdp, world_size: 2}`: two gloo ranks on this CPU, through the real runner,
replay harness and scorer. Checkpoints are whole Hugging Face folders; a run SIGKILLed after a checkpoint resumes
sharded and continues the uninterrupted run's curve exactly; ranks started by torchrun train as the ranks that
`tracegym train` spawns itself."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from tests.integration.test_train_resume import _metrics, _signal_after_checkpoint, _weights
from tests.integration.train_workspace import Workspace, copy_workspace, holdable, tiny_config, write_config

SHARDED = {"warmup": {"steps": 0}, "steps": 4, "checkpoint_every": 2, "keep_checkpoints": 10,
           "parallel": {"kind": "fsdp", "world_size": 2}, "optim": {"micro_batch_tokens": 256}}
REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Runs:
    workspace: Workspace
    single: Path
    spawned: Path
    summary: dict


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, tau_workspace_template: Workspace) -> Workspace:
    return holdable(copy_workspace(tau_workspace_template, tmp_path_factory.mktemp("sharded")))


def _train(*args: str):
    from tracegym.cli import app

    return CliRunner().invoke(app, ["train", *args, "--allow-unredacted"], catch_exceptions=False)


@pytest.fixture(scope="module")
def runs(workspace: Workspace, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """One process and two spawned ranks, on one thread each (as the torchrun ranks): the same config."""
    root = tmp_path_factory.mktemp("sharded-runs")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    os.environ["OMP_NUM_THREADS"], old = "1", os.environ.get("OMP_NUM_THREADS")
    try:
        single, spawned = root / "single", root / "spawned"
        write_config(root / "single.yaml", tiny_config(workspace, single, **{**SHARDED, "parallel": {"kind": "none"}}))
        write_config(root / "spawned.yaml", tiny_config(workspace, spawned, **SHARDED))
        assert _train(str(root / "single.yaml"), "--store", str(workspace.store)).exit_code == 0
        result = _train(str(root / "spawned.yaml"), "--store", str(workspace.store), "--json")
        assert result.exit_code == 0, result.stderr
    finally:
        torch.set_num_threads(threads)
        if old is None:
            del os.environ["OMP_NUM_THREADS"]
        else:
            os.environ["OMP_NUM_THREADS"] = old
    return Runs(workspace, single, spawned, json.loads(result.stdout))


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
def test_a_sharded_run_trains_as_one_process_and_resumes_after_sigkill(runs: Runs, tmp_path: Path, cli) -> None:
    workspace, single, run_a, run_b = runs.workspace, runs.single, runs.spawned, tmp_path / "b"
    assert runs.summary["step"] == 4
    config_b = write_config(tmp_path / "b.yaml", tiny_config(workspace, run_b, **SHARDED))

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

    code, stderr = _signal_after_checkpoint(config_b, workspace.store, run_b, step=2)
    assert code == -signal.SIGKILL, stderr
    assert (run_b / "checkpoints" / "latest").read_text().strip() == "step-000002", "killed while on step 3"
    resumed = cli("train", str(config_b), "--allow-unredacted", "--resume", "--store", str(workspace.store))
    assert resumed.exit_code == 0, resumed.stderr
    b = _metrics(workspace.store, run_b)
    assert sorted(b) == [1, 2, 3, 4]
    for step in range(1, 5):
        assert b[step] == a[step], f"step {step} differs"
    wa, wb = _weights(run_a / "checkpoints" / "step-000004"), _weights(run_b / "checkpoints" / "step-000004")
    assert wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


def _free_port() -> int:
    """A port free on 127.0.0.1 now, for torchrun's --master_port (its agent binds it moments later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _torchrun(config: Path, store: Path, *extra: str) -> subprocess.CompletedProcess:
    """`torchrun --nproc_per_node 2 -m tracegym.cli train CONFIG` on 127.0.0.1, importing this checkout."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
               "--master_port", str(_free_port()), "-m", "tracegym.cli", "train", str(config), "--allow-unredacted",
               "--store", str(store), "--json", *extra]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.slow
def test_ranks_started_by_torchrun_train_as_the_spawned_ranks(runs: Runs, tmp_path: Path) -> None:
    run = tmp_path / "torchrun"
    config = write_config(tmp_path / "torchrun.yaml", tiny_config(runs.workspace, run, **SHARDED))
    result = _torchrun(config, runs.workspace.store)
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout)  # one JSON object: rank 1 printed nothing
    assert summary["step"] == 4 and summary["run_id"] != runs.summary["run_id"]
    spawned, got = _metrics(runs.workspace.store, runs.spawned), _metrics(runs.workspace.store, run)
    assert sorted(got) == [1, 2, 3, 4]
    # The same ranks on the same threads: the first step, and every later one, equal the spawned run's.
    assert got[1] == spawned[1]
    assert all(got[step] == spawned[step] for step in range(2, 5))
    assert sorted(p.name for p in run.iterdir()) == ["checkpoints", "run.json", "train_config.json"]

    # Resumed with no step left, rank 0 releases rank 1, and both end.
    again = _torchrun(config, runs.workspace.store, "--resume")
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout)["step"] == 4


def test_a_torchrun_world_the_config_does_not_ask_for_is_a_config_error(tmp_path: Path, cli,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    config = write_config(tmp_path / "c.yaml", {"run_dir": str(tmp_path / "run"), "tasks": {"task_set": "t"},
                                                "parallel": {"kind": "fsdp", "world_size": 2}})
    for name, value in {"RANK": "1", "WORLD_SIZE": "3", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1"}.items():
        monkeypatch.setenv(name, value)
    result = cli("train", str(config), "--allow-unredacted")
    assert result.exit_code == 2
    assert "torchrun started 3 processes (WORLD_SIZE=3), and the config asks for 2" in result.stderr
    assert "parallel: {kind: fsdp, world_size: 3}" in result.stderr
    monkeypatch.setenv("WORLD_SIZE", "2")
    write_config(config, {"run_dir": str(tmp_path / "run"), "tasks": {"task_set": "t"}})
    result = cli("train", str(config), "--allow-unredacted")
    assert result.exit_code == 2 and "the config asks for 1 (parallel: kind none" in result.stderr
    assert not (tmp_path / "run").exists()


LORA = {"r": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj", "up_proj", "down_proj"]}
COMBINED = {"steps": 2, "checkpoint_every": 1, "keep_checkpoints": 10, "loss": {"kl_beta": 0.1},
            "optim": {"micro_batch_tokens": 256}}


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
def test_a_sharded_lora_run_with_warm_start_and_kl_trains_as_one_process(workspace: Workspace, tmp_path: Path,
                                                                        cli) -> None:
    """The warm start runs on rank 0 alone; GRPO then shards the adapted model from the warm-start adapter, with
    the KL to the warm-start policy on every rank. Tolerances as in the first test."""
    from safetensors.torch import load_file

    single, sharded = tmp_path / "single", tmp_path / "sharded"
    model = {"ref": str(workspace.tiny_model), "lora": LORA}
    for run, parallel in ((single, {"kind": "none"}), (sharded, {"kind": "fsdp", "world_size": 2})):
        config = write_config(tmp_path / f"{run.name}.yaml", tiny_config(workspace, run, **COMBINED, model=model,
                                                                         parallel=parallel))
        result = cli("train", str(config), "--allow-unredacted", "--store", str(workspace.store), "--json")
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["step"] == 4
    one, two = _metrics(workspace.store, single), _metrics(workspace.store, sharded)
    for step in (1, 2):  # the warm start: the same code in the same process
        assert two[step] == one[step], f"warm-start step {step} differs"
    assert two[3]["reward/mean"] == one[3]["reward/mean"] and two[3]["train/optimizer_steps"] == 1
    for key, tolerance in (("train/loss", {"abs": 1e-5, "rel": 0}), ("train/grad_norm", {"rel": 1e-4}),
                           ("kl_ref/k3", {"abs": 1e-6, "rel": 1e-4})):
        assert two[3][key] == pytest.approx(one[3][key], **tolerance), key
    assert two[4]["kl_ref/k3"] > 0 and two[4]["sync/adapter_bytes"] == one[4]["sync/adapter_bytes"]

    # Sharded checkpoints are adapter folders too, the adapter gathered off the ranks.
    lr = tiny_config(workspace, single)["optim"]["lr"]
    first = [load_file(run / "checkpoints" / "step-000003" / "adapter_model.safetensors") for run in (single, sharded)]
    assert first[0].keys() == first[1].keys() and all(".lora_" in k for k in first[0])
    for name, tensor in first[0].items():
        torch.testing.assert_close(first[1][name], tensor, rtol=0, atol=0.3 * lr, msg=name)
    assert not (sharded / "checkpoints" / "step-000004" / "model.safetensors").exists()

    more = write_config(tmp_path / "more.yaml", tiny_config(workspace, sharded, **{**COMBINED, "steps": 3},
                                                            model=model, parallel={"kind": "fsdp", "world_size": 2}))
    resumed = cli("train", str(more), "--allow-unredacted", "--resume", "--store", str(workspace.store), "--json")
    assert resumed.exit_code == 0, resumed.stderr
    assert json.loads(resumed.stdout)["step"] == 5
    assert _metrics(workspace.store, sharded)[5]["train/optimizer_steps"] == 1


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("sent", [signal.SIGKILL, signal.SIGSTOP], ids=["killed", "stalled"])
def test_a_spawned_rank_that_dies_or_stalls_mid_run_fails_the_next_step_with_a_rank_error(tmp_path: Path,
                                                                                           sent: int) -> None:
    """Rank 1, a process `tracegym train` spawned, sent SIGKILL or SIGSTOP after a step. Killed: rank 0's next step
    fails at its first collective, with a RankError that names the rank and how it ended (not gloo's connection
    error). Stopped, its connections open (a node that vanished): the step's collective gives up after
    parallel.step_timeout_s, not gloo's 6 hours, with a RankError that says so. The first, healthy step must not
    reach that limit on a loaded machine: 600 s where it is not the point (killed), 10 s where it is (stalled)."""
    import torch.multiprocessing as mp

    from tests.unit.test_sharded_trainer import OPTIM, _setup
    from tests.unit.test_trainer_step import TEMPERATURE
    from tracegym.errors import RankError
    from tracegym.training.config import TrainConfig
    from tracegym.training.parallel.ranks import RankStart, load_policy, sharded_trainer

    model, batches = _setup()
    model.save_pretrained(tmp_path / "model")
    limit = 600 if sent == signal.SIGKILL else 10
    config = TrainConfig.model_validate({
        "run_dir": str(tmp_path / "run"), "tasks": {"task_set": "unused"}, "model": {"ref": str(tmp_path / "model")},
        "optim": OPTIM, "sampler": {"temperature": TEMPERATURE},
        "parallel": {"kind": "fsdp", "world_size": 2, "step_timeout_s": limit}})
    with pytest.raises(RankError) as failed:
        with sharded_trainer(load_policy(config, None), config, RankStart(None, None, 0), None) as trainer:
            trainer.step(batches[0])
            [rank] = [p for p in mp.active_children() if p.name == "tracegym-rank-1"]
            os.kill(rank.pid, sent)
            trainer.step(batches[1])
    message = str(failed.value)
    if sent == signal.SIGKILL:
        assert message.startswith(f"trainer rank 1 (process {rank.pid}) ended, killed by SIGKILL. Rank 0 failed "
                                  "with it:")
    else:
        assert message.startswith(f"a trainer rank did not answer within parallel.step_timeout_s ({limit} s): ")
        assert f"Timed out waiting {limit * 1000}ms" in message
    assert "Continue the run from its latest checkpoint with --resume" in message
    assert isinstance(failed.value.__cause__, RuntimeError)
    assert not rank.is_alive()  # a stopped rank is killed as the block ends
