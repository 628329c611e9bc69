"""Run folders and checkpoints: Hugging Face model folders plus the trainer state, written atomically.

    RUN_DIR/
      train_config.json           the resolved train config
      run.json                    run id and creation time
      checkpoints/
        step-000010/              loadable by transformers.AutoModelForCausalLM.from_pretrained
          config.json  generation_config.json  model.safetensors  tokenizer files
          trainer_state.pt        optimizer state, RNG states, step, data position, phase
        latest                    the name of the newest complete checkpoint

A checkpoint is written into a temporary sibling folder and renamed into place, then `latest` is
replaced (write + rename), so a run killed at any moment leaves either the previous checkpoint or the
new one, never half of one. `RUN_DIR` itself is accepted as a model reference (its latest checkpoint).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import stat
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from tracegym.errors import ConfigError, NotFoundError
from tracegym.models.load import register_resolver
from tracegym.store.private import PRIVATE_FILE, PRIVATE_FOLDER, create_folders
from tracegym.training.runfolder import CHECKPOINTS, CONFIG_FILE, DIFFICULTY_FILE, LATEST, RUN_FILE, STATE_FILE

if TYPE_CHECKING:
    from peft import PeftModel
    from transformers import PreTrainedModel, PreTrainedTokenizerBase



@dataclass
class TrainerState:
    """Everything besides the weights that a resumed run needs to continue exactly."""

    step: int
    """Optimizer steps taken (warm start included): the policy version of the weights."""
    optimizer_phase: str
    """'warmup' or 'grpo': which optimizer `optimizer` holds the state of."""
    optimizer: dict[str, Any]
    groups_consumed: int = 0
    """The data position: groups taken from the task order so far."""
    rng: dict[str, Any] = field(default_factory=dict)
    keep: bool = False
    """Never deleted by the keep-the-newest-N rule (the end of the warm start)."""


def capture_rng() -> dict[str, Any]:
    state: dict[str, Any] = {"torch": torch.get_rng_state(), "python": random.getstate()}
    try:
        import numpy as np

        state["numpy"] = np.random.get_state()
    except ImportError:
        pass
    return state


def restore_rng(state: dict[str, Any]) -> None:
    if "torch" in state:
        torch.set_rng_state(state["torch"])
    if "python" in state:
        random.setstate(state["python"])
    if "numpy" in state:
        import numpy as np

        np.random.set_state(state["numpy"])


def checkpoint_name(step: int) -> str:
    return f"step-{step:06d}"


def save_checkpoint(
    run_dir: Path, model: PreTrainedModel | PeftModel, tokenizer: PreTrainedTokenizerBase, state: TrainerState,
    keep_last: int,
    state_dict: Mapping[str, torch.Tensor] | None = None,
) -> Path:
    """Write a checkpoint atomically, point `latest` at it, and delete older ones beyond `keep_last`; `state_dict`
    replaces the model's own weights (those gathered from sharded ranks)."""
    root = run_dir / CHECKPOINTS
    create_folders(root)
    final = root / checkpoint_name(state.step)
    tmp = root / f".tmp-{final.name}-{uuid.uuid4().hex[:8]}"
    try:
        if state_dict is None:  # a peft model takes no state_dict: it saves its adapter
            model.save_pretrained(str(tmp), safe_serialization=True)
        else:
            model.save_pretrained(str(tmp), safe_serialization=True, state_dict=dict(state_dict))
        tokenizer.save_pretrained(tmp)
        torch.save(state.__dict__, tmp / STATE_FILE)
        make_private(tmp)
        if final.exists():  # written by a run killed before it could move `latest` here
            shutil.rmtree(final)
        os.rename(tmp, final)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    _write_atomic(root / LATEST, final.name)
    _prune(root, keep_last, final.name)
    return final


def make_private(root: Path) -> None:
    """Owner-only modes on `root` and what it holds (folders 0700, files 0600), whatever the umask: a checkpoint's
    weights were trained on production traces. Links are left alone (never followed)."""
    os.chmod(root, PRIVATE_FOLDER)
    for folder, folders, files in os.walk(root):
        for name in folders:
            if not os.path.islink(os.path.join(folder, name)):
                os.chmod(os.path.join(folder, name), PRIVATE_FOLDER)
        for name in files:
            if not os.path.islink(os.path.join(folder, name)):
                os.chmod(os.path.join(folder, name), PRIVATE_FILE)


def private_run_dir(run_dir: Path) -> None:
    """The run folder, created 0700 with any missing parents, or made 0700 when it exists and is this user's (a
    resumed run started by an earlier version, a folder the user made): what it holds is then private whatever
    each file's mode."""
    create_folders(run_dir)
    info = run_dir.stat()
    if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) != PRIVATE_FOLDER:
        run_dir.chmod(PRIVATE_FOLDER)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE), "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _prune(root: Path, keep_last: int, newest: str) -> None:
    done = sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith("step-"))
    kept = {p.name for p in done[-keep_last:]} | {newest}
    for folder in done:
        if folder.name in kept or _is_kept(folder):
            continue
        shutil.rmtree(folder, ignore_errors=True)
    for stale in root.glob(".tmp-*"):  # left by a run killed while writing
        shutil.rmtree(stale, ignore_errors=True)


def _is_kept(folder: Path) -> bool:
    return bool((folder / ".keep").exists())


def mark_kept(folder: Path) -> None:
    """Exempt a checkpoint from pruning (the warm-start model, which evaluation compares against)."""
    (folder / ".keep").touch(mode=PRIVATE_FILE)


