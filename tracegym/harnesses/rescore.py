"""Re-scoring stored rollouts with the current evals, without sampling again.

Each stored episode's conversation is scored again by the scorer its task is bound to, read from the task set's
evals.yaml as it is now (or from another evals file). The new rewards are written under a new score version
(`rollout_scores`, one row per rollout), beside the reward stored with the rollout (version 0) and every
earlier version; nothing is overwritten, and `rollout_score_versions` reads them all.

Not rescored, and listed with the reason, per cluster: episodes the harness or the policy ended before scoring
(`unscored`), episodes whose task is no longer in its set (`task_missing`), and episodes whose reward read a
workspace (a command eval on a shell or proxy task: `workspace_gone`). The workspace is removed once the
episode is scored, and the rollout record holds the conversation, not the workspace's files (those came from the
harness config's template and the commands run in the sandbox), so there is nothing to re-create it from:
those episodes are sampled again to be scored with the new eval.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracegym import exact_json
from tracegym.episodes.record import Episode
from tracegym.episodes.rollout_table import read_rollouts
from tracegym.errors import ConfigError, NotFoundError, TracegymError
from tracegym.evals.scorers import Scorer, ScorerContext, scorer_for
from tracegym.evals.scorers.config import CommandEval, EvalsFile, EvalSpec, WeightedEval, load_evals
from tracegym.evals.scorers.trajectory import ScoreResult
from tracegym.harnesses.taskrun import ThreadLocalStore, resolve_task_set, scores_snapshot
from tracegym.tasks.spec import TaskSpec
from tracegym.tasks.taskset import TaskSet

if TYPE_CHECKING:
    from tracegym.evals.scorers.base import StoreReader
    from tracegym.store import Store
    from tracegym.store.access import StoreAccess

_WORKSPACE_HARNESSES = frozenset({"shell", "proxy"})


@dataclass
class ClusterChange:
    rescored: int = 0
    changed: int = 0
    before: float = 0.0
    """Sum of the previous rewards (unscored as 0)."""
    after: float = 0.0
    """Sum of the new rewards (unscored as 0)."""
    not_rescored: dict[str, int] = field(default_factory=dict)
    """Rollouts left at their earlier score, by reason."""


@dataclass(frozen=True)
class NotRescored:
    """A rollout left at its earlier score, and why."""

    rollout_id: str
    task_id: str
    cluster_id: str | None
    reason: str
    """unscored, task_missing or workspace_gone."""
    detail: str
    """What happened and what to do about it."""


@dataclass
class RescoreResult:
    version: int
    scope: dict[str, str]
    rescored: int = 0
    changed: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    clusters: dict[str | None, ClusterChange] = field(default_factory=dict)
    not_rescored: list[NotRescored] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "scope": self.scope, "rescored": self.rescored, "changed": self.changed,
                "skipped": self.skipped,
                "clusters": [{"cluster_id": c, "rescored": v.rescored, "changed": v.changed,
                              "mean_before": v.before / v.rescored if v.rescored else None,
                              "mean_after": v.after / v.rescored if v.rescored else None,
                              "not_rescored": v.not_rescored}
                             for c, v in self.clusters.items()],
                "not_rescored": [n.__dict__ for n in self.not_rescored]}

    def skip(self, episode: Episode, cluster_id: str | None, reason: str, detail: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        counts = self.clusters.setdefault(cluster_id, ClusterChange()).not_rescored
        counts[reason] = counts.get(reason, 0) + 1
        self.not_rescored.append(NotRescored(episode.rollout_id, episode.task_id, cluster_id, reason, detail))


def rescore(store: StoreAccess, run_id: str | None = None, eval_id: str | None = None, task_set: str | None = None,
            evals_path: Path | None = None) -> RescoreResult:
    """Score again every stored rollout of a run, an evaluation or a task set; write version N+1. The store is
    read at the start and written at the end, not held while the scorers run."""
    scope = {k: v for k, v in (("run_id", run_id), ("eval_id", eval_id), ("task_set_id", task_set)) if v}
    if len(scope) != 1:
        raise ConfigError("Say what to rescore: exactly one of --run RUN, --eval EVAL_ID or --tasks SET.")
    with store.reading() as st:
        episodes = read_rollouts(st, run_id=run_id or eval_id, task_set_id=task_set)
        if not episodes:
            raise NotFoundError(f"No stored rollouts for {_describe(scope)}. Fix: see `tracegym runs list` or "
                                "`tracegym sql \"SELECT DISTINCT run_id, task_set_id FROM rollouts\"`.")
        previous = _latest_scores(st, [e.rollout_id for e in episodes])
        sets = {i: resolve_task_set(st, i) for i in sorted({e.task_set_id for e in episodes if e.task_set_id})}
        scorer_store = scores_snapshot(st, [t for ts in sets.values() for t in ts.tasks])
    result = RescoreResult(0, scope)
    try:
        rows, evals_used = _score_all(sets, episodes, evals_path, scorer_store, previous, result)
    finally:
        scorer_store.close()
    with store.writing() as st, st.transaction() as con:
        result.version = int(st.scalar("SELECT coalesce(max(version), 0) FROM score_versions")) + 1
        con.execute("INSERT INTO score_versions VALUES (?, ?, ?, ?, ?, ?)",
                    [result.version, datetime.now(), exact_json.dumps(scope), exact_json.dumps(evals_used),
                     result.rescored, result.changed])
        con.executemany("INSERT INTO rollout_scores VALUES (?, ?, ?, ?, ?, ?)",
                        [[row[0], result.version, *row[1:]] for row in rows])
    return result


def _describe(scope: dict[str, str]) -> str:
    return ", ".join(f"{k} {v!r}" for k, v in scope.items())


def _latest_scores(store: Store, rollout_ids: list[str]) -> dict[str, float | None]:
    rows = store.query("SELECT rollout_id, reward FROM rollout_score_versions WHERE rollout_id IN (SELECT unnest(?)) "
                       "QUALIFY row_number() OVER (PARTITION BY rollout_id ORDER BY version DESC) = 1",
                       [rollout_ids])
    return {r["rollout_id"]: r["reward"] for r in rows}


def _score_all(task_sets: dict[str, TaskSet], episodes: list[Episode], evals_path: Path | None,
               scorer_store: ThreadLocalStore, previous: dict[str, float | None], result: RescoreResult
               ) -> tuple[list[list[Any]], dict[str, str]]:
    """Each episode's new score as a row of `rollout_scores` without its version (known once written)."""
    sets: dict[str, _SetScorers] = {}
    rows: list[list[Any]] = []
    for episode in episodes:
        set_id = episode.task_set_id
        if set_id is None:
            result.skip(episode, None, "task_missing", "the rollout names no task set: nothing says how to score it.")
            continue
        if set_id not in sets:
            sets[set_id] = _SetScorers(task_sets[set_id], evals_path, scorer_store)
        scorers = sets[set_id]
        task = scorers.tasks.get(episode.task_id)
        if task is None:
            result.skip(episode, None, "task_missing", f"task {episode.task_id} is no longer in task set "
                        f"{episode.task_set_id}: nothing says how to score it.")
            continue
        cluster = task.provenance.cluster_id
        if episode.harness_error is not None:
            result.skip(episode, cluster, "unscored", f"the episode ended unscored ({episode.harness_error[:120]}); "
                        "there is no conversation to score.")
            continue
        gone = scorers.workspace_evals(task, episode)
        if gone:
            result.skip(episode, cluster, "workspace_gone", f"command eval {', '.join(gone)} reads the episode's "
                        f"{episode.harness} workspace, removed after scoring, and the rollout holds the conversation, "
                        "not the files. Fix: sample the task again (`tracegym run`, `tracegym eval`) to score it "
                        "with the current evals.")
            continue
        score = _score(scorers(task), task, episode)
        rows.append([episode.rollout_id, score.reward, exact_json.dumps(score.details),
                     score.error, exact_json.dumps(score.components) if score.components else None])
        _count(result, task.provenance.cluster_id, previous.get(episode.rollout_id), score.reward)
    return rows, {name: s.evals_sha256 for name, s in sets.items()}


