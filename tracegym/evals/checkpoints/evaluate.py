"""Checkpoint evaluation: the base model and each checkpoint on held-out tasks, every sample kept in the store.

Episodes run exactly as in training: the same context policy shortens the tasks, the same harness section
and sampler settings drive them (`TrainConfig`, read from the run folder of the checkpoints, or from
`--config`), through the same episode runner and scorers as `tracegym run`. Every model sees the same
tasks with the same per-episode seeds, so differences pair up task by task (`tracegym.evals.checkpoints.comparison`).

Resuming. An evaluation is named by what decides its samples (`eval_id`: the task set and the settings);
a sample is keyed by (eval_id, checkpoint identity, task, sample index), its seed following from them.
The identity of a local model is the sha256 of its weight files and config, so a run folder whose
latest checkpoint moved on is a new model, and the same weights under another path are the same one.
Finished samples are written in batches (a few seconds' or `WRITE_EVERY` samples' worth, and at the end of
each model: their episodes to `rollouts`, run_id = eval_id, then their rows to `eval_results`), each batch through
a short open of the store, which is never held while models sample; so a killed evaluation loses only the samples
in flight or pending; run again, it skips every sample already in the store, for this comparison or any earlier
one with the same settings.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from tracegym import exact_json
from tracegym.episodes.record import Episode
from tracegym.episodes.rollout_table import write_rollouts
from tracegym.errors import ConfigError
from tracegym.evals.checkpoints.candidates import (
    Candidate,
    any_candidate,
    api_candidate,
    eval_config,
    local_candidate,
    policy_config,
)
from tracegym.harnesses.config import HarnessFactory
from tracegym.harnesses.policy import PolicyClient, make_policy
from tracegym.harnesses.runner import EpisodeJob, RunOptions, derive_seed, run_episode
from tracegym.harnesses.taskrun import TaskScorers, scores_snapshot
from tracegym.models import compute
from tracegym.models.precision import Precision
from tracegym.store.access import BatchedWrites, StoreAccess
from tracegym.tasks.spec import TaskSpec
from tracegym.tasks.taskset import TaskSet, register_task_set
from tracegym.training.config import TrainConfig

if TYPE_CHECKING:
    from tracegym.store import Store

SplitChoice = Literal["train", "heldout"]
WRITE_EVERY, WRITE_EVERY_S = 16, 3.0
"""Samples written to the store together: a batch is written once this many are pending or the oldest has waited
this many seconds, and at the end of each model; a kill loses at most the pending ones and those in flight."""


class EvalOptions(BaseModel):
    """How many samples, from which split, and what counts as a pass."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    split: SplitChoice = "heldout"
    """The tasks evaluated: the held-out split (never trained on), or the training split."""
    samples: int = Field(4, ge=1)
    """Episodes per task and model (k of pass@k)."""
    seed: int = 0
    """Seeds every episode: a task's sample i has the same seed for every model."""
    concurrency: int = Field(16, ge=1)
    """Episodes in flight at once (a local model batches their turns together)."""
    pass_threshold: float = Field(1.0, ge=0, le=1)
    """A sample passes when its reward reaches this."""
    precision: Precision = "fp32"
    """Local models' sampling precision."""
    device: str = "cpu"
    """torch device of local models."""


def settings_record(config: TrainConfig, options: EvalOptions) -> dict[str, Any]:
    """What decides a sample's outcome besides the model: recorded with the evaluation and hashed into its id."""
    return {
        "prompt": config.prompt.model_dump(mode="json"),
        "harness": config.harness.model_dump(mode="json", by_alias=True),
        "sampling": config.sampler.params.model_dump(mode="json"),
        "seed": options.seed,
        "pass_threshold": options.pass_threshold,
        "precision": options.precision,
    }


