"""Run by tests/integration/test_ray_backend.py inside its own network namespace (Ray binds to the machine's address):
a 3-node `ray.cluster_utils.Cluster` and the Ray backend's scenario on it. Writes what it saw as JSON to argv[1].

Nodes: the head (the trainer's node, no CPUs for samplers), node A offering `pool_fp32`, node B offering
`pool_bf16`. Pools: fp32 pinned to A, bf16 pinned to B, both through those custom resources. A real trainer trains
on the groups and publishes xor deltas. The bf16 sampler reads its versions through a source that flips bytes in
the first delta it reads (in transit). Mid-run node B is removed while its sampler holds a group (held scoring it
at a hold point in the task set's eval until the node is gone, so the group is in flight when the node goes), and a
new node
with `pool_bf16` joins (as an autoscaler would bring one); the trainer's saved tokenizer is deleted first, so the
replacement can only get it through Ray. At the same moment the fp32 sampler's actor process is killed. While the
cluster starts, one batch of the process backend gives the token records to compare with.

Then `tracegym train` runs on the same cluster as a user's would, in a process of its own connected through the Ray
client (`async.ray.address: ray://127.0.0.1:PORT`), with the fp32 pool on node A and a bf16 pool on the node that
joined, both limited in mismatch: the bf16 pool's weights are the trainer's rounded to
bf16, a perturbation its tokens' k3 KL shows (0.04-0.07 on the tiny model, against below 1e-5 for fp32), so it is
quarantined and the run goes on with the fp32 pool.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import ray
from ray.cluster_utils import Cluster

from tests.integration.ray_cluster import add_node, start_cluster
from tests.integration.test_async_rollouts import _task, write_task_set
from tracegym.models.load import stop_token_ids
from tracegym.models.tiny import tiny_policy
from tracegym.samplers.backends.processes import ProcessBackend
from tracegym.samplers.backends.ray_actors import RayBackend
from tracegym.samplers.orchestrator import AsyncRollouts
from tracegym.samplers.weights.folder import DELTA_SUFFIX, VersionSource
from tracegym.tasks.taskset import load_task_set
from tracegym.training.config import TrainConfig
from tracegym.training.grpo.trainer import Trainer

STEPS = 8
QUARANTINE_STEPS = 8
MISMATCH_LIMIT = 1e-3
CLIENT_PORT = 10001
HOLD_EVALS = """\
version: 1
evals:
  - name: starts_upper
    kind: python
    function: hold_eval:score
    python_path: ["."]
    arguments: {text: final_answer}
    timeout_s: 600
"""
HOLD_MODULE = """\
import json, os, re, time
from pathlib import Path

HOLD = Path(__file__).with_name("hold.json")


def score(text):
    _hold()
    return 1.0 if isinstance(text, str) and re.search("^[A-Z]", text) else 0.0


def _hold():
    try:
        plan = json.loads(HOLD.read_text())
    except FileNotFoundError:
        return
    if plan["pid"] != os.getpid():
        return
    Path(plan["held"]).touch()
    while HOLD.exists():
        time.sleep(0.05)
"""


class CorruptFirstDelta:
    """A version source that flips bytes in the first delta it returns (a payload damaged on the wire)."""

    def __init__(self, inner: VersionSource) -> None:
        self.inner = inner
        self.corrupted = False

    def __str__(self) -> str:
        return f"{self.inner} (corrupting)"

    def versions(self) -> list[int]:
        return self.inner.versions()

    def has(self, version: int, name: str) -> bool:
        return self.inner.has(version, name)

    def read(self, version: int, name: str) -> bytes:
        data = self.inner.read(version, name)
        payloads = 8 + struct.unpack("<Q", data[:8])[0]  # they follow the header
        if self.corrupted or not name.endswith(DELTA_SUFFIX) or len(data) - payloads < 64:
            return data
        self.corrupted = True
        return data[:-64] + bytes(b ^ 0x5A for b in data[-64:])  # the last payload's last bytes


class CorruptingBackend(RayBackend):
    """The Ray backend, with the bf16 pool's first sampler reading through `CorruptFirstDelta`."""

    def _source(self, spec: Any, pool: Any) -> Any:
        source = super()._source(spec, pool)
        return CorruptFirstDelta(source) if spec.sampler_id == "bf16/0" and not self.lost_nodes else source


