"""The `tracegym` command line: thin commands over the library.

Heavy imports (torch, transformers) happen inside the commands that need
them, so `tracegym --help` stays fast.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import click
import typer
from typer.core import TyperGroup

from tracegym.commands import eval as eval_command
from tracegym.commands import (
    evals,
    export,
    ingest,
    inspect,
    labels,
    lineage,
    mine,
    quickstart,
    redact,
    report,
    rollouts,
    run,
    runs,
    tasks,
    train,
)
from tracegym.commands import rescore as rescore_command
from tracegym.errors import StoreWaitInterrupted, TracegymError, is_interrupt


class _App(TyperGroup):
    """Every command's `TracegymError` ends here: its title in red, then its message, on stderr; exit code 2.

    The message is printed unwrapped (no panel, no hard line breaks): it names files as `path:line`, which
    must survive a narrow terminal whole, to be copied or clicked. Title and message are plain text, not markup,
    with control characters as escapes: they quote input (ids, file names, trace content).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _add_wait(self)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except StoreWaitInterrupted as e:  # Ctrl-C before the command did anything
            from tracegym.output import err

            err.print(str(e), markup=False, highlight=False)
            raise typer.Exit(130) from None
        except TracegymError as e:
            if os.environ.get("TRACEGYM_DEBUG"):
                raise
            from tracegym.inert import visible
            from tracegym.output import err

            err.print(f"{visible(e.title)}:", style="bold red", markup=False, highlight=False)
            err.print(visible(str(e)), soft_wrap=True, markup=False, highlight=False)
            raise typer.Exit(2) from None
        except RuntimeError as e:
            if is_interrupt(e):  # Ctrl-C that reached DuckDB mid-query: end as any Ctrl-C does, without a traceback
                raise KeyboardInterrupt from e
            raise


def _add_wait(group: click.Group) -> None:
    """Give every command that opens the store (it has --store) the option --wait."""
    for command in group.commands.values():
        if isinstance(command, TyperGroup):
            _add_wait(command)
        elif any(p.name == "store" for p in command.params):
            command.params.append(_WAIT_OPTION)


def _set_wait(value: float) -> None:
    import shlex
    import sys

    from tracegym.store import lock

    lock.set_wait(value)
    lock.set_command(shlex.join(["tracegym", *sys.argv[1:]]))


def _wait_option(wait: Annotated[float, typer.Option(
        "--wait", min=0, envvar="TRACEGYM_WAIT", expose_value=False, callback=_set_wait, metavar="SECONDS",
        help="While another tracegym command holds the store, wait this long for it (0: fail at once).")]
        = 600.0) -> None:
    """Stands in for each command that opens the store: typer builds the option --wait from it."""


_wait_app = typer.Typer()
_wait_app.command()(_wait_option)
_WAIT_OPTION = typer.main.get_command(_wait_app).params[0]


# transformers' tqdm bars (loading weights, converting the GGUF file) would draw beside tracegym's own progress;
# read when huggingface_hub is first imported, so set before any command imports it. A user's setting wins.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
# Libraries that draw plain tqdm bars (transformers converting a GGUF file, ~300 carriage-return updates) ignore
# that setting; tqdm reads TQDM_DISABLE when it is first imported. Off when stderr is not a terminal (a log, a pipe).
if not sys.stderr.isatty():
    os.environ.setdefault("TQDM_DISABLE", "1")

app = typer.Typer(
    name="tracegym",
    cls=_App,
    help="Turn production agent traces into RL environments, and train your model on them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    # Click's help: paragraphs reflowed to the terminal, flags without a type, and help text as written (rich
    # markup mode dropped every "[default: ...]" as a tag and kept the docstrings' line breaks).
    rich_markup_mode=None,
)


def _show_version(value: bool) -> None:
    if value:
        from tracegym import __version__

        typer.echo(f"tracegym {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[bool, typer.Option("--version", callback=_show_version, is_eager=True,
                                          help="Show tracegym's version and exit.")] = False,
) -> None:
    """Turn production agent traces into RL environments, and train your model on them."""


ingest.register(app)
redact.register(app)
inspect.register(app)
quickstart.register(app)
evals.register(app)
tasks.register(app)
mine.register(app)
run.register(app)
train.register(app)
eval_command.register(app)
runs.register(app)
report.register(app)
lineage.register(app)
labels.register(app)
export.register(app)
rollouts.register(app)
rescore_command.register(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
