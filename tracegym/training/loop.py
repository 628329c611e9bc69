"""`tracegym train`: the warm start, then GRPO steps pulled from a rollout source, with checkpoints and metrics.

Steps are counted once across both phases: warm-start steps 1..W, then GRPO steps W+1..W+N. The step
count is also the policy version of the weights, what staleness is measured in, and the checkpoint name.

    resume? -> load the latest checkpoint (weights, optimizer, RNG, step, data position); forget later rows
    warm start (W steps): supervised next-action steps on successful traces; checkpoint kept at step W
    GRPO (N steps): batch = source.next_batch(...); trainer.step(batch, lr(step)); source.publish(weights, step)
    every `checkpoint_every` steps and at the end: checkpoint; every step: metrics (+ rollouts) to the store

A run killed with SIGKILL at any point resumes from its latest checkpoint and repeats the steps after
it exactly: the task order, the warm-start batches and every episode's sampling seed are functions of
the step and the run seed, and the optimizer state and weights are restored bit for bit.

Every GRPO step also stores its training reward per failure cluster (tracegym/training/cluster_reward.py). With
`tasks.sampling: clusters` those rewards steer the task order, a curriculum over clusters
(tracegym/training/curriculum.py); a resumed run rebuilds it from the rewards of the steps before the resume.
Beside them each step stores what the policy wrote per cluster (tracegym/training/replies.py: hollow replies,
reply length, diversity), and the hack monitor (tracegym/training/hack_monitor.py) warns of a cluster whose reward
rises while its replies turn hollow; a resumed run replays it too.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from tracegym.errors import ConfigError, NotFoundError, is_interrupt
from tracegym.output import literal
from tracegym.samplers.rollouts import GroupOrder, RolloutBatch, RolloutSource
from tracegym.tasks.prompts import openai_tool_list, shorten_task
from tracegym.training.checkpoint import (
    TrainerState,
    capture_rng,
    check_run_dir,
    create_run_dir,
    latest_checkpoint,
    load_state,
    mark_kept,
    private_run_dir,
    restore_rng,
    resumed_run_id,
)
from tracegym.training.cluster_reward import batch_cluster_rewards, cluster_key, cluster_metrics
from tracegym.training.config import TrainConfig
from tracegym.training.curriculum import ClusterCurriculum, stored_history, task_order
from tracegym.training.display import RunDisplay
from tracegym.training.grpo.trainer import PolicyTrainer, Trainer, make_optimizer
from tracegym.training.hack_monitor import HackMonitor, HackWarning, find_example, stored_figures
from tracegym.training.metrics import PoolSync, RunRecorder
from tracegym.training.pools.watch import PoolWatch
from tracegym.training.replies import batch_cluster_replies, replies_metrics, task_keys
from tracegym.training.schedule import learning_rate
from tracegym.training.sources import in_process, make_source, sampler_precision
from tracegym.training.trained_weights import TrainedWeights

if TYPE_CHECKING:
    from rich.console import Console
    from transformers import PreTrainedTokenizerBase

    from tracegym.tasks.spec import TaskSpec
    from tracegym.tasks.taskset import TaskSet
    from tracegym.training.parallel.ranks import Launch


IDLE_STEPS = 10
"""GRPO steps in a row that train nothing before the run says so."""


class IdleSteps:
    """Counts GRPO steps in a row that took no optimizer step (every group's rewards equal, so no advantage). A
    policy that gives one reply to every task ends up there for good: nothing then moves it, and the display alone
    shows only a run of skipped groups."""

    def __init__(self) -> None:
        self.streak = 0

    def note(self, step: int, metrics: Mapping[str, float]) -> str | None:
        """A message when a streak reaches IDLE_STEPS (once per streak), else None."""
        self.streak = 0 if metrics.get("train/optimizer_steps", 0.0) > 0 else self.streak + 1
        if self.streak != IDLE_STEPS:
            return None
        return (f"step {step}: the last {IDLE_STEPS} GRPO steps trained nothing (every group's rewards were equal): "
                "the policy may have settled on one reply for every task. grpo.dynamic_sampling samples other groups "
                "in place of such groups; tasks.difficulty keeps the tasks it sometimes solves")


@dataclass
class TrainResult:
    run_id: str
    run_dir: Path
    step: int
    checkpoint: Path | None
    warm_start_checkpoint: Path | None = None
    counts: dict[str, object] = field(default_factory=dict)


def select_tasks(
    task_set: TaskSet, config: TrainConfig, tokenizer: PreTrainedTokenizerBase, split: str | None = None
) -> tuple[list[TaskSpec], int]:
    """The tasks of the split (default: the training split), shortened by the context policy, and how many
    were left out for a prompt longer than `prompt.max_tokens`."""
    from tracegym.harnesses.chat_template import ChatRenderer

    chosen = config.tasks.select(task_set.tasks, split)  # type: ignore[arg-type]
    tasks, too_long = [], 0
    for task in chosen:
        short = shorten_task(task, config.prompt)
        if config.prompt.max_tokens is not None:
            n = len(ChatRenderer(tokenizer, openai_tool_list(short.tools)).ids(short.messages()))
            if n > config.prompt.max_tokens:
                too_long += 1
                continue
        tasks.append(short)
    if config.tasks.max_tasks is not None:
        tasks = tasks[: config.tasks.max_tasks]
    return tasks, too_long


def _with_current_defaults(saved: dict[str, Any]) -> dict[str, Any]:
    """A run folder's saved config as this version resolves it (settings added since take their defaults); as
    saved when this version cannot read it (a setting removed since), so that resume names the difference."""
    from tracegym.training.config import parse_train_config

    try:
        return parse_train_config(saved, Path("config.json")).resolved()
    except ConfigError:
        return saved


def heldout_source_tasks(task_set: TaskSet, train_split: str) -> set[str]:
    """The source tasks (τ-bench task ids, instances, sessions) behind every task outside the training split."""
    return {t.provenance.source_task for t in task_set.tasks if t.split != train_split}


class _Run:
    """The state of one `train` call."""

    def __init__(self, config: TrainConfig, store_path: Path | None, console: Console, resume: bool,
                 launch: Launch | None, task_set: TaskSet) -> None:
        from tracegym.models.load import load_tokenizer

        self.config, self.store_path, self.launch, self.console = config, store_path, launch, console
        # The run folder is checked first and written last, once the task set and the model have loaded: a start
        # that fails on them leaves no run behind, neither to resume nor to clear.
        resumed = (resumed_run_id(config.run_dir, config.resolved(), refill=_with_current_defaults) if resume
                   else None)
        replaced = None if resume else check_run_dir(
            config.run_dir, lambda run_id: RunRecorder(store_path, run_id).completed_steps())
        self.tokenizer = load_tokenizer(config.model.ref)
        self.task_set = task_set
        self.tasks, too_long = select_tasks(self.task_set, config, self.tokenizer)
        if not self.tasks:
            raise NotFoundError(f"No {config.tasks.split} tasks to train on in {config.tasks.task_set} "
                                f"({too_long} longer than prompt.max_tokens). Fix: check tasks.split, "
                                "tasks.clusters and prompt.max_tokens.")
        self.cluster_of = {t.task_id: cluster_key(t) for t in self.tasks}
        self.known_keys = {t.task_id: task_keys(t) for t in self.tasks}
        self.counts: dict[str, object] = {"tasks": len(self.tasks), "tasks_too_long": too_long,
                                          "sampler_precision": sampler_precision(config)}
        self.policy, self.state = self._load(resume)
        self.run_id = resumed or self._create(replaced)
        if resumed:
            private_run_dir(config.run_dir)
        self.recorder = RunRecorder(store_path, self.run_id)
        self.counts["trainable_parameters"] = self.policy.set_trainable()
        self.total = config.warmup.steps + config.steps
        self.pool_sync = PoolSync()
        self.monitor = HackMonitor(config.monitor)

    def _create(self, replaced: str | None) -> str:
        """A new run in the run folder; the failed start it replaces, if any, is dropped from the store."""
        run_id = create_run_dir(self.config.run_dir, self.config.resolved())
        if replaced is not None:
            RunRecorder(self.store_path, replaced).forget()
            self.console.print(f"[yellow]{literal(self.config.run_dir)} held run {literal(replaced)}, which wrote no "
                               f"checkpoint and completed no step: run {literal(run_id)} replaces it.[/yellow]")
        return run_id

    def _load(self, resume: bool) -> tuple[TrainedWeights, TrainerState]:
        checkpoint = latest_checkpoint(self.config.run_dir) if resume else None
        self.resumed_from = checkpoint
        if resume and checkpoint is None:
            every, warm = self.config.checkpoint_every, self.config.warmup.steps
            first = min(warm or every, every, warm + self.config.steps)
            self.console.print(f"[yellow]No checkpoint yet in {literal(self.config.run_dir)}: starting again from step "
                               f"0 (the first is written at step {first}).[/yellow]")
        if checkpoint is None:
            torch.manual_seed(self.config.seed)
            random.seed(self.config.seed)
            return TrainedWeights.load(self.config), TrainerState(step=0, optimizer_phase="none", optimizer={})
        state = load_state(checkpoint)
        restore_rng(state.rng)
        return TrainedWeights.load(self.config, checkpoint), state

    @property
    def pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        return int(pad if pad is not None else self.tokenizer.eos_token_id)

    def checkpoint(self, optimizer_state: dict[str, Any], phase: str, keep: bool = False,
                   trainer: PolicyTrainer | None = None) -> None:
        """Save the policy (read through `trainer` when it shards it) and the trainer state."""
        self.state.optimizer, self.state.optimizer_phase = optimizer_state, phase
        self.state.rng, self.state.keep = capture_rng(), keep
        folder = self.policy.save(self.tokenizer, self.state, trainer)
        if keep:
            mark_kept(folder)
        self.recorder.checkpoint(self.state.step, folder, self.state.step)

    def due(self, step: int) -> bool:
        return step % self.config.checkpoint_every == 0 or step == self.total


def train(config: TrainConfig, *, resume: bool = False, store_path: Path | None = None,
          console: Console | None = None, launch: Launch | None = None, allow_hackable: bool = False) -> TrainResult:
    """Run (or resume) a training run to its last step; see the module doc. `launch`: this process is rank 0 of
    ranks that torchrun started (tracegym/training/parallel/ranks.py); without it, a sharded run spawns its ranks.
    A task set whose reward a hollow reply earns on more than `tasks.max_hackable` of its tasks is refused
    (`HackableRewardError`, before any model loads) unless `allow_hackable`."""
    from transformers.utils import logging as hf_logging

    from tracegym.output import err
    from tracegym.tasks.taskset import load_task_set
    from tracegym.training.hackable import refuse_hackable

    hf_logging.disable_progress_bar()  # the run's own display reports progress
    console = console or err
    task_set = load_task_set(config.tasks.task_set)
    hackable = refuse_hackable(task_set, config, allow_hackable)
    if hackable.tasks:
        console.print(f"[yellow]Training on a hackable reward[/yellow] ({len(hackable.tasks)} of {hackable.selected} "
                      f"tasks: {literal(hackable.describe())}).")
    run = _Run(config, store_path, console, resume, launch, task_set)
    run.counts["hackable_tasks"] = len(hackable.tasks) if hackable.probed else None
    from tracegym.models.load import model_identity

    run.recorder.start(config.resolved(), config.run_dir, model_identity(config.model.ref),
                       run.task_set.manifest.name)
    run.recorder.forget_after(run.state.step)
    try:
        with RunDisplay(run.console, run.run_id, run.total, config.warmup.steps) as display:
            if run.state.step < config.warmup.steps:
                _warm_start(run, display)
            if run.state.step < run.total:
                _grpo(run, display)
            elif launch is not None:
                from tracegym.training.parallel.ranks import dismiss

                dismiss(launch)
    except BaseException as e:
        if not is_interrupt(e):
            run.recorder.finish("failed")
            raise
        # Ctrl-C, or SIGTERM under `tracegym train`, perhaps in mid-query: resumable from the last checkpoint.
        run.recorder.finish("interrupted")
        if isinstance(e, KeyboardInterrupt):
            raise
        raise KeyboardInterrupt from e
    run.recorder.finish("completed")
    return TrainResult(run.run_id, config.run_dir, run.state.step, latest_checkpoint(config.run_dir),
                       run.policy.warm_start_folder(), run.counts)


def _warm_start(run: _Run, display: RunDisplay) -> None:
    from tracegym.models.load import stop_token_ids
    from tracegym.store import open_store
    from tracegym.training.warmup import build_examples, supervised_step, warmup_batch

    config = run.config
    with open_store(run.store_path) as store:
        data = build_examples(store, run.tokenizer, config.warmup, config.prompt,
                              stop_token_ids(run.policy.model, run.tokenizer),
                              heldout_source_tasks(run.task_set, config.tasks.split), config.seed)
    run.counts["warmup"] = data.counts
    if not data.examples:
        raise NotFoundError(f"The warm start found no examples ({data.counts}). Fix: ingest traces with outcome "
                            "success (of warmup.formats), or set warmup.steps: 0.")
    display.note(f"warm start: {len(data.examples)} examples from {data.counts['traces']} successful traces")
    optimizer = make_optimizer(run.policy.model, config.warmup.lr, config.optim)
    if run.state.optimizer_phase == "warmup":
        optimizer.load_state_dict(run.state.optimizer)
    for step in range(run.state.step, config.warmup.steps):
        batch = warmup_batch(data.examples, step, config.warmup.batch_size, config.seed)
        started = time.perf_counter()
        metrics = supervised_step(run.policy.model, optimizer, batch, config.optim.micro_batch_tokens,
                                  config.optim.grad_clip, run.pad_id)
        metrics["time/train_s"] = time.perf_counter() - started
        run.state.step = step + 1
        run.recorder.log(run.state.step, metrics)
        display.update(run.state.step, metrics)
        if run.state.step == config.warmup.steps or run.due(run.state.step):
            run.checkpoint(optimizer.state_dict(), "warmup", keep=run.state.step == config.warmup.steps)


def _grpo(run: _Run, display: RunDisplay) -> None:
    from tracegym.models.load import stop_token_ids

    config = run.config
    if config.tasks.difficulty is not None:
        _filter_by_difficulty(run, display, config.tasks.difficulty.samples)
    order = _task_order(run)
    _replay_monitor(run)
    # The samplers' copy of the weights is taken before the trainer may shard them.
    source = make_source(config, run.policy, run.task_set, run.tasks, run.tokenizer,
                         stop_token_ids(run.policy.model, run.tokenizer), run.state.step,
                         run.state.groups_consumed, order)
    try:
        with _trainer(run) as trainer:
            source.start()
            _grpo_steps(run, display, trainer, source, order, _pool_watch(run, source))
    finally:
        source.close()


def _pool_watch(run: _Run, source: RolloutSource) -> PoolWatch | None:
    """Rollout cost and quarantine of the sampler pools (asynchronous runs), carried over a resume."""
    if in_process(run.config):
        return None
    from tracegym.store import open_store

    watch = PoolWatch(run.config, run.recorder, source)
    if run.state.step > run.config.warmup.steps:
        with open_store(run.store_path) as store:
            watch.resume(store, run.state.step)
    return watch


@contextmanager
def _trainer(run: _Run) -> Iterator[PolicyTrainer]:
    """The GRPO trainer: one process, or rank 0 of `parallel.world_size` FSDP2 ranks
    (tracegym/training/parallel/ranks.py)."""
    config, policy = run.config, run.policy
    reference = policy.reference()
    if config.parallel.kind == "fsdp":
        from tracegym.training.parallel.ranks import RankStart, sharded_trainer

        resumed = run.resumed_from if run.state.optimizer_phase == "grpo" else None
        weights, reference_ref = policy.grpo_start(resumed), policy.reference_ref()
        start = RankStart(str(weights) if weights is not None else None,
                          str(reference_ref) if reference_ref is not None else None, run.pad_id)
        with sharded_trainer(policy.model, config, start, run.launch, reference) as sharded:
            yield sharded
        return
    trainer = Trainer(policy.model, config.optim, config.grpo, config.loss, config.sampler.temperature, run.pad_id,
                      reference=reference)
    if run.state.optimizer_phase == "grpo":
        trainer.optimizer.load_state_dict(run.state.optimizer)
    yield trainer


def _grpo_steps(run: _Run, display: RunDisplay, trainer: PolicyTrainer, source: RolloutSource,
                order: GroupOrder[TaskSpec], pools: PoolWatch | None) -> None:
    deaths, idle = 0.0, IdleSteps()
    for step in range(run.state.step, run.total):
        metrics, batch, warnings = _grpo_step(run, trainer, source, step, order)
        if pools is not None:
            metrics.update(pools.costs(batch))
        run.recorder.log(run.state.step, metrics, batch.stored_episodes(run.state.step))
        warnings = [_record_warning(run, w) for w in warnings]
        if pools is not None:
            for verdict in pools.judge(run.state.step, metrics, batch):
                display.note(f"step {run.state.step}: sampler pool {verdict.pool} quarantined ({verdict.reason()}); "
                             "training goes on with the other pools")
        display.update(run.state.step, metrics, hacking=[w.cluster for w in warnings])
        for warning in warnings:
            display.note(warning.message())
        if message := idle.note(run.state.step, metrics):
            display.note(message)
        if metrics.get("source/sampler_deaths", 0.0) > deaths:
            deaths = metrics["source/sampler_deaths"]
            display.note(f"step {run.state.step}: a sampler process died ({deaths:.0f} so far, "
                         f"{metrics.get('source/sampler_restarts', 0.0):.0f} restarted); training goes on")
        if run.due(run.state.step):
            run.checkpoint(trainer.optimizer_state(), "grpo", trainer=trainer)


def _filter_by_difficulty(run: _Run, display: RunDisplay, samples: int) -> None:
    from tracegym.models.load import stop_token_ids
    from tracegym.training.difficulty import filter_tasks, measure

    display.note(f"difficulty filter: sampling {len(run.tasks)} training tasks x "
                 f"{samples} (or reading {run.config.run_dir.name}/difficulty.json)")
    run.tasks, record = filter_tasks(run.config, run.tasks, lambda: measure(
        run.config, run.task_set, run.tasks, run.policy.model, run.tokenizer,
        stop_token_ids(run.policy.model, run.tokenizer),
        run.config.warmup.steps))
    run.counts["difficulty"] = record["counts"]
    display.note(f"difficulty filter: kept {len(run.tasks)} tasks ({record['counts']})")


def _task_order(run: _Run) -> GroupOrder[TaskSpec]:
    """The run's task order; a resumed curriculum replays the per-cluster rewards of the steps before the resume."""
    from tracegym.store import open_store

    order = task_order(run.config, run.tasks)
    done = range(run.config.warmup.steps + 1, run.state.step + 1)
    if isinstance(order, ClusterCurriculum) and done:
        with open_store(run.store_path) as store:
            order.replay(stored_history(store, run.run_id, done))
    return order


def _replay_monitor(run: _Run) -> None:
    """A resumed run's hack monitor, given the per-cluster figures of the GRPO steps before the resume."""
    from tracegym.store import open_store

    done = range(run.config.warmup.steps + 1, run.state.step + 1)
    if done:
        with open_store(run.store_path) as store:
            run.monitor.replay(stored_figures(store, run.run_id, done))


def _record_warning(run: _Run, warning: HackWarning) -> HackWarning:
    """Store a warning (its example looked up among the stored rollouts when only replayed steps flagged any)."""
    if warning.example is None:
        from tracegym.store import open_store

        keys = {task: run.known_keys[task] for task, cluster in run.cluster_of.items() if cluster == warning.cluster}
        with open_store(run.store_path) as store:
            warning = replace(warning, example=find_example(store, run.run_id, keys, warning.split_step,
                                                            warning.step))
    run.recorder.hack_warning(warning)
    return warning


def _grpo_step(run: _Run, trainer: PolicyTrainer, source: RolloutSource, step: int,
               order: GroupOrder[TaskSpec]) -> tuple[dict[str, float], RolloutBatch, list[HackWarning]]:
    curriculum = order.metrics() if isinstance(order, ClusterCurriculum) else {}
    started = time.perf_counter()
    batch = source.next_batch(run.config.grpo.batch_groups, trainer_version=step)
    waited = time.perf_counter() - started
    lr = learning_rate(step - run.config.warmup.steps, run.config.steps, run.config.optim)
    metrics = trainer.step(batch.groups, lr)
    metrics["optim/lr"] = lr
    trained = time.perf_counter() - started - waited
    run.state.step = step + 1
    run.state.groups_consumed += batch.consumed
    metrics.update(run.policy.publish(source, run.state.step, trainer))
    metrics.update({"time/wait_s": waited, "time/train_s": trained,
                    "time/publish_s": time.perf_counter() - started - waited - trained,
                    "train/tokens_per_s": metrics.get("train/tokens", 0.0) / trained if trained > 0 else 0.0})
    metrics.update(batch.stats)
    metrics.update(batch.staleness(step))
    metrics.update(source.totals())
    metrics.update(run.pool_sync.metrics(source.pool_figures()))
    rewards = batch_cluster_rewards(batch, run.cluster_of)
    replies = batch_cluster_replies(batch, run.cluster_of, run.known_keys)
    metrics.update({**cluster_metrics(rewards), **replies_metrics(replies), **curriculum})
    if isinstance(order, ClusterCurriculum):
        order.observe({cluster: mean for cluster, (mean, _) in rewards.items()})
    return metrics, batch, run.monitor.observe(run.state.step, rewards, replies)
