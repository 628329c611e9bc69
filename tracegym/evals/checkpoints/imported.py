"""Results scored by another trainer, stored as tracegym's own: rollouts of a task set, and one model of an evaluation.

`import_results` stores a results file (`tracegym.evals.checkpoints.results_file`) as the rollouts of one run of
kind import (`runs.status = 'imported'`, run id `import-` + a hash of the file's bytes, the model name and the task
set, so importing the same file again adds nothing). Each sample keeps the reward the other trainer recorded (the
exported environments score with tracegym's own scorers); its rollout is marked `train_use = 'imported'`, so
`lineage` counts it as sampled, not as trained on here.

`add_to_evaluation` puts those rollouts into an evaluation beside a base model tracegym ran on the same tasks: an
`eval_models` row (checkpoint id `import:` + the run id), its `eval_results`, and a `checkpoints` row of the import
run naming the model, so the per-cluster comparison and the `lineage` view cover the imported model as they cover a
checkpoint of tracegym's trainer.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tracegym import exact_json
from tracegym.episodes.record import Episode, StopReason
from tracegym.episodes.rollout_table import insert_rollouts, read_rollouts
from tracegym.errors import ConfigError
from tracegym.evals.checkpoints.comparison import ModelRef
from tracegym.evals.checkpoints.results_file import ResultFormat, ResultRow, read_results
from tracegym.tasks.spec import TaskSpec
from tracegym.tasks.taskset import TaskSet, register_task_set

if TYPE_CHECKING:
    from tracegym.store import Store

_SHOWN = 5  # bad lines named in an error


@dataclass
class Imported:
    """A results file as stored: its run and rollouts, and the lines left out."""

    run_id: str
    model: str
    path: Path
    episodes: list[Episode]
    bad: list[str] = field(default_factory=list)
    already: bool = False
    """The file was imported before: nothing new was stored."""


def import_run_id(data: bytes, model: str, task_set_name: str) -> str:
    digest = hashlib.sha256(b"\x1f".join([hashlib.sha256(data).digest(), model.encode(), task_set_name.encode()]))
    return f"import-{digest.hexdigest()[:12]}"


def import_results(store: Store, task_set: TaskSet, path: Path, fmt: ResultFormat, model: str) -> Imported:
    """Store the file's samples as rollouts of `task_set` (all of them in one transaction, or none)."""
    name = task_set.manifest.name
    run_id = import_run_id(path.read_bytes() if path.is_file() else b"", model, name)
    if store.query("SELECT 1 FROM runs WHERE run_id = ?", [run_id]):
        return Imported(run_id, model, path, read_rollouts(store, run_id=run_id), already=True)
    results = read_results(path, fmt)
    tasks = {t.task_id: t for t in task_set.tasks}
    bad = list(results.bad)
    rows = []
    for row in results.rows:
        if row.task_id in tasks:
            rows.append(row)
        else:
            bad.append(f"line {row.line}: task {row.task_id!r} is not in task set {name}")
    bad.sort(key=lambda text: int(text.split(":", 1)[0].removeprefix("line ")))
    if not rows:
        shown = "; ".join(bad[:_SHOWN]) or "the file is empty"
        raise ConfigError(f"{path}: no sample could be imported as {fmt} results of {name} ({shown}). Fix: import "
                          f"the results of an environment exported from {name}, with --format matching the file.")
    episodes = _episodes(rows, tasks, name, model, run_id)
    if not store.query("SELECT 1 FROM task_sets WHERE task_set_id = ?", [name]):
        register_task_set(store, task_set)  # rollouts name their task; the store must know it
    now = datetime.now()
    config = {"imported_from": str(path), "format": fmt, "model": model, "samples": len(episodes),
              "lines_left_out": len(bad)}
    with store.transaction() as con:
        con.execute("INSERT INTO runs (run_id, config, status, started_at, updated_at, run_dir, base_model, "
                    "task_set_id) VALUES (?, ?, 'imported', ?, ?, NULL, ?, ?)",
                    [run_id, json.dumps(config), now, now, model, name])
        insert_rollouts(con, episodes, run_id)
    return Imported(run_id, model, path, episodes, bad)


