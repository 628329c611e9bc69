"""The recorded next steps that went well at each task's cut, written into the tasks bound to a `reference` eval
(which compares attempts with them, in training without a store)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tracegym.evals.scorers.config import EvalsFile, ReferenceEval, WeightedEval
from tracegym.evals.scorers.siblings import reference_of
from tracegym.tasks.probes import SourceInfo, load_sources, successful_replies
from tracegym.tasks.spec import ReferenceStep, TaskSpec

if TYPE_CHECKING:
    from tracegym.store import Store


def add_reference_steps(store: Store, specs: Sequence[TaskSpec], evals: EvalsFile) -> None:
    """Set `reference_steps` on every spec bound to a `reference` eval (directly or as a `weighted` part)."""
    bound = [s for s in specs if any(_reads_references(evals, e.name) for e in s.scorer.evals)]
    if not bound:
        return
    sources = load_sources(store, bound)
    for spec in bound:
        spec.reference_steps = reference_steps(spec, sources.get(spec.provenance.trace_id))


def reference_steps(spec: TaskSpec, source: SourceInfo | None) -> list[ReferenceStep]:
    """The task's successful replies (`successful_replies`), their calls' arguments weighed against the
    successful attempts at the same source task."""
    if source is None:
        return []
    others = [s.trace for s in source.siblings] + ([source.trace] if source.trace.outcome == "success" else [])
    steps = []
    for probe in successful_replies(spec, source):
        for reply in probe.replies:
            message = {"content": reply.text, "tool_calls": list(reply.tool_calls)}
            steps.append(ReferenceStep.of(reference_of(message, probe.source, probe.trace_id, others)))
    return steps


def _reads_references(evals: EvalsFile, name: str) -> bool:
    spec = evals.get(name)
    if isinstance(spec, WeightedEval):
        return any(isinstance(evals.get(part), ReferenceEval) for part in spec.parts)
    return isinstance(spec, ReferenceEval)
