"""`tracegym quickstart`: the main job on its embedded defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tracegym.errors import NotFoundError
from tracegym.output import StoreOpt, err, out

DEFAULT_TRACES = Path("..") / "shared" / "data" / "traces"


def register(app: typer.Typer) -> None:
    app.command("quickstart")(quickstart)


def quickstart(
    traces: Annotated[Path, typer.Option(help="Trace files or folder to start from.")] = DEFAULT_TRACES,
    store: StoreOpt = None,
) -> None:
    """Run the pipeline on the embedded defaults: ingest the traces into a fresh store and show what was found."""
    from tracegym.commands.inspect import store_stats
    from tracegym.ingest.pipeline import ingest_paths
    from tracegym.store import default_store_path, open_store

    if not traces.exists():
        raise NotFoundError(f"No traces at {traces}. Pass --traces PATH (a file or folder of agent traces).")
    path = store or default_store_path()
    with open_store(path) as st:
        summary = ingest_paths(st, [str(traces)])
    data = summary.to_dict()
    err.print(f"[bold]1. ingest[/bold]: {data['traces']} new traces from {data['files']} files into {path}")
    store_stats(store=path, as_json=False)
    out.print(f"Next: `tracegym traces list --store {path}` and `tracegym sql \"...\" --store {path}`.")
