"""Typed errors: the one path by which problems reach users.

The library raises a `TracegymError` subclass; the CLI prints its message on
stderr and exits with code 2. Anything else is a bug and shows a traceback.
"""

from __future__ import annotations

import difflib
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager


class TracegymError(Exception):
    """An error meant for the user: a clear message, no traceback."""

    title = "tracegym error"

    def __init__(self, message: str, title: str | None = None) -> None:
        super().__init__(message)
        if title is not None:
            self.title = title


class StoreError(TracegymError):
    title = "Store error"


class IngestError(TracegymError):
    title = "Ingest error"


class ConfigError(TracegymError):
    title = "Configuration error"


class NotFoundError(TracegymError):
    title = "Not found"


class SandboxError(TracegymError):
    title = "Sandbox error"


class ModelError(TracegymError):
    title = "Model error"


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A ' Did you mean X?' suffix when a close spelling exists, else ''."""
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" Did you mean {close[0]!r}?" if close else ""


def is_interrupt(error: BaseException) -> bool:
    """Ctrl-C (or SIGTERM under `tracegym train`), also when it came while DuckDB ran a query: DuckDB's Python
    client runs the signal handler during the query and turns the KeyboardInterrupt it raises into
    `RuntimeError("Query interrupted")`, a plain RuntimeError (not `duckdb.InterruptException`)."""
    return isinstance(error, KeyboardInterrupt) or (type(error) is RuntimeError and str(error) == "Query interrupted")


@contextmanager
def remembered_interrupts() -> Iterator[Callable[[], None]]:
    """Ctrl-C as usual, and remembered: yields a check that raises KeyboardInterrupt once one came.

    A SIGINT that lands while DuckDB runs a query can be lost: the client runs the handler, and if the query
    finishes before it acts on the KeyboardInterrupt, the query succeeds and the interrupt is gone. Calling the
    check between units of work (files, say) stops there instead. Outside the main thread, where no handler can be
    set, the check does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return
    came = threading.Event()

    def handler(signum: int, frame: object) -> None:
        came.set()
        raise KeyboardInterrupt

    def check() -> None:
        if came.is_set():
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield check
    finally:
        signal.signal(signal.SIGINT, previous)
