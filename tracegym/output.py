"""Shared CLI output: data as JSON or rich tables on stdout, errors on stderr, quiet progress.

Trace content and model output never reach the terminal live: every console here shows control characters as
escapes (`tracegym.inert`), and text from the store goes into rich markup only through `literal`, so that it
cannot style, link or forge what is printed around it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console, ConsoleOptions, RenderableType
from rich.markup import escape
from rich.segment import Segment
from rich.table import Table

from tracegym import exact_json
from tracegym.inert import inert_json, visible


class InertConsole(Console):
    """A console that emits no control character it did not make itself.

    Its own styling and cursor moves are control segments; in every text segment, control characters become
    escapes. Callers still pass untrusted text through `literal` (or `visible`) first, so that tables measure
    the text as it is shown; the escaping here is what still holds where one does not.
    """

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterator[Segment]:
        for segment in super().render(renderable, options):
            yield segment if segment.control else Segment(visible(segment.text), segment.style)


# Data goes to stdout; diagnostics and progress to stderr, so piped output stays clean.
out = InertConsole(soft_wrap=True)
err = InertConsole(stderr=True)

StoreOpt = Annotated[
    Path | None,
    typer.Option("--store", envvar="TRACEGYM_STORE", help="DuckDB store file [default: .tracegym/store.duckdb]"),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print data as JSON.")]


def literal(value: Any) -> str:
    """`value` as text to put into rich markup: shown as it is, with control characters as escapes."""
    return escape(visible(str(value)))


def print_json(data: Any) -> None:
    text = exact_json.dumps(data, sort_keys=False, indent=True, default=_default)
    sys.stdout.write(inert_json(text) + "\n")


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
    table = Table(title=None if title is None else literal(title), show_lines=False)
    for col in cols:
        table.add_column(literal(col), overflow="fold")
    for row in rows:
        table.add_row(*(_cell(row.get(c)) for c in cols))
    out.print(table)


def _cell(value: Any) -> str:
    if value is None:
        return "[dim]∅[/dim]"
    if isinstance(value, float):
        return f"{value:.4g}"
    text = visible(str(value))
    return escape(text if len(text) <= 120 else text[:117] + "…")


def emit(data: Any, as_json: bool, title: str | None = None) -> None:
    """Rows (or a dict) as JSON when asked, else as a table."""
    if as_json:
        print_json(data)
    elif isinstance(data, dict):
        print_table([{"key": k, "value": v} for k, v in data.items()], title=title)
    else:
        print_table(data, title=title)


@contextmanager
def progress(description: str, total: int | None = None, in_bytes: bool = False) -> Iterator[Any]:
    """A rich progress bar on a terminal (counting bytes, with a rate, when `in_bytes`); a no-op when stderr is
    piped."""
    if not err.is_terminal:
        yield _NullTask()
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TransferSpeedColumn,
    )

    counts = (DownloadColumn(), TransferSpeedColumn()) if in_bytes else (MofNCompleteColumn(),)
    # Descriptions are plain text: they name models and scorers, which may carry brackets.
    with Progress(TextColumn("{task.description}", markup=False), BarColumn(), *counts,
                  TimeElapsedColumn(), console=err, transient=True) as bar:
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
