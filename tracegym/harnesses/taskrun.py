"""Running a task set: pick its tasks, bind their scorers, run the episodes, store them as rollouts.

`tracegym run` is this plus a policy; checkpoint evaluation reuses `TaskScorers`, `select_tasks` and
`scores_snapshot` with its own policies. Neither holds the store while episodes run: it is opened to read what
the run needs at its start and to write the episodes in batches (`tracegym.store.access`).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tracegym.episodes.record import Episode
from tracegym.episodes.rollout_table import write_rollouts
from tracegym.errors import NotFoundError, did_you_mean
from tracegym.evals.scorers import Scorer, ScorerContext, scorer_for
from tracegym.evals.scorers.config import EvalsFile, load_evals
from tracegym.harnesses.config import HarnessFactory
from tracegym.harnesses.policy import PolicyClient
from tracegym.harnesses.runner import RunOptions, run_many
from tracegym.harnesses.summary import summarize
from tracegym.tasks.spec import TaskSpec
from tracegym.tasks.taskset import TaskSet, load_task_set, register_task_set

if TYPE_CHECKING:
    from tracegym.evals.scorers.base import StoreReader
    from tracegym.store import Store
    from tracegym.store.access import StoreAccess

SplitChoice = Literal["train", "heldout", "all"]
_WRITE_EVERY = 16  # episodes per store append while a run goes on: a crash loses at most this many


class ThreadLocalStore:
    """The store as scorers on worker threads see it: each thread queries through its own cursor, since one
    DuckDB connection must not be used from several threads at once (a `label` eval reads the store). `owned`:
    `store` was made for this view (a snapshot), and closes with it."""

    def __init__(self, store: Store, owned: bool = False) -> None:
        self.store = store
        self.owned = owned
        self.path = store.path
        self._local = threading.local()
        self._lock = threading.Lock()
        self._opened: list[Store] = []

    def query(self, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        view = getattr(self._local, "store", None)
        if view is None:
            from tracegym.store import Store  # here: in-process sampling (TaskScorers) runs without duckdb

            with self._lock:
                view = Store(self.store.con.cursor(), self.store.path, self.store.read_only)
                self._opened.append(view)
            self._local.store = view
        return view.query(sql, params)

    def close(self) -> None:
        with self._lock:
            for view in self._opened:
                view.close()
            self._opened.clear()
            if self.owned:
                self.store.close()


def scores_snapshot(store: Store, tasks: Sequence[TaskSpec]) -> ThreadLocalStore:
    """What the scorers of `tasks` read from the store (a `label` eval, the `scores` of their source traces), read
    now: while episodes run, their scorers need no open store, and a score recorded meanwhile changes no reward."""
    from tracegym.store.access import snapshot  # here: in-process sampling runs without duckdb

    traces = {t.provenance.trace_id for t in tasks}
    return ThreadLocalStore(snapshot(store, "scores", "trace_id", traces), owned=True)


class TaskScorers:
    """The scorer of each task, built once per distinct binding (evals file + evals and weights)."""

    def __init__(self, task_set: TaskSet, store: StoreReader | None = None) -> None:
        self.task_set = task_set
        self.store = store
        self._files: dict[Path, EvalsFile] = {}
        self._scorers: dict[tuple[Path, tuple[tuple[str, float], ...]], Scorer] = {}

    def prepare(self, tasks: Sequence[TaskSpec]) -> None:
        """Build every task's scorer now, so a broken evals file stops the run before any episode."""
        for task in tasks:
            self(task)

    def __call__(self, task: TaskSpec) -> Scorer:
        path = (self.task_set.path / task.scorer.evals_file).resolve()
        names = tuple((e.name, e.weight) for e in task.scorer.evals)
        key = (path, names)
        if key not in self._scorers:
            if path not in self._files:
                self._files[path] = load_evals(path)
            evals = self._files[path]
            self._scorers[key] = scorer_for(evals, list(names), ScorerContext(evals.folder, self.store))
        return self._scorers[key]


def resolve_task_set(store: Store, ref: str | Path) -> TaskSet:
    """A task set by folder, or by the name it was registered under in the store."""
    path = Path(ref)
    if path.is_dir():
        return load_task_set(path)
    rows = store.query("SELECT task_set_id, path FROM task_sets ORDER BY task_set_id")
    for row in rows:
        if row["task_set_id"] == str(ref):
            return load_task_set(Path(row["path"]))
    raise NotFoundError(f"No task set {str(ref)!r}: not a folder, and no task set of that name in the store."
                        f"{did_you_mean(str(ref), [r['task_set_id'] for r in rows])} "
                        "Fix: pass a folder written by `tracegym tasks generate`, or see `tracegym tasks list`.")


def select_tasks(task_set: TaskSet, split: SplitChoice = "all", task_ids: Sequence[str] | None = None,
                 limit: int | None = None) -> list[TaskSpec]:
    """The tasks of `split`, or the named ones, in manifest order; at most `limit`."""
    tasks = task_set.tasks if split == "all" else task_set.split(split)
    if task_ids:
        known = {t.task_id: t for t in task_set.tasks}
        missing = [i for i in task_ids if i not in known]
        if missing:
            raise NotFoundError(f"Task set {task_set.manifest.name} has no task {missing[0]!r}."
                                f"{did_you_mean(missing[0], known)} Fix: see `tracegym tasks list "
                                f"{task_set.manifest.name}`.")
        tasks = [known[i] for i in task_ids]
    tasks = tasks[:limit] if limit is not None else tasks
    if not tasks:
        raise NotFoundError(f"Task set {task_set.manifest.name} has no {split} tasks to run. "
                            "Fix: choose another --split.")
    return tasks


def new_run_id(prefix: str = "run") -> str:
    return f"{prefix}-{datetime.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"


@dataclass
class RunResult:
    run_id: str
    task_set: TaskSet
    episodes: list[Episode]
    summary: dict[str, Any]


async def run_task_set(
    store: StoreAccess,
    task_set: TaskSet,
    tasks: Sequence[TaskSpec],
    policy: PolicyClient,
    options: RunOptions,
    harnesses: HarnessFactory,
    model: str | None = None,
    run_id: str | None = None,
    on_episode: Callable[[Episode], None] | None = None,
) -> RunResult:
    """Run `options.samples` episodes per task and append them to the store's rollouts as they finish, in batches
    (`_WRITE_EVERY` episodes, or a few seconds' worth); the store is open only for those writes and the start."""
    from tracegym.store.access import BatchedWrites

    run_id = run_id or new_run_id()
    with store.writing() as st:
        scorer_store = scores_snapshot(st, tasks)
        try:
            scorers = TaskScorers(task_set, scorer_store)
            scorers.prepare(tasks)
            if not st.scalar("SELECT count(*) FROM task_sets WHERE task_set_id = ?", [task_set.manifest.name]):
                register_task_set(st, task_set)  # rollouts name their task; the store must know it
        except BaseException:
            scorer_store.close()
            raise
    writes: BatchedWrites[Episode] = BatchedWrites(
        store, lambda st, episodes: write_rollouts(st, episodes, run_id), every=_WRITE_EVERY)

    def finished(episode: Episode) -> None:
        writes.add(episode)
        if on_episode is not None:
            on_episode(episode)

    try:
        episodes = await run_many(policy, tasks, harnesses.make, options, scorers, task_set.manifest.name, model,
                                  finished)
    finally:
        try:
            writes.flush()
        finally:
            scorer_store.close()
    return RunResult(run_id, task_set, episodes, summarize(episodes))
