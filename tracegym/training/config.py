"""`tracegym train CONFIG`: the run's YAML file, validated by pydantic.

```yaml
run_dir: runs/tau
steps: 20
model: {ref: smollm2-135m}
tasks: {task_set: tasks/tau}
sampler: {temperature: 1.0, top_p: 0.95}
grpo: {group_size: 8, batch_groups: 4}
optim: {lr: 1.0e-5}
async: {max_staleness: 1}
warmup: {steps: 30}
```
Every section is optional except `tasks`. Unknown keys are errors that name the file, the line and the
nearest valid key. The resolved config (defaults filled in) is written into the run folder as JSON.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tracegym.errors import ConfigError, did_you_mean
from tracegym.harnesses.config import HarnessConfig, HarnessName
from tracegym.harnesses.runner import EpisodeLimits
from tracegym.samplers.config import AsyncSection, RayRequest, RolloutPlan, SamplerPool, SamplerSection
from tracegym.tasks.prompts import PromptSection
from tracegym.tasks.spec import Split, TaskSpec
from tracegym.yamlfile import compose, model_at, node_line, read_yaml


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, populate_by_name=True)


class LoraSection(_Section):
    """Train a LoRA adapter (through peft) instead of the full weights: the base weights stay frozen.

    Checkpoints are then peft adapter folders (adapter_config.json, adapter_model.safetensors) that `tracegym eval`,
    peft and vLLM load over the base model. Sampler pools with `engine: vllm` get the adapter alone each sync and
    sample with it over the base weights they load themselves; the others get the merged weights.
    """

    r: int = Field(16, ge=1)
    """The adapter's rank."""
    alpha: float = Field(32.0, gt=0)
    """LoRA alpha: the adapter's update is scaled by alpha / r."""
    target_modules: list[str] = Field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
        min_length=1)
    """Names (last component) of the linear layers that get an adapter; the default is every projection of a
    Llama-style block, as Tinker and ART train."""
    dropout: float = Field(0.0, ge=0, lt=1)
    """Dropout on the adapter's input while training. 0 by default: with dropout the trainer's log-probs are no
    longer those of the weights the samplers hold, which the MIS band and the mismatch figures then count."""


class ModelSection(_Section):
    ref: str = "smollm2-135m"
    """The policy to train: 'smollm2-135m' (the default), or a Hugging Face model folder."""
    lora: LoraSection | None = None
    """Train a LoRA adapter over the frozen `ref` instead of every weight; None trains the full weights."""


STEP_TIMEOUT_S = 1800.0
"""`parallel.step_timeout_s` unless set, and a ShardedTrainer's built without a config."""


class ParallelSection(_Section):
    """How many processes the trainer runs as (tracegym/training/parallel/sharded.py)."""

    kind: Literal["none", "fsdp"] = "none"
    """none: one process; fsdp: `world_size` ranks on torch.distributed, parameters, gradients and AdamW state
    sharded with FSDP2 (`fully_shard`) and each step's micro-batches split across the ranks (gloo on CPUs, nccl on
    GPUs). Rank 0 samples, records and checkpoints; the others only train."""
    world_size: int = Field(1, ge=1)
    """Ranks with kind: fsdp. `tracegym train` starts them (see launcher), or joins those torchrun started
    (RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set)."""
    launcher: Literal["spawn", "ray"] = "spawn"
    """How `tracegym train` (rank 0) starts ranks 1..N-1: spawn, as processes on this machine; ray, as Ray actors
    on the cluster of `async.ray.address`, placed by `ray`, meeting rank 0 at its node's address (kind: fsdp)."""
    ray: RayRequest = Field(default_factory=RayRequest)
    """With launcher: ray, what each of ranks 1..N-1 asks Ray for (cpus unset: 1; its torch threads are its cpus;
    gpus unset: 1 when rank 0 has a GPU, as every rank then needs one for nccl, else 0)."""
    step_timeout_s: float = Field(STEP_TIMEOUT_S, gt=0)
    """With kind: fsdp, how long one collective of a training step waits for the other ranks (they all run the
    step, so only the slowest rank's compute keeps it). Past it the run fails with a RankError: a rank's node that
    vanished without closing its connections would otherwise hold the run for gloo's 6 hours. Waiting for rank 0's
    next announcement (while it samples) is not bounded by this (torchtitan's `comm.train_timeout_seconds`)."""

    @model_validator(mode="after")
    def _launcher_fits(self) -> ParallelSection:
        if self.launcher == "ray" and self.kind != "fsdp":
            raise ValueError("launcher: ray starts ranks 1..N-1 of kind: fsdp as Ray actors; kind: none runs one "
                             "process. Fix: set kind: fsdp (and world_size), or drop launcher")
        if self.launcher != "ray" and self.ray != RayRequest():  # not fields_set: a resolved config lists it
            raise ValueError("parallel.ray is what each rank's Ray actor asks for, and launcher spawn starts "
                             "processes here. Fix: set launcher: ray, or drop ray")
        return self


