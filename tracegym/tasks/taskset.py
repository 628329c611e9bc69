"""Task-set folders: the manifest, loading a folder back, and registering it in the store.

A task set is a folder:

    manifest.yaml    what was generated, from which clusters, with which options
    README.md        the same, for people
    evals.yaml       a copy of the evals the tasks are bound to
    tasks/*.yaml     one TaskSpec per file
    rejected/        the drafted tasks that failed a reward gate: tasks/*.yaml as above, and gates.jsonl, each one's
                     gate results (reasons, probes with rewards and replies); never read as tasks
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tracegym.errors import ConfigError, NotFoundError
from tracegym.evals.scorers import Scorer, ScorerContext, scorer_for
from tracegym.evals.scorers.config import load_evals
from tracegym.tasks.spec import Harness, Split, TaskSpec, load_spec
from tracegym.yamlfile import load_model

if TYPE_CHECKING:
    from tracegym.evals.scorers.base import StoreReader
    from tracegym.store import Store

MANIFEST = "manifest.yaml"
TASKS_DIR = "tasks"
EVALS_COPY = "evals.yaml"
REJECTED_DIR = "rejected"
REJECTED_RESULTS = "gates.jsonl"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class GateCounts(_Strict):
    """What the gates did with one cluster's tasks (`tracegym.harnesses.gates`)."""

    checked: int = Field(ge=0)
    """Tasks the gates probed."""
    rejected: int = Field(ge=0)
    """Tasks that failed at least one gate (left out of the set's tasks at generation, written to rejected/)."""
    reasons: dict[str, int] = {}
    """Failed gates by reason (no_reference, reference_fails, empty_pays, failing_action_pays, wrong_shape_pays);
    a task that fails several counts under each."""
    references: dict[str, int] = {}
    """Tasks by where their reference came from: recorded_turn (the task's own trace, at the cut), sibling_turn
    (another trace of the same source task), later_turn (the own trace, later), gold, file:PATH (a row of
    --references), model:NAME (a sample of --reference-model), none."""
    model_sampled: int = Field(0, ge=0)
    """Tasks still without a passing reference for which --reference-model sampled replies."""
    model_none_passed: int = Field(0, ge=0)
    """Of those, the tasks none of whose samples passed: no reference could be found for them."""
    hackable: dict[str, dict[str, int]] = {}
    """Eval -> hollow probe -> tasks (of those that passed) where that probe's reply earned the eval's reward: the
    reward a task trains on, or a part of a combined one (`tracegym.tasks.hollow_probes`)."""
    hackable_tasks: dict[str, int] = {}
    """Eval -> tasks where at least one hollow probe earned it."""


class GateSettings(_Strict):
    threshold: float
    """The pass threshold: a reference must reach it, a degenerate reply must stay below it."""
    harness_config: str | None = None
    """The harness config the probes ran under (None: the defaults)."""
    references_file: str | None = None
    """The --references file whose rows served as references where the recording gave none that passed."""
    reference_model: str | None = None
    """The --reference-model that sampled references for the tasks still lacking one."""
    reference_samples: int | None = None
    """Its samples per task."""
    hollow_probes: bool = False
    """Whether the hollow probes ran (each task's `hackable` is then known; sets gated before they existed say
    False)."""


class ClusterEntry(_Strict):
    cluster_id: str
    """The failure cluster."""
    rank: int | None = None
    """Its rank when mined (1 = most important)."""
    detector: str
    """The detector that found it."""
    signature: str
    """Its signature."""
    tasks: int = Field(ge=0)
    """Tasks drawn from it (after merging duplicates)."""
    merged: int = Field(0, ge=0)
    """Its cuts merged into tasks of an earlier cluster or trace (listed in their provenance.duplicates)."""
    gates: GateCounts | None = None
    """What the gates did with its tasks; None when generated with --no-gates."""


class TaskEntry(_Strict):
    task_id: str
    """The task's id."""
    file: str
    """Its file, relative to the task-set folder."""
    split: Split
    """train or heldout."""
    harness: Harness
    """Its harness."""
    cluster_id: str | None = None
    """Its failure cluster."""
    trace_id: str
    """Its source trace."""
    reference: str | None = None
    """Where the gates' reference came from (recorded_turn, sibling_turn, later_turn, gold, file:PATH,
    model:NAME: the last two are kept in the task's provenance.reference); None when ungated."""
    reference_trace: str | None = None
    """The trace that recorded the reference: the source trace, or for sibling_turn the sibling's id."""
    hackable: dict[str, list[str]] | None = None
    """Eval -> the hollow probes whose reply earned it on this task (empty: none did); None when not probed."""


