"""A run folder and what tracegym writes in it are its owner's alone, whatever the umask: the folder 0700, its
checkpoints' folders 0700 and files 0600 (weights trained on production traces), the workspaces' folder 0700."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.test_checkpoint import _state, _Tokenizer
from tracegym.harnesses.sandbox.workspace import Workspaces
from tracegym.models.tiny import tiny_llama
from tracegym.training.checkpoint import init_run_dir, mark_kept, private_run_dir, save_checkpoint


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The most permissive umask: only tracegym's own modes keep anything private."""
    previous = os.umask(0)
    yield
    os.umask(previous)


def _modes(root: Path) -> dict[str, int]:
    return {str(path.relative_to(root)): stat.S_IMODE(path.lstat().st_mode) for path in [root, *root.rglob("*")]}


@pytest.mark.usefixtures("open_umask")
def test_a_run_folder_and_its_checkpoints_are_the_owners_alone(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "a"
    init_run_dir(run, {"seed": 0}, resume=False)
    model = tiny_llama(64, seed=1)
    mark_kept(save_checkpoint(run, model, _Tokenizer(), _state(2, model), keep_last=1))

    modes = _modes(run)
    assert {"run.json", "train_config.json", "checkpoints/latest", "checkpoints/step-000002/model.safetensors",
            "checkpoints/step-000002/trainer_state.pt", "checkpoints/step-000002/.keep"} <= modes.keys()
    for name, mode in modes.items():
        assert mode == (0o700 if (run / name).is_dir() else 0o600), (name, oct(mode))
    assert stat.S_IMODE((tmp_path / "runs").stat().st_mode) == 0o700  # a parent tracegym made


@pytest.mark.usefixtures("open_umask")
def test_an_existing_run_folder_is_tightened_and_workspaces_are_private(tmp_path: Path) -> None:
    run = tmp_path / "old-run"
    run.mkdir(mode=0o755)
    private_run_dir(run)  # a run an earlier version left readable, resumed
    assert stat.S_IMODE(run.stat().st_mode) == 0o700

    workspaces = Workspaces(tmp_path / "ws" / "episodes")
    assert stat.S_IMODE(workspaces.root.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "ws").stat().st_mode) == 0o700
