"""Forward+backward time of token_loss against the plain REINFORCE loss it generalises.

The baseline is `-A * log_softmax(z)[a]` (what GRPO without corrections computes). The
corrected loss adds the CSR support gather, the masked logsumexp, the MIS weights and the
score-centering sum; on top-p replay it skips the full-vocabulary logsumexp altogether.

    python benchmarks/token_loss.py --positions 1024 --vocab 49152 --support 64

The last line is one JSON object: seconds per call for each variant and their ratios.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import torch

from tracegym.training.grpo.loss import token_loss


def _inputs(positions: int, vocab: int, support: int, seed: int = 0) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    logits = torch.randn(positions, vocab, generator=gen)
    sizes = torch.randint(1, support + 1, (positions,), generator=gen)
    ids = torch.cat([torch.randperm(vocab, generator=gen)[:n] for n in sizes.tolist()])
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), sizes.cumsum(0)])
    tokens = ids[offsets[:-1]]  # the first kept id of each position
    support_logprobs = torch.cat(
        [torch.log_softmax(logits[t, ids[offsets[t] : offsets[t + 1]]], 0) for t in range(positions)]
    )
    return dict(
        logits=logits, tokens=tokens, advantages=torch.randn(positions, generator=gen),
        sampler_logprobs=support_logprobs[offsets[:-1]], support_ids=ids, support_offsets=offsets,
        support_logprobs=support_logprobs,
    )


def _seconds(step: Callable[[torch.Tensor], torch.Tensor], logits: torch.Tensor, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats + 1):  # the first call warms up and is dropped by taking the best
        z = logits.clone().requires_grad_(True)
        start = time.perf_counter()
        step(z).sum().backward()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=1024, help="completion tokens T per call")
    parser.add_argument("--vocab", type=int, default=49152, help="vocabulary size V (SmolLM2's by default)")
    parser.add_argument("--support", type=int, default=64, help="largest support |S| (Modal's top-k cap)")
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per variant; the best is kept")
    args = parser.parse_args()
    data = _inputs(args.positions, args.vocab, args.support)
    logits, rest = data.pop("logits"), data

    def reinforce(z: torch.Tensor) -> torch.Tensor:
        log_pi = torch.log_softmax(z, -1).gather(1, rest["tokens"][:, None]).squeeze(1)
        return -rest["advantages"] * log_pi

    def sc_mis_replay(z: torch.Tensor) -> torch.Tensor:
        return token_loss(z, **rest)[0]

    def sc_mis_no_replay(z: torch.Tensor) -> torch.Tensor:
        return token_loss(z, **rest, top_p_replay=False)[0]

    timings = {name: _seconds(fn, logits, args.repeats) for name, fn in
               (("reinforce", reinforce), ("sc_mis_replay", sc_mis_replay), ("sc_mis_no_replay", sc_mis_no_replay))}
    for name, seconds in timings.items():
        print(f"{name:>18}: {seconds * 1e3:8.1f} ms per forward+backward")
    print(json.dumps({
        "positions": args.positions, "vocab": args.vocab, "support": args.support, "threads": torch.get_num_threads(),
        **{f"{name}_s": round(seconds, 5) for name, seconds in timings.items()},
        "replay_over_reinforce": round(timings["sc_mis_replay"] / timings["reinforce"], 3),
        "no_replay_over_reinforce": round(timings["sc_mis_no_replay"] / timings["reinforce"], 3),
    }))


if __name__ == "__main__":
    main()
