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
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from tracegym.errors import ConfigError, NotFoundError, is_interrupt
from tracegym.output import literal
from tracegym.samplers.rollouts import GroupOrder, RolloutBatch
from tracegym.tasks.prompts import openai_tool_list, shorten_task
from tracegym.training.checkpoint import (
    CHECKPOINTS,
    TrainerState,
    capture_rng,
    checkpoint_name,
    init_run_dir,
    latest_checkpoint,
    load_state,
    mark_kept,
    restore_rng,
    save_checkpoint,
)
from tracegym.training.cluster_reward import batch_cluster_rewards, cluster_key, cluster_metrics
from tracegym.training.config import TrainConfig
from tracegym.training.curriculum import ClusterCurriculum, stored_history, task_order
from tracegym.training.display import RunDisplay
from tracegym.training.grpo.trainer import Trainer, make_optimizer, set_trainable
from tracegym.training.metrics import PoolSync, RunRecorder
from tracegym.training.parallel.sharded import ShardedTrainer
from tracegym.training.pools.watch import PoolWatch
from tracegym.training.schedule import learning_rate

if TYPE_CHECKING:
    from rich.console import Console
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from tracegym.models.precision import Precision
    from tracegym.samplers.weights.lora_adapters import AdapterWeights
    from tracegym.tasks.spec import TaskSpec
    from tracegym.tasks.taskset import TaskSet
    from tracegym.training.parallel.ranks import Launch


IDLE_STEPS = 10
"""GRPO steps in a row that train nothing before the run says so."""


class IdleSteps:
    """Counts GRPO steps in a row that took no optimizer step (every group's rewards equal, so no advantage). A
    policy that gives one reply to every task ends up there for good: nothing then moves it (seen on τ-bench when
    every reply turned to text), and the display alone shows only a run of skipped groups."""

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
    counts: dict[str, Any] = field(default_factory=dict)


def select_tasks(
    task_set: TaskSet, config: TrainConfig, tokenizer: PreTrainedTokenizerBase, split: str | None = None
) -> tuple[list[TaskSpec], int]:
    """The tasks of the split (default: the training split), shortened by the context policy, and how many
    were left out for a prompt longer than `prompt.max_tokens`."""
    from tracegym.harnesses.chat_template import ChatRenderer

    chosen = task_set.split(split or config.tasks.split)  # type: ignore[arg-type]
    if config.tasks.clusters is not None:
        chosen = [t for t in chosen if t.provenance.cluster_id in set(config.tasks.clusters)]
    if config.tasks.detectors is not None:
        chosen = [t for t in chosen if t.provenance.detector in set(config.tasks.detectors)]
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


def _sampler_precision(config: TrainConfig) -> str:
    """What the samplers sample in: sampler.precision, or each pool's, "auto" resolved for this machine."""
    if config.async_.max_staleness == 0:
        return config.sampler.precision_on("cpu")
    return ",".join(dict.fromkeys(pool.quantization or pool.resolved_precision for pool in config.sampler_pools()))


