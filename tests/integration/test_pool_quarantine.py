"""`tracegym train` with two priced sampler pools, one of which mismatches the trainer: it is quarantined and the
run goes on with the other; the limit, the evidence and the rollout cost reach the store, `runs show` and the
report.

The mismatch is a real one: the pool samples in bf16 while the trainer and the other pool compute in fp32, so its
tokens' log-probs differ from the trainer's by bf16 rounding (k3 KL 0.04-0.07 on the tiny model), while the fp32
pool's differ by float noise and by the policy's move over one version of staleness at a learning rate of 1e-6
(below 1e-5).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.integration.test_async_rollouts import LinkOnlyBackend, _task, _until, write_task_set
from tests.integration.train_workspace import write_config

STEPS = 10
LIMIT = 1e-3
"""Far above the fp32 pool's k3 KL (below 1e-5 here, staleness included), far below the bf16 pool's (0.04-0.07)."""


@pytest.mark.slow
def test_a_mismatching_pool_is_quarantined_and_the_cost_of_both_is_shown(tmp_path: Path, cli) -> None:
    from tracegym.models.tiny import tiny_policy

    model, tokenizer = tiny_policy(seed=0)
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    tasks = write_task_set(tmp_path / "tasks", [_task(i) for i in range(6)])
    store = tmp_path / "store.duckdb"
    config = write_config(tmp_path / "run.yaml", {
        "run_dir": str(tmp_path / "run"), "seed": 5, "steps": STEPS, "checkpoint_every": STEPS,
        "model": {"ref": str(tmp_path / "tiny")}, "tasks": {"task_set": str(tasks)},
        "harness": {"kind": "chat", "limits": {"max_turns": 1}},
        "sampler": {"temperature": 1.0, "top_p": 0.9, "max_new_tokens": 6, "concurrency": 2, "pools": [
            {"name": "exact", "precision": "fp32", "price_per_hour": 3.0, "max_mismatch_kl": LIMIT},
            {"name": "coarse", "precision": "bf16", "price_per_hour": 1.0, "max_mismatch_kl": LIMIT}]},
        "grpo": {"group_size": 4, "batch_groups": 2, "dynamic_sampling": True, "max_sampling_rounds": 4},
        "optim": {"lr": 1e-6},
        "warmup": {"steps": 0},
        "async": {"max_staleness": 1, "quarantine": {"window_steps": 3, "min_tokens": 6}},
    })
    result = cli("train", "--allow-unredacted", config, "--store", store, "--json")
    assert result.exit_code == 0, result.stderr
    run_id = json.loads(result.stdout)["run_id"]
    assert "sampler pool coarse quarantined: k3 KL against the trainer" in result.stderr

    from tracegym.store import open_store
    from tracegym.training.metrics import read_metrics

    with open_store(store, read_only=True) as st:
        [row] = st.query("SELECT * FROM pool_quarantines WHERE run_id = ?", [run_id])
        metrics = read_metrics(st, run_id)
        by_step = st.query("SELECT train_step, split_part(sampler_id, '/', 1) AS pool, count(*) AS episodes, "
                           "count(*) FILTER (train_use = 'trained') AS trained FROM rollouts WHERE run_id = ? "
                           "GROUP BY ALL ORDER BY ALL", [run_id])
        status = st.scalar("SELECT status FROM runs WHERE run_id = ?", [run_id])
    # The limit and its evidence: the bf16 pool's k3 KL over at least min_tokens of its trained tokens.
    assert (row["pool"], row["cause"], row["limit_value"], row["evidence_unit"]) == ("coarse", "mismatch", LIMIT,
                                                                                     "tokens")
    assert row["value"] > LIMIT and row["evidence"] >= 6 and row["first_step"] <= row["last_step"] == row["step"]
    quarantined_at = row["step"]
    assert quarantined_at <= STEPS - 2, "quarantined early enough for the run to go on without it"
    # The run goes on with the fp32 pool: after the groups the bf16 pool had already delivered (at most a buffer's
    # worth, 2 groups, taken by the next step), every step samples from exact alone.
    assert status == "completed" and sorted(metrics["reward/mean"]) == list(range(1, STEPS + 1))
    later = [r for r in by_step if r["train_step"] > quarantined_at + 1]
    assert later and {r["pool"] for r in later} == {"exact"}
    assert all(v < LIMIT for v in metrics.get("mismatch/exact/k3_kl", {}).values())

    # Rollout cost: price x device hours, per 1k generated tokens, per trained group; the bf16 pool's device time
    # stopped growing once its samplers were stopped.
    last = STEPS
    for pool, price in (("exact", 3.0), ("coarse", 1.0)):
        total = metrics[f"cost/{pool}/total"][last]
        assert total == pytest.approx(metrics[f"cost/{pool}/device_hours"][last] * price) and total > 0
        assert metrics[f"cost/{pool}/per_1k_tokens"][last] == pytest.approx(
            total / metrics[f"cost/{pool}/tokens"][last] * 1000)
        trained = sum(r["trained"] for r in by_step if r["pool"] == pool) / 4
        assert metrics[f"cost/{pool}/trained_groups"][last] == trained
        if trained:
            assert metrics[f"cost/{pool}/per_trained_group"][last] == pytest.approx(total / trained)
    coarse_hours = metrics["cost/coarse/device_hours"]
    assert coarse_hours[last] == coarse_hours[quarantined_at + 2]
    assert metrics["cost/exact/device_hours"][last] > metrics["cost/exact/device_hours"][quarantined_at + 2]
    tokens = metrics["cost/exact/tokens"][last] + metrics["cost/coarse/tokens"][last]
    alone = tokens * metrics["cost/exact/total"][last] / metrics["cost/exact/tokens"][last]
    assert metrics["cost/most_expensive_alone"][last] == pytest.approx(alone)
    assert metrics["cost/saving_frac"][last] == pytest.approx(1 - metrics["cost/total"][last] / alone)

    shown = cli("runs", "show", run_id, "--store", store)
    assert shown.exit_code == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert "Quarantined sampler pools" in text and "│ coarse │ mismatch │" in text
    assert "Rollout cost per pool" in text and "│ exact │ 3 │" in text
    assert "The same rollouts on the most expensive pool alone (exact" in text
    as_json = json.loads(cli("runs", "show", run_id, "--store", store, "--json").stdout)
    assert [q["pool"] for q in as_json["quarantines"]] == ["coarse"]
    assert as_json["cost"]["run"]["most_expensive_alone"] == pytest.approx(alone)

    report = cli("report", run_id, "--store", store, "--out", tmp_path / "report.html")
    assert report.exit_code == 0, report.stderr
    page = (tmp_path / "report.html").read_text()
    assert "Sampler pools: quarantine and rollout cost" in page and "<code>coarse</code>" in page
    assert "would have cost" in page and "than that" in page


class _Link:
    """A sampler that takes tasks and never answers: the orchestrator's side of quarantine alone."""

    pid = None

    def __init__(self) -> None:
        self.sent: list[tuple] = []
        self.stopped = False

    def send(self, message: tuple) -> None:
        self.sent.append(message)

    def receive(self) -> list[tuple]:
        return []

    def exit_reason(self) -> str | None:
        return "stopped" if self.stopped else None

    def waitables(self) -> list:
        return []

    def kill(self) -> None:
        self.stopped = True


