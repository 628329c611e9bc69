"""What a run's rollouts cost, per sampler pool, from the pools' `price_per_hour` and their measured device time.

Definitions (docs/training-runs.md, "Quarantine and rollout cost"):

- A pool's device time is the sum, over every sampler process (or actor) the run started for it, replacements
  included, of its wall time from its start to its end (its death, or its pool's quarantine), or to the end of the
  step while it lives: rented devices bill while they are held, busy or waiting. `price_per_hour` is the price of one
  sampler of the pool (the device or devices it holds) for an hour.
- A pool's cost is device hours × price_per_hour; per 1,000 generated tokens, over the tokens its samplers sampled
  in the groups they delivered (stale and set-aside groups included); per trained group, over its groups a step
  trained on (`train_use = trained`).
- The most expensive pool alone: the pool with the highest price_per_hour (the first by name on a tie), at its
  measured throughput (its tokens per device-second): every token of the run at that pool's cost per token, all
  tokens × its cost / its tokens. `saving_frac` is 1 − the run's cost / that.

The figures are running totals, stored as metrics every step (`cost/POOL/total`, `cost/total`, ...), so the last
step holds the run's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tracegym.samplers.config import SamplerPool
    from tracegym.samplers.rollouts import RolloutBatch
    from tracegym.store.connection import Store

PER_POOL = ("price_per_hour", "device_hours", "tokens", "trained_groups", "total", "per_1k_tokens",
            "per_trained_group")
"""The figures stored per pool, as `cost/POOL/<figure>`."""


@dataclass(frozen=True)
class PoolUsage:
    """What one pool used and produced over a run."""

    price_per_hour: float
    device_s: float
    tokens: float
    trained_groups: float


def rollout_costs(usage: Mapping[str, PoolUsage]) -> dict[str, float]:
    """The cost figures of the pools in `usage` (every pool of the run, in config order) and of the run, as
    metric keys; see the module doc. A ratio with nothing to divide by is left out."""
    out: dict[str, float] = {}
    for pool, u in usage.items():
        cost = u.device_s / 3600 * u.price_per_hour
        out.update({f"cost/{pool}/price_per_hour": u.price_per_hour, f"cost/{pool}/device_hours": u.device_s / 3600,
                    f"cost/{pool}/tokens": u.tokens, f"cost/{pool}/trained_groups": u.trained_groups,
                    f"cost/{pool}/total": cost})
        out.update(_ratios(f"cost/{pool}/", cost, u.tokens, u.trained_groups))
    if not usage:
        return out
    total = sum(out[f"cost/{pool}/total"] for pool in usage)
    tokens = sum(u.tokens for u in usage.values())
    out["cost/total"] = total
    out.update(_ratios("cost/", total, tokens, sum(u.trained_groups for u in usage.values())))
    top = most_expensive({pool: u.price_per_hour for pool, u in usage.items()})
    if usage[top].tokens > 0:
        alone = tokens * out[f"cost/{top}/total"] / usage[top].tokens
        out["cost/most_expensive_alone"] = alone
        if alone > 0:
            out["cost/saving_frac"] = 1 - total / alone
    return out


def _ratios(prefix: str, cost: float, tokens: float, groups: float) -> dict[str, float]:
    out = {}
    if tokens > 0:
        out[f"{prefix}per_1k_tokens"] = cost / tokens * 1000
    if groups > 0:
        out[f"{prefix}per_trained_group"] = cost / groups
    return out


def most_expensive(prices: Mapping[str, float]) -> str:
    """The pool with the highest price per hour; on a tie, the first of them by name."""
    return max(sorted(prices), key=lambda pool: prices[pool])


class CostLedger:
    """The running cost figures of an asynchronous run whose pools declare `price_per_hour` (all of them do, or
    none: `SamplerSection` checks)."""

    def __init__(self, pools: Sequence[SamplerPool], earlier: Mapping[str, PoolUsage] | None = None) -> None:
        self.prices = {p.label: float(p.price_per_hour) for p in pools if p.price_per_hour is not None}
        self.earlier = dict(earlier or {})
        """What the steps before a resume used, read back from the store."""
        self.trained: Counter[str] = Counter()

    def observe(self, batch: RolloutBatch, pool_stats: Mapping[str, Mapping[str, Any]]) -> dict[str, float]:
        """Count the batch's trained groups, then the figures so far; `pool_stats` is the source's
        `stats()["pools"]` (device time `alive_s`, `tokens`)."""
        for group in batch.groups:
            if group.has_signal and group.episodes:
                self.trained[_pool_of(group.episodes[0].sampler_id)] += 1
        usage = {}
        for pool, price in self.prices.items():
            now = pool_stats.get(pool, {})
            before = self.earlier.get(pool, PoolUsage(price, 0.0, 0.0, 0.0))
            usage[pool] = PoolUsage(price, before.device_s + float(now.get("alive_s", 0.0)),
                                    before.tokens + float(now.get("tokens", 0.0)),
                                    before.trained_groups + self.trained[pool])
        return rollout_costs(usage)


def _pool_of(sampler_id: str | None) -> str:
    return sampler_id.rsplit("/", 1)[0] if sampler_id else ""


def stored_usage(store: Store, run_id: str, step: int, prices: Mapping[str, float]) -> dict[str, PoolUsage]:
    """What each priced pool had used by `step`, from the cost figures stored that step (none before the first)."""
    rows = store.query("SELECT key, value FROM metrics WHERE run_id = ? AND step = ? AND key LIKE 'cost/%'",
                       [run_id, step])
    values = {r["key"]: r["value"] or 0.0 for r in rows}
    return {pool: PoolUsage(price, values.get(f"cost/{pool}/device_hours", 0.0) * 3600,
                            values.get(f"cost/{pool}/tokens", 0.0), values.get(f"cost/{pool}/trained_groups", 0.0))
            for pool, price in prices.items() if f"cost/{pool}/device_hours" in values}


def cost_summary(metrics: Mapping[str, Mapping[int, float | None]]) -> dict[str, Any] | None:
    """The run's cost at its last costed step, for `runs show` and the report: `pools`, a row per pool, and `run`,
    its totals, what the same rollouts would have cost on the most expensive pool alone, and the share saved.
    None when the run stored no cost."""
    pools = sorted(key[len("cost/"):-len("/total")] for key in metrics
                   if key.startswith("cost/") and key.endswith("/total") and key != "cost/total")
    steps = [s for pool in pools for s in metrics[f"cost/{pool}/total"]]
    if not steps:
        return None
    last = max(steps)

    def at(key: str) -> float | None:
        return metrics.get(key, {}).get(last)

    rows = [{"pool": pool, **{figure: at(f"cost/{pool}/{figure}") for figure in PER_POOL}} for pool in pools]
    prices = {pool: price for pool in pools if (price := at(f"cost/{pool}/price_per_hour")) is not None}
    run = {"total": at("cost/total"), "per_1k_tokens": at("cost/per_1k_tokens"),
           "per_trained_group": at("cost/per_trained_group"),
           "most_expensive_pool": most_expensive(prices) if prices else None,
           "most_expensive_alone": at("cost/most_expensive_alone"), "saving_frac": at("cost/saving_frac")}
    return {"step": last, "pools": rows, "run": run}