class DifficultySection(_Section):
    """Train only on tasks where the policy GRPO starts from is sometimes right and sometimes wrong.

    A group whose rewards are all equal has zero advantage and trains nothing, so tasks the policy always or
    never solves only cost sampling time (the offline form of DAPO's dynamic sampling and of prime-rl's
    difficulty filter). Measured once, before the first GRPO step, and kept in the run folder.
    """

    samples: int = Field(4, ge=2)
    """Episodes per training task, sampled with the weights GRPO starts from (after the warm start)."""
    min_mean: float = Field(0.0, ge=0)
    """Keep a task only if its mean reward is above this..."""
    max_mean: float = Field(1.0, le=1)
    """...and below this."""
    keep_solved: float = Field(0.0, ge=0, le=1)
    """Also keep this share of the tasks at or above max_mean (drawn with the run's seed), as replay. Their
    groups train nothing while the policy solves them, and push back once it starts to fail them: without
    them, what the policy already does right (such as not calling a tool) is never rewarded again."""

    @model_validator(mode="after")
    def _check_band(self) -> DifficultySection:
        if self.min_mean >= self.max_mean:
            raise ValueError(f"min_mean={self.min_mean} must be below max_mean={self.max_mean}")
        return self


class CurriculumSection(_Section):
    """How `tasks.sampling: clusters` weighs the failure clusters (tracegym/training/curriculum.py).

    Before each step, every cluster's weight comes from an exponential moving average of its training reward over
    the steps so far (`cluster/<cluster_id>/reward`); a cluster not sampled yet gets the highest weight. The
    probability of drawing a cluster for a group is `floor / clusters + (1 - floor) * weight / sum of weights`.
    """

    weighting: Literal["failure", "learnability"] = "failure"
    """failure: weight 1 - reward, toward the clusters the policy still fails; learnability: reward x (1 - reward),
    toward the clusters it solves some of the time, whose groups carry a GRPO signal (Foster & Foerster 2025,
    "Learning to Reason at the Frontier of Learnability"); a cluster it always fails then gets only the floor."""
    ema: float = Field(0.3, gt=0, le=1)
    """Weight of the newest step in the moving average of a cluster's reward (1: the last step alone)."""
    floor: float = Field(0.2, ge=0, le=1)
    """Share of draws spread evenly over the clusters whatever their reward, so that none starves: each cluster is
    drawn with probability at least floor / clusters (1 draws clusters uniformly)."""


