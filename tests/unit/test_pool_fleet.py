"""Rollout cost per sampler pool and pool quarantine, on hand-computed examples."""

from __future__ import annotations

import pytest
import torch

from tracegym.episodes.record import Episode, TokenRecord, TurnRecord
from tracegym.samplers.config import QuarantineSection, SamplerPool
from tracegym.samplers.rollouts import RolloutBatch, RolloutGroup
from tracegym.training.config import TrainConfig
from tracegym.training.pools.cost import CostLedger, PoolUsage, cost_summary, most_expensive, rollout_costs
from tracegym.training.pools.quarantine import QuarantineWatch, step_mismatch


def test_cost_figures_of_two_pools_by_hand() -> None:
    """h200: 1.5 device-hours at 4.00 = 6.00 for 300k tokens and 60 trained groups; a100: 2 device-hours at 1.50 =
    3.00 for 200k tokens and 40 groups. The run: 9.00, 0.018 per 1k tokens, 0.09 per group. On the h200 alone,
    at its 0.02 per 1k tokens, the 500k tokens cost 10.00: the mix saved 10%."""
    figures = rollout_costs({"h200": PoolUsage(4.0, 5400.0, 300_000.0, 60.0),
                             "a100": PoolUsage(1.5, 7200.0, 200_000.0, 40.0)})
    assert figures == pytest.approx({
        "cost/h200/price_per_hour": 4.0, "cost/h200/device_hours": 1.5, "cost/h200/tokens": 300_000.0,
        "cost/h200/trained_groups": 60.0, "cost/h200/total": 6.0, "cost/h200/per_1k_tokens": 0.02,
        "cost/h200/per_trained_group": 0.1,
        "cost/a100/price_per_hour": 1.5, "cost/a100/device_hours": 2.0, "cost/a100/tokens": 200_000.0,
        "cost/a100/trained_groups": 40.0, "cost/a100/total": 3.0, "cost/a100/per_1k_tokens": 0.015,
        "cost/a100/per_trained_group": 0.075,
        "cost/total": 9.0, "cost/per_1k_tokens": 0.018, "cost/per_trained_group": 0.09,
        "cost/most_expensive_alone": 10.0, "cost/saving_frac": 0.1,
    }, rel=1e-12)


def test_a_pool_with_nothing_to_divide_by_has_no_ratio_and_ties_go_by_name() -> None:
    # b and c cost the same per hour: b, first by name, is the most expensive; it produced nothing, so there
    # is no figure for the rollouts on it alone.
    figures = rollout_costs({"c": PoolUsage(2.0, 3600.0, 1000.0, 0.0), "b": PoolUsage(2.0, 1800.0, 0.0, 0.0)})
    assert most_expensive({"c": 2.0, "b": 2.0}) == "b"
    assert figures["cost/b/total"] == pytest.approx(1.0) and figures["cost/total"] == pytest.approx(3.0)
    assert "cost/b/per_1k_tokens" not in figures and "cost/c/per_trained_group" not in figures
    assert figures["cost/per_1k_tokens"] == pytest.approx(3.0) and "cost/most_expensive_alone" not in figures


def _episode(sampler_id: str, reward: float, error: str | None = None, tokens: int = 2) -> Episode:
    record = TokenRecord(torch.arange(2 + tokens), torch.tensor([False, False] + [True] * tokens),
                         torch.tensor([float("nan")] * 2 + [-0.5] * tokens), None)
    turn = TurnRecord("stop", sampler_id, 0, 0, 0.1, start=2, end=2 + tokens)
    return Episode(rollout_id=f"{sampler_id}-{reward}", task_id="t", task_set_id="ts", split="train", harness="chat",
                   sample_idx=0, seed=0, model="m", sampling={}, messages=[], n_prompt_messages=0, tokens=record,
                   turns=[turn], stop_reason="harness_error" if error else "model_done",
                   reward=None if error else reward, harness_error=error)


def _group(sampler_id: str, rewards: list[float], errors: int = 0, tokens: int = 2) -> RolloutGroup:
    episodes = [_episode(sampler_id, r, tokens=tokens) for r in rewards]
    episodes += [_episode(sampler_id, 0.0, "the sandbox did not start") for _ in range(errors)]
    return RolloutGroup("t", episodes)


