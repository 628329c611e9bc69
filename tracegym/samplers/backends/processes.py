"""The process backend: each sampler a local process, started with 'spawn', talking over one duplex pipe.

The process runs `tracegym.samplers.worker.main`; its exit code and the pipe's end tell the orchestrator how it
ended. Stopping asks every sampler first, reads what they still send so none blocks on a full pipe, then sends
SIGTERM and finally SIGKILL.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from tracegym.samplers.config import SamplerPool
    from tracegym.samplers.orchestrator import SamplerLink
    from tracegym.samplers.weights.folder import FilesystemBroadcast
    from tracegym.samplers.worker import SamplerSpec


class ProcessLink:
    """A sampler process and its end of the pipe."""

    def __init__(self, process: BaseProcess, conn: Connection) -> None:
        self.process = process
        self.conn = conn
        self.pid = process.pid

    def send(self, message: tuple[Any, ...]) -> None:
        self.conn.send(message)

    def receive(self) -> list[tuple[Any, ...]]:
        messages = []
        try:
            while self.conn.poll():
                messages.append(self.conn.recv())
        except OSError as e:
            raise EOFError(str(e)) from e
        return messages

    def exit_reason(self) -> str | None:
        code = self.process.exitcode
        return None if code is None else f"exited with code {code}"

    def waitables(self) -> list[Any]:
        return [self.conn, self.process.sentinel]

    def kill(self) -> None:
        _terminate(self.process)
        self.conn.close()


class ProcessBackend:
    """Starts each sampler as a local 'spawn' process."""

    def __init__(self) -> None:
        self._ctx = multiprocessing.get_context("spawn")

    def start(self, spec: SamplerSpec, pool: SamplerPool) -> ProcessLink:
        from tracegym.samplers.worker import main

        parent, child = self._ctx.Pipe(duplex=True)
        name = f"tracegym-sampler-{spec.sampler_id.replace('/', '-')}"
        process = self._ctx.Process(target=main, args=(spec, child), name=name, daemon=True)
        process.start()
        child.close()
        return ProcessLink(process, parent)

    def stop(self, links: Sequence[SamplerLink]) -> None:
        mine = [link for link in links if isinstance(link, ProcessLink)]  # the links this backend started
        for link in mine:
            try:
                link.send(("stop",))
            except (OSError, ValueError):
                pass  # already gone
        _drain_until_exit(mine, deadline=time.monotonic() + 15)
        for link in mine:
            link.kill()

    def close(self) -> None:
        pass  # each process was released by `stop`

    def weight_broadcast(self, files: FilesystemBroadcast) -> FilesystemBroadcast:
        return files  # the samplers read its folder

    def stats(self) -> dict[str, float]:
        return {}


def _drain_until_exit(links: Sequence[ProcessLink], deadline: float) -> None:
    """Read (and discard) what stopping samplers still send, so none blocks on a full pipe, until all exit."""
    while time.monotonic() < deadline:
        alive = [link for link in links if link.process.exitcode is None]
        if not alive:
            return
        waitables: list[Any] = [x.process.sentinel for x in alive] + [x.conn for x in alive if not x.conn.closed]
        for ready in wait(waitables, timeout=0.2):
            if isinstance(ready, Connection):
                try:
                    while ready.poll():
                        ready.recv_bytes()
                except (EOFError, OSError):
                    ready.close()


def _terminate(process: BaseProcess) -> None:
    """SIGTERM, then SIGKILL if it is still there after 5 s; always joined, so no zombie is left."""
    if process.exitcode is None:
        process.terminate()
        process.join(timeout=5)
    if process.exitcode is None:
        process.kill()
    process.join()
