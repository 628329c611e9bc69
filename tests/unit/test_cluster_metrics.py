"""Training reward per failure cluster: which episodes of a step count, and the metric names they are stored under."""

from __future__ import annotations

import pytest
import torch

from tracegym.episodes.record import Episode, TokenRecord, TurnRecord
from tracegym.samplers.rollouts import RolloutBatch, RolloutGroup, set_aside_stats
from tracegym.training.cluster_reward import (
    NO_CLUSTER,
    batch_cluster_rewards,
    cluster_key,
    cluster_metrics,
    parse_key,
)

CLUSTER_OF = {"a1": "9ad607e04a", "a2": "9ad607e04a", "b1": "d0d6ed6684", "n1": NO_CLUSTER}


def _episode(task_id: str, k: int, reward: float | None) -> Episode:
    tokens = TokenRecord(torch.tensor([5, 6, 7]), torch.tensor([False, True, True]),
                         torch.tensor([float("nan"), -0.5, -1.0]), None)
    return Episode(rollout_id=f"{task_id}-{k}", task_id=task_id, task_set_id="ts", split="train", harness="chat",
                   sample_idx=k, seed=k, model="m", sampling={}, messages=[], n_prompt_messages=0, tokens=tokens,
                   turns=[TurnRecord("stop", "s", 0, k, 0.1, start=1, end=3)], stop_reason="model_done",
                   reward=reward, harness_error=None if reward is not None else "the sandbox died")


def _group(task_id: str, rewards: list[float | None]) -> RolloutGroup:
    return RolloutGroup(task_id, [_episode(task_id, k, r) for k, r in enumerate(rewards)])


def test_a_step_counts_every_fresh_scored_episode_per_cluster() -> None:
    batch = RolloutBatch(
        [_group("a1", [0.0, 1.0, None, 1.0]), _group("b1", [0.5, 0.5])],
        set_aside=[_group("a2", [0.0, 0.0, 0.0, 0.0]), _group("n1", [1.0, 1.0])],
        stale=[_group("b1", [1.0, 1.0, 1.0, 1.0])],
    )
    rewards = batch_cluster_rewards(batch, CLUSTER_OF)
    # a1's unscored episode is left out; a2, set aside, is in; the stale b1 group is not.
    assert rewards == {"9ad607e04a": (pytest.approx(2.0 / 7), 7), "d0d6ed6684": (0.5, 2), NO_CLUSTER: (1.0, 2)}
    assert cluster_metrics(rewards) == {
        "cluster/9ad607e04a/reward": 2.0 / 7, "cluster/9ad607e04a/episodes": 7.0,
        "cluster/d0d6ed6684/reward": 0.5, "cluster/d0d6ed6684/episodes": 2.0,
        "cluster/none/reward": 1.0, "cluster/none/episodes": 2.0,
    }
    # The same episodes as grpo/sampled_reward_mean: the episode-weighted mean over clusters is that mean.
    overall = sum(m * n for m, n in rewards.values()) / sum(n for _, n in rewards.values())
    assert overall == pytest.approx(set_aside_stats(batch.set_aside, batch.groups)["grpo/sampled_reward_mean"])


def test_a_cluster_whose_episodes_all_failed_stores_nothing() -> None:
    batch = RolloutBatch([_group("a1", [None, None]), _group("b1", [1.0, 0.0])])
    assert batch_cluster_rewards(batch, CLUSTER_OF) == {"d0d6ed6684": (0.5, 2)}
    assert batch_cluster_rewards(RolloutBatch([]), CLUSTER_OF) == {}


def test_metric_keys_parse_back() -> None:
    assert parse_key("cluster/9ad607e04a/reward") == ("9ad607e04a", "reward")
    assert parse_key("cluster/none/episodes") == ("none", "episodes")
    assert parse_key("reward/mean") is None and parse_key("curriculum/9ad607e04a/weight") is None
    assert parse_key("cluster/x/y/z") is None


def test_a_task_without_a_cluster_has_the_none_key() -> None:
    from tracegym.tasks.spec import Provenance

    class Task:
        def __init__(self, cluster_id: str | None) -> None:
            self.provenance = Provenance(trace_id="t", format="tau-bench", source_task="s", cut_message_idx=1,
                                         cluster_id=cluster_id)

    assert cluster_key(Task("9ad607e04a")) == "9ad607e04a"  # type: ignore[arg-type]
    assert cluster_key(Task(None)) == NO_CLUSTER  # type: ignore[arg-type]