def test_the_ledger_counts_trained_groups_per_pool_and_carries_a_resumed_run() -> None:
    pools = [SamplerPool(name="fast", price_per_hour=3.0), SamplerPool(name="slow", price_per_hour=1.0)]
    ledger = CostLedger(pools, earlier={"fast": PoolUsage(3.0, 1200.0, 400.0, 2.0)})
    batch = RolloutBatch([_group("fast/0", [0.0, 1.0]), _group("fast/1", [1.0, 1.0]), _group("slow/0", [0.0, 1.0])])
    figures = ledger.observe(batch, {"fast": {"alive_s": 2400.0, "tokens": 200.0}, "slow": {"alive_s": 3600.0,
                                                                                               "tokens": 300.0}})
    # fast: 1200 + 2400 s = 1 h at 3.00, 600 tokens, 2 + 1 trained groups (its group of equal rewards is not).
    assert figures["cost/fast/total"] == pytest.approx(3.0) and figures["cost/fast/trained_groups"] == 3.0
    assert figures["cost/fast/per_1k_tokens"] == pytest.approx(5.0)
    assert figures["cost/slow/total"] == pytest.approx(1.0) and figures["cost/slow/trained_groups"] == 1.0
    # On fast alone: 900 tokens at 3.00 / 600 = 4.50, against 4.00.
    assert figures["cost/most_expensive_alone"] == pytest.approx(4.5)
    summary = cost_summary({k: {7: v} for k, v in figures.items()})
    assert summary is not None and summary["step"] == 7 and [r["pool"] for r in summary["pools"]] == ["fast", "slow"]
    assert summary["run"]["most_expensive_pool"] == "fast" and summary["run"]["saving_frac"] == pytest.approx(1 / 9)


def test_pools_are_priced_all_or_none() -> None:
    with pytest.raises(ValueError, match="price_per_hour on every pool"):
        TrainConfig.model_validate({"run_dir": "r", "tasks": {"task_set": "t"}, "async": {"max_staleness": 1},
                                    "sampler": {"pools": [{"precision": "fp32", "price_per_hour": 2.0},
                                                          {"precision": "bf16"}]}})


def test_error_rate_quarantine_by_hand() -> None:
    """max_error_rate 0.25 over the last 8 episodes, judged from 4 on; groups of 2.
    step 1: 1 error in 2 episodes (too few to judge);
    step 2: 4 clean episodes: window 1/6 = 0.167, within the limit;
    step 3: a sampler died with one group in flight (2 lost episodes), and 1 error in 2 more: the last 8 are
            4 clean (of step 2), 1 error + 1 clean (step 3's batch), 2 lost: 3/8 = 0.375 > 0.25."""
    pools = [SamplerPool(name="a", max_error_rate=0.25), SamplerPool(name="b")]
    watch = QuarantineWatch(pools, QuarantineSection(window_episodes=8, min_episodes=4), group_size=2)
    assert watch.observe(1, {}, RolloutBatch([_group("a/0", [1.0], errors=1)]), {"a": {"lost_groups": 0}}) == []
    clean = RolloutBatch([_group("a/0", [0.0, 1.0]), _group("a/1", [1.0, 1.0])])
    assert watch.observe(2, {}, clean, {"a": {"lost_groups": 0}}) == []
    [verdict] = watch.observe(3, {}, RolloutBatch([_group("a/1", [1.0], errors=1)]), {"a": {"lost_groups": 1}})
    assert (verdict.pool, verdict.cause, verdict.limit) == ("a", "error_rate", 0.25)
    assert verdict.value == 3 / 8 and verdict.evidence == 8 and (verdict.first_step, verdict.last_step) == (2, 3)
    assert verdict.reason() == "error rate 0.375 > its limit 0.25, over 8 episodes of steps 2-3"
    assert not watch.all_out()  # b has no limit and samples on
    assert watch.observe(4, {}, RolloutBatch([_group("a/1", [1.0], errors=2)]), {"a": {"lost_groups": 1}}) == []


def test_mismatch_quarantine_weighs_steps_by_tokens_and_waits_for_enough() -> None:
    """max_mismatch_kl 0.01 over 2 steps, judged from 10 tokens. Pool lo: step 1 trains 4 of its tokens at k3 0.03
    (too few); step 2, 8 tokens at 0.006: (4 x 0.03 + 8 x 0.006) / 12 = 0.014 > 0.01. Pool hi stays within."""
    pools = [SamplerPool(name="hi"), SamplerPool(name="lo", precision="bf16", max_mismatch_kl=0.01)]
    watch = QuarantineWatch(pools, QuarantineSection(window_steps=2, min_tokens=10), group_size=2)
    both = {"mismatch/k3_kl": 0.02, "mismatch/hi/k3_kl": 0.0001, "mismatch/lo/k3_kl": 0.03}
    batch = RolloutBatch([_group("hi/0", [0.0, 1.0]), _group("lo/0", [0.0, 1.0])])
    assert watch.observe(1, both, batch, {}) == []
    # A step that trained on lo's tokens alone: the trainer's figures are the step's own.
    [verdict] = watch.observe(2, {"mismatch/k3_kl": 0.006}, RolloutBatch([_group("lo/0", [0.0, 1.0], tokens=4)]), {})
    assert (verdict.pool, verdict.cause, verdict.evidence, verdict.first_step) == ("lo", "mismatch", 12, 1)
    assert verdict.value == pytest.approx((4 * 0.03 + 8 * 0.006) / 12)
    assert step_mismatch({"mismatch/k3_kl": 0.5}, {"hi": 3, "lo": 2}) == {}, "several pools need their own figures"
    assert watch.out == {"lo": verdict.reason()} and not watch.all_out()


