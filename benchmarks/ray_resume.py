"""A trainer killed mid-run resumes on the same Ray cluster: `tracegym train --resume` with `async.ray.address: auto`.

Starts a 2-node Ray cluster (`ray.cluster_utils.Cluster`: a head without CPUs for the trainer, and a node offering
`pool_cpu`), then runs `tracegym train` as the trainer does on a cluster (RAY_ADDRESS set, `address: auto`). It
trains a tiny random Llama (SmolLM2 tokenizer) on short chat tasks, with one sampler pool pinned to the node by
`pool_cpu`. The trainer is sent SIGKILL once its step-`--kill-after` checkpoint is written. Ray then ends the
trainer's sampler actors and its weight registry, which belong to it. `tracegym train --resume` runs against the
same cluster and finishes the run. The script runs in a network namespace of its own, with only loopback up (Ray
binds to the machine's address).

    python benchmarks/ray_resume.py                  # 6 steps, killed after the step-2 checkpoint

The last line is one JSON object: killed_after_step, resumed_exit_code, final_step, stored_steps (the GRPO steps the
store has metrics for), nodes_lost_stored (`source/nodes_lost` is among the stored metrics) and the seconds each run
took.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import rl_setup
import yaml
from ray_backend import in_own_network

ROOT = rl_setup.BENCH_DIR.parent


def train(config: Path, store: Path, log: Path, resume: bool, env: dict[str, str],
          kill_when: Callable[[], bool] | None = None) -> tuple[int, float]:
    """Run `tracegym train`; SIGKILL it once `kill_when()` holds. Its exit code and seconds."""
    command = [sys.executable, "-m", "tracegym.cli", "train", "--allow-unredacted", str(config), "--store", str(store)]
    started = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.Popen([*command, *(["--resume"] if resume else [])], stdout=out, stderr=out, env=env,
                                cwd=ROOT)
        while proc.poll() is None:
            if kill_when is not None and kill_when():
                os.kill(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.1)
        code = proc.wait(timeout=600)
    return code, time.monotonic() - started


def stored(store: Path, run_dir: Path) -> tuple[list[int], bool]:
    from tracegym.store import open_store

    run_id = json.loads((run_dir / "run.json").read_text())["run_id"]
    with open_store(store, read_only=True) as st:
        steps = [r["step"] for r in st.query("SELECT DISTINCT step FROM metrics WHERE run_id = ? ORDER BY 1",
                                               [run_id])]
        nodes = st.query("SELECT count(*) AS n FROM metrics WHERE run_id = ? AND key = 'source/nodes_lost'",
                         [run_id])[0]["n"]
    return steps, nodes > 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--kill-after", type=int, default=2, help="the checkpoint step after which the trainer dies")
    args = parser.parse_args()
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    from ray.cluster_utils import Cluster

    work = Path(tempfile.mkdtemp(prefix="ray-resume-"))
    model = rl_setup.tiny_model_folder(rl_setup.OUT / "tiny-random")
    task_set = rl_setup.write_task_set(work / "cities", "bench-cities", rl_setup.city_tasks(8))
    run_dir, store = work / "run", work / "store.duckdb"
    config = work / "train.yaml"
    config.write_text(yaml.safe_dump({
        "run_dir": str(run_dir), "seed": 0, "steps": args.steps, "checkpoint_every": 2,
        "model": {"ref": str(model)}, "tasks": {"task_set": str(task_set.path)},
        "harness": {"kind": "chat", "limits": {"max_turns": 1}},
        "sampler": {"temperature": 1.0, "top_p": 0.95, "max_new_tokens": 8, "concurrency": 4,
                    "pools": [{"precision": "fp32", "ray": {"resources": {"pool_cpu": 1}}}]},
        "grpo": {"group_size": 2, "batch_groups": 2}, "optim": {"lr": 1e-3},
        "async": {"max_staleness": 1, "weight_delta": "xor", "backend": "ray", "ray": {"address": "auto"}},
    }, sort_keys=False))
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    cluster.add_node(num_cpus=1, resources={"pool_cpu": 1})
    cluster.wait_for_nodes()
    env = {**os.environ, "RAY_ADDRESS": cluster.address, "PYTHONPATH": f"{ROOT}{os.pathsep}"
           f"{os.environ.get('PYTHONPATH', '')}"}
    try:
        latest = run_dir / "checkpoints" / "latest"
        due = f"step-{args.kill_after:06d}"
        killed, first_s = train(config, store, work / "first.log", False, env,
                                kill_when=lambda: latest.is_file() and latest.read_text().strip() == due)
        killed_after = latest.read_text().strip() if latest.is_file() else None
        resumed, resumed_s = train(config, store, work / "resumed.log", True, env)
        print((work / "resumed.log").read_text()[-3000:], file=sys.stderr)
        steps, nodes_lost_stored = stored(store, run_dir)
        final = latest.read_text().strip() if latest.is_file() else None
    finally:
        cluster.shutdown()
    print(f"first run: exit {killed} after {first_s:.1f} s, checkpoint {killed_after}; resumed run: exit {resumed} "
          f"after {resumed_s:.1f} s, checkpoint {final}; steps in the store {steps}", flush=True)
    print(json.dumps({"killed_exit_code": killed, "killed_after_step": killed_after, "resumed_exit_code": resumed,
                      "final_step": final, "stored_steps": steps, "nodes_lost_stored": nodes_lost_stored,
                      "first_s": first_s, "resumed_s": resumed_s}), flush=True)


if __name__ == "__main__":
    in_own_network()
    main()