class TasksSection(_Section):
    task_set: Path
    """The task-set folder (written by `tracegym tasks generate`), relative to the working folder."""
    split: Split = "train"
    """The split GRPO trains on; the other one stays held out."""
    clusters: list[str] | None = None
    """Only tasks of these failure clusters (ids); None takes every cluster."""
    detectors: list[str] | None = None
    """Only tasks whose failure was found by these detectors (tool_error, handoff, ...); None takes all."""
    max_tasks: int | None = Field(None, ge=1)
    """At most this many tasks (the first in task-set order)."""
    max_hackable: float = Field(0.0, ge=0, le=1)
    """The largest share of the selected tasks (those of the split, clusters and detectors) whose reward a hollow
    reply earns, as `tasks generate` recorded it (the manifest's `hackable`; docs/reward-gates.md): past it,
    `tracegym train` refuses the set unless --allow-hackable. A share, not a count, so that it means the same on a
    set of any size; 0 refuses any hackable task."""
    difficulty: DifficultySection | None = None
    """Drop the tasks the starting policy always or never solves; None trains on every selected task."""
    sampling: Literal["uniform", "clusters"] = "uniform"
    """uniform: every task in turn, in a seeded order shuffled each epoch; clusters: each group draws a failure
    cluster first, weighted toward the clusters whose training reward is still low (`curriculum`), then a task of
    that cluster (a curriculum over clusters)."""
    curriculum: CurriculumSection | None = None
    """How sampling: clusters weighs the clusters (its defaults when left out); only with sampling: clusters."""

    def select(self, tasks: list[TaskSpec], split: Split | None = None) -> list[TaskSpec]:
        """The tasks of `split` (default: this section's), failure clusters and detectors chosen, in task-set
        order."""
        chosen = [t for t in tasks if t.split == (split or self.split)]
        if self.clusters is not None:
            chosen = [t for t in chosen if t.provenance.cluster_id in set(self.clusters)]
        if self.detectors is not None:
            chosen = [t for t in chosen if t.provenance.detector in set(self.detectors)]
        return chosen

    @model_validator(mode="after")
    def _curriculum_with_clusters(self) -> TasksSection:
        if self.sampling == "uniform" and self.curriculum is not None:
            raise ValueError("tasks.curriculum weighs clusters for tasks.sampling: clusters. Fix: set "
                             "tasks.sampling: clusters, or remove tasks.curriculum")
        if self.sampling == "clusters" and self.curriculum is None:
            self.curriculum = CurriculumSection()  # the resolved config shows the weighting the run used
        return self


class HarnessSection(HarnessConfig):
    """The harness config of `tracegym run` (replay, tools, shell, ... sections), plus the episode limits."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, populate_by_name=True)

    harness: HarnessName | None = Field(None, alias="kind")
    """Run every task in this harness (chat, tools, replay, shell, ...); None uses the harness each task names."""
    limits: EpisodeLimits = EpisodeLimits(max_turns=1)
    """When an episode stops: turns, tokens, prompt length, time."""

    def harness_config(self) -> HarnessConfig:
        return HarnessConfig.model_validate(self.model_dump(exclude={"limits"}))


class GRPOSection(_Section):
    group_size: int = Field(8, ge=2)
    """Episodes per task; advantages compare rewards within a group."""
    batch_groups: int = Field(4, ge=1)
    """Groups per optimizer step."""
    std_normalization: bool = False
    """Divide advantages by the group's reward std (GRPO); off is Dr.GRPO mean-centring."""
    advantages: Literal["whole", "per_component"] = "whole"
    """whole: advantages from the reward as one number (as `std_normalization` says). per_component: a reward that is
    the weighted mean of parts (a `weighted` eval) is normalised part by part within each group (centred, over the
    part's std), the parts combined with the eval's weights, and the sums normalised over the batch (GDPO), so that
    a part with little spread in a group (content) counts as much as one with much (format); a part constant in a
    group adds 0, and a group is skipped when every part is. Rewards without parts get `whole`'s advantages when no
    reward of the batch has parts; see docs/training-math.md."""
    aggregation: Literal["token", "sequence"] = "token"
    """token: sum over all tokens / their count (DAPO, Miles --calculate-per-token-loss); sequence: mean per
    sequence, then over sequences (DeepSeekMath)."""
    dynamic_sampling: bool = False
    """Fill each batch with groups whose rewards differ (DAPO's dynamic sampling, verl's `filter_groups`): a group
    whose rewards are all equal is set aside (its episodes stay in the store; counted in `grpo/set_aside_groups`)
    and the next group of the task order is sampled in its place (synchronously, in rounds:
    `grpo/sampling_rounds`). Off, such groups reach the trainer, which skips them (`grpo/skipped_groups`)."""
    optimizer_steps: int = Field(1, ge=1)
    """Optimizer steps per rollout batch: the groups that carry a signal are split into this many mini-batches
    of whole groups, each one optimizer step (slime's `--num-steps-per-rollout`, TRL's `steps_per_generation`).
    Later mini-batches are off-policy by the earlier steps; the loss's ratio pi/mu, taken at the current weights,
    and the MIS band see that drift as they see a sampler's staleness. 1 (the default) is one step per batch."""
    max_sampling_rounds: int = Field(4, ge=1)
    """With dynamic_sampling, at most this many times `batch_groups` groups are sampled (or, asynchronously, taken
    from the buffer) for one step, as DAPO's `max_num_gen_batches`; the step trains on what had a signal by then."""

    @model_validator(mode="after")
    def _steps_fit_batch(self) -> GRPOSection:
        if self.optimizer_steps > self.batch_groups:
            raise ValueError(f"grpo.optimizer_steps ({self.optimizer_steps}) splits a batch into mini-batches of "
                             f"whole groups, so it can be at most batch_groups ({self.batch_groups})")
        return self

    @property
    def max_groups_per_step(self) -> int:
        """The most groups one step samples or takes: batch_groups, times max_sampling_rounds with dynamic_sampling."""
        return self.batch_groups * (self.max_sampling_rounds if self.dynamic_sampling else 1)