def latest_checkpoint(run_dir: Path) -> Path | None:
    pointer = run_dir / CHECKPOINTS / LATEST
    if not pointer.is_file():
        return None
    folder = run_dir / CHECKPOINTS / pointer.read_text(encoding="utf-8").strip()
    return folder if (folder / STATE_FILE).is_file() else None


def load_state(checkpoint: Path) -> TrainerState:
    data = torch.load(checkpoint / STATE_FILE, weights_only=False)  # our own file: RNG states are Python objects
    return TrainerState(**data)


def init_run_dir(run_dir: Path, resolved_config: dict[str, Any], resume: bool,
                 refill: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                 completed_steps: Callable[[str], int] | None = None) -> str:
    """Check the run folder and (unless resuming) create it; returns the run id. `tracegym train` calls the two
    halves apart, `check_run_dir` before it loads the task set and the model and `create_run_dir` after."""
    if resume:
        return resumed_run_id(run_dir, resolved_config, refill)
    check_run_dir(run_dir, completed_steps or (lambda run_id: 0))
    return create_run_dir(run_dir, resolved_config)


def resumed_run_id(run_dir: Path, resolved_config: dict[str, Any],
                   refill: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> str:
    """The id of the run `run_dir` holds, once its saved config is the one given; writes nothing. `refill` fills a
    saved config's missing keys with today's defaults, so that a run started before a setting existed resumes as
    it ran."""
    run_file, config_file = run_dir / RUN_FILE, run_dir / CONFIG_FILE
    if not run_file.is_file():
        raise NotFoundError(f"--resume: {run_dir} holds no run ({RUN_FILE} is missing). Fix: start it without "
                            "--resume, or point run_dir at the killed run's folder.")
    saved = json.loads(config_file.read_text(encoding="utf-8"))
    saved = refill(saved) if refill is not None else saved
    # `steps` may grow: a finished run can be continued for more steps.
    changed = sorted(k for k in set(saved) | set(resolved_config)
                     if k != "steps" and saved.get(k) != resolved_config.get(k))
    if changed:
        raise ConfigError(f"--resume: the config differs from the one {run_dir} was started with (sections: "
                          f"{', '.join(changed)}). Fix: resume with the original config, or start a new run_dir.")
    return saved_run_id(run_dir)


def check_run_dir(run_dir: Path, completed_steps: Callable[[str], int]) -> str | None:
    """Before a fresh start: the id of a run in `run_dir` that the start may replace (one that wrote no checkpoint
    and completed no step: a start that failed), or None for a folder with no run. A run with a checkpoint or a
    completed step (`completed_steps(run_id)`, from the store) is kept: a ConfigError says to resume it."""
    if not (run_dir / RUN_FILE).exists():
        return None
    run_id = saved_run_id(run_dir)
    steps, checkpoint = completed_steps(run_id), _any_checkpoint(run_dir)
    if steps or checkpoint is not None:
        held = f"a checkpoint ({checkpoint.name})" if checkpoint is not None else f"{steps} completed steps"
        raise ConfigError(f"{run_dir} already holds run {run_id}, with {held}. Fix: pass --resume to continue "
                          "it, or choose another run_dir.")
    return run_id


def create_run_dir(run_dir: Path, resolved_config: dict[str, Any]) -> str:
    """Write a new run into `run_dir` (its config and id), replacing what a failed start left there; the run id.
    The folder is the user's alone (`private_run_dir`)."""
    private_run_dir(run_dir)
    (run_dir / DIFFICULTY_FILE).unlink(missing_ok=True)  # a failed start's, measured under its own config
    run_id = f"{run_dir.resolve().name}-{uuid.uuid4().hex[:8]}"
    _write_atomic(run_dir / CONFIG_FILE, json.dumps(resolved_config, indent=2))
    _write_atomic(run_dir / RUN_FILE, json.dumps({"run_id": run_id, "created_at": datetime.now().isoformat()},
                                                 indent=2))
    return run_id


def saved_run_id(run_dir: Path) -> str:
    """The run id in `run_dir`'s run.json."""
    try:
        return str(json.loads((run_dir / RUN_FILE).read_text(encoding="utf-8"))["run_id"])
    except (ValueError, KeyError, TypeError, OSError) as e:
        raise ConfigError(f"{run_dir / RUN_FILE} is not a run file tracegym can read ({e}). Fix: choose another "
                          "run_dir, or remove the folder if it holds nothing you need.") from None


def _any_checkpoint(run_dir: Path) -> Path | None:
    """A complete checkpoint in the run folder (one with its trainer state), the newest first."""
    root = run_dir / CHECKPOINTS
    found = sorted(root.glob(f"step-*/{STATE_FILE}")) if root.is_dir() else []
    return found[-1].parent if found else None


def resolve_run_ref(text: str) -> Path | None:
    """A run folder names its latest checkpoint (a model resolver for `tracegym.models.load`)."""
    path = Path(text).expanduser()
    if not (path / RUN_FILE).is_file():
        return None
    found = latest_checkpoint(path)
    if found is None:
        raise NotFoundError(f"{path} is a training run with no checkpoint yet: the trainer writes one at the end of "
                            "the warm start, every `checkpoint_every` steps and at the last step. Fix: wait for its "
                            "first checkpoint, or pass one of its checkpoints/step-* folders.")
    return found


register_resolver(resolve_run_ref)
