"""What the training loop does about an asynchronous run's sampler pools after each step: their rollout cost
(tracegym/training/pools/cost.py) and their quarantine (tracegym/training/pools/quarantine.py).

The rollout source (`tracegym.samplers.orchestrator.AsyncRollouts`, whatever backend starts its samplers) measures
each pool's device time, tokens and groups (`pool_figures()`) and stops handing tasks to a pool it is told to
quarantine; the judging and the store are the trainer's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from tracegym.training.pools.cost import CostLedger, stored_usage
from tracegym.training.pools.quarantine import QuarantineWatch, Verdict

if TYPE_CHECKING:
    from tracegym.samplers.rollouts import PoolFigures, RolloutBatch, RolloutSource
    from tracegym.store.connection import Store
    from tracegym.training.config import TrainConfig
    from tracegym.training.metrics import RunRecorder


class PoolWatch:
    """Cost figures for every step's metrics, and quarantine verdicts stored and handed to the source."""

    def __init__(self, config: TrainConfig, recorder: RunRecorder, source: RolloutSource) -> None:
        pools = config.sampler_pools()
        self.recorder, self.source = recorder, source
        self.quarantines = QuarantineWatch(pools, config.async_.quarantine, config.grpo.group_size)
        self.ledger = CostLedger(pools) if any(p.price_per_hour is not None for p in pools) else None
        self._pool_stats: Mapping[str, PoolFigures] = {}

    def resume(self, store: Store, step: int) -> None:
        """Carry on from `step` of a resumed run: its cost so far, and the pools quarantined by then."""
        from tracegym.training.metrics import read_quarantines

        if self.ledger is not None:
            self.ledger.earlier = stored_usage(store, self.recorder.run_id, step, self.ledger.prices)
        for row in read_quarantines(store, self.recorder.run_id, step):
            verdict = Verdict(row["pool"], row["cause"], row["value"], row["limit_value"], row["first_step"],
                              row["last_step"], row["evidence"], row["step"])
            self.quarantines.out[verdict.pool] = verdict.reason()
            self.source.quarantine(verdict.pool, f"{verdict.reason()} (at step {verdict.step}, before the resume)")
        if self.quarantines.all_out():
            raise self.quarantines.error()

    def costs(self, batch: RolloutBatch) -> dict[str, float]:
        """The step's running cost figures (none when the pools declare no price)."""
        self._pool_stats = self.source.pool_figures()
        return self.ledger.observe(batch, self._pool_stats) if self.ledger is not None else {}

    def judge(self, step: int, metrics: Mapping[str, float], batch: RolloutBatch) -> list[Verdict]:
        """Quarantine the pools the step put past a limit (stored, then handed to the source); raises
        `PoolsQuarantinedError` once no pool is left. Call after `costs`, which reads the source's figures."""
        if not self.quarantines.active:
            return []
        verdicts = self.quarantines.observe(step, metrics, batch, self._pool_stats)
        for verdict in verdicts:
            self.recorder.quarantine(verdict)
            self.source.quarantine(verdict.pool, verdict.reason())
        if verdicts and self.quarantines.all_out():
            raise self.quarantines.error()
        return verdicts