def config(root: Path, task_set: Path, backend: str, pools: list[dict[str, Any]]) -> TrainConfig:
    return TrainConfig.model_validate({
        "run_dir": str(root / f"run-{backend}"), "seed": 3, "model": {"ref": str(root / "tiny")},
        "tasks": {"task_set": str(task_set)}, "harness": {"kind": "chat", "limits": {"max_turns": 1}},
        "sampler": {"temperature": 1.0, "top_p": 0.9, "max_new_tokens": 6, "concurrency": 2, "pools": pools},
        "grpo": {"group_size": 2, "batch_groups": 2}, "optim": {"lr": 1e-2},
        "async": {"max_staleness": 1, "weight_delta": "xor", "backend": backend},
    })


def record_shape(episode: Any) -> dict[str, Any]:
    """The token record's fields, with each tensor's dtype and number of dimensions."""
    episode.tokens.validate()
    fields = {}
    for name, value in sorted(vars(episode.tokens).items()):
        fields[name] = [str(value.dtype), value.dim()] if hasattr(value, "dtype") else type(value).__name__
    return {"episode_fields": sorted(vars(episode)), "token_fields": fields}


def said(what: str) -> None:
    """A line on stderr saying how far the scenario got (the test shows it if the scenario hangs)."""
    print(f"scenario: {what}", file=sys.stderr, flush=True)


def main(out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="ray-backend-") as folder:
        scenario(Path(folder), out)


def scenario(root: Path, out: Path) -> None:
    started = time.monotonic()
    model, tokenizer = tiny_policy(seed=0)
    model.save_pretrained(root / "tiny")
    tokenizer.save_pretrained(root / "tiny")
    task_set = load_task_set(write_task_set(root / "tasks", [_task(i) for i in range(6)], HOLD_EVALS))
    (task_set.path / "hold_eval.py").write_text(HOLD_MODULE)
    eos = stop_token_ids(model, tokenizer)
    facts: dict[str, Any] = {}

    def source(cfg: TrainConfig, backend: Any) -> AsyncRollouts:
        return AsyncRollouts(cfg.rollout_plan(), task_set.tasks, task_set=task_set, tokenizer=tokenizer,
                             eos_token_ids=eos, state_dict=model.state_dict(), policy_version=0, base_dir=root,
                             backend=backend, startup_timeout_s=600)  # a hang guard

    # The process backend's sampler starts while the cluster does.
    processes = source(config(root, task_set.path, "processes", [{"precision": "fp32"}]), ProcessBackend())
    try:
        processes.start()
        # The trainer connects before the other nodes join, so that its node (the registry's) is the head.
        cluster = start_cluster(connect=True, ray_client_server_port=CLIENT_PORT)
        add_node(cluster, num_cpus=1, resources={"pool_fp32": 1})
        node_b = add_node(cluster, num_cpus=1, resources={"pool_bf16": 1})
        facts["process_record"] = record_shape(processes.next_batch(1, trainer_version=0).groups[0].episodes[0])
    finally:
        processes.close()
    facts["cluster_up_s"] = time.monotonic() - started
    said(f"cluster up after {facts['cluster_up_s']:.0f} s")
    pools = [{"precision": "fp32", "ray": {"resources": {"pool_fp32": 1}}},
             {"precision": "bf16", "ray": {"resources": {"pool_bf16": 1}}}]
    cfg = config(root, task_set.path, "ray", pools)
    rollouts = source(cfg, CorruptingBackend(cfg.async_.ray))
    trainer = Trainer(model, cfg.optim, cfg.grpo, cfg.loss, cfg.sampler.temperature, int(tokenizer.eos_token_id))
    try:
        rollouts.start()
        train(rollouts, trainer, cluster, node_b, facts)
        stats = rollouts.stats()
    finally:
        rollouts.close()
    facts.update(stats={k: v for k, v in stats.items() if isinstance(v, float)}, samplers=stats["samplers"])
    said(f"trained {facts['steps']} steps; tracegym train through the Ray client")
    facts["quarantine"] = quarantine_run(root, task_set.path)
    facts["elapsed_s"] = time.monotonic() - started
    out.write_text(json.dumps(facts))
    ray.shutdown()
    cluster.shutdown()


