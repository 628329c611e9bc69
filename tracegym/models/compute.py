"""Keep a process's torch work on one thread: its event loop runs beside it.

PyTorch's CPU kernels run on an OpenMP team owned by the thread that calls them. GNU OpenMP counts the
threads of every team in the process, and once there are more than CPUs it stops letting idle team
threads spin between parallel regions: they sleep, and each of the thousands of small parallel regions
of a batched decode pays for waking them. A second thread that runs torch work (a decode in a worker thread
beside a main thread that loads models and trains) therefore slows every decode for the life of the process.

So `Runner` runs the asyncio event loop, which only batches requests and waits on tools, in a helper
thread, and the calling thread (the one that loads the model and trains) serves the torch work that
coroutines hand over with `offload`, until the coroutine it runs is done. Coroutines run any other way
(plain `asyncio.run`) still work: `offload` then uses a worker thread.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import weakref
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

T = TypeVar("T")

_QUEUES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ComputeQueue] = weakref.WeakKeyDictionary()


class ComputeQueue(Executor):
    """An executor whose calls run on whichever thread is in `serve_until`."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Future, Callable[..., Any], tuple, dict] | None] = queue.SimpleQueue()

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        self._jobs.put((future, fn, args, kwargs))
        return future

    def serve_until(self, done: Future) -> None:
        """Run submitted calls on this thread, one at a time, until `done` completes."""
        done.add_done_callback(lambda _: self._jobs.put(None))  # wakes the get() below
        while not done.done():
            job = self._jobs.get()
            if job is None:
                continue
            future, fn, args, kwargs = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args, **kwargs))
            except Exception as e:  # noqa: BLE001 - delivered to the awaiting coroutine
                future.set_exception(e)
            except BaseException:
                # Ctrl-C (or SIGTERM under `train`) mid-call stops this thread, not the coroutine: delivered to the
                # event loop, a KeyboardInterrupt ends the loop's thread, and then nothing finishes `done`, nor the
                # `close` that cancels what is left, and the process hangs.
                future.set_exception(asyncio.CancelledError())
                raise


class Runner:
    """An event loop in a helper thread; `run(coro)` blocks the calling thread, serving its torch work."""

    def __init__(self, name: str = "tracegym-event-loop") -> None:
        self.loop = asyncio.new_event_loop()
        self.compute = ComputeQueue()
        _QUEUES[self.loop] = self.compute
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            self.compute.serve_until(future)
        except BaseException:
            future.cancel()  # Ctrl-C while serving: stop the coroutine too
            raise
        return future.result()

    def close(self) -> None:
        """Cancel what is still running on the loop (as `asyncio.run` does), then stop it and its thread."""
        if self.loop.is_closed():
            return
        self.run(_cancel_the_rest())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def run(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)` with the event loop in a helper thread and the offloaded torch work on this one."""
    with Runner() as runner:
        return runner.run(coro)


async def offload(fn: Callable[..., T], *args: Any, fallback: Executor | None = None) -> T:
    """Run `fn(*args)` off the event loop: on the thread serving this loop's `Runner`, or else on `fallback`
    (None: the loop's default worker threads)."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_QUEUES.get(loop, fallback), fn, *args)


async def _cancel_the_rest() -> None:
    loop = asyncio.get_running_loop()
    current = asyncio.current_task()
    rest = [t for t in asyncio.all_tasks(loop) if t is not current]
    for task in rest:
        task.cancel()
    await asyncio.gather(*rest, return_exceptions=True)
    await loop.shutdown_asyncgens()
