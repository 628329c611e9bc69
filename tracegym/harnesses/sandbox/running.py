"""A sandboxed program running in the background of an event loop, until it ends or its caller stops it.

Supervision blocks (it polls pipes and limits), so it gets a thread of its own
rather than one of asyncio's shared worker threads: a program may run for the
whole episode, and many episodes run at once.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tracegym.harnesses.sandbox.base import CommandResult


class RunningCommand:
    """A command started by `Sandbox.start`; `wait` for its result, `stop` to kill it and all it started."""

    def __init__(self, run: Callable[[], CommandResult], stop: threading.Event) -> None:
        self._stop = stop
        self._loop = asyncio.get_running_loop()
        self._done: asyncio.Future[CommandResult] = self._loop.create_future()
        threading.Thread(target=self._supervise, args=(run,), name="tracegym-sandboxed-program", daemon=True).start()

    def stop(self) -> None:
        """Kill the command (within a supervision tick); its result then says `killed == "stopped"`."""
        self._stop.set()

    async def wait(self) -> CommandResult:
        """The command's result once it and everything it started are gone; raises what starting it raised."""
        return await asyncio.shield(self._done)

    def _supervise(self, run: Callable[[], CommandResult]) -> None:
        try:
            result = run()
        except Exception as error:  # noqa: BLE001 - handed to the awaiting side, whatever it is
            self._deliver(functools.partial(self._done.set_exception, error))
        else:
            self._deliver(functools.partial(self._done.set_result, result))

    def _deliver(self, settle: Callable[[], None]) -> None:
        def settle_once() -> None:
            if not self._done.done():
                settle()

        try:
            self._loop.call_soon_threadsafe(settle_once)
        except RuntimeError:
            pass  # the loop closed while the command ran: nobody is waiting for it any more