def _episodes(rows: Sequence[ResultRow], tasks: dict[str, TaskSpec], task_set_name: str, model: str,
              run_id: str) -> list[Episode]:
    """One episode per row; a task's samples numbered in the file's order."""
    seen: dict[str, int] = defaultdict(int)
    out = []
    for row in rows:
        task = tasks[row.task_id]
        sample_idx = seen[row.task_id]
        seen[row.task_id] += 1
        stop: StopReason = "harness_error" if row.error else "max_turns" if row.truncated else "model_done"
        out.append(Episode(
            rollout_id=uuid.uuid4().hex, task_id=row.task_id, task_set_id=task_set_name, split=task.split,
            harness=task.harness, sample_idx=sample_idx, seed=0, model=model, sampling={},
            messages=[*row.prompt, *row.completion], n_prompt_messages=len(row.prompt), tokens=None, turns=[],
            stop_reason=stop, reward=row.reward, harness_error=row.error, run_id=run_id,
            metrics={"import/line": row.line}, train_use="imported"))
    return out


def samples_per_task(imported: Imported, task_ids: Sequence[str]) -> int:
    """The fewest samples the import holds for any of `task_ids` (0 when one has none)."""
    counts: dict[str, int] = defaultdict(int)
    for e in imported.episodes:
        counts[e.task_id] += 1
    return min((counts[t] for t in task_ids), default=0)


def add_to_evaluation(store: Store, eval_id: str, imported: Imported, base: ModelRef, tasks: Sequence[TaskSpec],
                      samples: int, pass_threshold: float) -> ModelRef:
    """Record the imported samples (indices below `samples`, of `tasks`) as one model of `eval_id`, compared with
    `base`; replaces what an earlier call recorded for the same import."""
    ref = ModelRef(imported.model, f"import:{imported.run_id}", imported.run_id, 0)
    wanted = {t.task_id: t for t in tasks}
    chosen = [e for e in imported.episodes if e.task_id in wanted and e.sample_idx < samples]
    now = datetime.now()
    task_set_name = chosen[0].task_set_id if chosen else None
    with store.transaction() as con:
        con.execute("DELETE FROM eval_results WHERE eval_id = ? AND checkpoint_id = ?", [eval_id, ref.checkpoint_id])
        con.execute("DELETE FROM eval_models WHERE eval_id = ? AND checkpoint_id = ?", [eval_id, ref.checkpoint_id])
        con.execute("INSERT INTO eval_models VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [eval_id, ref.checkpoint_id, ref.label, str(imported.path), ref.run_id, ref.step,
                     base.checkpoint_id, now])
        if con.execute("SELECT 1 FROM checkpoints WHERE run_id = ? AND step = 0", [ref.run_id]).fetchone() is None:
            con.execute("INSERT INTO checkpoints (run_id, step, path, policy_version, created_at) "
                        "VALUES (?, 0, ?, 0, ?)", [ref.run_id, imported.model, now])
        for e in chosen:
            task = wanted[e.task_id]
            passed = e.reward is not None and e.reward >= pass_threshold
            row = [eval_id, ref.label, ref.checkpoint_id, str(imported.path), ref.run_id, ref.step, task_set_name,
                   e.task_id, task.provenance.cluster_id, task.split, e.sample_idx, e.seed, e.rollout_id, e.reward,
                   passed, exact_json.dumps(e.scorer_details, sort_keys=False), e.scorer_error, e.harness_error,
                   e.stop_reason, e.tokens_in, e.tokens_out, e.latency_s, now, None]
            con.execute(f"INSERT INTO eval_results VALUES ({', '.join('?' * len(row))})", row)
    return ref
