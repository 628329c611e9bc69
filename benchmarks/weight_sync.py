"""Sparse weight deltas against whole weights, on the default model's real optimizer steps.

    python benchmarks/weight_sync.py [--lrs 1e-6 3e-5] [--steps 4] [--threads 2]

SmolLM2-135M-Instruct (the converted default model, fp32 masters) takes `--steps` AdamW steps (betas 0.9/0.98, as
examples/train-tau.yaml) at each learning rate, on next-token loss over this repository's README (4 x 128 tokens a
step, all layers trained). After each step the new weights are published through `FilesystemBroadcast` three
ways, side by side: whole weights, an `xor` delta and an `overwrite` delta, each in bf16 (what a bf16 sampler
receives) and fp32, and a `WeightWatcher` holding the previous version reads each back (checksums verified).

Per learning rate and step it reports the bf16 element density (elements whose bf16 bits changed) against the
prediction of docs/training-math.md from the step's own fp32 change Δ, E[min(1, |Δ|/ulp(w))]; the bytes of each
encoding as a ratio to whole weights; and the seconds to publish and to read back. The means leave out the first
step, which where the masters loaded from the GGUF file sit in their bf16 cells decides (its figures say where they
sit). The last line is one JSON object: {"model", "params", "by_lr": {lr: {"steps": [...], "mean": {...}}}}.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

REPO = Path(__file__).resolve().parents[1]
ENCODINGS = ("whole", "xor", "overwrite")


def text_batches(tokenizer: Any, steps: int, batch: int = 4, length: int = 128) -> list[torch.Tensor]:
    ids = tokenizer(REPO.joinpath("README.md").read_text())["input_ids"]
    chunks = [ids[i:i + length] for i in range(0, len(ids) - length, length)]
    return [torch.tensor([chunks[(s * batch + j) % len(chunks)] for j in range(batch)]) for s in range(steps)]


def predicted_density(before: torch.Tensor, after: torch.Tensor) -> float:
    """docs/training-math.md's bf16 element density for one step from fp32 masters `before` to `after` (flat):
    E[min(1, |Δ|/ulp(w))], which assumes each master sits anywhere in its bf16 cell."""
    ulp = torch.exp2(torch.floor(torch.log2(before.to(torch.bfloat16).float().abs().clamp(min=1e-38))) - 7)
    return float(torch.clamp((after - before).abs() / ulp, max=1.0).mean())


def grid_shares(masters: torch.Tensor) -> dict[str, float]:
    """Where the loaded masters sit in their bf16 cells: exactly on a bf16 value, or exactly halfway between two
    (a tie that any update, however small, breaks one way or the other)."""
    cell = masters.to(torch.bfloat16).float()
    ulp = torch.exp2(torch.floor(torch.log2(cell.abs().clamp(min=1e-38))) - 7)
    offset = (masters - cell) / ulp
    return {"on_bf16_grid": float((offset == 0).float().mean()),
            "at_bf16_midpoint": float((offset.abs() == 0.5).float().mean())}


def sync_once(state: dict[str, torch.Tensor], version: int, broadcasts: dict[str, Any],
              watchers: dict[str, Any]) -> dict[str, float]:
    """Publish `state` as `version` through every (encoding, precision) broadcast and read it back."""
    out: dict[str, float] = {}
    for key, broadcast in broadcasts.items():
        started = time.perf_counter()
        stats = broadcast.publish(state, version)
        out[f"{key}/publish_s"] = time.perf_counter() - started
        started = time.perf_counter()
        got = watchers[key].poll()
        out[f"{key}/read_s"] = time.perf_counter() - started
        if got is None or got[0] != version:
            raise SystemExit(f"{key}: version {version} did not read back")
        out[f"{key}/bytes"] = stats["sync/bytes"]
        out[f"{key}/dense_bytes"] = stats["sync/dense_bytes"]
        out[f"{key}/density"] = stats["sync/changed"] / stats["sync/elements"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lrs", type=float, nargs="+", default=[1e-6, 3e-5])
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    from tracegym.models.load import load_model, load_tokenizer
    from tracegym.samplers.weights.folder import FilesystemBroadcast, WeightWatcher

    tokenizer = load_tokenizer(None)
    batches = text_batches(tokenizer, args.steps)
    by_lr: dict[str, Any] = {}
    params = 0
    for lr in args.lrs:
        model = load_model(None, "fp32").train()
        params = sum(p.numel() for p in model.parameters())
        optimizer = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.98), weight_decay=0.1)
        with tempfile.TemporaryDirectory() as tmp:
            roots = {f"{enc}/{prec}": Path(tmp) / enc / prec for enc in ENCODINGS for prec in ("bf16", "fp32")}
            broadcasts = {key: FilesystemBroadcast(root, [key.split("/")[1]], keep=2,
                                                   delta=None if key.startswith("whole") else key.split("/")[0],
                                                   full_every=1000) for key, root in roots.items()}
            watchers = {key: WeightWatcher(root, key.split("/")[1]) for key, root in roots.items()}
            sync_once(model.state_dict(), 0, broadcasts, watchers)
            steps = []
            for step, batch in enumerate(batches, start=1):
                before = torch.cat([p.detach().flatten() for p in model.parameters()])
                loss = model(input_ids=batch, labels=batch).loss
                loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                after = torch.cat([p.detach().flatten() for p in model.parameters()])
                figures = sync_once(model.state_dict(), step, broadcasts, watchers)
                figures["predicted_density"] = predicted_density(before, after)
                if step == 1:
                    figures.update(grid_shares(before))
                figures["loss"] = float(loss)
                steps.append(figures)
                print(f"lr {lr:g} step {step}: loss {figures['loss']:.3f}, bf16 density "
                      f"{figures['xor/bf16/density']:.4%} (predicted {figures['predicted_density']:.4%}), bytes vs "
                      f"whole: xor {figures['xor/bf16/bytes'] / figures['whole/bf16/bytes']:.4f}, overwrite "
                      f"{figures['overwrite/bf16/bytes'] / figures['whole/bf16/bytes']:.4f} (bf16), xor "
                      f"{figures['xor/fp32/bytes'] / figures['whole/fp32/bytes']:.4f} (fp32); publish "
                      f"{figures['whole/bf16/publish_s']:.2f} / {figures['xor/bf16/publish_s']:.2f} / "
                      f"{figures['overwrite/bf16/publish_s']:.2f} s, read {figures['whole/bf16/read_s']:.2f} / "
                      f"{figures['xor/bf16/read_s']:.2f} / {figures['overwrite/bf16/read_s']:.2f} s "
                      "(whole / xor / overwrite, bf16)", flush=True)
        later = steps[1:] or steps  # step 1 starts from the bf16 grid; later steps show the steady state
        mean = {
            "bf16_density": statistics.fmean(s["xor/bf16/density"] for s in later),
            "predicted_density": statistics.fmean(s["predicted_density"] for s in later),
            **{f"{enc}_{prec}_ratio": statistics.fmean(s[f"whole/{prec}/bytes"] / s[f"{enc}/{prec}/bytes"]
                                                       for s in later)
               for enc in ("xor", "overwrite") for prec in ("bf16", "fp32")},
            **{f"{enc}_bf16_{what}_s": statistics.fmean(s[f"{enc}/bf16/{what}_s"] for s in later)
               for enc in ENCODINGS for what in ("publish", "read")},
        }
        by_lr[f"{lr:g}"] = {"steps": [{k: round(v, 6) for k, v in s.items()} for s in steps],
                            "mean": {k: round(v, 6) for k, v in mean.items()}}
    print(json.dumps({"model": "SmolLM2-135M-Instruct", "params": params, "by_lr": by_lr}))


if __name__ == "__main__":
    main()
