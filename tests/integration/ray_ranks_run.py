"""Run by tests/integration/test_ray_ranks.py inside its own network namespace (Ray binds to the machine's address):
`parallel: {kind: fsdp, world_size: 2, launcher: ray}` on a 2-node `ray.cluster_utils.Cluster`. Writes what it saw
to argv[1] (facts.json, and the trained run's metrics and weights in ray.pt).

Nodes: the head, with no CPUs to offer (this process, the driver, is rank 0), and a node offering `trainer_rank`,
which rank 1 is pinned to. Rank 0 trains the unit tests' batches (tests/unit/test_sharded_trainer.py) through
`sharded_trainer`, as `tracegym train` does, from a model folder both ranks load. Then a second run's rank 1 actor
is killed after its first step; `tracegym train` itself runs two GRPO steps of a tiny policy with its rank 1 on the
node; and a last run's node is removed (ungracefully) after its first step. The failures are timed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ray
import torch
from ray.cluster_utils import Cluster

from tests.integration.ray_cluster import add_node, start_cluster
from tests.integration.test_async_rollouts import _task, write_task_set
from tests.unit.test_sharded_trainer import OPTIM, _setup
from tests.unit.test_trainer_step import TEMPERATURE
from tracegym.errors import TracegymError
from tracegym.models.tiny import tiny_policy
from tracegym.training.config import TrainConfig
from tracegym.training.parallel.ranks import RankStart, load_policy, sharded_trainer

RESOURCE = "trainer_rank"


def _config(folder: Path) -> TrainConfig:
    _setup()[0].save_pretrained(folder / "model")
    return TrainConfig.model_validate({
        "run_dir": str(folder / "run"), "tasks": {"task_set": "unused"}, "model": {"ref": str(folder / "model")},
        "optim": OPTIM, "sampler": {"temperature": TEMPERATURE},
        "parallel": {"kind": "fsdp", "world_size": 2, "launcher": "ray", "ray": {"resources": {RESOURCE: 1}}},
        "async": {"ray": {"address": "auto"}}})


def _train(config: TrainConfig, out: Path) -> dict:
    _, batches = _setup()
    started = time.monotonic()
    with sharded_trainer(load_policy(config, None), config, RankStart(None, None, 0), None) as trainer:
        metrics = [trainer.step(batch) for batch in batches]
        weights = trainer.gathered_weights()
        # The only node offering it: rank 1's actor holds it there.
        held = ray.available_resources().get(RESOURCE, 0) == 0
    torch.save({"metrics": metrics, "weights": weights}, out / "ray.pt")
    return {"train_s": time.monotonic() - started, "resource_held": held}


def _failed_rank(config: TrainConfig, end_rank: Callable[[set[str]], None]) -> dict:
    """End rank 1 by `end_rank` (told the actors named before this run) after a step; what rank 0's next step
    raises, and how long it took."""
    _, batches = _setup()
    facts: dict = {}
    before = set(ray.util.list_named_actors())
    ended = time.monotonic()
    try:
        with sharded_trainer(load_policy(config, None), config, RankStart(None, None, 0), None) as trainer:
            trainer.step(batches[0])
            end_rank(before)
            ended = time.monotonic()
            trainer.step(batches[1])
    except TracegymError as e:
        facts = {"error": type(e).__name__, "message": str(e), "cause": type(e.__cause__).__name__}
    except Exception as e:  # noqa: BLE001 - reported to the test, which names what it expected
        facts = {"error": type(e).__name__, "message": str(e)[:2000]}
    facts["failed_after_s"] = time.monotonic() - ended
    return facts


def _command(folder: Path, address: str) -> dict:
    """`tracegym train` with `launcher: ray` on this cluster (`address: auto`, RAY_ADDRESS naming it): two GRPO
    steps of a tiny policy. Its exit code, its --json summary and what it said on stderr."""
    model, tokenizer = tiny_policy(seed=0)
    model.save_pretrained(folder / "policy")
    tokenizer.save_pretrained(folder / "policy")
    task_set = write_task_set(folder / "tasks", [_task(i) for i in range(4)])
    config = {"run_dir": str(folder / "command-run"), "seed": 0, "steps": 2, "checkpoint_every": 2,
              "model": {"ref": str(folder / "policy")}, "tasks": {"task_set": str(task_set)},
              "harness": {"kind": "chat", "limits": {"max_turns": 1}},
              "sampler": {"temperature": 1.0, "max_new_tokens": 6, "concurrency": 2},
              "grpo": {"group_size": 4, "batch_groups": 2}, "optim": {"lr": 1e-3}, "warmup": {"steps": 0},
              "parallel": {"kind": "fsdp", "world_size": 2, "launcher": "ray", "ray": {"resources": {RESOURCE: 1}}},
              "async": {"ray": {"address": "auto"}}}
    (folder / "command.json").write_text(json.dumps(config))
    done = subprocess.run([sys.executable, "-m", "tracegym.cli", "train", str(folder / "command.json"), "--store",
                           str(folder / "store.duckdb"), "--allow-unredacted", "--json"],
                          capture_output=True, text=True, timeout=900, env={**os.environ, "RAY_ADDRESS": address})
    summary = json.loads(done.stdout) if done.returncode == 0 else None
    return {"returncode": done.returncode, "summary": summary, "stderr": done.stderr[-6000:]}


def _kill_rank_1(before: set[str]) -> None:
    # This run's rank 1: an earlier run's, killed as it ended, may still be listed on a busy machine.
    name = next(n for n in ray.util.list_named_actors() if n.startswith("tracegym-rank-1-") and n not in before)
    ray.kill(ray.get_actor(name), no_restart=True)
    _rank_gone()


def _remove_node(cluster: Cluster, node: Any) -> None:
    cluster.remove_node(node, allow_graceful=False)
    _rank_gone()


def _rank_gone() -> None:
    """Ray ends an actor's process after it says so (a kill, a node removed): until then the next step could still
    meet a live rank 1. Wait until no rank actor's process is left (Ray titles it `ray::RankActor...`); going on
    with one alive would race it, so a guard against a hang fails instead."""
    deadline = time.monotonic() + 300
    while _rank_processes():
        if time.monotonic() > deadline:
            raise TimeoutError(f"rank actor processes {_rank_processes()} outlived their end by 300 s")
        time.sleep(0.05)


def _rank_processes() -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and b"RankActor" in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue  # ended while listed
    return found


def _resource_back(wait_s: float = 120.0) -> bool:
    """Whether the rank node's resource is free again (the actors were released); `wait_s` guards against a hang,
    long enough for a loaded machine's Ray to catch up."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if ray.available_resources().get(RESOURCE, 0) >= 1:
            return True
        time.sleep(0.2)
    return False


def main(out: Path) -> None:
    torch.set_num_threads(1)
    started = time.monotonic()
    cluster = start_cluster(connect=False)
    node = add_node(cluster, num_cpus=1, resources={RESOURCE: 1})
    ray.init(address=cluster.address)
    facts: dict = {"cluster_s": time.monotonic() - started}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config = _config(Path(tmp))
            facts["driver_address"] = ray.util.get_node_ip_address()
            facts.update(_train(config, out.parent))
            facts["resource_back"] = _resource_back()
            facts["killed"] = {**_failed_rank(config, _kill_rank_1), "resource_back": _resource_back()}
            facts["command"] = {**_command(Path(tmp), cluster.address), "resource_back": _resource_back()}
            facts["node_lost"] = _failed_rank(config, lambda _: _remove_node(cluster, node))
    finally:
        ray.shutdown()
        cluster.shutdown()
    out.write_text(json.dumps(facts))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