def evaluation_id(task_set: TaskSet, settings: dict[str, Any]) -> str:
    """`eval-` + 12 hex digits of the task set (name and manifest) and the settings."""
    blob = orjson.dumps({"task_set": task_set.manifest.model_dump(mode="json"), "settings": settings},
                        option=orjson.OPT_SORT_KEYS)
    return f"eval-{hashlib.sha256(blob).hexdigest()[:12]}"


@dataclass
class ModelCounts:
    """Samples of one model in one evaluation."""

    total: int = 0
    reused: int = 0
    ran: int = 0


@dataclass
class Evaluation:
    """A finished (or resumed and finished) evaluation."""

    eval_id: str
    task_set: TaskSet
    tasks: list[TaskSpec]
    candidates: list[Candidate]
    options: EvalOptions
    counts: dict[str, ModelCounts] = field(default_factory=dict)

    @property
    def base(self) -> Candidate:
        return self.candidates[0]


SampleHook = Callable[[Candidate, Episode], None]


def evaluate(store: StoreAccess, task_set: TaskSet, tasks: Sequence[TaskSpec], candidates: Sequence[Candidate],
             config: TrainConfig, options: EvalOptions, on_sample: SampleHook | None = None,
             on_model: Callable[[Candidate, ModelCounts], None] | None = None) -> Evaluation:
    """Evaluate every candidate (the first is the base) on `tasks`, skipping samples already stored."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # the evaluation reports its own progress
    settings = settings_record(config, options)
    result = Evaluation(evaluation_id(task_set, settings), task_set, list(tasks), list(candidates), options)
    with store.writing() as st:
        scorer_store = scores_snapshot(st, tasks)
        try:
            scorers = TaskScorers(task_set, scorer_store)
            scorers.prepare(tasks)  # a broken evals file stops here, before any model loads
            _record_evaluation(st, result, settings)
            _forget_unfinished(st, result.eval_id)
        except BaseException:
            scorer_store.close()
            raise
    harnesses = HarnessFactory(config.harness.harness_config(), Path.cwd())
    run = RunOptions(samples=options.samples, concurrency=options.concurrency, seed=options.seed,
                     sampling=config.sampler.params, limits=config.harness.limits)
    try:
        for candidate in result.candidates:
            counts = _evaluate_one(store, result, candidate, run, harnesses, scorers, on_sample, on_model)
            result.counts[candidate.label] = counts
    finally:
        harnesses.close()
        scorer_store.close()
    return result


def _record_evaluation(store: Store, result: Evaluation, settings: dict[str, Any]) -> None:
    now = datetime.now()
    name = result.task_set.manifest.name
    if not store.scalar("SELECT count(*) FROM task_sets WHERE task_set_id = ?", [name]):
        register_task_set(store, result.task_set)  # results name their tasks; the store must know them
    base_id = result.base.checkpoint_id
    with store.transaction() as con:
        if con.execute("SELECT 1 FROM evaluations WHERE eval_id = ?", [result.eval_id]).fetchone() is not None:
            con.execute("UPDATE evaluations SET updated_at = ? WHERE eval_id = ?", [now, result.eval_id])
        else:
            con.execute("INSERT INTO evaluations VALUES (?, ?, ?, ?, ?)",
                        [result.eval_id, name, json.dumps(settings), now, now])
        for c in result.candidates:
            compared_to = None if c is result.base else base_id
            con.execute("DELETE FROM eval_models WHERE eval_id = ? AND checkpoint_id = ? AND "
                        "base_checkpoint_id IS NOT DISTINCT FROM ?", [result.eval_id, c.checkpoint_id, compared_to])
            con.execute("INSERT INTO eval_models VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [result.eval_id, c.checkpoint_id, c.label, c.location, c.run_id, c.step, compared_to, now])


def _forget_unfinished(store: Store, eval_id: str) -> None:
    """Delete episodes a killed evaluation stored without their result row: those samples run again."""
    with store.transaction() as con:
        con.execute("DELETE FROM rollouts WHERE run_id = ? AND rollout_id NOT IN "
                    "(SELECT rollout_id FROM eval_results WHERE eval_id = ? AND rollout_id IS NOT NULL)",
                    [eval_id, eval_id])


def done_samples(store: Store, eval_id: str, checkpoint_id: str) -> set[tuple[str, int]]:
    """(task_id, sample_idx) of the samples this model already has in this evaluation."""
    rows = store.con.execute("SELECT task_id, sample_idx FROM eval_results WHERE eval_id = ? AND checkpoint_id = ?",
                             [eval_id, checkpoint_id]).fetchall()
    return {(task_id, int(idx)) for task_id, idx in rows}


def _evaluate_one(store: StoreAccess, result: Evaluation, candidate: Candidate, run: RunOptions,
                  harnesses: HarnessFactory, scorers: TaskScorers, on_sample: SampleHook | None,
                  on_model: Callable[[Candidate, ModelCounts], None] | None) -> ModelCounts:
    with store.reading() as st:
        done = done_samples(st, result.eval_id, candidate.checkpoint_id)
    name = result.task_set.manifest.name
    jobs = [EpisodeJob(t, k, derive_seed(run.seed, t.task_id, k), name)
            for t in result.tasks for k in range(run.samples) if (t.task_id, k) not in done]
    counts = ModelCounts(total=len(result.tasks) * run.samples)
    counts.reused = counts.total - len(jobs)
    if on_model is not None:
        on_model(candidate, counts)
    if not jobs:
        return counts
    writes: BatchedWrites[tuple[EpisodeJob, Episode]] = BatchedWrites(
        store, lambda st, samples: _write_samples(st, result, candidate, samples), every=WRITE_EVERY,
        seconds=WRITE_EVERY_S)

    def finished(job: EpisodeJob, episode: Episode) -> None:
        writes.add((job, episode))
        counts.ran += 1
        if on_sample is not None:
            on_sample(candidate, episode)

    policy = _policy(candidate, result.options)
    try:
        compute.run(_run_jobs(policy, jobs, harnesses, run, scorers, candidate.label, finished))
    finally:
        writes.flush()
    return counts


def _write_samples(store: Store, result: Evaluation, candidate: Candidate,
                   samples: Sequence[tuple[EpisodeJob, Episode]]) -> None:
    """The samples' episodes, then their result rows: an episode stored without its row is run again on resume."""
    write_rollouts(store, [episode for _, episode in samples], result.eval_id)
    _write_results(store, result, candidate, samples)


