"""Shared CLI output: data as JSON or rich tables on stdout, errors on stderr, quiet progress."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.table import Table

# Data goes to stdout; diagnostics and progress to stderr, so piped output stays clean.
out = Console(soft_wrap=True)
err = Console(stderr=True)

StoreOpt = Annotated[
    Path | None,
    typer.Option("--store", envvar="TRACEGYM_STORE", help="DuckDB store file [default: .tracegym/store.duckdb]"),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print data as JSON.")]


def print_json(data: Any) -> None:
    sys.stdout.write(orjson.dumps(data, default=_default, option=orjson.OPT_INDENT_2).decode() + "\n")


def _default(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    return str(value)


def print_table(rows: Sequence[dict[str, Any]], title: str | None = None, columns: Sequence[str] | None = None) -> None:
    if not rows:
        out.print("[dim](no rows)[/dim]")
        return
    cols = list(columns or rows[0].keys())
    table = Table(title=title, show_lines=False)
    for col in cols:
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*(_cell(row.get(c)) for c in cols))
    out.print(table)


def _cell(value: Any) -> str:
    if value is None:
        return "[dim]∅[/dim]"
    if isinstance(value, float):
        return f"{value:.4g}"
    text = str(value)
    return text if len(text) <= 120 else text[:117] + "…"


def emit(data: Any, as_json: bool, title: str | None = None) -> None:
    """Rows (or a dict) as JSON when asked, else as a table."""
    if as_json:
        print_json(data)
    elif isinstance(data, dict):
        print_table([{"key": k, "value": v} for k, v in data.items()], title=title)
    else:
        print_table(data, title=title)


@contextmanager
def progress(description: str, total: int | None = None) -> Iterator[Any]:
    """A rich progress bar on a terminal; a no-op when stderr is piped."""
    if not err.is_terminal:
        yield _NullTask()
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield _Task(bar, task)


class _NullTask:
    def advance(self, n: int = 1, description: str | None = None) -> None:
        pass


class _Task:
    def __init__(self, bar: Any, task: Any) -> None:
        self.bar, self.task = bar, task

    def advance(self, n: int = 1, description: str | None = None) -> None:
        self.bar.update(self.task, advance=n, description=description or self.bar.tasks[0].description)