def _publish_precision(config: TrainConfig) -> Precision:
    """The precision the samplers' weights travel in (the first pool's, with several)."""
    if config.async_.max_staleness == 0:
        return config.sampler.precision_on("cpu")
    return config.sampler_pools()[0].resolved_precision


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
                 launch: Launch | None) -> None:
        from tracegym.models.load import load_tokenizer
        from tracegym.tasks.taskset import load_task_set

        self.config = config
        self.store_path = store_path
        self.launch = launch
        self.run_id = init_run_dir(config.run_dir, config.resolved(), resume, refill=_with_current_defaults)
        self.recorder = RunRecorder(store_path, self.run_id)
        self.tokenizer = load_tokenizer(config.model.ref)
        self.task_set = load_task_set(config.tasks.task_set)
        self.tasks, too_long = select_tasks(self.task_set, config, self.tokenizer)
        if not self.tasks:
            raise NotFoundError(f"No {config.tasks.split} tasks to train on in {config.tasks.task_set} "
                                f"({too_long} longer than prompt.max_tokens). Fix: check tasks.split, "
                                "tasks.clusters and prompt.max_tokens.")
        self.cluster_of = {t.task_id: cluster_key(t) for t in self.tasks}
        self.counts: dict[str, Any] = {"tasks": len(self.tasks), "tasks_too_long": too_long,
                                       "sampler_precision": _sampler_precision(config)}
        self.console = console
        self.peft: Any = None  # with model.lora: the peft model around `model`, which saves the adapter
        self.model, self.state = self._load(resume)
        if self.peft is None:
            self.counts["trainable_parameters"] = set_trainable(self.model, config.optim)
        else:
            self.counts["trainable_parameters"] = sum(p.numel() for p in self.model.parameters() if p.requires_grad)
        self.total = config.warmup.steps + config.steps
        self.warm_checkpoint: Path | None = None
        self.pool_sync = PoolSync()

    def _load(self, resume: bool) -> tuple[PreTrainedModel, TrainerState]:
        from tracegym.models.load import load_model

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
            model = self._adapted(load_model(self.config.model.ref, "fp32"), None)
            return model.train(), TrainerState(step=0, optimizer_phase="none", optimizer={})
        state = load_state(checkpoint)
        restore_rng(state.rng)
        if self.config.model.lora is not None:
            return self._adapted(load_model(self.config.model.ref, "fp32"), checkpoint).train(), state
        return load_model(checkpoint, "fp32").train(), state

    def _adapted(self, model: PreTrainedModel, checkpoint: Path | None) -> PreTrainedModel:
        """With model.lora: `model` with a fresh adapter, or the checkpoint's (the model peft injected it into)."""
        from tracegym.training import lora

        section = self.config.model.lora
        if section is None:
            return model
        self.peft = (lora.with_adapter(model, section, self.config.model.ref) if checkpoint is None
                     else lora.load_trainable_adapter(model, checkpoint))
        return self.peft.get_base_model()

    @property
    def pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        return int(pad if pad is not None else self.tokenizer.eos_token_id)

    def checkpoint(self, optimizer_state: dict[str, Any], weights: Mapping[str, torch.Tensor] | None, phase: str,
                   keep: bool = False) -> None:
        """Save the model (or `weights`, gathered from sharded ranks, under its names) and the trainer state."""
        self.state.optimizer, self.state.optimizer_phase = optimizer_state, phase
        self.state.rng, self.state.keep = capture_rng(), keep
        if weights is not None and self.peft is not None:  # gathered off the ranks: peft saves its adapter's part
            weights = {f"base_model.model.{name}": tensor for name, tensor in weights.items()}
        folder = save_checkpoint(self.config.run_dir, self.peft or self.model, self.tokenizer, self.state,
                                 self.config.keep_checkpoints, state_dict=weights)
        if keep:
            mark_kept(folder)
            self.warm_checkpoint = folder
        self.recorder.checkpoint(self.state.step, folder, self.state.step)

    def warm_start_folder(self) -> Path | None:
        """The kept warm-start checkpoint: saved by this process, or found in the run folder on resume."""
        return self.warm_checkpoint or _kept_checkpoint(self.config.run_dir, self.config.warmup.steps)

    def due(self, step: int) -> bool:
        return step % self.config.checkpoint_every == 0 or step == self.total


def train(config: TrainConfig, *, resume: bool = False, store_path: Path | None = None,
          console: Console | None = None, launch: Launch | None = None) -> TrainResult:
    """Run (or resume) a training run to its last step; see the module doc. `launch`: this process is rank 0 of
    ranks that torchrun started (tracegym/training/parallel/ranks.py); without it, a sharded run spawns its ranks."""
    from transformers.utils import logging as hf_logging

    from tracegym.output import err

    hf_logging.disable_progress_bar()  # the run's own display reports progress
    run = _Run(config, store_path, console or err, resume, launch)
    run.recorder.start(config.resolved(), config.run_dir, config.model.ref, run.task_set.manifest.name)
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
                       run.warm_start_folder(), run.counts)


