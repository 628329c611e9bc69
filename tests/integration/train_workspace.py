"""A training workspace built from the real τ-bench traces: store, failure tasks, a tiny model, configs.

The tiny random model never writes a tool call, so its tasks are bound to a reward it can earn by chance
(its reply starts with a capital letter, about one reply in four): groups then have reward variance and
GRPO has something to learn, through the real runner, replay harness and scorer.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from tracegym.cli import app

TEST_EVALS = """\
version: 1
evals:
  - name: starts_upper
    kind: match
    mode: regex
    expected: "^[A-Z]"
    case_sensitive: true
    applies_to: {formats: [tau-bench]}
"""

# `starts_upper` again, as a Python eval that can hold the process scoring with it: a killed-run test sets
# HOLD_AFTER_CHECKPOINT to a file naming a checkpoint, and while that file exists, scoring stops once that
# checkpoint is the run's latest (after touching the file's `held` path): the run is then past its checkpoint and
# still working when the test signals it, however fast or slow the machine. Rewards are the match eval's.
HOLD_EVALS = """\
version: 1
evals:
  - name: starts_upper
    kind: python
    function: hold_eval:score
    python_path: ["."]
    arguments: {text: final_answer}
    timeout_s: 600
    applies_to: {formats: [tau-bench]}
"""

HOLD_MODULE = """\
import json, os, re, time
from pathlib import Path


def score(text):
    if os.environ.get("HOLD_AFTER_CHECKPOINT"):
        _hold(Path(os.environ["HOLD_AFTER_CHECKPOINT"]))
    return 1.0 if isinstance(text, str) and re.search("^[A-Z]", text) else 0.0


def _hold(hold):
    try:
        plan = json.loads(hold.read_text())
    except FileNotFoundError:
        return
    latest = Path(plan["latest"])
    if not (latest.is_file() and latest.read_text().strip() == plan["step"]):
        return
    Path(plan["held"]).touch()
    while hold.exists():
        time.sleep(0.05)
"""


@dataclass(frozen=True)
class Workspace:
    root: Path
    store: Path
    task_set: Path
    tiny_model: Path


def _cli(*args: str) -> None:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.stderr


def build_workspace(root: Path, traces: Path) -> Workspace:
    """Ingest τ-bench, mine failures, generate tasks bound to `starts_upper`, save a tiny model."""
    from tracegym.models.tiny import tiny_policy
    from tracegym.store import open_store

    store = root / "store.duckdb"
    evals = root / "evals.yaml"
    evals.write_text(TEST_EVALS)
    _cli("ingest", str(traces / "tau-bench"), "--store", str(store))
    _cli("mine", "failures", "--store", str(store))
    task_set = root / "tasks" / "tau"
    # The 11 top specific clusters and the catch-all of failed runs (which ranks after every specific one): the
    # tasks the training tests were written against, when that catch-all ranked first.
    with open_store(store, read_only=True) as st:
        failed = st.scalar("SELECT cluster_id FROM clusters WHERE detector = 'outcome' "
                           "AND signature = 'trace outcome: failure'")
    # Ungated: `starts_upper` is a toy reward for training tests, not one a reference reply is meant to earn.
    _cli("tasks", "generate", "--allow-unredacted", "--no-gates", "--out", str(task_set), "--evals", str(evals),
         "--eval", "starts_upper", "--top", "11", "--cluster", failed, "--context", "last-user", "--store", str(store))
    model, tokenizer = tiny_policy(seed=0)
    model.save_pretrained(root / "tiny-model")
    tokenizer.save_pretrained(root / "tiny-model")
    return workspace_at(root)


def workspace_at(root: Path) -> Workspace:
    """The workspace `build_workspace` built in `root`."""
    return Workspace(root, root / "store.duckdb", root / "tasks" / "tau", root / "tiny-model")


def copy_workspace(template: Workspace, root: Path) -> Workspace:
    """A private copy of a built workspace, so that modules which write to the store do not see each other's
    runs; the copy's store names the copy's task-set folder. Building one takes ~30 s, copying well under 1 s."""
    from tracegym.store import open_store

    shutil.copytree(template.root, root, dirs_exist_ok=True)
    ws = Workspace(root, *(root / p.relative_to(template.root) for p in (template.store, template.task_set,
                                                                          template.tiny_model)))
    with open_store(ws.store) as st:
        st.con.execute("UPDATE task_sets SET path = replace(path, ?, ?)", [str(template.root), str(root)])
    return ws


def holdable(ws: Workspace) -> Workspace:
    """`ws` with its tasks scored by HOLD_EVALS: the same rewards, and a hold point for tests that signal a run."""
    (ws.task_set / "evals.yaml").write_text(HOLD_EVALS)
    (ws.task_set / "hold_eval.py").write_text(HOLD_MODULE)
    return ws


def hold_after(run_dir: Path, step: int) -> tuple[dict[str, str], Path, Path]:
    """For a run of a `holdable` workspace: the environment that holds it scoring the step after checkpoint `step`,
    the hold file (removing it ends the hold), and the file whose presence says the run is held."""
    latest, hold, held = (run_dir / "checkpoints" / "latest", run_dir.parent / f"{run_dir.name}.hold",
                          run_dir.parent / f"{run_dir.name}.held")
    hold.write_text(json.dumps({"latest": str(latest), "step": f"step-{step:06d}", "held": str(held)}))
    return {**os.environ, "HOLD_AFTER_CHECKPOINT": str(hold)}, hold, held


def wait_until_held(held: Path, proc: subprocess.Popen) -> None:
    """Until `held` exists, or `proc` ended (the caller checks its exit code)."""
    deadline = time.monotonic() + 600  # a hang guard, not a measure: the run holds until released
    while not held.exists() and proc.poll() is None:
        assert time.monotonic() < deadline, f"{held.name}: the run never reached its hold point"
        time.sleep(0.05)


def tiny_config(ws: Workspace, run_dir: Path, **overrides: Any) -> dict[str, Any]:
    """A fast config over the tiny model: 2 warm-start steps, then sync GRPO."""
    config: dict[str, Any] = {
        "run_dir": str(run_dir),
        "seed": 7,
        "steps": 4,
        "checkpoint_every": 2,
        "model": {"ref": str(ws.tiny_model)},
        "tasks": {"task_set": str(ws.task_set), "detectors": ["tool_error", "handoff"], "max_tasks": 8},
        "prompt": {"context": "last-user", "system_max_chars": 0, "tool_schemas": "compact", "max_tokens": 400},
        "harness": {"kind": "replay", "limits": {"max_turns": 1}},
        "sampler": {"temperature": 1.0, "top_p": 0.95, "max_new_tokens": 8},
        "grpo": {"group_size": 4, "batch_groups": 2},
        "optim": {"lr": 3e-3, "micro_batch_tokens": 2048},
        "async": {"max_staleness": 0},
        "warmup": {"steps": 2, "batch_size": 4, "formats": ["tau-bench"], "lr": 1e-3, "max_examples": 64},
    }
    for key, value in overrides.items():
        config[key] = {**config.get(key, {}), **value} if isinstance(value, dict) else value
    return config


def write_config(path: Path, config: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path