class LossSection(_Section):
    mis: tuple[float, float] | None = (0.5, 5.0)
    """Masked importance sampling band [lo, hi] on pi/mu (IcePop); null turns it off."""
    tis_clip: float | None = Field(None, gt=0)
    """Truncated importance sampling cap C instead of MIS (set mis: null)."""
    score_centering: bool = True
    """Subtract the sampler-weighted expected score over the recorded support (Marek & Ryabinin)."""
    top_p_replay: bool = True
    """Renormalise the trainer's distribution over the sampler's recorded top-p support."""
    kl_beta: float = Field(0.0, ge=0)
    """Weight of a per-token KL penalty to the reference policy, the weights GRPO starts from (the warm-start
    checkpoint, or the base model without a warm start): TRL's `beta`, Miles' `--kl-loss-coef` with k3. 0 (the
    default, as Miles and TRL) loads no reference model; above 0 every trained micro-batch also runs forward
    through the frozen reference."""

    @model_validator(mode="after")
    def _one_weighting(self) -> LossSection:
        if self.mis is not None and self.tis_clip is not None:
            raise ValueError("loss: mis and tis_clip are alternatives; set mis: null to use tis_clip")
        if self.mis is not None and not 0 < self.mis[0] <= self.mis[1]:
            raise ValueError(f"loss.mis must be [lo, hi] with 0 < lo <= hi, got {list(self.mis)}")
        return self


class OptimSection(_Section):
    lr: float = Field(1e-6, gt=0)
    """AdamW learning rate."""
    betas: tuple[float, float] = (0.9, 0.98)
    """AdamW betas."""
    eps: float = Field(1e-8, gt=0)
    """AdamW epsilon."""
    weight_decay: float = Field(0.1, ge=0)
    """AdamW decoupled weight decay."""
    grad_clip: float | None = Field(1.0, gt=0)
    """Clip the global gradient norm to this; null turns clipping off."""
    micro_batch_tokens: int = Field(4096, ge=1)
    """Most padded tokens (sequences x longest length) in one forward/backward pass; bounds memory."""
    train_layers: int | None = Field(None, ge=1)
    """Train only the last N transformer blocks (and what follows them); None trains every block. Backward
    then stops at the lowest trained block: on a CPU, the way to afford more steps."""
    freeze_embeddings: bool = False
    """Keep the token embeddings (and an output layer tied to them) fixed."""
    autocast: Literal["off", "bf16"] = "off"
    """bf16: run the trainer's forward and backward passes under torch.autocast in bfloat16 (mixed
    precision: matrix products in bf16; weights, gradients, AdamW state and the loss stay fp32). Faster on
    GPUs and on CPUs with bf16 matrix units; off trains in fp32 throughout."""
    keep_freed_memory: bool = True
    """Linux: have malloc keep freed memory for reuse instead of handing large blocks back to the OS, so a
    step does not page-fault its buffers back in (a fifth of a CPU trainer's forward, backward and AdamW
    here; see tracegym/models/allocator.py). Process-wide; peak memory grows a few percent."""
    lr_scheduler: Literal["constant", "linear", "cosine"] = "constant"
    """The GRPO phase's learning rate over its `steps` after the warm-up ramp: constant, or a linear or cosine
    decay towards `min_lr_ratio * lr` (tracegym/training/schedule.py). The warm start keeps `warmup.lr`."""
    lr_warmup_steps: int = Field(0, ge=0)
    """GRPO steps over which the learning rate ramps linearly up to `lr` (step 1 at lr/N, step N at lr)."""
    min_lr_ratio: float = Field(0.0, ge=0, le=1)
    """Where a linear or cosine decay ends, as a fraction of `lr` (verl's `min_lr_ratio`)."""


