"""The Ray backend against the process backend: rollout groups per second, and bytes on the wire per weight sync.

The asynchronous benchmark's loop (benchmarks/trl_step.py, part 2), once per backend, side by side in one run:
the tiny Llama warm-started to call get_weather once for each of three cities and then answer, the 24 weather
tasks, the tools harness (each call takes 200 ms; `--tool get_weather_instant` for pure compute), `--samplers`
samplers of 1 thread with 32 episodes in flight each, a 1-thread trainer, max_staleness 4, batches of 4 groups of
4, xor weight deltas. The process backend starts local sampler processes; the Ray backend starts the same samplers
as actors on a local Ray instance (`async.ray.address: local`), whose weights come through Ray's object store. A
loop's rate counts the groups trained from the end of its first step to the end of its last (start-up left out);
the figures are medians over `--repeats` rounds, each running both backends, in alternating order.

Bytes on the wire: after the Ray loop, `--sync-steps` more steps each wait until every sampler has loaded the new
version, and compare the bytes each sampler read for it (the watcher's count of what it fetched from the object
store) with the size of the delta the broadcast wrote for its precision, and with whole weights.

Ray binds to the machine's address; the script re-runs itself in a network namespace of its own (`unshare --net`,
loopback up) unless it is in one already.

    python benchmarks/ray_backend.py                      # 2 rounds of 12 loop steps
    python benchmarks/ray_backend.py --repeats 3 --loop-steps 20

The last line is one JSON object: process_groups_per_s, ray_groups_per_s, ratio, sync_bytes, dense_bytes (and
delta_bytes, the delta's size, which sync_bytes must equal).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import rl_setup
import torch

WEATHER_TASKS = 24
_NAMESPACED = "TRACEGYM_BENCH_NETNS"


def build(args: argparse.Namespace, work: Path, backend: str) -> tuple[Any, Any, Any]:
    """The trainer, the source (not started) and the config of one backend's loop."""
    from tracegym.models.load import load_model, load_tokenizer, stop_token_ids
    from tracegym.samplers.orchestrator import AsyncRollouts
    from tracegym.training.config import TrainConfig
    from tracegym.training.grpo.trainer import Trainer

    model_dir = rl_setup.tool_calling_model(rl_setup.OUT / "tool-model-3calls", WEATHER_TASKS, steps=args.warm_steps)
    task_set = rl_setup.write_task_set(work / "weather", "bench-weather", rl_setup.weather_tasks(WEATHER_TASKS))
    config = TrainConfig.model_validate({
        "run_dir": str(work / f"run-{backend}-{time.monotonic_ns()}"), "seed": 0, "model": {"ref": str(model_dir)},
        "tasks": {"task_set": str(task_set.path)},
        "harness": {"kind": "tools", "tools": rl_setup.weather_tools(args.tool), "limits": {"max_turns": 5}},
        "sampler": {"temperature": 1.0, "top_p": 0.95, "max_new_tokens": 32, "concurrency": 32,
                    "pools": [{"precision": "fp32", "processes": args.samplers, "threads": 1}]},
        "grpo": {"group_size": 4, "batch_groups": 4, "std_normalization": True},
        "loss": {"score_centering": True, "top_p_replay": True}, "optim": {"lr": 1e-4},
        "async": {"max_staleness": 4, "weight_delta": "xor", "backend": backend, "ray": {"address": "local"}},
    })
    model, tokenizer = load_model(str(model_dir)), load_tokenizer(str(model_dir))
    trainer = Trainer(model.train(), config.optim, config.grpo, config.loss, config.sampler.temperature,
                      int(tokenizer.eos_token_id))
    source = AsyncRollouts(config.rollout_plan(), task_set.tasks, task_set=task_set, tokenizer=tokenizer,
                           eos_token_ids=stop_token_ids(model, tokenizer), state_dict=model.state_dict(),
                           policy_version=0, base_dir=rl_setup.BENCH_DIR)
    return trainer, source, config


def loop(args: argparse.Namespace, work: Path, backend: str) -> dict[str, Any]:
    """One backend's loop: its groups/s, and (Ray) the bytes each sampler read per sync."""
    trainer, source, config = build(args, work, backend)
    source.start()
    torch.set_num_threads(1)
    try:
        log = rl_setup.run_steps(trainer, source, args.loop_steps, config.grpo.batch_groups)
        figures: dict[str, Any] = {"groups_per_s": sum(log.groups[1:]) / (log.ended_at[-1] - log.ended_at[0]),
                                   "step_s": statistics.median(log.step_s[1:]),
                                   "wait_s": statistics.fmean(m["time/wait_s"] for m in log.metrics[1:]),
                                   "train_s": statistics.fmean(m["time/train_s"] for m in log.metrics[1:]),
                                   "publish_s": statistics.fmean(m["time/publish_s"] for m in log.metrics[1:])}
        if backend == "ray" and args.sync_steps:
            figures["syncs"] = syncs(trainer, source, config, args.loop_steps, args.sync_steps)
        stats = source.stats()
        figures.update({name: stats[f"source/{name}"] for name in ("dropped_stale", "sampler_tokens_per_s",
                                                                    "sampler_waiting_s", "sampler_working_s")})
    finally:
        source.close()
    return figures