def _kept_checkpoint(run_dir: Path, step: int) -> Path | None:
    folder = run_dir / CHECKPOINTS / checkpoint_name(step)
    return folder if step > 0 and folder.is_dir() else None


def _warm_start(run: _Run, display: RunDisplay) -> None:
    from tracegym.models.load import stop_token_ids
    from tracegym.store import open_store
    from tracegym.training.warmup import build_examples, supervised_step, warmup_batch

    config = run.config
    with open_store(run.store_path) as store:
        data = build_examples(store, run.tokenizer, config.warmup, config.prompt,
                              stop_token_ids(run.model, run.tokenizer),
                              heldout_source_tasks(run.task_set, config.tasks.split), config.seed)
    run.counts["warmup"] = data.counts
    if not data.examples:
        raise NotFoundError(f"The warm start found no examples ({data.counts}). Fix: ingest traces with outcome "
                            "success (of warmup.formats), or set warmup.steps: 0.")
    display.note(f"warm start: {len(data.examples)} examples from {data.counts['traces']} successful traces")
    optimizer = make_optimizer(run.model, config.warmup.lr, config.optim)
    if run.state.optimizer_phase == "warmup":
        optimizer.load_state_dict(run.state.optimizer)
    for step in range(run.state.step, config.warmup.steps):
        batch = warmup_batch(data.examples, step, config.warmup.batch_size, config.seed)
        started = time.perf_counter()
        metrics = supervised_step(run.model, optimizer, batch, config.optim.micro_batch_tokens,
                                  config.optim.grad_clip, run.pad_id)
        metrics["time/train_s"] = time.perf_counter() - started
        run.state.step = step + 1
        run.recorder.log(run.state.step, metrics)
        display.update(run.state.step, metrics)
        if run.state.step == config.warmup.steps or run.due(run.state.step):
            run.checkpoint(optimizer.state_dict(), None, "warmup", keep=run.state.step == config.warmup.steps)


def _grpo(run: _Run, display: RunDisplay) -> None:
    config = run.config
    if config.tasks.difficulty is not None:
        _filter_by_difficulty(run, display)
    order = _task_order(run)
    # The samplers' copy of the weights is taken before the trainer may shard them.
    source = _make_source(run, order)
    try:
        with _trainer(run) as trainer:
            source.start()
            _grpo_steps(run, display, trainer, source, order, _pool_watch(run, source))
    finally:
        source.close()


def _pool_watch(run: _Run, source: Any) -> PoolWatch | None:
    """Rollout cost and quarantine of the sampler pools (asynchronous runs), carried over a resume."""
    if run.config.async_.max_staleness == 0:
        return None
    from tracegym.store import open_store

    watch = PoolWatch(run.config, run.recorder, source)
    if run.state.step > run.config.warmup.steps:
        with open_store(run.store_path) as store:
            watch.resume(store, run.state.step)
    return watch


@contextmanager
def _trainer(run: _Run) -> Iterator[Trainer]:
    """The GRPO trainer: one process, or rank 0 of `parallel.world_size` FSDP2 ranks
    (tracegym/training/parallel/ranks.py)."""
    config = run.config
    reference = _reference(run) if config.loss.kl_beta > 0 else None
    if config.parallel.kind == "fsdp":
        from tracegym.training.parallel.ranks import RankStart, sharded_trainer

        weights = _grpo_start(run)
        start = RankStart(str(weights) if weights is not None else None,
                          str(_reference_ref(run)) if reference is not None else None, run.pad_id)
        with sharded_trainer(run.model, config, start, run.launch, reference) as sharded:
            yield sharded
        return
    trainer = Trainer(run.model, config.optim, config.grpo, config.loss, config.sampler.temperature, run.pad_id,
                      reference=reference)
    if run.state.optimizer_phase == "grpo":
        trainer.optimizer.load_state_dict(run.state.optimizer)
    yield trainer


