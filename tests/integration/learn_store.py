"""The store the quickstart trains from: mini-swe-agent and τ-bench ingested and mined, through the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TRACES
from tracegym.commands.quickstart import learnable_clusters
from tracegym.store import open_store


def learn_store(store: Path) -> list[dict[str, Any]]:
    """Ingest and mine the real traces into `store`; the quickstart's learnable clusters (skips without traces)."""
    from typer.testing import CliRunner

    from tracegym.cli import app

    if not TRACES.is_dir():
        pytest.skip(f"real traces not found at {TRACES}")
    runner = CliRunner()
    for args in (["ingest", str(TRACES / "mini-swe-agent"), str(TRACES / "tau-bench")], ["mine", "failures"]):
        assert runner.invoke(app, [*args, "--store", str(store)]).exit_code == 0
    with open_store(store, read_only=True) as st:
        return learnable_clusters(st)
