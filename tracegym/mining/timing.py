"""Wall-clock and CPU time of the steps of a mining run."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class StepTime:
    """Time one step of a mining run took: wall clock, and CPU of this process (all DuckDB threads)."""

    wall_s: float
    cpu_s: float


Timings = dict[str, StepTime]


def clock() -> StepTime:
    return StepTime(time.perf_counter(), time.process_time())


def since(start: StepTime) -> StepTime:
    now = clock()
    return StepTime(now.wall_s - start.wall_s, now.cpu_s - start.cpu_s)


@contextmanager
def timed(timings: Timings, step: str) -> Iterator[None]:
    """Record the wall-clock and process CPU time of the block as `timings[step]`."""
    start = clock()
    yield
    timings[step] = since(start)
