"""Run folders and checkpoints: atomic writes, the `latest` pointer, pruning, resume checks, the run resolver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from tracegym.errors import ConfigError, NotFoundError
from tracegym.models.load import resolve_model_ref
from tracegym.models.tiny import tiny_llama
from tracegym.training.checkpoint import (
    TrainerState,
    capture_rng,
    init_run_dir,
    latest_checkpoint,
    load_state,
    mark_kept,
    restore_rng,
    save_checkpoint,
)


class _Tokenizer:
    """Stands in for a tokenizer: checkpoints only ask it to save itself."""

    def save_pretrained(self, folder: Path) -> None:
        (Path(folder) / "tokenizer_config.json").write_text("{}")


def _state(step: int, model: torch.nn.Module) -> TrainerState:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model(input_ids=torch.tensor([[1, 2, 3]])).logits.sum().backward()
    optimizer.step()
    return TrainerState(step=step, optimizer_phase="grpo", optimizer=optimizer.state_dict(), groups_consumed=3 * step,
                        rng=capture_rng())


def test_save_resolve_prune_and_keep(tmp_path: Path) -> None:
    run = tmp_path / "run"
    init_run_dir(run, {"seed": 0}, resume=False)
    model = tiny_llama(64, seed=1)
    first = save_checkpoint(run, model, _Tokenizer(), _state(2, model), keep_last=1)
    mark_kept(first)
    (run / "checkpoints" / ".tmp-step-000009-dead").mkdir()  # left by a run killed mid-write
    save_checkpoint(run, model, _Tokenizer(), _state(4, model), keep_last=1)
    third = save_checkpoint(run, model, _Tokenizer(), _state(6, model), keep_last=1)
    names = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert names == ["latest", "step-000002", "step-000006"]  # step 4 pruned, the kept one and the newest stay
    assert latest_checkpoint(run) == third and resolve_model_ref(str(run)) == third
    state = load_state(third)
    assert state.step == 6 and state.groups_consumed == 18 and state.optimizer["state"]


def test_latest_only_moves_after_a_complete_checkpoint(tmp_path: Path) -> None:
    run = tmp_path / "run"
    init_run_dir(run, {"seed": 0}, resume=False)
    model = tiny_llama(64, seed=1)
    done = save_checkpoint(run, model, _Tokenizer(), _state(2, model), keep_last=3)
    half = run / "checkpoints" / "step-000004"
    half.mkdir()  # a folder without its trainer state is not a checkpoint
    assert latest_checkpoint(run) == done


def test_rng_round_trip() -> None:
    state = capture_rng()
    expected = torch.rand(3)
    torch.rand(5)
    restore_rng(state)
    assert torch.equal(torch.rand(3), expected)


def test_run_dir_refuses_mixups(tmp_path: Path) -> None:
    run = tmp_path / "run"
    failed = init_run_dir(run, {"seed": 0, "steps": 4}, resume=False)
    # A start that wrote no checkpoint and completed no step is replaced by the next start.
    run_id = init_run_dir(run, {"seed": 0, "steps": 4}, resume=False)
    assert run_id != failed and json.loads((run / "run.json").read_text())["run_id"] == run_id
    with pytest.raises(ConfigError, match=f"already holds run {run_id}, with 3 completed steps. Fix: pass --resume"):
        init_run_dir(run, {"seed": 0, "steps": 4}, resume=False, completed_steps=lambda rid: 3 * (rid == run_id))
    model = tiny_llama(64, seed=1)
    save_checkpoint(run, model, _Tokenizer(), _state(2, model), keep_last=3)
    with pytest.raises(ConfigError, match=r"with a checkpoint \(step-000002\)"):
        init_run_dir(run, {"seed": 0, "steps": 4}, resume=False)
    with pytest.raises(ConfigError, match="sections: seed"):
        init_run_dir(run, {"seed": 1, "steps": 4}, resume=True)
    assert init_run_dir(run, {"seed": 0, "steps": 9}, resume=True) == run_id  # more steps may be asked for
    with pytest.raises(NotFoundError, match="holds no run"):
        init_run_dir(tmp_path / "other", {"seed": 0}, resume=True)


def test_a_run_saved_before_a_setting_existed_resumes(tmp_path: Path) -> None:
    """A run folder whose saved config lacks a setting added since (tasks.sampling) resumes; a real change of a
    setting still refuses."""
    from tracegym.training.config import parse_train_config
    from tracegym.training.loop import _with_current_defaults

    config = parse_train_config({"run_dir": str(tmp_path / "run"), "tasks": {"task_set": str(tmp_path / "set")}},
                                tmp_path / "train.yaml")
    old = config.resolved()
    del old["tasks"]["sampling"]
    run_id = init_run_dir(config.run_dir, old, resume=False)
    assert init_run_dir(config.run_dir, config.resolved(), True, refill=_with_current_defaults) == run_id
    changed = config.model_copy(update={"seed": 5}).resolved()
    with pytest.raises(ConfigError, match="sections: seed"):
        init_run_dir(config.run_dir, changed, True, refill=_with_current_defaults)
