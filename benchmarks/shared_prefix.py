"""Decoding GRPO groups over one copy of each prompt's KV cache against a copy per row, on SmolLM2-135M.

The batch is what `examples/train-tau.yaml` samples each step: --prompts distinct prompts of --prompt-tokens
tokens, each sampled --group-size times (temperature 1, top-p 0.95), for exactly --new-tokens tokens (EOS
ignored, so both sides do the same work; the prompts are seeded random token ids, since what they say does
not change the arithmetic). The same engine runs with `shared_prefix=True` (cascade attention,
`tracegym/models/shared_prefix.py`) and `shared_prefix=False` (every row decodes over its own copy of its
prompt's cache), interleaved, --repeats timed runs each after one warm-up; figures are medians of the decode
phase (the prefill is the same code on both sides). Both sample with the same seeds; the log-probs of each
row's tokens up to where the two sides first draw a different token are compared.

    python benchmarks/shared_prefix.py                       # 4 x 8 rows, 320-token prompts, 96 new tokens
    python benchmarks/shared_prefix.py --prompt-tokens 1000 --group-size 16

The last line is one JSON object:
{"rows", "prompt_tokens", "new_tokens", "copies_tok_s", "shared_tok_s", "speedup", "same_sequences",
"max_logprob_diff"}.
"""

from __future__ import annotations

import argparse
import json
import statistics

import torch

from tracegym.models.load import load_model
from tracegym.models.sampling import SampledSequence, SamplingEngine, SamplingParams


def _agreement(a: list[SampledSequence], b: list[SampledSequence]) -> tuple[int, float]:
    """How many rows drew the same tokens, and the largest log-prob gap before any row's first different token."""
    same, gap = 0, 0.0
    for x, y in zip(a, b, strict=True):
        same += x.completion_ids == y.completion_ids
        n = next((i for i, (s, t) in enumerate(zip(x.completion_ids, y.completion_ids, strict=True)) if s != t),
                 len(x.completion_ids))
        if n:
            gap = max(gap, float((x.logprobs[:n] - y.logprobs[:n]).abs().max()))
    return same, gap


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--prompt-tokens", type=int, default=320)
    parser.add_argument("--new-tokens", type=int, default=96)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    gen = torch.Generator().manual_seed(0)
    distinct = [torch.randint(100, 40000, (args.prompt_tokens,), generator=gen).tolist() for _ in range(args.prompts)]
    rows = [p for p in distinct for _ in range(args.group_size)]
    seeds = list(range(len(rows)))
    params = SamplingParams(temperature=1.0, top_p=0.95, max_new_tokens=args.new_tokens)
    engines = {shared: SamplingEngine(load_model(args.model), eos_token_ids=(), pad_token_id=0,
                                      max_batch_size=len(rows), shared_prefix=shared) for shared in (False, True)}
    assert engines[True].shared_prefix, "the model does not support decoding over shared prefixes"

    def run(shared: bool) -> tuple[float, list[SampledSequence]]:
        seqs = engines[shared].generate(rows, params, seeds=seeds)
        assert all(len(s.completion_ids) == args.new_tokens for s in seqs)
        return seqs[0].timing.decode_s, seqs

    run(False), run(True)  # warm-up
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(args.repeats):
        for shared in (False, True):
            times[shared].append(run(shared)[0])
    same, gap = _agreement(run(False)[1], run(True)[1])
    tokens = len(rows) * args.new_tokens
    tok_s = {shared: tokens / statistics.median(t) for shared, t in times.items()}
    for shared, label in ((False, "copies"), (True, "shared")):
        runs = ", ".join(f"{s:.2f}s" for s in times[shared])
        print(f"{label:7s}{tok_s[shared]:8.1f} tok/s decoding  (runs: {runs})")
    print(json.dumps({
        "rows": len(rows), "prompt_tokens": args.prompt_tokens, "new_tokens": args.new_tokens,
        "copies_tok_s": round(tok_s[False], 1), "shared_tok_s": round(tok_s[True], 1),
        "speedup": round(tok_s[True] / tok_s[False], 3), "same_sequences": same, "max_logprob_diff": gap,
    }))


if __name__ == "__main__":
    main()
