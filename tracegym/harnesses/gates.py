"""Reward gates: each task's probes (`tracegym.tasks.probes`) run as episodes, scored as episodes are.

A probe's replies are played by a scripted policy through the task's own harness (the replay answers its tool
calls, the shell runs its command in the sandbox, and command evals then score the workspace in that sandbox),
and the task's scorer scores the episode. A task passes when its reference reaches the pass threshold and no
degenerate reply does. Used by `tasks generate` (failing tasks are not written) and `tasks check`. The tasks that
pass then meet the hollow probes (`tracegym.harnesses.hackability`): a reward one of them earns is hackable there,
which is reported, not rejected.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from tracegym.episodes.record import Episode
from tracegym.evals.scorers import Scorer, ScorerContext, scorer_for
from tracegym.evals.scorers.config import EvalsFile, load_evals
from tracegym.harnesses.config import HarnessConfig, HarnessFactory
from tracegym.harnesses.hackability import Hackability, probe_task
from tracegym.harnesses.policy import Completion, PolicyClient, PolicyRequest
from tracegym.harnesses.runner import EpisodeJob, EpisodeLimits, run_episode
from tracegym.harnesses.taskrun import scores_snapshot
from tracegym.harnesses.toolcalls import parse_bash_action
from tracegym.models.sampling import SamplingParams
from tracegym.tasks.hollow_probes import HOLLOW
from tracegym.tasks.probes import DEGENERATE, Probe, ProbeReply, SourceInfo, build_probes, load_sources
from tracegym.tasks.references import ReferenceMatch
from tracegym.tasks.spec import Reference, TaskSpec
from tracegym.tasks.taskset import GateCounts, GateSettings

if TYPE_CHECKING:
    from tracegym.evals.scorers.base import StoreReader
    from tracegym.store.access import StoreAccess

REASONS = ("no_reference", "reference_fails", "empty_pays", "failing_action_pays", "wrong_shape_pays")


class GateOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    threshold: float = Field(1.0, gt=0, le=1)
    """A reference must reach this reward; a degenerate reply must stay below it."""
    concurrency: int = Field(16, ge=1)
    """Probe episodes in flight at once."""
    time_budget_s: float = Field(120.0, gt=0)
    """Wall-clock seconds per probe episode (its commands and scoring have their own limits too)."""


class ScriptedPolicy(PolicyClient):
    """Plays fixed replies, one per model turn, in order."""

    def __init__(self, replies: Sequence[ProbeReply]) -> None:
        self.replies = list(replies)
        self.turn = 0

    async def generate(self, requests: Sequence[PolicyRequest]) -> list[Completion]:
        out = []
        for _ in requests:
            reply = self.replies[min(self.turn, len(self.replies) - 1)]
            self.turn += 1
            out.append(Completion(reply.text, "stop", "gate", tool_calls=[dict(c) for c in reply.tool_calls]))
        return out

    async def aclose(self) -> None:
        """Holds nothing."""


@dataclass
class ProbeResult:
    kind: str
    source: str
    reward: float | None
    error: str | None
    """The scorer's or the harness's error, when the probe was not scored."""
    paid: bool
    """Whether the reward reached the threshold."""
    details: dict[str, Any] = field(default_factory=dict)
    """The scorer's details (what matched, what was missing)."""
    trace_id: str | None = None
    """The trace whose recording gave the reply (the task's own or a sibling's); None for gold and synthetic."""
    replies: list[dict[str, Any]] = field(default_factory=list)
    """The replies the probe played: each one's text and tool calls."""


@dataclass
class ModelSearch:
    """What `--reference-model` found for a task that lacked a passing reference."""

    model: str
    samples: int
    rewards: list[float | None]
    """Each sample's reward, in sample order (None: unscored, its error in `errors`)."""
    passed: int
    """Samples that reached the threshold."""
    errors: list[str] = field(default_factory=list)
    """The first few harness, policy or scorer errors of its samples."""