def test_every_pool_quarantined_is_a_typed_error() -> None:
    from tracegym.errors import TracegymError

    watch = QuarantineWatch([SamplerPool(name="only", max_error_rate=0.0)],
                            QuarantineSection(window_episodes=2, min_episodes=2), group_size=2)
    [verdict] = watch.observe(1, {}, RolloutBatch([_group("only/0", [1.0], errors=1)]), {})
    assert verdict.value == 0.5 and watch.all_out()
    error = watch.error()
    assert isinstance(error, TracegymError) and "only: error rate 0.5 > its limit 0" in str(error)


class _Source:
    """The rollout source as PoolWatch sees it: figures per pool, and the pools it is told to quarantine."""

    def __init__(self) -> None:
        self.quarantined: list[tuple[str, str]] = []

    def pool_figures(self) -> dict:
        return {"fast": {"alive_s": 360.0, "tokens": 100.0}, "slow": {"alive_s": 720.0, "tokens": 50.0}}

    def quarantine(self, pool: str, reason: str) -> None:
        self.quarantined.append((pool, reason))


def test_a_resumed_run_keeps_its_cost_and_the_quarantines_up_to_its_checkpoint(store_path) -> None:
    """Steps 1-3 stored cost figures and a quarantine at step 2 and at step 3; the run resumes from step 2's
    checkpoint: step 3's rows are forgotten, slow stays quarantined, and the cost goes on from step 2's figures."""
    from tracegym.store import open_store
    from tracegym.training.metrics import RunRecorder, read_quarantines
    from tracegym.training.pools.quarantine import Verdict
    from tracegym.training.pools.watch import PoolWatch

    config = TrainConfig.model_validate({
        "run_dir": "r", "tasks": {"task_set": "t"}, "async": {"max_staleness": 1},
        "sampler": {"pools": [{"name": "fast", "price_per_hour": 10.0, "max_error_rate": 0.5},
                              {"name": "slow", "price_per_hour": 2.0, "max_mismatch_kl": 0.01}]}})
    recorder = RunRecorder(store_path, "run-1")
    recorder.start(config.resolved(), store_path.parent, "tiny", None)
    for step in (1, 2, 3):
        recorder.log(step, {"cost/fast/device_hours": 0.1 * step, "cost/fast/tokens": 100.0 * step,
                            "cost/fast/trained_groups": float(step), "cost/fast/total": step * 1.0})
    recorder.quarantine(Verdict("slow", "mismatch", 0.02, 0.01, 1, 2, 300.0, 2))
    recorder.quarantine(Verdict("fast", "error_rate", 0.75, 0.5, 2, 3, 40.0, 3))
    recorder.forget_after(2)

    source = _Source()
    watch = PoolWatch(config, recorder, source)
    with open_store(store_path) as st:
        watch.resume(st, 2)
        assert [r["pool"] for r in read_quarantines(st, "run-1")] == ["slow"]
    assert source.quarantined == [("slow", "k3 KL against the trainer 0.02 > its limit 0.01, over 300 tokens of "
                                           "steps 1-2 (at step 2, before the resume)")]
    figures = watch.costs(RolloutBatch([_group("fast/0", [0.0, 1.0])]))
    # fast: 0.2 h before the resume + 0.1 h since, at 10.00; 200 + 100 tokens; 2 + 1 trained groups.
    assert figures["cost/fast/total"] == pytest.approx(3.0) and figures["cost/fast/tokens"] == 300.0
    assert figures["cost/fast/trained_groups"] == 3.0
    # slow stored nothing before (its figures start now): 0.2 h at 2.00.
    assert figures["cost/slow/total"] == pytest.approx(0.4) and figures["cost/slow/trained_groups"] == 0.0