def _grpo_steps(run: _Run, display: RunDisplay, trainer: Trainer, source: Any, order: GroupOrder[TaskSpec],
                pools: PoolWatch | None) -> None:
    deaths, idle = 0.0, IdleSteps()
    for step in range(run.state.step, run.total):
        metrics, batch = _grpo_step(run, trainer, source, step, order)
        if pools is not None:
            metrics.update(pools.costs(batch))
        run.recorder.log(run.state.step, metrics, batch.stored_episodes(run.state.step))
        if pools is not None:
            for verdict in pools.judge(run.state.step, metrics, batch):
                display.note(f"step {run.state.step}: sampler pool {verdict.pool} quarantined ({verdict.reason()}); "
                             "training goes on with the other pools")
        display.update(run.state.step, metrics)
        if message := idle.note(run.state.step, metrics):
            display.note(message)
        if metrics.get("source/sampler_deaths", 0.0) > deaths:
            deaths = metrics["source/sampler_deaths"]
            display.note(f"step {run.state.step}: a sampler process died ({deaths:.0f} so far, "
                         f"{metrics.get('source/sampler_restarts', 0.0):.0f} restarted); training goes on")
        if run.due(run.state.step):
            run.checkpoint(*_trainer_state(trainer), "grpo")


def _weights(run: _Run, model: Any) -> tuple[Mapping[str, torch.Tensor], AdapterWeights | None]:
    """The policy's whole weights as the samplers take them: gathered from the ranks when sharded, merged with the
    adapter under model.lora; and under model.lora the adapter alone, for pools that serve it. `model` is the
    trainer, or the model before there is one."""
    gathered = model.full_state_dict() if isinstance(model, ShardedTrainer) else None
    model = model.model if isinstance(model, Trainer) else model
    if run.peft is not None:
        from tracegym.training.lora import adapter_weights, merged_state_dict

        return merged_state_dict(model, gathered), adapter_weights(run.peft, gathered)
    return (gathered if gathered is not None else model.state_dict()), None


def _trainer_state(trainer: Trainer) -> tuple[dict[str, Any], Mapping[str, torch.Tensor] | None]:
    """The optimizer state a checkpoint keeps, and the weights to write when the model itself cannot give them."""
    if isinstance(trainer, ShardedTrainer):
        return trainer.full_optimizer_state(), trainer.full_state_dict()
    return trainer.optimizer.state_dict(), None


def _reference(run: _Run) -> PreTrainedModel:
    """The frozen policy of `loss.kl_beta`: the weights GRPO starts from, read from disk so that a resumed run
    gets the same one (the kept warm-start checkpoint, or the base model when there is no warm start)."""
    from tracegym.models.load import load_model

    return load_model(_reference_ref(run), "fp32")


def _reference_ref(run: _Run) -> str | Path:
    config = run.config
    return config.model.ref if config.warmup.steps == 0 else _warm_start_folder(run, "loss.kl_beta")


def _warm_start_folder(run: _Run, needed_by: str) -> Path:
    folder = run.warm_start_folder()
    if folder is None:
        raise NotFoundError(f"{needed_by} needs the warm-start checkpoint (step {run.config.warmup.steps}) in "
                            f"{run.config.run_dir / CHECKPOINTS}, and it is not there. Fix: start the run afresh.")
    return folder


def _grpo_start(run: _Run) -> Path | None:
    """The checkpoint whose weights GRPO starts from, which the other ranks load: the GRPO checkpoint resumed, the
    warm start's, or None (the base model) without either."""
    if run.state.optimizer_phase == "grpo":
        return run.resumed_from
    return _warm_start_folder(run, "parallel.kind fsdp") if run.config.warmup.steps > 0 else None


