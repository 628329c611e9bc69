"""The asynchronous `RolloutSource` (tracegym/samplers/rollouts.py): samplers that produce groups continuously
while the trainer trains (`async.max_staleness` > 0; `SyncRollouts`, tracegym/samplers/inprocess.py, samples
in-process with the current weights instead).

AsyncRollouts, in the trainer process, runs the same logic whatever starts the samplers: a `SamplerBackend`
(`async.backend`: local processes, `tracegym.samplers.backends.processes`, or Ray actors,
`tracegym.samplers.backends.ray_actors`)
starts each one and hands back a `SamplerLink` that carries the worker's messages (`tracegym.samplers.worker`), and
says how the published weights reach them.

- Pools of samplers (`sampler.pools`, `SamplerPool`: engine, precision, processes, threads each); sampler ids
  are `pool/index`. Each runs `tracegym.samplers.worker`'s sampler.
- One monitor thread owns every link. It hands out tasks in the run's seeded task order (group index i
  always asks for the same task), reads finished groups into the buffer, reads heartbeats, and watches
  for deaths: a sampler that ends, or whose heartbeats stop for `heartbeat_timeout_s` (it is killed),
  is reported on stderr and in `stats()`, its groups in flight go back to the front of the queue, and a
  replacement starts. A slot whose samplers fail `max_failures` times in a row without producing a
  group is given up; when every slot is given up, `next_batch` raises with the last error.
- `quarantine(pool, reason)` (the trainer's loop calls it when a pool passes a limit, `SamplerPool.max_mismatch_kl`
  or `max_error_rate`): the pool's samplers are stopped, their groups in flight go back to the front of the
  queue for the other pools, and it gets no task again; groups it delivered before stay in the buffer. When no
  pool is left, `next_batch` raises.
- Per pool, `pool_figures()` holds what rollout cost is computed from: each sampler process's wall time from
  its start to its end (or to now), and the tokens and groups it delivered.
- The buffer is bounded by credits: a task is handed out only while the groups handed out and not yet
  consumed number fewer than `buffer_groups` (default: batch_groups x max_staleness), so samplers wait
  instead of running ahead into groups that would be too stale to train on. Each task carries the last
  published version, and the sampler starts it only on weights at least that new: a group handed out
  while the trainer trains version V is trained at version V + buffer_groups / batch_groups at the
  latest, so with the default buffer no group is sampled only to be dropped (as prime-rl bounds its
  inference lag, rather than sampling and discarding).
- `next_batch` takes buffered groups lowest index first and drops (and counts) those sampled by weights
  more than `max_staleness` versions behind the trainer; with `grpo.dynamic_sampling` it also sets aside
  (and counts) fresh groups whose rewards are all equal. `publish` writes the weights through a
  `FilesystemBroadcast` that every sampler polls: its folder, or with `async.weights_http` the trainer's HTTP
  endpoint over it (`tracegym.samplers.weights.http`) for pools with `weights: http`. In a `model.lora` run
  (`RolloutPlan.lora_rank`), pools with `engine: vllm` are sent the adapter alone and load the base weights from
  the model folder (`tracegym.samplers.weights.lora_adapters`); the others get the merged weights. Each sampler reports
  the bytes it read and its sync latency in its heartbeats, summed per pool in `pool_figures()`.

The data position (`RolloutBatch.consumed`) counts groups taken, dropped or set aside; groups in flight when a run
is killed are sampled again after a resume, so a resumed asynchronous run repeats the task order up to
the reordering the buffer allows, not bit for bit.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from multiprocessing.connection import wait
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tracegym.errors import ConfigError, ModelError
from tracegym.samplers.weights.folder import TOKENIZER_DIR, FolderVersions

if TYPE_CHECKING:

    from torch import Tensor
    from transformers import PreTrainedTokenizerBase

    from tracegym.samplers.config import AsyncSection, RolloutPlan, SamplerPool
    from tracegym.samplers.rollouts import GroupOrder, PoolFigures, RolloutBatch, RolloutGroup
    from tracegym.samplers.weights.folder import FilesystemBroadcast, WeightBroadcast
    from tracegym.samplers.weights.http import WeightServer
    from tracegym.samplers.weights.lora_adapters import AdapterWeights
    from tracegym.samplers.worker import SamplerSpec
    from tracegym.tasks.spec import TaskSpec
    from tracegym.tasks.taskset import TaskSet


class SamplerLink(Protocol):
    """One running sampler as the orchestrator sees it, whatever runs it (a local process, a Ray actor). Messages
    are those of `tracegym.samplers.worker`'s protocol."""

    @property
    def pid(self) -> int | None:
        """The sampler's process id where it runs, for the stats (None when not known yet)."""

    def send(self, message: tuple[Any, ...]) -> None:
        """Send one message; raises OSError (or ValueError) when the sampler is gone."""

    def receive(self) -> list[tuple[Any, ...]]:
        """The messages that arrived, without waiting; raises EOFError once the link is closed."""

    def exit_reason(self) -> str | None:
        """None while the sampler runs; once it has ended, how (`exited with code -9`, `its node was lost`)."""

    def waitables(self) -> list[Any]:
        """Objects `multiprocessing.connection.wait` can wait on for this link (none: the monitor polls it)."""

    def kill(self) -> None:
        """End the sampler now (it hangs, or it is being replaced)."""