def _policy(candidate: Candidate, options: EvalOptions) -> PolicyClient:
    return make_policy(policy_config(candidate, f"eval:{candidate.label}", options.concurrency, options.precision,
                                     options.device, options.seed))


async def _run_jobs(policy: PolicyClient, jobs: Sequence[EpisodeJob], harnesses: HarnessFactory, run: RunOptions,
                    scorers: TaskScorers, model: str, finished: Callable[[EpisodeJob, Episode], None]) -> None:
    """`run_many` over an explicit list of (task, sample) jobs: only the samples still missing."""
    gate = asyncio.Semaphore(run.concurrency)

    async def one(job: EpisodeJob) -> None:
        async with gate:
            rollout_id = uuid.uuid4().hex
            episode = await run_episode(policy, harnesses.make(job.task, f"ep-{rollout_id}"), job, run.sampling,
                                        run.limits, scorers(job.task), model, rollout_id)
        finished(job, episode)

    try:
        await asyncio.gather(*(one(job) for job in jobs))
    finally:
        await policy.aclose()


def _write_results(store: Store, result: Evaluation, candidate: Candidate,
                   samples: Sequence[tuple[EpisodeJob, Episode]]) -> None:
    rows = [_result_row(result, candidate, job.task, episode) for job, episode in samples]
    with store.transaction() as con:
        con.executemany(f"INSERT INTO eval_results VALUES ({', '.join('?' * len(rows[0]))})", rows)


