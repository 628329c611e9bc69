"""The rollout source a config asks for: in-process with async.max_staleness 0, sampler processes otherwise; each
answers the loop's whole `RolloutSource` protocol, its figures under their metric names."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.test_async_rollouts import _task, write_task_set
from tracegym.models.load import stop_token_ids
from tracegym.models.tiny import tiny_policy
from tracegym.samplers.inprocess import SyncRollouts
from tracegym.samplers.orchestrator import AsyncRollouts
from tracegym.samplers.rollouts import TaskOrder
from tracegym.tasks.taskset import TaskSet, load_task_set
from tracegym.training.config import TrainConfig
from tracegym.training.sources import in_process, make_source, publish_precision, sampler_precision
from tracegym.training.trained_weights import TrainedWeights


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TaskSet]:
    root = tmp_path_factory.mktemp("sources")
    model, tokenizer = tiny_policy(seed=0)
    model.save_pretrained(root / "tiny")
    tokenizer.save_pretrained(root / "tiny")
    return root, load_task_set(write_task_set(root / "tasks", [_task(i) for i in range(3)]))


def _config(root: Path, task_set: TaskSet, max_staleness: int, **sampler: object) -> TrainConfig:
    return TrainConfig.model_validate({
        "run_dir": str(root / f"run-{max_staleness}"), "model": {"ref": str(root / "tiny")},
        "tasks": {"task_set": str(task_set.path)}, "harness": {"kind": "chat", "limits": {"max_turns": 1}},
        "sampler": {"max_new_tokens": 4, **sampler}, "grpo": {"group_size": 2, "batch_groups": 1},
        "async": {"max_staleness": max_staleness}})


def _source(config: TrainConfig, task_set: TaskSet, version: int = 3, start: int = 5):
    from transformers import AutoTokenizer

    policy = TrainedWeights.load(config)
    tokenizer = AutoTokenizer.from_pretrained(config.model.ref)
    order = TaskOrder(task_set.tasks, config.seed)
    return make_source(config, policy, task_set, task_set.tasks, tokenizer, stop_token_ids(policy.model, tokenizer),
                       version, start, order)


def test_max_staleness_zero_samples_in_process(workspace) -> None:
    root, task_set = workspace
    config = _config(root, task_set, 0, precision="bf16")
    assert in_process(config) and sampler_precision(config) == publish_precision(config) == "bf16"
    source = _source(config, task_set)
    try:
        assert isinstance(source, SyncRollouts) and source.next_index == 5
        assert source.policy.engine.policy_version == 3
        source.quarantine("fp32", "no pools in-process: nothing happens")
        assert source.pool_figures() == {}
        assert source.totals() == {"source/next_group_index": 5.0, "source/samplers_alive": 1.0}
    finally:
        source.close()


def test_max_staleness_above_zero_runs_sampler_pools(workspace) -> None:
    root, task_set = workspace
    pools = [{"name": "a", "precision": "fp32"}, {"name": "b", "precision": "bf16"}]
    config = _config(root, task_set, 2, pools=pools)
    assert not in_process(config)
    assert sampler_precision(config) == "fp32,bf16" and publish_precision(config) == "fp32"
    source = _source(config, task_set)
    try:  # not started: no process runs, and the figures are those of a source that sampled nothing yet
        assert isinstance(source, AsyncRollouts) and source.max_staleness == 2
        assert [p.label for p in source.pools] == ["a", "b"]
        totals = source.totals()
        assert all(key.startswith("source/") for key in totals)
        assert totals["source/next_group_index"] == 5.0 and totals["source/dropped_stale"] == 0.0
        assert set(source.pool_figures()) == {"a", "b"}
        source.quarantine("b", "a test")
        with pytest.raises(ValueError, match="no sampler pool 'c'"):
            source.quarantine("c", "a test")
    finally:
        source.close()
