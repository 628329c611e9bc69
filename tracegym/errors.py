"""Typed errors: the one path by which problems reach users.

The library raises a `TracegymError` subclass; the CLI prints its message on
stderr and exits with code 2. Anything else is a bug and shows a traceback.
"""

from __future__ import annotations

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


class StoreBusyError(StoreError):
    """Another process holds the store, and this one waited as long as `--wait` allows."""

    title = "Store busy"


class StoreWaitInterrupted(KeyboardInterrupt):  # noqa: N818 - a Ctrl-C, caught as one
    """Ctrl-C while waiting for the store: nothing was done yet, so the command line ends with exit code 130."""


class IngestError(TracegymError):
    title = "Ingest error"


class ConfigError(TracegymError):
    title = "Configuration error"


class ExportError(TracegymError):
    """A task set cannot be exported to a format, or an export cannot score where it was loaded."""

    title = "Export error"


class NotFoundError(TracegymError):
    title = "Not found"


class NothingPassedError(TracegymError):
    """Every drafted task failed a reward gate: no task set to train on."""

    title = "No task passed the gates"


class SandboxError(TracegymError):
    title = "Sandbox error"


class ModelError(TracegymError):
    title = "Model error"


class DownloadError(TracegymError):
    """A public file that could not be fetched, or whose bytes are not the ones pinned."""

    title = "Download error"


class HackableRewardError(TracegymError):
    """A task set whose reward a hollow reply earns (docs/reward-gates.md), about to be trained on."""

    title = "Hackable reward"


class RankError(TracegymError):
    """A trainer rank of `parallel: {kind: fsdp}` that could not start, or ended while the run needed it."""

    title = "Trainer rank error"


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A ' Did you mean X?' suffix when a choice is a likely typo of `word`, else ''.

    A likely typo is a few edits away: one per five characters, at least one (a letter added, dropped, changed or
    two swapped). Similarity ratios suggested unrelated ids, since any two hex ids share many characters.
    """
    limit = max(1, len(word) // 5)
    best = min(((typo_distance(word, c), c) for c in dict.fromkeys(choices)), default=None)
    return f" Did you mean {best[1]!r}?" if best is not None and best[0] <= limit else ""


def typo_distance(a: str, b: str) -> int:
    """Edits from `a` to `b`: insertions, deletions, substitutions and swaps of neighbours (optimal string
    alignment distance)."""
    previous, current = None, list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        before, previous, current = previous, current, [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if before is not None and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
    return current[-1]


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
