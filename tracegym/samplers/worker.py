"""One sampler process: load the model in its pool's precision, run the groups it is sent, send them back.

The trainer process (`tracegym.samplers.orchestrator.AsyncRollouts`) starts this with the 'spawn'
method and talks to it over one duplex pipe:

    trainer -> sampler   ("task", group_index, TaskSpec, version)
                                                            run a group of this task on weights of
                                                            this version or newer
                         ("stop",)                          finish: close and exit
    sampler -> trainer   ("ready", version)                 weights loaded, taking tasks
                         ("group", bytes)                   a pickled RolloutGroup
                         ("beat", counters)                 every `heartbeat_s`, from the event loop
                         ("error", text)                    the setup failed; the process exits

Several groups run at once (their turns are batched together by `HFPolicy`), so tool calls that wait on the
world overlap with generation. The event loop runs in a helper thread and all torch work (decoding, loading
weights) on the process's main thread (`tracegym.models.compute`). A background task polls the
`WeightWatcher` and loads each new version as soon as it appears; the engine applies it between two
generation batches, so an episode in flight may finish on newer weights (its turns record their versions,
and staleness is measured from the oldest). If the trainer process goes away, the pipe closes and the
sampler exits.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, NoReturn

from tracegym.harnesses.config import HarnessConfig
from tracegym.harnesses.runner import EpisodeLimits
from tracegym.models import compute
from tracegym.models.load import Precision
from tracegym.models.sampling import SamplingParams
from tracegym.samplers.weights.folder import VersionSource
from tracegym.tasks.spec import TaskSpec


@dataclass(frozen=True)
class SamplerSpec:
    """Everything a sampler process needs; picklable, so it crosses the 'spawn' boundary."""

    sampler_id: str
    model_ref: str
    """Model folder giving the architecture; the weights come from `weights`."""
    tokenizer_dir: Path
    """The trainer's tokenizer, saved by the trainer, so prompts are tokenized as the trainer does."""
    eos_token_ids: tuple[int, ...]
    precision: Precision
    device: str
    threads: int
    weights: VersionSource
    """Where the trainer's published versions are read (`tracegym.samplers.weights.folder`)."""
    task_set: Path
    harness: HarnessConfig
    base_dir: Path
    params: SamplingParams
    limits: EpisodeLimits
    group_size: int
    groups_in_flight: int
    seed: int
    model_name: str | None
    heartbeat_s: float = 0.5
    poll_s: float = 0.05
    engine: str = "hf"
    """hf (tracegym.models.sampling) or vllm (tracegym.models.vllm_engine)."""
    quantization: str | None = None
    """What a vllm engine quantizes the weights to as it loads them (fp8), if anything."""
    gpu_memory: float | None = None
    """A vllm engine's share of its GPU's memory (None: vLLM's default)."""
    lora_rank: int | None = None
    """A `model.lora` run's adapter rank, for a pool sent the adapter alone (engine vllm): the engine loads the base
    weights from `model_ref` and each version's adapter over them (`tracegym.samplers.weights.lora_adapters`)."""


class _Clock:
    """Working time (some group in flight) versus waiting time (none), what was produced, and the weight syncs.

    Sync latency is the time from the trainer beginning to publish a version (its wall clock, carried in the version's
    files) to this sampler's engine holding it: writing, the sampler's polling delay, the transfer, applying deltas and
    loading into the engine. It is summed over the syncs after the first load (which waits for the process to start,
    not for the weights); across machines it is off by their clocks' difference.
    """

    def __init__(self) -> None:
        self.busy = 0
        self.since = time.perf_counter()
        self.working_s = self.waiting_s = 0.0
        self.tokens = self.groups = self.episodes = self.weight_loads = 0
        self.load_s = 0.0
        self.bytes_read = 0
        """Bytes of version files read (the watcher's count: on the wire, for a source across the network)."""
        self.syncs = 0
        self.sync_latency_s = 0.0
        self.weight_rebuilds = 0
        """Rebuilds from whole weights after a delta missed its checksum or did not decode (the watcher's count)."""
        self.version = -1
        """The version loaded last, set with its sync figures: a heartbeat never shows a version without them (the
        engine's own version changes inside its load, before they are counted)."""

    def _tick(self) -> None:
        now = time.perf_counter()
        if self.busy:
            self.working_s += now - self.since
        else:
            self.waiting_s += now - self.since
        self.since = now

    def begin(self) -> None:
        self._tick()
        self.busy += 1

    def end(self) -> None:
        self._tick()
        self.busy -= 1

    def counters(self) -> dict[str, float]:
        self._tick()
        return {"version": float(self.version), "working_s": self.working_s, "waiting_s": self.waiting_s,
                "tokens": float(self.tokens), "groups": float(self.groups), "episodes": float(self.episodes),
                "weight_loads": float(self.weight_loads), "load_s": self.load_s, "bytes_read": float(self.bytes_read),
                "syncs": float(self.syncs), "sync_latency_s": self.sync_latency_s,
                "weight_rebuilds": float(self.weight_rebuilds)}

    def loaded(self, version: int, seconds: float, published: float | None) -> None:
        """`version` is in the engine: it took `seconds` here, and the trainer began publishing it at `published`
        (wall clock; None when its files do not say)."""
        self.version = version
        self.load_s += seconds
        if self.weight_loads and published is not None:
            self.syncs += 1
            self.sync_latency_s += max(0.0, time.time() - published)
        self.weight_loads += 1