class WarmupSection(_Section):
    steps: int = Field(0, ge=0)
    """Supervised steps before GRPO; 0 skips the warm start."""
    source: Literal["successful_traces"] = Field("successful_traces", alias="from")
    """Where examples come from: the assistant turns of traces in the store whose outcome is success."""
    formats: list[str] | None = None
    """Only traces of these formats (e.g. tau-bench); None takes every format."""
    turns: Literal["tool_calls", "all"] = "all"
    """Which assistant turns are targets: all, or only those that call a tool."""
    exclude_heldout: bool = True
    """Leave out traces of the source tasks behind any held-out task, so evaluation stays honest."""
    lr: float = Field(2e-5, gt=0)
    """AdamW learning rate of the warm start."""
    batch_size: int = Field(8, ge=1)
    """Examples per supervised step."""
    max_examples: int | None = Field(None, ge=1)
    """Use at most this many examples (a seeded sample)."""


class MonitorSection(_Section):
    """The reward-hacking monitor (tracegym/training/hack_monitor.py). Each GRPO step stores, per failure cluster,
    the share of its sampled episodes a hollow-reply detector flagged (tracegym/evals/scorers/hollow.py). The run
    warns "possible reward hacking in CLUSTER" when, over the cluster's last `window_steps` sampled steps against the
    `window_steps` before them, its training reward rose by at least `min_reward_rise` while its share of flagged
    episodes rose by at least `min_hollow_rise`, beyond noise (a one-sided Fisher exact test of the flagged counts
    at `alpha`). A cluster warned once is judged again only after `window_steps` more sampled steps.
    """

    window_steps: int = Field(3, ge=1)
    """Sampled steps of a cluster in each of the two windows compared (a warning needs twice as many)."""
    min_reward_rise: float = Field(0.1, ge=0, le=1)
    """The least rise of the cluster's mean training reward (episode-weighted, 0-1) between the windows."""
    min_hollow_rise: float = Field(0.2, ge=0, le=1)
    """The least rise of the cluster's share of flagged episodes (absolute, 0-1) between the windows."""
    alpha: float = Field(0.05, gt=0, lt=1)
    """The flagged counts must differ beyond noise: Fisher's exact test, one-sided, p below this."""


