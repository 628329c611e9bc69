"""References for tasks whose recording holds no good reply: `tasks generate --references / --reference-model`.

A team's failed conversations seldom hold the reply that would have been right, so most failure tasks have no
reference that passes, and the gates reject them all. After the gates' first pass, each task still without a
passing reference (`no_reference`, `reference_fails`) is given, in order:

1. its row of the `--references` file (its trace's, else its session's, else its cluster's), and gated again
   with that reply as its reference;
2. when it still lacks one, `--reference-samples` episodes of `--reference-model` through the task's own
   harness, scored by the task's evals exactly as the probes are; the best-scoring sample that reaches the
   threshold becomes its reference, and the task is gated again with it (the degenerate probes included).

A supplied reference is kept in the task's spec (`provenance.reference`, with its source), so `tasks check`
plays it again; the references that did not pass stay in the gate results (`attempts`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from tracegym.episodes.record import Episode
from tracegym.evals.scorers import Scorer
from tracegym.harnesses.config import HarnessConfig, HarnessFactory
from tracegym.harnesses.gates import GateOptions, GateReport, ModelSearch, NewTaskGate, TaskGate, run_gates
from tracegym.harnesses.policy import HFPolicyConfig, OpenAIPolicyConfig, make_policy
from tracegym.harnesses.runner import EpisodeJob, EpisodeLimits, derive_seed, run_episode
from tracegym.models import compute
from tracegym.models.sampling import SamplingParams
from tracegym.tasks.references import ReferenceFile, ReferenceMatch, session_ids, with_reference
from tracegym.tasks.spec import ChatMessage, Reference, TaskSpec

if TYPE_CHECKING:
    from tracegym.store.access import StoreAccess

_LACKING = frozenset({"no_reference", "reference_fails"})
_ERRORS_KEPT = 3


class ReferenceSampling(BaseModel):
    """How a reference model samples candidate references."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    samples: int = Field(8, ge=1)
    """Episodes per task still lacking a passing reference."""
    max_turns: int = Field(4, ge=1)
    """Most model turns per episode (a replay task's tool calls are answered from the recording)."""
    temperature: float = Field(1.0, gt=0)
    """Sampling temperature: varied samples give more chances to pass."""
    max_new_tokens: int = Field(512, ge=1)
    """Most tokens per reply."""
    seed: int = 0
    """Each episode's seed derives from it, the task id and the sample index."""


@dataclass(frozen=True)
class ReferenceModel:
    """`--reference-model`: the model that samples references, as `tracegym eval` would run it."""

    name: str
    """How its references are named: their source is model:NAME."""
    policy: HFPolicyConfig | OpenAIPolicyConfig
    sampling: ReferenceSampling


class ReferencedTaskGate(NewTaskGate):
    """The gates of `tasks generate`, then references supplied for the tasks that still lack a passing one."""

    def __init__(self, store: StoreAccess, evals_path: Path, config: HarnessConfig | None = None,
                 base_dir: Path | None = None, options: GateOptions | None = None, config_name: str | None = None,
                 *, references: ReferenceFile | None = None, model: ReferenceModel | None = None,
                 notify: Callable[[str], None] | None = None) -> None:
        super().__init__(store, evals_path, config, base_dir, options, config_name)
        self.references, self.model = references, model
        self.notify = notify or (lambda _: None)
        self.settings = self.settings.model_copy(update={
            "references_file": str(references.path) if references else None,
            "reference_model": model.name if model else None,
            "reference_samples": model.sampling.samples if model else None})

    def gate(self, tasks: list[TaskSpec], scorer_of: Callable[[TaskSpec], Scorer]) -> GateReport:
        started = time.perf_counter()
        first = super().gate(tasks, scorer_of)
        gates = {g.task_id: g for g in first.tasks}
        by_id = {t.task_id: t for t in tasks}
        episodes, hollow_s, supplied, match = first.episodes, first.hollow_seconds, {}, None
        if self.references is not None:
            with self.store.reading() as st:
                sessions = session_ids(st, tasks)
            match = self.references.match(tasks, sessions)
            self._say_unmatched(match)
            retry = {i: r for i, r in match.references.items() if _lacking(gates[i])}
            played, hollow = self._gate_again(by_id, retry, gates, scorer_of)
            episodes, hollow_s = episodes + played, hollow_s + hollow
            supplied.update(retry)
        if self.model is not None:
            lacking = [t for t in tasks if _lacking(gates[t.task_id])]
            found = self._search(lacking, gates, scorer_of) if lacking else {}
            played, hollow = self._gate_again(by_id, found, gates, scorer_of)
            episodes += len(lacking) * self.model.sampling.samples + played
            hollow_s += hollow
            supplied.update(found)
            self._say_searched([gates[t.task_id] for t in lacking])
        ordered = [gates[t.task_id] for t in tasks]
        return GateReport(ordered, time.perf_counter() - started, episodes,
                          {i: r for i, r in supplied.items() if _from(gates[i], r)}, match, hollow_s)

    def _gate_again(self, by_id: dict[str, TaskSpec], references: dict[str, Reference], gates: dict[str, TaskGate],
                    scorer_of: Callable[[TaskSpec], Scorer]) -> tuple[int, float]:
        """Gate the tasks of `references` again, each with its reference; the reference it had before becomes
        an attempt. The probe episodes it played, and the seconds of its hollow probes."""
        if not references:
            return 0, 0.0
        specs = [with_reference(by_id[i], r) for i, r in references.items()]
        again = run_gates(self.sources, specs, scorer_of, self.config, self.base_dir, self.options)
        for new in again.tasks:
            old = gates[new.task_id]
            new.attempts = [*old.attempts, *([old.reference] if old.reference else [])]
            new.model_search = old.model_search
            gates[new.task_id] = new
        return again.episodes, again.hollow_seconds

    def _search(self, tasks: list[TaskSpec], gates: dict[str, TaskGate],
                scorer_of: Callable[[TaskSpec], Scorer]) -> dict[str, Reference]:
        """Sample each task's episodes; the best passing sample of each task that has one, by task id."""
        assert self.model is not None
        n = self.model.sampling.samples
        episodes = sample_episodes(self.model, tasks, HarnessFactory(self.config, self.base_dir), scorer_of,
                                   self.options)
        found = {}
        for i, task in enumerate(tasks):
            mine = episodes[i * n:(i + 1) * n]
            gates[task.task_id].model_search = _search_record(self.model.name, mine, self.options.threshold)
            best = best_reference(self.model.name, mine, self.options.threshold)
            if best is not None:
                found[task.task_id] = best
        return found

    def _say_unmatched(self, match: ReferenceMatch) -> None:
        if not match.unmatched:
            return
        assert self.references is not None
        shown = ", ".join(f"{r.key} {r.value} (line {r.line})" for r in match.unmatched[:5])
        more = f" and {len(match.unmatched) - 5} more" if len(match.unmatched) > 5 else ""
        self.notify(f"{len(match.unmatched)} of the {match.rows} rows of {self.references.path} matched no task: "
                    f"{shown}{more}. Rows match a task's source trace (trace_id), that trace's session_id in the "
                    "store, or the cluster_id of a chosen cluster; a trace or cluster outside --cluster/--top has "
                    "no task.")

    def _say_searched(self, searched: list[TaskGate]) -> None:
        assert self.model is not None
        per_cluster: dict[str | None, list[TaskGate]] = {}
        for gate in searched:
            per_cluster.setdefault(gate.cluster_id, []).append(gate)
        for cluster, gates in per_cluster.items():
            missing = sum(1 for g in gates if g.model_search is not None and not g.model_search.passed)
            errors = [e for g in gates if g.model_search for e in g.model_search.errors]
            first = f"; unscored samples, first: {errors[0][:200]}" if errors else ""
            self.notify(f"Reference model {self.model.name}: cluster {cluster}: no passing reference for {missing} of "
                        f"{len(gates)} tasks ({self.model.sampling.samples} samples each){first}.")