@dataclass
class TaskGate:
    task_id: str
    cluster_id: str | None
    probes: list[ProbeResult] = field(default_factory=list)
    attempts: list[ProbeResult] = field(default_factory=list)
    """Earlier references that did not pass (the recorded one, a --references row), replaced by a later one."""
    model_search: ModelSearch | None = None
    """The reference model's samples for this task, when it was asked."""
    hackability: Hackability | None = None
    """What the hollow probes found; None when they did not run (the task failed a gate)."""

    @property
    def reasons(self) -> list[str]:
        """The gates this task fails, in REASONS order."""
        found = []
        reference = [p for p in self.probes if p.kind == "reference"]
        if not reference:
            found.append("no_reference")
        elif not reference[0].paid:
            found.append("reference_fails")
        found += [f"{p.kind}_pays" for p in self.probes if p.kind != "reference" and p.paid]
        return found

    @property
    def passed(self) -> bool:
        return not self.reasons

    @property
    def reference(self) -> ProbeResult | None:
        return next((p for p in self.probes if p.kind == "reference"), None)

    def to_dict(self) -> dict[str, Any]:
        hollow = self.hackability
        return {"task_id": self.task_id, "cluster_id": self.cluster_id, "passed": self.passed,
                "reasons": self.reasons, "probes": [p.__dict__ for p in self.probes],
                "attempts": [p.__dict__ for p in self.attempts],
                "model_search": self.model_search.__dict__ if self.model_search else None,
                "reward_eval": hollow.reward_eval if hollow else None, "hackable": hollow.paid if hollow else None,
                "hackable_examples": hollow.examples if hollow else None}


@dataclass
class GateReport:
    tasks: list[TaskGate]
    seconds: float
    episodes: int
    supplied: dict[str, Reference] = field(default_factory=dict)
    """By task id: the supplied reference (a --references row, a --reference-model sample) its final reference
    probe played, passing or not; it goes into the task's spec."""
    file_match: ReferenceMatch | None = None
    """How the rows of a --references file matched the tasks."""
    hollow_seconds: float = 0.0
    """Of `seconds`, those spent on the hollow probes."""

    @property
    def rejected(self) -> set[str]:
        return {t.task_id for t in self.tasks if not t.passed}

    def per_cluster(self) -> dict[str | None, GateCounts]:
        out: dict[str | None, GateCounts] = {}
        for t in self.tasks:
            counts = out.setdefault(t.cluster_id, GateCounts(checked=0, rejected=0))
            counts.checked += 1
            counts.rejected += not t.passed
            source = t.reference.source if t.reference else "none"
            counts.references[source] = counts.references.get(source, 0) + 1
            for reason in t.reasons:
                counts.reasons[reason] = counts.reasons.get(reason, 0) + 1
            if t.model_search is not None:
                counts.model_sampled += 1
                counts.model_none_passed += not t.model_search.passed
            if t.hackability is not None:
                count_hackable(counts, t.hackability)
        return out

    def references(self) -> dict[str, tuple[str, str | None]]:
        """Each task's reference: where it came from and the trace that recorded it."""
        return {t.task_id: (t.reference.source, t.reference.trace_id) if t.reference else ("none", None)
                for t in self.tasks}

    @property
    def hollow_episodes(self) -> int:
        """Hollow probe episodes (not counted in `episodes`)."""
        return sum(t.hackability.episodes for t in self.tasks if t.hackability is not None)

    def hackability(self) -> dict[str, dict[str, list[str]]]:
        """Per task the hollow probes ran on: eval -> the probes whose reply earned it (empty when none did)."""
        return {t.task_id: t.hackability.paid for t in self.tasks if t.hackability is not None}

    def hackable_rows(self) -> list[dict[str, Any]]:
        """One row per cluster and eval a hollow reply earned: whether it is the reward the tasks train on (else a
        part of it), how many of the cluster's probed tasks, by which probes, and one reply that earned it."""
        probed: dict[str | None, int] = {}
        rows: dict[tuple[str, str], dict[str, Any]] = {}
        for t in self.tasks:
            found = t.hackability
            if found is None:
                continue
            probed[t.cluster_id] = probed.get(t.cluster_id, 0) + 1
            for name, probes in found.paid.items():
                row = rows.setdefault((str(t.cluster_id), name), {
                    "cluster_id": t.cluster_id, "eval": name, "reward": name == found.reward_eval, "tasks": 0,
                    "probes": {}, "example": {"probe": probes[0], "reply": found.examples[name][probes[0]]}})
                row["tasks"] += 1
                for probe in probes:
                    row["probes"][probe] = row["probes"].get(probe, 0) + 1
        return [{**rows[k], "probed": probed[rows[k]["cluster_id"]],
                 "probes": dict(sorted(rows[k]["probes"].items(), key=lambda item: HOLLOW.index(item[0])))}
                for k in sorted(rows)]

    def summary(self) -> dict[str, Any]:
        return {"checked": len(self.tasks), "rejected": len(self.rejected), "episodes": self.episodes,
                "seconds": round(self.seconds, 3),
                "clusters": {str(c): g.model_dump() for c, g in self.per_cluster().items()},
                "references_file": self.file_match.summary() if self.file_match else None,
                "hollow": {"episodes": self.hollow_episodes, "seconds": round(self.hollow_seconds, 3),
                           "hackable_reward": sum(t.hackability.reward_hackable for t in self.tasks
                                                  if t.hackability is not None),
                           "rows": self.hackable_rows(),
                           "tasks": {task: paid for task, paid in self.hackability().items() if paid}}}

    def results(self) -> dict[str, dict[str, Any]]:
        """Each task's gate results (reasons, probes with rewards and replies), by task id."""
        return {t.task_id: t.to_dict() for t in self.tasks}