class SamplerBackend(Protocol):
    """What starts samplers: local processes (`tracegym.samplers.backends.processes`) or Ray actors."""

    def start(self, spec: SamplerSpec, pool: SamplerPool) -> SamplerLink:
        """Start a sampler of `pool` running `spec`; it reports back through the link (`ready`, then groups)."""

    def stop(self, links: Sequence[SamplerLink]) -> None:
        """Stop these samplers (asking first, then by force) and release what they hold: at the end of the run, or
        a quarantined pool's while the run goes on."""

    def close(self) -> None:
        """At the end of the run, after its samplers are stopped: release what the backend itself holds."""

    def weight_broadcast(self, files: FilesystemBroadcast) -> WeightBroadcast:
        """What the trainer publishes through: `files` itself where the samplers read its folder, or a broadcast
        that also hands each version on (into Ray's object store)."""

    def stats(self) -> dict[str, float]:
        """The backend's own running totals under their metric names (Ray: `source/nodes_lost`), beside the
        orchestrator's."""


def make_backend(settings: AsyncSection) -> SamplerBackend:
    """The backend `async.backend` names."""
    if settings.backend == "ray":
        from tracegym.samplers.backends.ray_actors import RayBackend

        return RayBackend(settings.ray)
    from tracegym.samplers.backends.processes import ProcessBackend

    return ProcessBackend()


@dataclass
class _Live:
    """One running sampler and what the trainer knows about it."""

    link: SamplerLink
    started: float
    last_beat: float
    ready: bool = False
    in_flight: dict[int, TaskSpec] = field(default_factory=dict)
    counters: dict[str, float] = field(default_factory=dict)
    produced: int = 0
    error: str | None = None


@dataclass
class _Slot:
    """A sampler id across restarts."""

    spec: SamplerSpec
    pool: SamplerPool
    current: _Live | None = None
    deaths: int = 0
    restarts: int = 0
    failures_in_a_row: int = 0
    given_up: bool = False
    past: Counter[str] = field(default_factory=Counter)
    """Counters of its earlier, dead processes."""
    alive_s: float = 0.0
    """Wall time its earlier processes lived, from their start to their end (the current one's is added live)."""
    tokens: int = 0
    """Tokens sampled in the groups it delivered, every process of the slot together."""
    groups: int = 0
    """Groups it delivered."""
    lost_groups: int = 0
    """Groups in flight when one of its processes died (requeued to the others)."""
    quarantined: str | None = None
    """Why its pool was quarantined; it then gets no task and runs no process."""


