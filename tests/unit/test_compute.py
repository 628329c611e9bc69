"""tracegym.models.compute: the event loop on a helper thread, offloaded work on the calling thread."""

import asyncio
import threading

import pytest

from tracegym.models import compute


def test_offloaded_calls_run_on_the_thread_that_runs_the_coroutine() -> None:
    caller = threading.get_ident()

    async def main() -> tuple[int, list[int]]:
        loop_thread = threading.get_ident()
        ran_on = await asyncio.gather(*(compute.offload(threading.get_ident) for _ in range(5)))
        return loop_thread, list(ran_on)

    loop_thread, ran_on = compute.run(main())
    assert loop_thread != caller
    assert ran_on == [caller] * 5


def test_without_a_runner_offload_uses_a_worker_thread() -> None:
    caller = threading.get_ident()
    assert asyncio.run(compute.offload(threading.get_ident)) != caller


def test_errors_reach_the_awaiting_coroutine_and_the_caller() -> None:
    def broken() -> None:
        raise ValueError("bad batch")

    async def main() -> str:
        try:
            await compute.offload(broken)
        except ValueError as e:
            return f"caught {e}"
        return "not raised"

    assert compute.run(main()) == "caught bad batch"

    async def fails() -> None:
        await compute.offload(broken)

    with pytest.raises(ValueError, match="bad batch"):
        compute.run(fails())


def test_a_runner_serves_several_runs_and_cancels_leftover_tasks_on_close() -> None:
    cancelled = threading.Event()

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def start_background() -> int:
        asyncio.get_running_loop().create_task(forever())
        return await compute.offload(lambda: 1)

    runner = compute.Runner()
    assert [runner.run(start_background()), runner.run(compute.offload(lambda: 2))] == [1, 2]
    runner.close()
    assert cancelled.is_set() and runner.loop.is_closed()
    runner.close()  # closing twice is harmless


def test_ctrl_c_during_offloaded_work_stops_the_run_and_close_still_returns() -> None:
    """A KeyboardInterrupt raised inside offloaded work (the signal handler runs on the serving thread) ends
    `run` with it, and `close` then cancels the rest: `tracegym train` hung here after SIGTERM."""
    seen: list[str] = []

    def interrupted() -> None:
        raise KeyboardInterrupt

    async def step() -> None:
        await compute.offload(interrupted)

    def interrupt_then_close() -> None:
        runner = compute.Runner()
        try:
            runner.run(step())
        except KeyboardInterrupt:
            seen.append("interrupted")
        runner.close()
        seen.append("closed" if runner.loop.is_closed() else "open")

    worker = threading.Thread(target=interrupt_then_close, daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert seen == ["interrupted", "closed"]