class Manifest(_Strict):
    manifest_version: Literal[1] = 1
    """Format version of the manifest."""
    name: str
    """The task set's name and store id."""
    seed: int
    """The seed it was generated with."""
    evals_file: str = EVALS_COPY
    """The evals file, relative to the folder."""
    evals_sha256: str
    """Hash of the evals file as generated (edits show up as a mismatch)."""
    options: dict[str, Any]
    """The generation options."""
    counts: dict[str, int]
    """tasks, train, heldout, failures, drafts_merged, ..."""
    clusters: list[ClusterEntry]
    """The clusters drawn from, in rank order."""
    tasks: list[TaskEntry]
    """Every task, in file order."""
    gates: GateSettings | None = None
    """How the tasks were gated before they were written; None when generated with --no-gates."""


@dataclass
class TaskSet:
    path: Path
    manifest: Manifest
    tasks: list[TaskSpec]
    _scorers: dict[tuple[Any, ...], Scorer] = field(default_factory=dict, repr=False)

    def split(self, split: Split) -> list[TaskSpec]:
        return [t for t in self.tasks if t.split == split]

    @property
    def evals_path(self) -> Path:
        return self.path / self.manifest.evals_file

    def scorer(self, task: TaskSpec, store: StoreReader | None = None) -> Scorer:
        """The scorer `task` is bound to, built once per binding (`store` is needed by label evals only)."""
        refs = tuple((e.name, e.weight) for e in task.scorer.evals)
        key = (task.scorer.evals_file, refs, id(store))
        if key not in self._scorers:
            evals = load_evals(self.path / task.scorer.evals_file)
            self._scorers[key] = scorer_for(evals, list(refs), ScorerContext(evals.folder, store))
        return self._scorers[key]


def load_task_set(path: Path | str) -> TaskSet:
    """Read a task-set folder and validate every file in it against the manifest."""
    path = Path(path)
    if not (path / MANIFEST).is_file():
        raise NotFoundError(f"{path} is not a task set: it has no {MANIFEST}. "
                            "Fix: point at a folder written by `tracegym tasks generate`.")
    manifest = load_manifest(path / MANIFEST)
    tasks = []
    for entry in manifest.tasks:
        file = path / entry.file
        if not file.is_file():
            raise ConfigError(f"{path / MANIFEST}: lists {entry.file}, which is missing. Fix: regenerate the task set.")
        spec = load_spec(file)
        if spec.task_id != entry.task_id or spec.split != entry.split:
            raise ConfigError(f"{file}: task_id/split ({spec.task_id}, {spec.split}) differ from the manifest's "
                              f"({entry.task_id}, {entry.split}). Fix: regenerate the task set.")
        tasks.append(spec)
    return TaskSet(path, manifest, tasks)


def load_rejected(path: Path) -> list[dict[str, Any]] | None:
    """The gate results of a task set's rejected tasks, in task order; None when it has no rejected/ folder."""
    results = path / REJECTED_DIR / REJECTED_RESULTS
    if not results.is_file():
        return None
    out = []
    for n, line in enumerate(results.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            out.append(json.loads(line))
        except ValueError as e:
            raise ConfigError(f"{results}:{n}: not JSON ({e}). Fix: regenerate the task set.") from None
    return out


def load_manifest(path: Path, text: str | None = None) -> Manifest:
    manifest, _ = load_model(path, Manifest, text)
    return manifest


def register_task_set(store: Store, task_set: TaskSet) -> None:
    """Record the task set and its tasks in the store, replacing an earlier one of the same name."""
    m = task_set.manifest
    with store.transaction() as con:
        con.execute("DELETE FROM tasks WHERE task_set_id = ?", [m.name])
        con.execute("DELETE FROM task_sets WHERE task_set_id = ?", [m.name])
        con.execute("INSERT INTO task_sets (task_set_id, path, n_tasks, seed, manifest) VALUES (?, ?, ?, ?, ?)",
                    [m.name, str(task_set.path.resolve()), len(task_set.tasks), m.seed, m.model_dump_json()])
        con.executemany(
            "INSERT INTO tasks (task_id, task_set_id, split, source_trace_id, cluster_id, detector, harness, "
            "path, spec) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [[t.task_id, m.name, t.split, t.provenance.trace_id, t.provenance.cluster_id, t.provenance.detector,
              t.harness, str((task_set.path / TASKS_DIR / f"{t.task_id}.yaml").resolve()),
              json.dumps(t.model_dump(mode="json", exclude_none=True))] for t in task_set.tasks],
        )