def train(rollouts: AsyncRollouts, trainer: Trainer, cluster: Cluster, node_b: Any, facts: dict[str, Any]) -> None:
    """At least STEPS steps; once the bf16 sampler has resynced from its damaged delta and delivered a group, it is
    held scoring its next one, node B is lost while it holds it, and the steps go on until both replacements are
    working, every group handed out before the loss is consumed (`replaced_and_caught_up`) and a group of each pool
    has been trained (on a loaded machine the fp32 sampler can fill the batches while bf16 groups come stale)."""
    consumed: list[int] = []
    records: list[Any] = []
    hold = HoldPoint(rollouts.task_set.path)
    step, deadline = 0, time.monotonic() + 600  # a hang guard, not a measure
    while step < STEPS or not replaced_and_caught_up(rollouts, facts, consumed) or not trained_by_both(records):
        assert time.monotonic() < deadline, ("the replacement never delivered, a group handed out was never consumed, "
                                             "or a pool's groups were never trained")
        if "handed_at_loss" not in facts:
            bf16 = rollouts.stats()["samplers"]["bf16/0"]
            if not hold.armed and bf16["weight_rebuilds"] >= 1 and bf16["process_groups"] >= 1 and bf16["pid"]:
                hold.arm(bf16["pid"])
                said(f"step {step}: holding the bf16 sampler's next group")
            if hold.is_held():
                facts.update(lose_node_b(cluster, node_b, rollouts), lost_at_step=step, lost_at_s=time.monotonic())
                hold.release()
                said(f"step {step}: node B lost while its sampler held a group")
        batch = rollouts.next_batch(2, trainer_version=step)
        consumed += [g.group_index for g in (*batch.groups, *batch.stale, *batch.set_aside)]
        records += [e for g in batch.groups for e in g.episodes]
        facts.setdefault("trained_sequences", []).append(trainer.step(batch.groups)["train/sequences"])
        facts.setdefault("changed", []).append(rollouts.publish(trainer.model.state_dict(), step + 1)["sync/changed"])
        step += 1
    facts.update(steps=step, replaced_after_s=time.monotonic() - facts["lost_at_s"], consumed=consumed,
                 ray_records=[record_shape(e) for e in records],
                 trained_by=sorted({e.sampler_id for e in records}))


class HoldPoint:
    """The task set's hold point (HOLD_MODULE): once armed with a sampler's process id, that process holds at its
    next score, in its group, until released; `is_held` says whether it is holding now."""

    def __init__(self, task_set: Path) -> None:
        self.plan, self.held = task_set / "hold.json", task_set / "held"
        self.armed = False

    def arm(self, pid: int) -> None:
        self.plan.write_text(json.dumps({"pid": pid, "held": str(self.held)}))
        self.armed = True

    def is_held(self) -> bool:
        return self.held.exists()

    def release(self) -> None:
        self.plan.unlink()
        self.held.unlink()


