"""SIGKILL a `tracegym train` process mid-run; `--resume` finishes it exactly as an uninterrupted run would.

Run A goes uninterrupted. Run B (same config and seed, another run folder) runs as a subprocess and is
killed with SIGKILL after its step-4 checkpoint (2 warm-start steps + 2 GRPO steps), while it is held scoring
step 5 (`holdable`); then it resumes. Every metric of steps 5-8 and the final weights must equal run A's. Both
runs carry a KL penalty to the warm start, so the resumed run must also find the same reference model.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.integration.train_workspace import (
    Workspace,
    copy_workspace,
    hold_after,
    holdable,
    tiny_config,
    wait_until_held,
    write_config,
)

# Wall-clock figures differ between any two runs; everything else must match.
_TIMING = ("time/", "tokens_per_s", "seconds", "sampler/seconds", "sampling_seconds")


@pytest.fixture(scope="module")
def workspace(
    tmp_path_factory: pytest.TempPathFactory, tau_workspace_template: Workspace
) -> Workspace:
    return holdable(copy_workspace(tau_workspace_template, tmp_path_factory.mktemp("resume")))


def _metrics(store_path: Path, run_dir: Path) -> dict[int, dict[str, float | None]]:
    from tracegym.store import open_store

    run_id = json.loads((run_dir / "run.json").read_text())["run_id"]
    with open_store(store_path, read_only=True) as store:
        rows = store.query("SELECT step, key, value FROM metrics WHERE run_id = ? ORDER BY step, key", [run_id])
    out: dict[int, dict[str, float | None]] = {}
    for row in rows:
        if not any(part in row["key"] for part in _TIMING):
            out.setdefault(row["step"], {})[row["key"]] = row["value"]
    return out


def _rollouts(store_path: Path, run_dir: Path) -> list[tuple]:
    """What the store kept of a run's rollouts, per step: task, sample, reward and what the step did with it."""
    from tracegym.store import open_store

    run_id = json.loads((run_dir / "run.json").read_text())["run_id"]
    with open_store(store_path, read_only=True) as store:
        rows = store.query("SELECT train_step, train_use, task_id, sample_idx, reward FROM rollouts "
                           "WHERE run_id = ? ORDER BY ALL", [run_id])
    return [tuple(r.values()) for r in rows]


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(folder / "model.safetensors")


def _signal_after_checkpoint(config: Path, store: Path, run_dir: Path, step: int,
                             sig: signal.Signals = signal.SIGKILL) -> tuple[int, str]:
    """Start `tracegym train CONFIG` on a `holdable` workspace, send it `sig` while it is held scoring the step after
    checkpoint `step` (`latest` names it); its exit code and stderr. The hold ends once the signal is sent."""
    env, hold, held = hold_after(run_dir, step)
    with open(run_dir.parent / f"{run_dir.name}.stderr", "w+") as stderr:  # a file: a pipe could fill and block it
        proc = subprocess.Popen([sys.executable, "-m", "tracegym.cli", "train", "--allow-unredacted",
                                 str(config), "--store", str(store)],
                                stdout=subprocess.DEVNULL, stderr=stderr, env=env)
        try:
            wait_until_held(held, proc)
            if proc.poll() is None:
                os.kill(proc.pid, sig)
            hold.unlink()
            code = proc.wait(timeout=120)
        finally:
            hold.unlink(missing_ok=True)
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
        stderr.seek(0)
        return code, stderr.read()


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("grpo", [{}, {"dynamic_sampling": True, "max_sampling_rounds": 3}],
                         ids=["default", "dynamic_sampling"])