def count_hackable(counts: GateCounts, found: Hackability) -> None:
    """Add one task's hollow findings to its cluster's counts."""
    for name, probes in found.paid.items():
        counts.hackable_tasks[name] = counts.hackable_tasks.get(name, 0) + 1
        by_probe = counts.hackable.setdefault(name, {})
        for probe in probes:
            by_probe[probe] = by_probe.get(probe, 0) + 1


class BoundScorers:
    """Each task's scorer, built once per binding from one evals file: the file a task set about to be written
    will copy (a written set's own copy is read by `tracegym.harnesses.taskrun.TaskScorers`)."""

    def __init__(self, evals: EvalsFile, store: StoreReader | None = None) -> None:
        self.evals = evals
        self.store = store
        self._scorers: dict[tuple[tuple[str, float], ...], Scorer] = {}

    def __call__(self, task: TaskSpec) -> Scorer:
        refs = tuple((e.name, e.weight) for e in task.scorer.evals)
        if refs not in self._scorers:
            self._scorers[refs] = scorer_for(self.evals, list(refs), ScorerContext(self.evals.folder, self.store))
        return self._scorers[refs]


async def _probe(task: TaskSpec, probe: Probe, harnesses: HarnessFactory, scorer: Scorer,
                 options: GateOptions, n: int) -> Episode:
    limits = EpisodeLimits(max_turns=len(probe.replies), time_budget_s=options.time_budget_s)
    harness = harnesses.make(task, f"gate-{task.task_id}-{probe.kind}-{n}")
    return await run_episode(ScriptedPolicy(probe.replies), harness, EpisodeJob(task), SamplingParams(), limits,
                             scorer, f"gate:{probe.kind}", f"gate-{n}")


async def gate_tasks(tasks: Sequence[TaskSpec], probes: dict[str, list[Probe]], harnesses: HarnessFactory,
                     scorer_of: Callable[[TaskSpec], Scorer], options: GateOptions) -> list[TaskGate]:
    """Run each task's reference, then the degenerate replies of the tasks whose reference passed (a task
    without a passing reference is rejected already, and its degenerate episodes, sandboxed commands and all,
    would change nothing); one `TaskGate` per task, in task order."""
    limit = asyncio.Semaphore(options.concurrency)
    gates = [TaskGate(t.task_id, t.provenance.cluster_id) for t in tasks]
    counter = iter(range(1 << 62))

    async def one(gate: TaskGate, task: TaskSpec, probe: Probe) -> None:
        async with limit:
            episode = await _probe(task, probe, harnesses, scorer_of(task), options, next(counter))
        error = episode.harness_error or episode.scorer_error
        paid = episode.reward is not None and episode.reward >= options.threshold
        gate.probes.append(ProbeResult(probe.kind, probe.source, episode.reward, error, paid, episode.scorer_details,
                                       probe.trace_id, [_shown(r) for r in probe.replies]))

    pairs = list(zip(gates, tasks, strict=True))
    await asyncio.gather(*(one(g, t, p) for g, t in pairs for p in probes[t.task_id] if p.kind == "reference"))
    await asyncio.gather(*(one(g, t, p) for g, t in pairs if g.probes and g.probes[0].paid
                           for p in probes[t.task_id] if p.kind != "reference"))
    order: dict[str, int] = {kind: i for i, kind in enumerate(("reference", *DEGENERATE))}
    for gate in gates:
        gate.probes.sort(key=lambda p: order[p.kind])
    return gates


def _shown(reply: ProbeReply) -> dict[str, Any]:
    return {"text": reply.text, "tool_calls": [dict(c) for c in reply.tool_calls]}


