"""TensorBoard event files of a run, where the optional `tensorboard` package is installed.

The store is the record; event files are an export of it, so `tensorboard --logdir RUN_DIR/tensorboard`
shows every metric per step and the held-out eval reward per checkpoint. Each export replaces the
previous one (old event files are removed), so writing a report twice does not draw every point twice.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from tracegym.report.rundata import RunData

EVENTS_GLOB = "events.out.tfevents.*"


def tensorboard_available() -> bool:
    return importlib.util.find_spec("tensorboard") is not None


def write_events(data: RunData, logdir: Path) -> Path | None:
    """Write the run's metrics (and eval points) as scalars under `logdir`; None when tensorboard is absent."""
    if not tensorboard_available():
        return None
    from torch.utils.tensorboard import SummaryWriter

    logdir.mkdir(parents=True, exist_ok=True)
    for old in logdir.glob(EVENTS_GLOB):
        old.unlink()
    writer = SummaryWriter(log_dir=str(logdir))
    try:
        for key, values in sorted(data.metrics.items()):
            for step, value in sorted(values.items()):
                if value is not None:
                    writer.add_scalar(key, value, step)
        for point in data.eval_points:
            writer.add_scalar("eval/heldout_reward", point["value"], point["step"])
    finally:
        writer.close()
    return logdir
