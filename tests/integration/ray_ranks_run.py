"""Run by tests/integration/test_ray_ranks.py inside its own network namespace (Ray binds to the machine's address):
`parallel: {kind: fsdp, world_size: 2, launcher: ray}` on a 2-node `ray.cluster_utils.Cluster`. Writes what it saw
to argv[1] (facts.json, and the trained run's metrics and weights in ray.pt).

Nodes: the head, with no CPUs to offer (this process, the driver, is rank 0), and a node offering `trainer_rank`,
which rank 1 is pinned to. Rank 0 trains the unit tests' batches (tests/unit/test_sharded_trainer.py) through
`sharded_trainer`, as `tracegym train` does, from a model folder both ranks load. Then a second run's rank 1 actor
is killed after its first step, and a third run's node is removed (ungracefully) after its first step; the next
step's failure is timed.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("RAY_AUTH_MODE", "disabled")

import ray  # noqa: E402
import torch  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from tests.unit.test_sharded_trainer import OPTIM, _setup  # noqa: E402
from tests.unit.test_trainer_step import TEMPERATURE  # noqa: E402
from tracegym.errors import TracegymError  # noqa: E402
from tracegym.training.config import TrainConfig  # noqa: E402
from tracegym.training.ranks import RankStart, load_policy, sharded_trainer  # noqa: E402

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
        weights = trainer.full_state_dict()
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
    meet a live rank 1. Wait until no rank actor's process is left (Ray titles it `ray::RankActor...`)."""
    deadline = time.monotonic() + 30
    while _rank_processes() and time.monotonic() < deadline:
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


def _resource_back(wait_s: float = 20.0) -> bool:
    """Whether the rank node's resource is free again (the actors were released) within `wait_s`."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if ray.available_resources().get(RESOURCE, 0) >= 1:
            return True
        time.sleep(0.2)
    return False


def main(out: Path) -> None:
    torch.set_num_threads(1)
    started = time.monotonic()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    node = cluster.add_node(num_cpus=1, resources={RESOURCE: 1})
    ray.init(address=cluster.address)
    facts: dict = {"cluster_s": time.monotonic() - started}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config = _config(Path(tmp))
            facts["driver_address"] = ray.util.get_node_ip_address()
            facts.update(_train(config, out.parent))
            facts["resource_back"] = _resource_back()
            facts["killed"] = {**_failed_rank(config, _kill_rank_1), "resource_back": _resource_back()}
            facts["node_lost"] = _failed_rank(config, lambda _: _remove_node(cluster, node))
    finally:
        ray.shutdown()
        cluster.shutdown()
    out.write_text(json.dumps(facts))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