def _result_row(result: Evaluation, candidate: Candidate, task: TaskSpec, episode: Episode) -> list[Any]:
    passed = episode.reward is not None and episode.reward >= result.options.pass_threshold
    return [result.eval_id, candidate.label, candidate.checkpoint_id, candidate.location, candidate.run_id,
            candidate.step, result.task_set.manifest.name, task.task_id, task.provenance.cluster_id, task.split,
            episode.sample_idx, episode.seed, episode.rollout_id, episode.reward, passed,
            exact_json.dumps(episode.scorer_details, sort_keys=False), episode.scorer_error, episode.harness_error,
            episode.stop_reason, episode.tokens_in, episode.tokens_out, episode.latency_s, datetime.now(),
            exact_json.dumps(episode.components, sort_keys=False) if episode.components else None]


@dataclass
class EvalPlan:
    """What `evaluate` will run: the tasks after the context policy, the models (base first), the settings."""

    task_set: TaskSet
    tasks: list[TaskSpec]
    candidates: list[Candidate]
    config: TrainConfig
    config_source: str
    too_long: int
    in_split: int
    """Tasks of the split before the config's filters (tasks.clusters, tasks.detectors, tasks.max_tasks) and
    prompt.max_tokens left some out."""

    unchanged: list[str] = field(default_factory=list)
    """Checkpoints left out for having the base model's weights: no update changed them."""

    def why_fewer(self) -> str:
        """Why fewer tasks are evaluated than the split holds; empty when none were left out."""
        left_out = self.in_split - len(self.tasks)
        if not left_out:
            return ""
        reasons = []
        if self.too_long:
            reasons.append(f"{self.too_long} longer than prompt.max_tokens ({self.config.prompt.max_tokens})")
        if left_out > self.too_long:
            reasons.append(f"{left_out - self.too_long} outside the config's tasks.clusters, detectors or max_tasks")
        return f"{left_out} of the {self.in_split} left out: {' and '.join(reasons)}"


def plan_evaluation(store: Store, task_set_ref: str, checkpoints: Sequence[str], base: str | None,
                    apis: Sequence[str], config_file: Path | None, options: EvalOptions) -> EvalPlan:
    """Resolve the models, the settings (`--config`, else the checkpoints' run, else defaults) and the tasks."""
    from tracegym.harnesses.taskrun import resolve_task_set
    from tracegym.models.load import load_tokenizer
    from tracegym.training.loop import select_tasks

    task_set = resolve_task_set(store, task_set_ref)
    models = [local_candidate(ref) for ref in checkpoints]
    config, source = eval_config(models, config_file, task_set.path)
    base_ref = base or config.model.ref
    base_model = any_candidate(base_ref)
    # A checkpoint no update changed (every GRPO step's groups had equal rewards) is the base itself.
    unchanged = [m for m in models if m.checkpoint_id == base_model.checkpoint_id]
    kept = [m for m in models if m.checkpoint_id != base_model.checkpoint_id]
    candidates = [base_model, *kept, *(api_candidate(spec) for spec in apis)]
    _check_distinct(candidates)
    tokenizer = load_tokenizer(base_model.path if base_model.path is not None else config.model.ref)
    tasks, too_long = select_tasks(task_set, config, tokenizer, split=options.split)
    if not tasks:
        raise ConfigError(f"No {options.split} tasks of {task_set.manifest.name} to evaluate ({too_long} longer than "
                          f"prompt.max_tokens of {source}). Fix: choose another --split, or relax prompt.max_tokens, "
                          "tasks.clusters or tasks.detectors in the config.")
    return EvalPlan(task_set, tasks, candidates, config, source, too_long, len(task_set.split(options.split)),
                    [m.label for m in unchanged])


def _check_distinct(candidates: Sequence[Candidate]) -> None:
    seen: dict[str, str] = {}
    for c in candidates:
        if c.checkpoint_id in seen:
            raise ConfigError(f"{c.ref!r} and {seen[c.checkpoint_id]!r} are the same model (identical weights). "
                              "Fix: compare a model once; the base is evaluated anyway.")
        seen[c.checkpoint_id] = c.ref