class AsyncRollouts:
    """Sampler processes producing groups into a bounded buffer; see the module doc."""

    def __init__(
        self,
        plan: RolloutPlan,
        tasks: Sequence[TaskSpec],
        *,
        task_set: TaskSet,
        tokenizer: PreTrainedTokenizerBase,
        eos_token_ids: Sequence[int],
        state_dict: Mapping[str, Tensor],
        policy_version: int,
        start_index: int = 0,
        base_dir: Path | None = None,
        pools: Sequence[SamplerPool] | None = None,
        weights_dir: Path | None = None,
        buffer_groups: int | None = None,
        heartbeat_timeout_s: float = 120.0,
        startup_timeout_s: float = 600.0,
        max_failures: int = 3,
        order: GroupOrder[TaskSpec] | None = None,
        backend: SamplerBackend | None = None,
        adapter: AdapterWeights | None = None,
    ) -> None:
        from tracegym.samplers.rollouts import TaskOrder

        self.plan = plan
        self.task_set = task_set
        # The monitor thread draws from it when it hands a task out; a curriculum's weights are those in force then.
        self.order = order if order is not None else TaskOrder(list(tasks), plan.seed)
        self.max_staleness = plan.async_.max_staleness
        self.pools = list(pools) if pools else list(plan.pools)
        self.weights_dir = weights_dir or plan.run_dir / "weights"
        # A group handed out starts on the weights published then and is trained at most capacity /
        # batch_groups steps later: within max_staleness (module doc).
        self.capacity = buffer_groups or plan.batch_groups * max(1, self.max_staleness)
        self.heartbeat_timeout_s, self.startup_timeout_s = heartbeat_timeout_s, startup_timeout_s
        self.max_failures = max_failures
        self.backend = backend if backend is not None else make_backend(plan.async_)
        self._initial = (state_dict, policy_version, adapter)
        self._tokenizer = tokenizer
        self._slots = self._make_slots(eos_token_ids, base_dir or Path.cwd())
        self._broadcast: WeightBroadcast | None = None
        self._server: WeightServer | None = None
        self._next_index = start_index
        self._published = policy_version
        self._retry: list[tuple[int, TaskSpec]] = []
        self._buffer: list[RolloutGroup] = []
        self._cond = threading.Condition()
        self._wake_r, self._wake_w = multiprocessing.Pipe(duplex=False)
        self._closing = False
        self._monitor: threading.Thread | None = None
        self._failure: BaseException | None = None
        self._totals: defaultdict[str, float] = defaultdict(float)
        self._staleness: Counter[int] = Counter()
        self._to_quarantine: dict[str, str] = {}

    def _make_slots(self, eos: Sequence[int], base_dir: Path) -> list[_Slot]:
        from tracegym.models.load import resolve_model_ref
        from tracegym.samplers.worker import SamplerSpec

        plan = self.plan
        groups_in_flight = max(1, plan.sampler.concurrency // plan.group_size)
        model_ref = str(resolve_model_ref(plan.model_ref))
        slots = []
        for pool in self.pools:
            for index in range(pool.processes):
                spec = SamplerSpec(
                    sampler_id=f"{pool.label}/{index}", model_ref=model_ref,
                    tokenizer_dir=self.weights_dir / TOKENIZER_DIR,
                    eos_token_ids=tuple(int(i) for i in eos), precision=pool.resolved_precision, device=pool.device,
                    threads=pool.threads, weights=FolderVersions(self.weights_dir), task_set=self.task_set.path,
                    harness=plan.harness, base_dir=base_dir, params=plan.params,
                    limits=plan.limits, group_size=plan.group_size,
                    groups_in_flight=groups_in_flight, seed=plan.seed, model_name=plan.model_ref,
                    engine=pool.engine, quantization=pool.quantization, gpu_memory=pool.gpu_memory,
                    lora_rank=plan.lora_rank if self._takes_adapter(pool) else None,
                )
                slots.append(_Slot(spec, pool))
        if len({s.spec.sampler_id for s in slots}) != len(slots):
            raise ConfigError("two sampler pools share a name. Fix: give each pool its own `name`.")
        return slots

    def _takes_adapter(self, pool: SamplerPool) -> bool:
        """Whether `pool` is sent the adapter alone rather than merged weights: vLLM serves adapters, the built-in
        engine does not."""
        return self.plan.lora_rank is not None and pool.engine == "vllm"

    # -- the trainer's side -------------------------------------------------------------------------------

    def start(self) -> None:
        """Check every task's scorer, publish the starting weights, start the samplers and the monitor."""
        from tracegym.harnesses.taskrun import TaskScorers
        from tracegym.samplers.weights.folder import FilesystemBroadcast

        TaskScorers(self.task_set).prepare(self.order.tasks)  # a broken evals file stops the run here
        delta = self.plan.async_.weight_delta
        self._broadcast = self.backend.weight_broadcast(FilesystemBroadcast(
            self.weights_dir, [p.resolved_precision for p in self.pools if not self._takes_adapter(p)],
            delta=None if delta == "none" else delta, full_every=self.plan.async_.full_weights_every,
            adapter_precisions=[p.resolved_precision for p in self.pools if self._takes_adapter(p)]))
        # Samplers load the trainer's own tokenizer from here; pickled into the spawn arguments it would
        # block this thread until each child had imported transformers to read them.
        self._tokenizer.save_pretrained(self.weights_dir / TOKENIZER_DIR)
        self._serve_weights()
        self.publish(*self._initial)
        for slot in self._slots:
            self._spawn(slot)
        self._monitor = threading.Thread(target=self._watch, name="tracegym-orchestrator", daemon=True)
        self._monitor.start()

    def _serve_weights(self) -> None:
        """With async.weights_http: serve the broadcast folder, and point the pools with `weights: http` at it."""
        section = self.plan.async_.weights_http
        if section is None:
            return
        from tracegym.output import err, literal
        from tracegym.samplers.weights.http import TOKEN_FILE, HttpVersions, WeightServer, new_token

        # The run's token: its samplers get it in their spec; an outside reader of the operator's, from this file.
        token, token_file = new_token(), self.weights_dir.parent / TOKEN_FILE
        token_file.unlink(missing_ok=True)
        descriptor = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as f:
            f.write(token)
        self._server = WeightServer(self.weights_dir, token, section.host, section.port)
        for slot in self._slots:
            if slot.pool.weights == "http":
                slot.spec = replace(slot.spec, weights=HttpVersions(self._server.url, token))
        err.print(f"weights served at {literal(self._server.url)}/versions (bound to {literal(section.host)}; "
                  f"readers need the run's token, in {literal(token_file)})", highlight=False)

    @property
    def weights_url(self) -> str | None:
        """The trainer's weight endpoint while it serves one (async.weights_http)."""
        return self._server.url if self._server is not None else None

    def publish(self, state_dict: Mapping[str, Tensor], version: int,
                adapter: AdapterWeights | None = None) -> dict[str, float]:
        if self._broadcast is None:
            raise RuntimeError("AsyncRollouts.publish before start")
        started = time.perf_counter()
        sync = self._broadcast.publish(state_dict, version, adapter)
        self._published = version
        self._totals["publish_s"] += time.perf_counter() - started
        self._totals["publishes"] += 1
        return sync

    def next_batch(self, n_groups: int, trainer_version: int) -> RolloutBatch:
        """The next `n_groups` fresh-enough groups, waiting for the samplers as long as needed. With
        `grpo.dynamic_sampling`, fresh groups whose rewards are all equal are set aside, until `n_groups` have a
        signal or `grpo.max_groups_per_step` fresh groups were taken."""
        from tracegym.samplers.rollouts import RolloutBatch, set_aside_stats

        dynamic, limit = self.plan.dynamic_sampling, self.plan.max_groups_per_step
        started = time.perf_counter()
        kept: list[RolloutGroup] = []
        set_aside: list[RolloutGroup] = []
        stale: list[RolloutGroup] = []
        with self._cond:
            while len(kept) < n_groups and len(kept) + len(set_aside) < limit:
                if self._failure is not None:
                    raise self._failure
                if not self._buffer:
                    self._wake()  # the groups taken so far freed credits: more tasks can go out while we wait
                    self._cond.wait(timeout=0.5)
                    continue
                group = min(self._buffer, key=lambda g: g.group_index)
                self._buffer.remove(group)
                lag = max(0, trainer_version - group.policy_version)
                self._staleness[lag] += 1
                if lag > self.max_staleness:
                    stale.append(group)
                elif dynamic and not group.has_signal:
                    set_aside.append(group)
                else:
                    kept.append(group)
        self._wake()  # credits freed: the monitor hands out more tasks
        waited = time.perf_counter() - started
        consumed = len(kept) + len(stale) + len(set_aside)
        for key, value in (("dropped_stale", len(stale)), ("set_aside_groups", len(set_aside)),
                           ("groups_consumed", consumed), ("trainer_wait_s", waited)):
            self._totals[key] += value
        tokens = float(sum(e.tokens_out or 0 for g in (*kept, *set_aside, *stale) for e in g.episodes))
        stats = {"async/wait_s": waited, "sampler/tokens": tokens, "async/buffered_groups": float(len(self._buffer)),
                 **(set_aside_stats(set_aside, kept) if dynamic else {})}
        return RolloutBatch(kept, consumed=consumed, stats=stats, set_aside=set_aside, stale=stale)

    def quarantine(self, pool: str, reason: str) -> None:
        """Hand `pool` no more tasks: its samplers are stopped (their device time ends) and their groups in flight go
        back to the queue for the other pools; groups it already delivered stay in the buffer. The monitor thread
        does it at its next turn. When no pool is left to sample, `next_batch` raises."""
        if pool not in {s.pool.label for s in self._slots}:
            raise ValueError(f"no sampler pool {pool!r} in this run")
        with self._cond:
            self._to_quarantine.setdefault(pool, reason)
        self._wake()

    def stats(self) -> dict[str, Any]:
        """Everything the source knows: the running `totals()` under their metric names, plus `staleness`
        {lag: groups}, per-sampler `samplers` details and per-pool `pools` figures."""
        with self._cond:
            staleness = dict(sorted(self._staleness.items()))
        samplers = self._samplers()
        return {**self._totals_of(samplers), "staleness": staleness, "samplers": samplers,
                "pools": self._pool_stats(samplers)}

    def totals(self) -> dict[str, float]:
        return self._totals_of(self._samplers())

    def pool_figures(self) -> dict[str, PoolFigures]:
        return self._pool_stats(self._samplers())

    def _samplers(self) -> dict[str, dict[str, Any]]:
        with self._cond:
            return {s.spec.sampler_id: self._sampler_stats(s) for s in self._slots}

    def _totals_of(self, samplers: Mapping[str, dict[str, Any]]) -> dict[str, float]:
        with self._cond:
            buffered = len(self._buffer)
        working = sum(s["working_s"] for s in samplers.values())
        tokens = sum(s["tokens"] for s in samplers.values())
        return {
            "source/groups_consumed": float(self._totals["groups_consumed"]),
            "source/dropped_stale": float(self._totals["dropped_stale"]),
            "source/set_aside_groups": float(self._totals["set_aside_groups"]),
            "source/groups_received": float(self._totals["groups_received"]),
            "source/buffered_groups": float(buffered),
            "source/next_group_index": float(self._next_index),
            "source/sampler_deaths": float(sum(s.deaths for s in self._slots)),
            "source/sampler_restarts": float(sum(s.restarts for s in self._slots)),
            "source/samplers_alive": float(sum(1 for s in self._slots if s.current is not None)),
            "source/pools_quarantined": float(len({s.pool.label for s in self._slots if s.quarantined is not None})),
            "source/sampler_tokens_per_s": tokens / working if working > 0 else 0.0,
            "source/sampler_working_s": working,
            "source/sampler_waiting_s": sum(s["waiting_s"] for s in samplers.values()),
            "source/trainer_wait_s": float(self._totals["trainer_wait_s"]),
            "source/publish_s": float(self._totals["publish_s"]),
            **self.backend.stats(),
        }

    def _pool_stats(self, samplers: Mapping[str, dict[str, Any]]) -> dict[str, PoolFigures]:
        """Per pool, summed over its samplers (live and dead): their device time (`alive_s`: each process's wall
        time from its start to its end, or to now), the tokens and groups they delivered, the groups lost with dead
        processes, the bytes of weights read, the syncs after each one's first load and their summed and mean
        latency (`tracegym.samplers.worker._Clock`); and the pool's quarantine."""
        pools: dict[str, PoolFigures] = {}
        for slot in self._slots:
            mine = samplers[slot.spec.sampler_id]
            pool = pools.setdefault(slot.pool.label, {"samplers": 0, "alive_s": 0.0, "tokens": 0.0, "groups": 0.0,
                                                      "lost_groups": 0.0, "sync_bytes": 0.0, "syncs": 0.0,
                                                      "sync_latency_s": 0.0, "quarantined": slot.quarantined})
            pool["samplers"] += 1
            for key in ("alive_s", "lost_groups", "sync_bytes", "syncs", "sync_latency_s"):
                pool[key] += mine[key]
            pool["tokens"] += float(slot.tokens)
            pool["groups"] += float(slot.groups)
        for pool in pools.values():
            pool["sync_latency_mean_s"] = pool["sync_latency_s"] / pool["syncs"] if pool["syncs"] else 0.0
        return pools

    def _sampler_stats(self, slot: _Slot) -> dict[str, Any]:
        live = slot.current.counters if slot.current is not None else {}
        merged = Counter(slot.past)
        merged.update({k: v for k, v in live.items() if k != "version"})
        working = float(merged["working_s"])
        current = slot.current  # read once: the monitor thread may end it meanwhile
        alive = slot.alive_s + (time.monotonic() - current.started if current is not None else 0.0)
        return {
            "pid": slot.current.link.pid if slot.current is not None else None,
            "version": live.get("version"),
            "ready": bool(slot.current is not None and slot.current.ready),
            "in_flight": len(slot.current.in_flight) if slot.current is not None else 0,
            "process_groups": slot.current.produced if slot.current is not None else 0,
            "deaths": slot.deaths, "restarts": slot.restarts, "given_up": slot.given_up,
            "working_s": working, "waiting_s": float(merged["waiting_s"]), "tokens": float(merged["tokens"]),
            "groups": float(merged["groups"]), "tokens_per_s": merged["tokens"] / working if working > 0 else 0.0,
            "weight_loads": float(merged["weight_loads"]), "sync_bytes": float(merged["bytes_read"]),
            "syncs": float(merged["syncs"]), "sync_latency_s": float(merged["sync_latency_s"]),
            "weight_rebuilds": float(merged["weight_rebuilds"]),
            "alive_s": alive, "lost_groups": float(slot.lost_groups), "quarantined": slot.quarantined,
        }

    def close(self) -> None:
        """Stop every sampler (asking first, then SIGTERM, then SIGKILL) and the monitor thread."""
        self._closing = True
        self._wake()
        if self._monitor is not None:
            self._monitor.join(timeout=30)
        self.backend.stop([s.current.link for s in self._slots if s.current is not None])
        self.backend.close()
        for slot in self._slots:
            slot.current = None
        if self._server is not None:
            self._server.close()
            self._server = None
        self._wake_r.close()
        self._wake_w.close()

    def _wake(self) -> None:
        try:
            self._wake_w.send_bytes(b"")
        except (OSError, ValueError):
            pass  # closed: nothing left to wake

    # -- the monitor thread -------------------------------------------------------------------------------

    def _spawn(self, slot: _Slot) -> None:
        link = self.backend.start(slot.spec, slot.pool)
        now = time.monotonic()
        slot.current = _Live(link, now, now)

    def _watch(self) -> None:
        try:
            while not self._closing:
                self._step()
        except BaseException as e:  # noqa: BLE001 - handed to the trainer, whose next_batch raises it
            self._fail(e)

    def _step(self) -> None:
        live = [s.current for s in self._slots if s.current is not None]
        waitables: list[Any] = [self._wake_r]
        for p in live:
            waitables += p.link.waitables()
        for ready in wait(waitables, timeout=0.2):
            if ready is self._wake_r:
                while self._wake_r.poll():
                    self._wake_r.recv_bytes()
        for slot in self._slots:
            if slot.current is not None:
                self._read(slot, slot.current)
        self._check_health()
        self._quarantine_pending()
        self._dispatch()

    def _read(self, slot: _Slot, p: _Live) -> None:
        """Every message the sampler sent; a closed link leaves its death to `_check_health`."""
        try:
            messages = p.link.receive()
        except EOFError:
            return
        for message in messages:
            self._handle(slot, p, message)

    def _handle(self, slot: _Slot, p: _Live, message: tuple[Any, ...]) -> None:
        kind = message[0]
        p.last_beat = time.monotonic()
        if kind == "group":
            group = pickle.loads(message[1])
            p.in_flight.pop(group.group_index, None)
            p.produced += 1
            slot.failures_in_a_row = 0
            slot.groups += 1
            slot.tokens += sum(e.tokens_out or 0 for e in group.episodes)
            with self._cond:
                self._buffer.append(group)
                self._totals["groups_received"] += 1
                self._cond.notify_all()
        elif kind == "beat":
            p.counters = dict(message[1])
        elif kind == "ready":
            p.ready = True
        elif kind == "error":
            p.error = str(message[1])

    def _check_health(self) -> None:
        now = time.monotonic()
        for slot in self._slots:
            p = slot.current
            if p is None:
                continue
            ended = p.link.exit_reason()
            if ended is not None:
                self._read(slot, p)  # its last words (an error, a finished group) come first
                self._bury(slot, ended)
                continue
            limit = self.heartbeat_timeout_s if p.ready else self.startup_timeout_s
            if now - p.last_beat > limit:
                p.link.kill()
                self._bury(slot, f"sent no heartbeat for {now - p.last_beat:.0f} s (killed)")

    def _bury(self, slot: _Slot, how: str) -> None:
        """Report a dead process, requeue its groups in flight, and start a replacement unless it keeps failing."""
        p = slot.current
        assert p is not None
        slot.current = None
        slot.deaths += 1
        slot.alive_s += time.monotonic() - p.started
        slot.lost_groups += len(p.in_flight)
        slot.past.update({k: v for k, v in p.counters.items() if k != "version"})
        self._retry.extend(p.in_flight.items())
        self._retry.sort(key=lambda item: item[0])
        p.link.kill()  # already ended: releases its pipe or actor handle
        slot.failures_in_a_row = 0 if p.produced else slot.failures_in_a_row + 1
        detail = f": {p.error.strip().splitlines()[0]}" if p.error else ""
        if slot.failures_in_a_row >= self.max_failures:
            slot.given_up = True
            _warn(f"sampler {slot.spec.sampler_id} {how}{detail}; it failed {slot.failures_in_a_row} times in a "
                  "row without producing a group, so it is not restarted")
            self._give_up_if_none_left(p.error or how)
            return
        _warn(f"sampler {slot.spec.sampler_id} {how}{detail}; {len(p.in_flight)} group(s) it was sampling go to "
              "the others; starting a replacement")
        self._spawn(slot)
        slot.restarts += 1

    def _quarantine_pending(self) -> None:
        """Stop the samplers of the pools `quarantine` named, requeue their groups in flight, and report it."""
        with self._cond:
            pending, self._to_quarantine = self._to_quarantine, {}
        for pool, reason in pending.items():
            slots = [s for s in self._slots if s.pool.label == pool and s.quarantined is None]
            if not slots:
                continue
            running = [(s, s.current) for s in slots if s.current is not None]
            self.backend.stop([p.link for _, p in running])
            requeued = 0
            for slot, p in running:
                slot.current = None
                slot.alive_s += time.monotonic() - p.started
                slot.past.update({k: v for k, v in p.counters.items() if k != "version"})
                self._retry.extend(p.in_flight.items())
                requeued += len(p.in_flight)
            for slot in slots:
                slot.quarantined = reason
            self._retry.sort(key=lambda item: item[0])
            _warn(f"sampler pool {pool} quarantined: {reason}; its {len(running)} sampler(s) stopped, {requeued} "
                  "group(s) they were sampling go to the other pools")
        if pending and all(s.quarantined is not None or s.given_up for s in self._slots):
            self._fail(ModelError("Every sampler pool is quarantined or given up: no sampler is left to sample. "
                                  "Fix: the pools' limits (max_mismatch_kl, max_error_rate) or their samplers."))

    def _give_up_if_none_left(self, last_error: str) -> None:
        if all(s.given_up or s.quarantined is not None for s in self._slots):
            self._fail(ModelError(
                "Every sampler process failed repeatedly without producing a group. The last error:\n"
                f"{last_error.strip()}\nFix: the error above, or set async.max_staleness: 0 to sample in-process."
            ))

    def _fail(self, error: BaseException) -> None:
        with self._cond:
            if self._failure is None:
                self._failure = error
            self._cond.notify_all()

    def _dispatch(self) -> None:
        """Hand out tasks while credits last, each to the live sampler with the fewest groups in flight."""
        while True:
            live = [(s, s.current) for s in self._slots if s.current is not None]
            with self._cond:
                outstanding = len(self._buffer) + sum(len(p.in_flight) for _, p in live)
            free = [(s, p) for s, p in live if len(p.in_flight) < s.spec.groups_in_flight]
            if outstanding >= self.capacity or not free:
                return
            _, target = min(free, key=lambda sp: (not sp[1].ready, len(sp[1].in_flight)))
            index, task = self._next_task()
            try:
                target.link.send(("task", index, task, self._published))
            except (OSError, ValueError):
                self._retry.append((index, task))  # the process is dying; `_check_health` will see it
                self._retry.sort(key=lambda item: item[0])
                return
            target.in_flight[index] = task

    def _next_task(self) -> tuple[int, TaskSpec]:
        if self._retry:
            return self._retry.pop(0)
        index = self._next_index
        self._next_index += 1
        return index, self.order.task_at(index)


def _warn(text: str) -> None:
    from tracegym.output import err, literal

    err.print(f"[yellow]warning:[/yellow] {literal(text)}", highlight=False, markup=True)
    sys.stderr.flush()