class TrainConfig(_Section):
    run_dir: Path
    """The run folder: resolved config, checkpoints, display log. Relative to the working folder."""
    tasks: TasksSection
    """The task set GRPO trains on."""
    model: ModelSection = ModelSection()
    """The policy."""
    prompt: PromptSection = PromptSection()
    """The context policy for prompts."""
    harness: HarnessSection = HarnessSection()
    """The environment episodes run in."""
    sampler: SamplerSection = SamplerSection()
    """How episodes are sampled."""
    grpo: GRPOSection = GRPOSection()
    """Groups and advantages."""
    loss: LossSection = LossSection()
    """The corrections for sampler/trainer mismatch (each can be turned off)."""
    optim: OptimSection = OptimSection()
    """The optimizer."""
    async_: AsyncSection = Field(AsyncSection(), alias="async")
    """Asynchronous sampling."""
    warmup: WarmupSection = WarmupSection()
    """The supervised warm start on successful traces."""
    parallel: ParallelSection = ParallelSection()
    """One trainer process, or FSDP2 ranks."""
    monitor: MonitorSection = MonitorSection()
    """When the run warns of possible reward hacking."""
    steps: int = Field(10, ge=0)
    """GRPO optimizer steps (one per rollout batch)."""
    checkpoint_every: int = Field(10, ge=1)
    """Save a checkpoint every N steps (warm-start steps included); the last step is always saved."""
    keep_checkpoints: int = Field(2, ge=1)
    """Checkpoints kept on disk (the newest); older ones are deleted after a new one is written."""
    seed: int = 0
    """Seeds the task order, sampling and the warm start's example order."""

    @model_validator(mode="after")
    def _support_for_corrections(self) -> TrainConfig:
        if not self.sampler.truncated and (self.loss.score_centering or self.loss.top_p_replay):
            raise ValueError(
                "loss.score_centering and loss.top_p_replay need the sampler's recorded support, which exists "
                "only with truncation: set sampler.top_p < 1 or sampler.top_k > 0, or turn both corrections off"
            )
        if not math.isfinite(self.optim.lr):
            raise ValueError("optim.lr must be finite")
        self._check_lora()
        if self.sampler.pools is not None and self.async_.max_staleness == 0:
            raise ValueError("sampler.pools are sampler processes, which run with async.max_staleness > 0 (with 0, "
                             "the trainer's process samples in sampler.precision): set max_staleness or drop pools")
        if self.async_.weights_http is None and any(p.weights == "http" for p in self.sampler.pools or ()):
            raise ValueError("a pool with weights: http reads the trainer's weight endpoint, which is off. Fix: set "
                             "async.weights_http: {} (or {host: ..., port: ...}), or the pool's weights: folder")
        return self

    def _check_lora(self) -> None:
        if self.model.lora is not None and (self.optim.train_layers is not None or self.optim.freeze_embeddings):
            raise ValueError("model.lora trains the adapter alone; optim.train_layers and optim.freeze_embeddings "
                             "choose among full weights. Fix: drop them, or set model.lora: null")

    def sampler_pools(self) -> list[SamplerPool]:
        """The pools of an asynchronous run: `sampler.pools`, else one of `n_samplers` processes in `precision`."""
        if self.sampler.pools is not None:
            return list(self.sampler.pools)
        return [SamplerPool(precision=self.sampler.precision, processes=self.sampler.n_samplers)]

    def rollout_plan(self) -> RolloutPlan:
        """What the run's rollout source needs to know (`tracegym.samplers`)."""
        return RolloutPlan(
            sampler=self.sampler, async_=self.async_, pools=tuple(self.sampler_pools()),
            harness=self.harness.harness_config(), limits=self.harness.limits, group_size=self.grpo.group_size,
            batch_groups=self.grpo.batch_groups, dynamic_sampling=self.grpo.dynamic_sampling,
            max_groups_per_step=self.grpo.max_groups_per_step, model_ref=self.model.ref, run_dir=self.run_dir,
            seed=self.seed, lora_rank=self.model.lora.r if self.model.lora is not None else None,
        )

    def resolved(self) -> dict[str, Any]:
        """The config with every default filled in, as JSON-ready data (YAML key names)."""
        return self.model_dump(mode="json", by_alias=True)


def load_train_config(path: Path | str) -> TrainConfig:
    """Read and validate a train config; errors name the file, the line and the fix."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"No train config at {path}. Fix: pass a YAML file (see examples/train-tau.yaml).")
    data, text = read_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:1: a train config is a YAML mapping of sections (run_dir, tasks, ...).")
    return parse_train_config(data, path, text)


def parse_train_config(data: Any, path: Path, text: str | None = None) -> TrainConfig:
    """Validate already-parsed data (`text` gives line numbers in messages)."""
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as e:
        node = compose(text) if text else None
        lines = [_describe(path, err, node) for err in e.errors()[:8]]
        raise ConfigError("\n".join(lines), title=f"Invalid {path.name}") from None


def _describe(path: Path, err: Any, node: Any) -> str:
    loc = tuple(err["loc"])
    where = ".".join(str(p) for p in loc) or "(top level)"
    line = node_line(node, loc)
    if err["type"] == "extra_forbidden":
        owner = section_at(loc[:-1])
        allowed = yaml_names(owner) if owner else []
        key = str(loc[-1])
        return (f"{path}:{line}: unknown key {where!r}.{did_you_mean(key, allowed)} "
                f"Fix: remove or rename it; allowed here: {', '.join(allowed)}.")
    if err["type"] == "value_error":
        return f"{path}:{line}: {where}: {err['msg'].removeprefix('Value error, ')}."
    if err["type"] == "missing":
        return f"{path}:{line}: {where} is required. Fix: add it."
    return f"{path}:{line}: {where}: {err['msg']}. Fix: give it a value of the right type."


def section_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The config section (pydantic model) at a path of YAML keys, which may be aliases such as `async`."""
    names: list[str] = []
    for key in loc:
        owner = model_at(TrainConfig, tuple(names))
        python = next((n for n, f in owner.model_fields.items() if f.alias == str(key)), None) if owner else None
        names.append(python or str(key))
    return model_at(TrainConfig, tuple(names))


def yaml_names(model: type[BaseModel]) -> list[str]:
    """The keys a section accepts in YAML (aliases where a field has one), sorted."""
    return sorted(info.alias or name for name, info in model.model_fields.items())