def sample_episodes(model: ReferenceModel, tasks: Sequence[TaskSpec], harnesses: HarnessFactory,
                    scorer_of: Callable[[TaskSpec], Scorer], options: GateOptions) -> list[Episode]:
    """`model.sampling.samples` scored episodes of each task through its harness, task by task, in sample order."""
    sampling = model.sampling
    params = SamplingParams(temperature=sampling.temperature, max_new_tokens=sampling.max_new_tokens)
    limits = EpisodeLimits(max_turns=sampling.max_turns, time_budget_s=options.time_budget_s)
    policy = make_policy(model.policy)
    limit = asyncio.Semaphore(options.concurrency)

    async def one(task: TaskSpec, k: int) -> Episode:
        job = EpisodeJob(task, k, derive_seed(sampling.seed, task.task_id, k))
        async with limit:
            return await run_episode(policy, harnesses.make(task, f"reference-{task.task_id}-{k}"), job, params,
                                     limits, scorer_of(task), f"reference:{model.name}")

    async def run_all() -> list[Episode]:
        try:
            return list(await asyncio.gather(*(one(t, k) for t in tasks for k in range(sampling.samples))))
        finally:
            await policy.aclose()

    try:
        return compute.run(run_all())
    finally:
        harnesses.close()


def best_reference(name: str, episodes: Sequence[Episode], threshold: float) -> Reference | None:
    """The highest-rewarded episode that reaches `threshold` (the earliest of equals) as a reference."""
    best = max(((e.reward, -k) for k, e in enumerate(episodes) if e.reward is not None and e.reward >= threshold),
               default=None)
    if best is None:
        return None
    reward, k = best[0], -best[1]
    replies = [_message(m) for m in episodes[k].continuation if m.get("role") == "assistant"]
    if not replies:
        return None
    return Reference(source=f"model:{name}", detail=f"sample {k + 1} of {len(episodes)}, reward {reward:g}",
                     replies=replies)


def _message(message: dict[str, Any]) -> ChatMessage:
    return ChatMessage.model_validate({"role": "assistant", "content": message.get("content"),
                                       "tool_calls": message.get("tool_calls") or None})


def _search_record(name: str, episodes: Sequence[Episode], threshold: float) -> ModelSearch:
    rewards = [e.reward for e in episodes]
    errors = [e.harness_error or e.scorer_error or "" for e in episodes if e.reward is None]
    return ModelSearch(name, len(episodes), rewards, sum(r is not None and r >= threshold for r in rewards),
                       [e for e in errors if e][:_ERRORS_KEPT])


def _lacking(gate: TaskGate) -> bool:
    return bool(_LACKING & set(gate.reasons))


def _from(gate: TaskGate, reference: Reference) -> bool:
    """Whether the task's final reference probe played `reference`."""
    return gate.reference is not None and gate.reference.source == reference.source