def _filter_by_difficulty(run: _Run, display: RunDisplay) -> None:
    from tracegym.models.load import stop_token_ids
    from tracegym.training.difficulty import filter_tasks, measure

    display.note(f"difficulty filter: sampling {len(run.tasks)} training tasks x "
                 f"{run.config.tasks.difficulty.samples} (or reading {run.config.run_dir.name}/difficulty.json)")
    run.tasks, record = filter_tasks(run.config, run.tasks, lambda: measure(
        run.config, run.task_set, run.tasks, run.model, run.tokenizer, stop_token_ids(run.model, run.tokenizer),
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


def _grpo_step(run: _Run, trainer: Trainer, source: Any, step: int,
               order: GroupOrder[TaskSpec]) -> tuple[dict[str, float], RolloutBatch]:
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
    merged, adapter = _weights(run, trainer)
    metrics.update(source.publish(merged, run.state.step, adapter))
    if run.peft is not None:  # the adapter's tensors alone: what a pool serving adapters is sent, beside its bytes
        from tracegym.training.lora import adapter_bytes

        metrics["sync/adapter_bytes"] = float(adapter_bytes(trainer.model, _publish_precision(run.config)))
    metrics.update({"time/wait_s": waited, "time/train_s": trained,
                    "time/publish_s": time.perf_counter() - started - waited - trained,
                    "train/tokens_per_s": metrics.get("train/tokens", 0.0) / trained if trained > 0 else 0.0})
    metrics.update({k if "/" in k else f"source/{k}": float(v) for k, v in batch.stats.items() if k != "dropped_stale"})
    metrics.update(_staleness(step, batch))
    totals = source.stats()
    metrics.update({f"source/{k}": float(v) for k, v in totals.items() if isinstance(v, (int, float))})
    metrics.update(run.pool_sync.metrics(totals.get("pools", {})))
    rewards = batch_cluster_rewards(batch, run.cluster_of)
    metrics.update({**cluster_metrics(rewards), **curriculum})
    if isinstance(order, ClusterCurriculum):
        order.observe({cluster: mean for cluster, (mean, _) in rewards.items()})
    return metrics, batch


def _staleness(version: int, batch: RolloutBatch) -> dict[str, float]:
    """Histogram of how many versions each trained group lags the trainer, plus the dropped ones."""
    lags = [version - g.policy_version for g in batch.groups]
    out = {f"staleness/lag_{lag}": float(n) for lag, n in sorted(Counter(lags).items())}
    if lags:
        out["staleness/mean"] = sum(lags) / len(lags)
        out["staleness/max"] = float(max(lags))
    out["staleness/dropped_groups"] = float(batch.stats.get("dropped_stale", 0.0))
    return out


def _make_source(run: _Run, order: GroupOrder[TaskSpec]) -> Any:
    from tracegym.models.load import stop_token_ids

    config = run.config
    eos = stop_token_ids(run.model, run.tokenizer)
    if config.async_.max_staleness == 0:
        from tracegym.samplers.inprocess import SyncRollouts

        sampler_model = run.model
        if run.peft is not None:
            from tracegym.training.lora import merged_model

            sampler_model = merged_model(run.peft)
        return SyncRollouts.with_copy_of(sampler_model, config.rollout_plan(), run.task_set, run.tasks, run.tokenizer,
                                         eos, run.state.step, start_index=run.state.groups_consumed, order=order)
    return _async_source(run, eos, order)


def _async_source(run: _Run, eos: Sequence[int], order: GroupOrder[TaskSpec]) -> Any:
    try:
        from tracegym.samplers.orchestrator import AsyncRollouts
    except ImportError as e:
        raise ConfigError("async.max_staleness > 0 runs sampler processes (tracegym.samplers.orchestrator), which "
                          f"this installation cannot import ({e}). Fix: set async.max_staleness: 0.") from e
    merged, adapter = _weights(run, run.model)
    return AsyncRollouts(run.config.rollout_plan(), run.tasks, task_set=run.task_set, tokenizer=run.tokenizer,
                         eos_token_ids=list(eos), state_dict=merged, policy_version=run.state.step,
                         start_index=run.state.groups_consumed, order=order, adapter=adapter)
