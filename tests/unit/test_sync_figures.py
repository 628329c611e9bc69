"""Bytes on the wire and sync latency: what a sampler counts (`_Clock`) and what a run stores per pool per step
(`PoolSync`)."""

from __future__ import annotations

import time

import pytest

from tracegym.samplers.worker import _Clock
from tracegym.training.metrics import PoolSync


def test_sync_latency_counts_the_loads_after_the_first_from_the_publish_time() -> None:
    clock = _Clock()
    clock.bytes_read = 1000
    clock.loaded(0, 0.5, time.time() - 60)  # the first load waits for the process to start: not a sync
    assert clock.counters()["syncs"] == 0 and clock.counters()["sync_latency_s"] == 0
    clock.bytes_read = 1200
    clock.loaded(1, 0.1, time.time() - 2.0)
    clock.loaded(2, 0.1, None)  # files that do not say when they were published: loaded, not timed
    clock.loaded(3, 0.1, time.time() - 1.0)
    counters = clock.counters()
    assert counters["version"] == 3
    assert counters["weight_loads"] == 4 and counters["syncs"] == 2 and counters["bytes_read"] == 1200
    assert 3.0 <= counters["sync_latency_s"] < 3.0 + 5  # 2 s + 1 s, plus this test's own time
    assert counters["load_s"] == pytest.approx(0.8)


def test_pool_sync_stores_each_step_what_it_added_and_the_mean_latency_of_its_syncs() -> None:
    meter = PoolSync()
    first = meter.metrics({"fp32": {"sync_bytes": 800.0, "syncs": 0.0, "sync_latency_s": 0.0},
                           "bf16": {"sync_bytes": 400.0, "syncs": 1.0, "sync_latency_s": 0.3}})
    assert first == {"sync/fp32/bytes": 800.0, "sync/bf16/bytes": 400.0, "sync/bf16/latency_s": pytest.approx(0.3)}
    second = meter.metrics({"fp32": {"sync_bytes": 1000.0, "syncs": 2.0, "sync_latency_s": 1.0},
                            "bf16": {"sync_bytes": 400.0, "syncs": 1.0, "sync_latency_s": 0.3}})
    assert second == {"sync/fp32/bytes": 200.0, "sync/fp32/latency_s": 0.5, "sync/bf16/bytes": 0.0}
    assert meter.metrics({}) == {}  # a source without pools (in-process sampling) stores none
