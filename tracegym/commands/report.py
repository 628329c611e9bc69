"""`tracegym report RUN [--out FILE]`: one page a person can open in a browser."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tracegym.output import StoreOpt, err, out


def register(app: typer.Typer) -> None:
    app.command("report")(report)


def report(
    run: Annotated[str, typer.Argument(help="A run id (or unique prefix), or a run folder.")],
    out_path: Annotated[Path | None, typer.Option(
        "--out", help="The HTML file to write [default: report.html in the run's folder].")] = None,
    store: StoreOpt = None,
) -> None:
    """Write a self-contained HTML report of a run: charts, the per-cluster eval table, regressions, config.

    TensorBoard event files are written beside the run too (RUN_DIR/tensorboard) when tensorboard is installed.
    """
    from tracegym.report.html import write_report
    from tracegym.report.rundata import load_run
    from tracegym.report.tensorboard import write_events
    from tracegym.store import open_store

    with open_store(store, read_only=True) as st:
        data = load_run(st, run)
    path = write_report(data, out_path or Path(data.run["run_dir"]) / "report.html")
    events = write_events(data, Path(data.run["run_dir"]) / "tensorboard")
    if events is not None:
        err.print(f"TensorBoard: tensorboard --logdir {events}")
    out.print(f"Report: {path.resolve()}")
