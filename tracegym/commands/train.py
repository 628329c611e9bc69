"""`tracegym train CONFIG [--resume]`: GRPO (after an optional warm start) on a task set."""

from __future__ import annotations

import shlex
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from tracegym.output import JsonOpt, StoreOpt, err, print_json


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM (`kill`, a job scheduler's stop) ends the run as Ctrl-C does: sampler processes are stopped, the run
    is marked interrupted, and `--resume` continues it."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def register(app: typer.Typer) -> None:
    app.command("train")(train)


def train(
    config: Annotated[Path, typer.Argument(help="The run's YAML config, e.g. examples/train-tau.yaml in the "
                                                "repository (every key: docs/training.md there).")],
    resume: Annotated[bool, typer.Option("--resume", help="Continue the run in the config's run_dir from its "
                                                          "latest checkpoint.")] = False,
    allow_unredacted: Annotated[bool, typer.Option(
        "--allow-unredacted", help="Go on even though the store holds traces that were not redacted.")] = False,
    allow_hackable: Annotated[bool, typer.Option(
        "--allow-hackable", help="Train even though a hollow reply earns the reward on more than tasks.max_hackable "
                                 "of the tasks (docs/reward-gates.md).")] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Train a model on a task set: a supervised warm start on successful traces, then GRPO.

    Metrics go to the store per step (tables runs, metrics, checkpoints; rollouts by run_id); checkpoints
    are Hugging Face model folders under RUN_DIR/checkpoints. With `parallel: {kind: fsdp, world_size: N}` it
    starts N-1 more trainer ranks itself, or runs as one of N processes under `torchrun --nproc_per_node N -m
    tracegym.cli train CONFIG` (rank 0 then does all but train). A task set whose reward a hollow reply earns (as
    `tasks generate` recorded it) on more than tasks.max_hackable of its tasks is refused unless --allow-hackable.
    """
    from tracegym.training.config import load_train_config
    from tracegym.training.loop import train as run_training
    from tracegym.training.parallel.ranks import follow, torchrun_launch

    loaded = load_train_config(config)
    launch = torchrun_launch(loaded)
    if launch is not None and launch.rank > 0:  # under torchrun: rank 0 alone touches the store and the run folder
        follow(loaded, launch)
        return
    if not allow_unredacted:
        from tracegym.redact.session import require_redacted
        from tracegym.store import open_store

        with open_store(store) as st:
            require_redacted(st, "tracegym train")
    try:
        with _sigterm_interrupts():
            result = run_training(loaded, resume=resume, store_path=store, launch=launch, allow_hackable=allow_hackable)
    except KeyboardInterrupt:
        err.print(f"Interrupted; the run is marked interrupted in the store. Continue it from its latest checkpoint "
                  f"with: tracegym train {config} --resume")
        raise typer.Exit(130) from None
    summary = {"run_id": result.run_id, "run_dir": str(result.run_dir), "step": result.step,
               "checkpoint": str(result.checkpoint) if result.checkpoint else None,
               "warm_start_checkpoint": str(result.warm_start_checkpoint) if result.warm_start_checkpoint else None,
               **result.counts}
    if as_json:
        print_json(summary)
        return
    store_arg = f" --store {shlex.quote(str(store))}" if store is not None else ""
    run = shlex.quote(result.run_id)
    err.print(f"Run {result.run_id} finished at step {result.step}; latest checkpoint: {summary['checkpoint']}.\n"
              f"Its metrics, per-cluster reward and checkpoints: tracegym runs show {run}{store_arg}\n"
              f"An HTML report with charts: tracegym report {run}{store_arg}", markup=False, highlight=False)