def quarantine_run(root: Path, task_set: Path) -> dict[str, Any]:
    """`tracegym train` on this cluster through the Ray client, with a mismatching bf16 pool: its quarantine row,
    which pools' episodes each step trained on, and what the command said on stderr."""
    import subprocess

    from tracegym.store import open_store

    limit = {"max_mismatch_kl": MISMATCH_LIMIT}
    cfg = TrainConfig.model_validate({
        "run_dir": str(root / "run-quarantine"), "seed": 5, "steps": QUARANTINE_STEPS,
        "checkpoint_every": QUARANTINE_STEPS, "model": {"ref": str(root / "tiny")},
        "tasks": {"task_set": str(task_set)}, "harness": {"kind": "chat", "limits": {"max_turns": 1}},
        "sampler": {"temperature": 1.0, "top_p": 0.9, "max_new_tokens": 6, "concurrency": 2, "pools": [
            {"name": "exact", "precision": "fp32", "ray": {"resources": {"pool_fp32": 1}}, **limit},
            {"name": "coarse", "precision": "bf16", "ray": {"resources": {"pool_bf16": 1}}, **limit}]},
        "grpo": {"group_size": 4, "batch_groups": 2, "dynamic_sampling": True, "max_sampling_rounds": 4},
        "optim": {"lr": 1e-6}, "warmup": {"steps": 0},
        "async": {"max_staleness": 1, "backend": "ray", "ray": {"address": f"ray://127.0.0.1:{CLIENT_PORT}"},
                  "quarantine": {"window_steps": 3, "min_tokens": 6}},
    })
    config_path, store = root / "quarantine.json", root / "store.duckdb"
    config_path.write_text(json.dumps(cfg.resolved()))
    done = subprocess.run([sys.executable, "-m", "tracegym.cli", "train", str(config_path), "--store", str(store),
                           "--allow-unredacted", "--json"], capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"tracegym train on the Ray client failed:\n{done.stderr[-4000:]}{client_server_logs()}")
    result = json.loads(done.stdout)
    with open_store(store, read_only=True) as st:
        rows = st.query("SELECT pool, cause, value, limit_value, step FROM pool_quarantines WHERE run_id = ?",
                        [result["run_id"]])
        steps = st.query("SELECT train_step, list(DISTINCT split_part(sampler_id, '/', 1) ORDER BY 1) AS pools "
                         "FROM rollouts WHERE run_id = ? AND train_use = 'trained' GROUP BY ALL ORDER BY ALL",
                         [result["run_id"]])
        status = st.scalar("SELECT status FROM runs WHERE run_id = ?", [result["run_id"]])
    return {"rows": rows, "steps": steps, "status": status, "last_step": result["step"], "stderr": done.stderr}


def client_server_logs() -> str:
    """The head's Ray client server logs (where Ray says to look when one fails to start), last lines of each."""
    logs = Path(ray._private.worker._global_node.get_session_dir_path()) / "logs"
    return "".join(f"\n--- {path.name}:\n{path.read_text(errors='replace')[-2000:]}"
                   for path in sorted(logs.glob("ray_client_server*")))


def trained_by_both(records: list[Any]) -> bool:
    """Some episode of each pool's sampler has been trained."""
    return {"bf16/0", "fp32/0"} <= {e.sampler_id for e in records}


def replaced_and_caught_up(rollouts: AsyncRollouts, facts: dict[str, Any], consumed: list[int]) -> bool:
    """Both replacements have delivered a group (on a loaded machine the fp32 one, killed with the node's loss,
    starts after the bf16 one and may load its weights well after it), and every group handed out before the loss
    is consumed."""
    samplers = rollouts.stats()["samplers"]
    return ("handed_at_loss" in facts and samplers["bf16/0"]["process_groups"] > 0
            and samplers["fp32/0"]["process_groups"] > 0
            and set(range(facts["handed_at_loss"])) <= set(consumed))


def lose_node_b(cluster: Cluster, node_b: Any, rollouts: AsyncRollouts) -> dict[str, Any]:
    """Remove node B, whose sampler holds a group, after the trainer's tokenizer copy on disk is gone; a node with
    `pool_bf16` then joins. At the same moment the fp32 sampler's actor process is killed (a crash; its node lives
    on). Returns the groups handed out, and what both samplers held and had done, at that moment."""
    import shutil

    shutil.rmtree(rollouts.weights_dir / "tokenizer")
    stats = rollouts.stats()
    before = stats["samplers"]
    cluster.remove_node(node_b)
    os.kill(before["fp32/0"]["pid"], signal.SIGKILL)
    add_node(cluster, num_cpus=1, resources={"pool_bf16": 1})
    return {"handed_at_loss": int(stats["source/next_group_index"]),
            "bf16_in_flight_at_loss": before["bf16/0"]["in_flight"], "bf16_before_loss": before["bf16/0"],
            "fp32_before_loss": before["fp32/0"]}


if __name__ == "__main__":
    main(Path(sys.argv[1]))