def test_sigkill_then_resume_matches_an_uninterrupted_run(workspace: Workspace, tmp_path: Path, cli,
                                                          grpo: dict) -> None:
    """Also with dynamic sampling, where a step takes a varying number of groups from the task order, so the data
    position the checkpoint keeps is no longer steps x batch_groups."""
    # A decaying learning rate after a ramp: the resumed steps must continue its curve, not start it again.
    settings = {"steps": 6, "checkpoint_every": 2, "keep_checkpoints": 10, "loss": {"kl_beta": 0.05}, "grpo": grpo,
                "optim": {"lr_scheduler": "linear", "lr_warmup_steps": 2}}
    run_a, run_b = tmp_path / "a", tmp_path / "b"
    config_a = write_config(tmp_path / "a.yaml", tiny_config(workspace, run_a, **settings))
    config_b = write_config(tmp_path / "b.yaml", tiny_config(workspace, run_b, **settings))

    assert cli("train", "--allow-unredacted", str(config_a), "--store", str(workspace.store)).exit_code == 0
    code, stderr = _signal_after_checkpoint(config_b, workspace.store, run_b, step=4)
    assert code == -signal.SIGKILL, stderr
    assert (run_b / "checkpoints" / "latest").read_text().strip() == "step-000004", "killed while on step 5"

    resumed = cli("train", "--allow-unredacted", str(config_b), "--resume", "--store", str(workspace.store))
    assert resumed.exit_code == 0, resumed.stderr

    a, b = _metrics(workspace.store, run_a), _metrics(workspace.store, run_b)
    assert sorted(b) == sorted(a) == list(range(1, 9))
    for step in range(1, 9):
        assert b[step] == a[step], f"step {step} differs"
    assert _rollouts(workspace.store, run_b) == _rollouts(workspace.store, run_a), "the store kept the same rollouts"
    assert sum(a[s]["train/optimizer_steps"] for s in range(5, 9)) >= 1, "GRPO trained after the resume point"
    assert [a[s]["optim/lr"] for s in range(3, 9)] == pytest.approx([1.5e-3, 3e-3, 3e-3, 2.25e-3, 1.5e-3, 7.5e-4])
    if grpo:
        assert sum(a[s]["grpo/set_aside_groups"] for s in range(3, 5)) > 0, "groups were set aside before the kill"
    assert max(a[s].get("kl_ref/k3", 0.0) for s in range(5, 9)) > 0, "the policy moved away from the warm start"
    for step in (4, 8):
        wa = _weights(run_a / "checkpoints" / f"step-{step:06d}")
        wb = _weights(run_b / "checkpoints" / f"step-{step:06d}")
        assert wa.keys() == wb.keys()
        assert all(torch.equal(wa[k], wb[k]) for k in wa), f"weights at step {step} differ"


@pytest.mark.slow
def test_sigterm_stops_the_run_as_interrupted_and_resume_completes_it(workspace: Workspace, tmp_path: Path,
                                                                      cli) -> None:
    """`kill` (SIGTERM) ends a run as Ctrl-C does: exit code 130, status `interrupted` in the store, a hint to
    resume on stderr; `--resume` then finishes it."""
    from tracegym.store import open_store

    run_dir = tmp_path / "run"
    config = write_config(tmp_path / "run.yaml", tiny_config(workspace, run_dir, steps=6, checkpoint_every=2))
    code, stderr = _signal_after_checkpoint(config, workspace.store, run_dir, step=2, sig=signal.SIGTERM)
    assert code == 130, stderr
    assert "--resume" in stderr and "Traceback" not in stderr
    run_id = json.loads((run_dir / "run.json").read_text())["run_id"]
    with open_store(workspace.store, read_only=True) as store:
        assert store.scalar("SELECT status FROM runs WHERE run_id = ?", [run_id]) == "interrupted"
    assert cli("train", "--allow-unredacted", str(config), "--resume", "--store", str(workspace.store)).exit_code == 0
    with open_store(workspace.store, read_only=True) as store:
        assert store.scalar("SELECT status FROM runs WHERE run_id = ?", [run_id]) == "completed"


@pytest.mark.slow
def test_a_run_killed_before_its_first_checkpoint_says_so(workspace: Workspace, tmp_path: Path, cli) -> None:
    """A run folder without a checkpoint (killed early): `eval` says there is none yet rather than "not a model
    folder", and `--resume` says it starts again from step 0 before it does."""
    from tracegym.training.checkpoint import init_run_dir
    from tracegym.training.config import load_train_config
    from tracegym.training.loop import _with_current_defaults

    run_dir = tmp_path / "run"
    config = write_config(tmp_path / "run.yaml", tiny_config(workspace, run_dir, steps=1, warmup={"steps": 1}))
    init_run_dir(run_dir, load_train_config(config).resolved(), resume=False, refill=_with_current_defaults)

    early = cli("eval", run_dir, "--tasks", workspace.task_set, "--store", workspace.store)
    assert early.exit_code == 2 and "no checkpoint yet" in early.stderr
    resumed = cli("train", "--allow-unredacted", config, "--resume", "--store", workspace.store)
    assert resumed.exit_code == 0, resumed.output
    said = " ".join(resumed.stderr.split())
    assert "No checkpoint yet" in said and "starting again from step 0 (the first is written at step 1)" in said
    assert (run_dir / "checkpoints" / "step-000002").is_dir()