class _Backend(LinkOnlyBackend):
    def __init__(self) -> None:
        self.links: dict[str, _Link] = {}

    def start(self, spec, pool) -> _Link:
        self.links[spec.sampler_id] = _Link()
        return self.links[spec.sampler_id]

    def stop(self, links) -> None:
        for link in links:
            link.stopped = True


def _tasks(link: _Link) -> list[int]:
    return [m[1] for m in link.sent if m[0] == "task"]


def test_a_quarantined_pool_gets_no_task_its_groups_go_to_the_others_and_none_left_stops(tmp_path: Path,
                                                                                         capfd) -> None:
    """Whatever backend runs the samplers: quarantine stops the pool's samplers, requeues the groups they had in
    flight to the other pool, freezes the pool's device time, and with no pool left `next_batch` raises."""
    from tracegym.errors import ModelError
    from tracegym.models.load import stop_token_ids
    from tracegym.models.tiny import tiny_policy
    from tracegym.samplers.config import SamplerPool
    from tracegym.samplers.orchestrator import AsyncRollouts
    from tracegym.tasks.taskset import load_task_set
    from tracegym.training.config import TrainConfig

    model, tokenizer = tiny_policy(seed=0)
    model.save_pretrained(tmp_path / "tiny")
    task_set = load_task_set(write_task_set(tmp_path / "tasks", [_task(i) for i in range(6)]))
    config = TrainConfig.model_validate({
        "run_dir": str(tmp_path / "run"), "model": {"ref": str(tmp_path / "tiny")},
        "tasks": {"task_set": str(task_set.path)}, "harness": {"kind": "chat"},
        # Two groups in flight per sampler, four handed out at most (two batches' worth).
        "sampler": {"concurrency": 4}, "grpo": {"group_size": 2, "batch_groups": 2}, "async": {"max_staleness": 2},
    })
    backend = _Backend()
    source = AsyncRollouts(config.rollout_plan(), task_set.tasks, task_set=task_set, tokenizer=tokenizer,
                           eos_token_ids=stop_token_ids(model, tokenizer), state_dict=model.state_dict(),
                           policy_version=0, base_dir=tmp_path, backend=backend,
                           pools=[SamplerPool(name="a"), SamplerPool(name="b", price_per_hour=1.0)])
    try:
        source.start()
        a, b = backend.links["a/0"], backend.links["b/0"]
        _until(lambda: len(_tasks(a)) == 2 and len(_tasks(b)) == 2, "both samplers hold two groups")
        held_by_b = _tasks(b)
        source.quarantine("b", "k3 KL 0.2 > its limit 0.01")
        _until(lambda: source.stats()["pools"]["b"]["quarantined"] is not None, "b is quarantined")
        pools = source.stats()["pools"]
        assert pools["b"]["quarantined"] == "k3 KL 0.2 > its limit 0.01" and pools["a"]["quarantined"] is None
        frozen = pools["b"]["alive_s"]
        assert frozen > 0 and source.stats()["source/pools_quarantined"] == 1
        # a's two slots are full, so b's groups wait in the queue for the trainer to free credits.
        assert _tasks(a)[:2] == sorted(set(range(4)) - set(held_by_b)) and len(_tasks(b)) == 2
        _until(lambda: b.stopped, "b's sampler is stopped")
        time.sleep(0.3)  # time passes: b's device time does not grow
        assert source.stats()["pools"]["b"]["alive_s"] == frozen
        said = " ".join(capfd.readouterr().err.split())
        assert "sampler pool b quarantined: k3 KL 0.2 > its limit 0.01; its 1 sampler(s) stopped, 2 group(s)" in said

        source.quarantine("a", "error rate 0.5 > its limit 0.2")
        with pytest.raises(ModelError, match="Every sampler pool is quarantined"):
            source.next_batch(2, trainer_version=0)
        assert a.stopped
    finally:
        source.close()