def _score(scorer: Scorer, task: TaskSpec, episode: Episode) -> ScoreResult:
    trajectory = task.trajectory(episode.continuation, None, episode.counts.malformed_tool_calls)
    try:
        return scorer.score(trajectory)
    except TracegymError as e:  # a scorer that cannot run here: recorded, as the runner records it
        return ScoreResult.failed(f"{type(e).__name__}: {e}")


def _count(result: RescoreResult, cluster: str | None, before: float | None, after: float | None) -> None:
    entry = result.clusters.setdefault(cluster, ClusterChange())
    changed = (before is None) != (after is None) or (
        before is not None and after is not None and not math.isclose(before, after, abs_tol=1e-12))
    entry.rescored += 1
    entry.changed += changed
    entry.before += before or 0.0
    entry.after += after or 0.0
    result.rescored += 1
    result.changed += changed


class _SetScorers:
    """One task set's tasks and scorers, from its evals.yaml as it is now or from `evals_path`."""

    def __init__(self, task_set: TaskSet, evals_path: Path | None, store: StoreReader) -> None:
        self.tasks = {t.task_id: t for t in task_set.tasks}
        self.task_set = task_set
        self.override = load_evals(evals_path) if evals_path is not None else None
        self.store = store
        self._files: dict[Path, EvalsFile] = {}
        self._scorers: dict[tuple[Path, tuple[tuple[str, float], ...]], Scorer] = {}
        path = evals_path if evals_path is not None else task_set.evals_path
        from tracegym.tasks.render import sha256_file

        self.evals_sha256 = f"{path}:{sha256_file(path)}"

    def evals(self, task: TaskSpec) -> EvalsFile:
        if self.override is not None:
            return self.override
        path = (self.task_set.path / task.scorer.evals_file).resolve()
        if path not in self._files:
            self._files[path] = load_evals(path)
        return self._files[path]

    def __call__(self, task: TaskSpec) -> Scorer:
        evals = self.evals(task)
        refs = tuple((e.name, e.weight) for e in task.scorer.evals)
        key = (evals.path, refs)
        if key not in self._scorers:
            self._scorers[key] = scorer_for(evals, list(refs), ScorerContext(evals.folder, self.store))
        return self._scorers[key]

    def workspace_evals(self, task: TaskSpec, episode: Episode) -> list[str]:
        """The command evals (weighted parts included) that read this episode's workspace; none outside a shell
        or proxy episode."""
        if episode.harness not in _WORKSPACE_HARNESSES:
            return []
        evals = self.evals(task)
        return _command_evals([e.name for e in task.scorer.evals], evals.get)


def _command_evals(names: list[str], get: Callable[[str], EvalSpec]) -> list[str]:
    found: list[str] = []
    for name in names:
        spec = get(name)
        if isinstance(spec, WeightedEval):
            found += [n for n in _command_evals(list(spec.parts), get) if n not in found]
        elif isinstance(spec, CommandEval) and name not in found:
            found.append(name)
    return found
