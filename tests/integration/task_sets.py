"""Task sets the export, import and rescore tests share: τ-bench tasks bound to a `mentions` match eval, and a
hand-written set of shell tasks scored by a command eval, a match eval and their weighted sum."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tracegym.cli import app
from tracegym.tasks.spec import TaskSpec, dump_spec

MENTIONS_EVALS = """version: 1
evals:
  - name: mentions
    kind: match
    mode: regex
    expected: "refund"
    applies_to: {formats: [tau-bench]}
"""
SHELL_EVALS = """version: 1
evals:
  - name: made
    kind: command
    command: test -f done.txt
  - name: says
    kind: match
    mode: contains
    expected: done
  - name: both
    kind: weighted
    parts: {made: 1, says: 1}
"""
SHELL_REPLY = "done:\n```bash\ntouch done.txt\n```"
"""The reply that earns every shell eval: it makes done.txt and says done."""


def mentions_task_set(store: Path, folder: Path, top: int, per_cluster: int) -> Path:
    """Tasks of the mined store's `top` clusters (at most `per_cluster` each), bound to the `mentions` eval, generated
    without gates into FOLDER/set (the eval file is FOLDER/evals.yaml); returns the set's folder."""
    evals = folder / "evals.yaml"
    evals.write_text(MENTIONS_EVALS)
    args = ("tasks", "generate", "--no-gates", "--allow-unredacted", "--evals", evals, "--out", folder / "set",
            "--top", top, "--max-tasks-per-cluster", per_cluster, "--store", store)
    result = CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return folder / "set"


def shell_spec(task_id: str, harness: str, evals: list[str]) -> TaskSpec:
    """A task asking for done.txt, bound to `evals` of SHELL_EVALS, in cluster `c-TASK_ID`, with SHELL_REPLY as
    its reference."""
    reference = {"source": "file:refs.jsonl", "replies": [{"role": "assistant", "content": SHELL_REPLY}]}
    return TaskSpec.model_validate({
        "task_id": task_id, "split": "train", "harness": harness,
        "prompt": {"messages": [{"role": "system", "content": "You are a shell agent."},
                                {"role": "user", "content": "Create done.txt, then say done."}]},
        "scorer": {"evals": [{"name": e} for e in evals]},
        "provenance": {"trace_id": f"tr-{task_id}", "format": "mini-swe-agent", "source_task": task_id,
                       "cluster_id": f"c-{task_id}", "cut_message_idx": 2, "reference": reference}})


def write_shell_task_set(folder: Path, specs: list[TaskSpec]) -> Path:
    """A task-set folder of `specs` on SHELL_EVALS: evals.yaml, tasks/*.yaml and manifest.yaml."""
    (folder / "tasks").mkdir(parents=True)
    (folder / "evals.yaml").write_text(SHELL_EVALS)
    for s in specs:
        (folder / "tasks" / f"{s.task_id}.yaml").write_text(dump_spec(s))
    (folder / "manifest.yaml").write_text(json.dumps({
        "name": "shell-set", "seed": 0, "evals_sha256": "0" * 64, "options": {}, "counts": {"tasks": len(specs)},
        "clusters": [], "tasks": [{"task_id": s.task_id, "file": f"tasks/{s.task_id}.yaml", "split": "train",
                                   "harness": s.harness, "cluster_id": s.provenance.cluster_id,
                                   "trace_id": s.provenance.trace_id} for s in specs]}))
    return folder