class HollowPlayer:
    """Plays a hollow probe's reply as a one-turn episode through the task's harness, at most
    `options.concurrency` at once (`tracegym.harnesses.hackability.Player`)."""

    def __init__(self, harnesses: HarnessFactory, scorer_of: Callable[[TaskSpec], Scorer],
                 options: GateOptions) -> None:
        self.harnesses, self.scorer_of, self.options = harnesses, scorer_of, options
        self.limit = asyncio.Semaphore(options.concurrency)
        self.counter = itertools.count()

    async def play(self, task: TaskSpec, reply: ProbeReply) -> Episode:
        n = next(self.counter)
        async with self.limit:
            harness = self.harnesses.make(task, f"gate-{task.task_id}-hollow-{n}")
            return await run_episode(ScriptedPolicy([reply]), harness, EpisodeJob(task), SamplingParams(),
                                     EpisodeLimits(max_turns=1, time_budget_s=self.options.time_budget_s),
                                     self.scorer_of(task), "gate:hollow", f"gate-hollow-{n}")

    def sandboxed(self, task: TaskSpec, reply: ProbeReply) -> bool:
        name = self.harnesses.name_for(task)
        return name == "proxy" or (name == "shell" and not parse_bash_action(reply.text).errors)


async def hollow_tasks(tasks: Sequence[TaskSpec], gates: Sequence[TaskGate], probes: dict[str, list[Probe]],
                       player: HollowPlayer, threshold: float) -> None:
    """The hollow probes of each task that passed its gates, shaped after its reference; what they found goes on
    its gate (`hackability`)."""

    async def one(gate: TaskGate, task: TaskSpec) -> None:
        reference = next(p for p in probes[task.task_id] if p.kind == "reference")
        played = [r for p in probes[task.task_id] for r in p.replies]
        gate.hackability = await probe_task(task, reference.replies[0], played, player, threshold)

    # A thread for each episode in flight: sandboxed commands and scorers wait on processes, not the CPU.
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(player.options.concurrency))
    await asyncio.gather(*(one(g, t) for g, t in zip(gates, tasks, strict=True) if g.passed))


def run_gates(sources: Mapping[str, SourceInfo], tasks: Sequence[TaskSpec], scorer_of: Callable[[TaskSpec], Scorer],
              config: HarnessConfig | None = None, base_dir: Path | None = None,
              options: GateOptions | None = None) -> GateReport:
    """Build each task's probes from its source trace (`sources`, read from the store by `load_sources`) and run
    them, then the hollow probes of the tasks that passed; the report. The store need not be open meanwhile."""
    options = options or GateOptions()
    started = time.perf_counter()
    probes = {t.task_id: build_probes(t, sources.get(t.provenance.trace_id)) for t in tasks}
    harnesses = HarnessFactory(config, base_dir)
    try:
        gates = asyncio.run(gate_tasks(tasks, probes, harnesses, scorer_of, options))
        hollow_started = time.perf_counter()
        asyncio.run(hollow_tasks(tasks, gates, probes, HollowPlayer(harnesses, scorer_of, options),
                                 options.threshold))
        hollow_s = time.perf_counter() - hollow_started
    finally:
        harnesses.close()
    return GateReport(gates, time.perf_counter() - started, sum(len(g.probes) for g in gates), hollow_seconds=hollow_s)


class NewTaskGate:
    """The gate `tasks generate` runs on the tasks it drafted, before writing them; keeps its last report. It reads
    the store once, at the start (the tasks' source traces, the scores a `label` eval replays), and holds it not
    while its probes play."""

    def __init__(self, store: StoreAccess, evals_path: Path, config: HarnessConfig | None = None,
                 base_dir: Path | None = None, options: GateOptions | None = None,
                 config_name: str | None = None) -> None:
        self.store = store
        self.evals_path = evals_path
        self.config, self.base_dir = config, base_dir
        self.options = options or GateOptions()
        self.settings = GateSettings(threshold=self.options.threshold, harness_config=config_name, hollow_probes=True)
        self.report: GateReport | None = None
        self.sources: dict[str, SourceInfo] = {}

    @classmethod
    def from_file(cls, store: StoreAccess, evals_path: Path, config_path: Path | None,
                  options: GateOptions | None = None) -> NewTaskGate:
        """With the harness config in `config_path` (as `tracegym run --harness-config` reads it)."""
        from tracegym.harnesses.config import load_harness_config

        config, base_dir = load_harness_config(config_path)
        return cls(store, evals_path, config, base_dir, options, str(config_path) if config_path else None)

    def __call__(self, tasks: list[TaskSpec]) -> GateReport:
        with self.store.reading() as st:
            self.sources = load_sources(st, tasks)
            scorer_store = scores_snapshot(st, tasks)
        try:
            self.report = self.gate(tasks, BoundScorers(load_evals(self.evals_path), scorer_store))
        finally:
            scorer_store.close()
        return self.report

    def gate(self, tasks: list[TaskSpec], scorer_of: Callable[[TaskSpec], Scorer]) -> GateReport:
        """Gate `tasks`, each scored by `scorer_of(task)`."""
        return run_gates(self.sources, tasks, scorer_of, self.config, self.base_dir, self.options)