class _Channel:
    """Sends on the pipe from any thread, one message at a time."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.lock = threading.Lock()

    def send(self, message: tuple[Any, ...]) -> None:
        with self.lock:
            self.conn.send(message)


def main(spec: SamplerSpec, conn: Connection) -> None:
    """The process entry point."""
    _exit(serve(spec, conn))


def serve(spec: SamplerSpec, conn: Connection) -> int:
    """Run the sampler over `conn` until told to stop; its exit code (a Ray actor runs this in a thread)."""
    import torch

    torch.set_num_threads(spec.threads)
    channel = _Channel(conn)
    try:
        sampler = _Sampler(spec)
    except Exception as e:  # noqa: BLE001 - reported to the trainer, which decides whether to retry
        channel.send(("error", _describe(spec, "could not start", e)))
        return 1
    try:
        compute.run(sampler.serve(conn, channel))
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return 0  # the trainer went away: nothing left to sample for
    except Exception as e:  # noqa: BLE001 - reported, then the process exits non-zero and is replaced
        channel.send(("error", _describe(spec, "failed", e)))
        return 1
    return 0


def _exit(code: int) -> NoReturn:
    """Exit now, skipping the interpreter's teardown: with torch loaded it takes seconds, and everything this
    process opened (episodes, harnesses, the policy's threads) is closed or reported by then."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _describe(spec: SamplerSpec, what: str, error: Exception) -> str:
    return f"sampler {spec.sampler_id} {what}: {type(error).__name__}: {error}\n{traceback.format_exc(limit=6)}"


def _engine(spec: SamplerSpec) -> Any:
    """The pool's sampling engine over the model folder, in its precision (the weights then come from the trainer)."""
    batch = spec.group_size * spec.groups_in_flight
    if spec.engine == "vllm":
        from tracegym.models.load import resolve_model_ref
        from tracegym.models.vllm_engine import VllmEngine

        return VllmEngine(resolve_model_ref(spec.model_ref), spec.precision, eos_token_ids=spec.eos_token_ids,
                          sampler_id=spec.sampler_id, max_batch_size=batch, seed=spec.seed, threads=spec.threads,
                          max_logprobs=max(spec.params.max_support, spec.params.head_logprobs, 1),
                          device=spec.device, quantization=spec.quantization, gpu_memory=spec.gpu_memory,
                          lora_rank=spec.lora_rank)
    from tracegym.models.load import load_model
    from tracegym.models.sampling import SamplingEngine

    model = load_model(spec.model_ref, spec.precision, spec.device)
    return SamplingEngine(model, eos_token_ids=spec.eos_token_ids, sampler_id=spec.sampler_id, max_batch_size=batch,
                          seed=spec.seed)


class _Sampler:
    def __init__(self, spec: SamplerSpec) -> None:
        from transformers import AutoTokenizer
        from transformers.utils import logging as hf_logging

        from tracegym.harnesses.config import HarnessFactory
        from tracegym.harnesses.policy import HFPolicy
        from tracegym.harnesses.taskrun import TaskScorers
        from tracegym.samplers.weights.folder import WeightWatcher
        from tracegym.samplers.weights.lora_adapters import AdapterWatcher
        from tracegym.tasks.taskset import load_task_set

        self.spec = spec
        hf_logging.disable_progress_bar()  # one bar per sampler start would clutter the trainer's display
        engine = _engine(spec)
        self.policy = HFPolicy(engine, AutoTokenizer.from_pretrained(spec.tokenizer_dir, local_files_only=True))
        # a version's whole weights, or with lora_rank the adapter alone (a vllm engine's load_adapter)
        self.load = engine.load_weights if spec.lora_rank is None else engine.load_adapter
        self.task_set = load_task_set(spec.task_set)
        self.scorers = TaskScorers(self.task_set)
        self.harnesses = HarnessFactory(spec.harness, spec.base_dir)
        self.watcher = (WeightWatcher(spec.weights, spec.precision) if spec.lora_rank is None
                        else AdapterWatcher(spec.weights, spec.precision))
        self.clock = _Clock()

    async def serve(self, conn: Connection, channel: _Channel) -> None:
        """Run until told to stop; a failure inside a worker ends the process with the error reported."""
        loop = asyncio.get_running_loop()
        tasks: asyncio.Queue[tuple[int, TaskSpec, int]] = asyncio.Queue()
        stop = asyncio.Event()
        threading.Thread(target=_receive, args=(conn, loop, tasks, stop), daemon=True).start()
        await self._first_weights(stop)
        if stop.is_set():
            return
        await asyncio.to_thread(channel.send, ("ready", self.policy.engine.policy_version))
        running = [loop.create_task(self._beat(channel)), loop.create_task(self._watch())]
        running += [loop.create_task(self._work(tasks, channel)) for _ in range(self.spec.groups_in_flight)]
        stopped = loop.create_task(stop.wait())
        done, _ = await asyncio.wait([*running, stopped], return_when=asyncio.FIRST_COMPLETED)
        for task in [*running, stopped]:
            task.cancel()
        await asyncio.gather(*running, stopped, return_exceptions=True)
        await self.policy.aclose()
        self.harnesses.close()
        failed = next((t for t in done if t is not stopped and not t.cancelled() and t.exception()), None)
        if failed is not None:
            raise failed.exception()  # type: ignore[misc]

    async def _first_weights(self, stop: asyncio.Event) -> None:
        """Wait for the trainer's first published version: the model folder's own weights may be older."""
        while not stop.is_set():
            if await self._load_newer():
                return
            await asyncio.sleep(self.spec.poll_s)

    async def _load_newer(self) -> bool:
        started = time.perf_counter()
        found = await compute.offload(self.watcher.poll)  # reads whole weights, or applies the deltas since
        # a version that vanished while read was read in part
        self.clock.bytes_read, self.clock.weight_rebuilds = self.watcher.bytes_read, self.watcher.rebuilt_from_whole
        if found is None:
            return False
        version, weights = found  # a state dict, or with lora_rank the adapter alone
        await compute.offload(self.load, weights, version)
        self.clock.loaded(version, time.perf_counter() - started, self.watcher.published)
        return True

    async def _watch(self) -> None:
        while True:
            await self._load_newer()
            await asyncio.sleep(self.spec.poll_s)

    async def _beat(self, channel: _Channel) -> None:
        while True:
            counters = self.clock.counters()
            await asyncio.to_thread(channel.send, ("beat", counters))
            await asyncio.sleep(self.spec.heartbeat_s)

    async def _work(self, tasks: asyncio.Queue[tuple[int, TaskSpec, int]], channel: _Channel) -> None:
        while True:
            index, task, min_version = await tasks.get()
            while self.policy.engine.policy_version < min_version:  # `_watch` is loading it
                await asyncio.sleep(self.spec.poll_s)
            self.clock.begin()
            try:
                group = await self.run_group(index, task)
            finally:
                self.clock.end()
            self.clock.groups += 1
            self.clock.episodes += len(group.episodes)
            self.clock.tokens += sum(e.tokens_out or 0 for e in group.episodes)
            payload = pickle.dumps(group, protocol=pickle.HIGHEST_PROTOCOL)
            await asyncio.to_thread(channel.send, ("group", payload))

    async def run_group(self, index: int, task: TaskSpec) -> Any:
        """The group of `task` at position `index` of the task order, seeded as `SyncRollouts` seeds it."""
        from tracegym.harnesses.runner import RunOptions, derive_seed, run_many
        from tracegym.samplers.rollouts import RolloutGroup

        spec = self.spec
        options = RunOptions(samples=spec.group_size, concurrency=spec.group_size,
                             seed=derive_seed(spec.seed, "group", index), sampling=spec.params, limits=spec.limits)
        episodes = await run_many(self.policy, [task], self.harnesses.make, options, self.scorers,
                                  self.task_set.manifest.name, spec.model_name)
        return RolloutGroup(task.task_id, episodes, index)


def _receive(conn: Connection, loop: asyncio.AbstractEventLoop, tasks: asyncio.Queue, stop: asyncio.Event) -> None:
    """Reader thread: tasks into the event loop's queue; 'stop' or a closed pipe ends the sampler."""
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            break
        if message[0] == "stop":
            break
        if message[0] == "task" and not _call(loop, tasks.put_nowait, tuple(message[1:4])):
            return
    _call(loop, stop.set)


def _call(loop: asyncio.AbstractEventLoop, fn: Any, *args: Any) -> bool:
    """Schedule `fn(*args)` on the loop; False when the loop has already closed."""
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:
        return False
    return True