def syncs(trainer: Any, source: Any, config: Any, version: int, steps: int) -> list[dict[str, float]]:
    """`steps` more steps, each waiting until every sampler holds the new version: per sync, the bytes each
    sampler read for it, the delta's size and whole weights' size (one pool, one precision)."""
    out = []
    _until_loaded(source, version)  # from here on, each sync is one delta for every sampler
    for v in range(version, version + steps):
        before = {sid: s["sync_bytes"] for sid, s in source.stats()["samplers"].items()}
        batch = source.next_batch(config.grpo.batch_groups, trainer_version=v)
        trainer.step(batch.groups)
        sync = source.publish(trainer.model.state_dict(), v + 1)
        _until_loaded(source, v + 1)
        read = [s["sync_bytes"] - before[sid] for sid, s in source.stats()["samplers"].items()]
        out.append({"read_bytes": statistics.fmean(read), "read_min": min(read), "read_max": max(read),
                    "delta_bytes": sync["sync/bytes"], "dense_bytes": sync["sync/dense_bytes"],
                    "whole": sync["sync/whole"]})
    return out


def _until_loaded(source: Any, version: int) -> None:
    """Wait until every sampler's last beat says it holds `version` (a beat comes every 0.5 s; it counts the bytes
    read for a version before it says the version is loaded)."""
    deadline = time.monotonic() + 60
    while not all(s["version"] == version for s in source.stats()["samplers"].values()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the samplers did not load version {version} within 60 s")
        time.sleep(0.1)


def main() -> None:
    args = parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    rl_setup.OUT.mkdir(parents=True, exist_ok=True)
    runs: dict[str, list[dict[str, Any]]] = {"processes": [], "ray": []}
    with tempfile.TemporaryDirectory(prefix="ray-backend-") as tmp:
        for round_ in range(args.repeats):
            for backend in (("processes", "ray") if round_ % 2 == 0 else ("ray", "processes")):
                figures = loop(args, Path(tmp), backend)
                runs[backend].append(figures)
                print(f"round {round_}: {backend}: {json.dumps(figures)}", flush=True)
    process_rate = statistics.median(f["groups_per_s"] for f in runs["processes"])
    ray_rate = statistics.median(f["groups_per_s"] for f in runs["ray"])
    deltas = [s for f in runs["ray"] for s in f.get("syncs", []) if not s["whole"]]
    print(f"groups/s: processes {process_rate:.3f}, ray {ray_rate:.3f} ({ray_rate / process_rate:.2f}x; rounds "
          f"{[round(f['groups_per_s'], 3) for f in runs['processes']]} vs "
          f"{[round(f['groups_per_s'], 3) for f in runs['ray']]}); {len(deltas)} delta syncs, bytes read per "
          f"sampler equal to the delta: {all(s['read_min'] == s['read_max'] == s['delta_bytes'] for s in deltas)}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    print(json.dumps({
        "process_groups_per_s": process_rate, "ray_groups_per_s": ray_rate, "ratio": ray_rate / process_rate,
        "sync_bytes": statistics.fmean(s["read_bytes"] for s in deltas) if deltas else None,
        "delta_bytes": statistics.fmean(s["delta_bytes"] for s in deltas) if deltas else None,
        "dense_bytes": statistics.fmean(s["dense_bytes"] for s in deltas) if deltas else None,
    }), flush=True)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loop-steps", type=int, default=12, help="steps of each loop (the first is a warm-up)")
    parser.add_argument("--repeats", type=int, default=2, help="rounds of the two loops (medians)")
    parser.add_argument("--samplers", type=int, default=2, help="samplers of 1 thread, in either backend")
    parser.add_argument("--sync-steps", type=int, default=3, help="steps that measure the bytes read per sync")
    parser.add_argument("--tool", default="get_weather_200ms", choices=["get_weather_200ms", "get_weather_instant"])
    parser.add_argument("--warm-steps", type=int, default=120, help="warm-start steps of the tool model")
    args = parser.parse_args(argv)
    if args.loop_steps < 2:
        parser.error("--loop-steps must be at least 2: the first step is a warm-up left out")
    return args


def in_own_network() -> None:
    """Re-run this script in a network namespace of its own with loopback up, unless it is in one already."""
    if os.environ.get(_NAMESPACED):
        return
    command = f"ip link set lo up && exec {shlex.join([sys.executable, *sys.argv])}"
    env = {**os.environ, _NAMESPACED: "1", "RAY_AUTH_MODE": os.environ.get("RAY_AUTH_MODE", "disabled")}
    sys.exit(subprocess.run(["unshare", "--net", "sh", "-c", command], env=env).returncode)


if __name__ == "__main__":
    in_own_network()
    main()
