"""The common row of an export: what every format carries of one task, so results can come back by id.

A row holds the prompt as OpenAI chat messages, the tools, the task's and its cluster's ids, the harness the task
runs in (after the harness config's `harness` / `run_as`), its split, the reference reply (the one the gates play:
`tracegym.tasks.probes`), the gates' verdicts as the task set recorded them, and the scorer binding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from tracegym.tasks.probes import Probe, SourceInfo, build_probes, load_sources
from tracegym.tasks.spec import Split, TaskSpec
from tracegym.tasks.taskset import TaskSet

if TYPE_CHECKING:
    from tracegym.harnesses.config import HarnessFactory
    from tracegym.store import Store

MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class GateVerdict(_Strict):
    """The gates' verdict on a task as its task set recorded it at generation."""

    gated: bool
    """Whether the gates ran (False: generated with --no-gates)."""
    threshold: float | None = None
    """The pass threshold they ran with."""
    passed: bool | None = None
    """Every task in a gated set passed (the others went to rejected/); None when ungated."""
    reference: str | None = None
    """Where the reference came from: recorded_turn, sibling_turn, later_turn, gold, file:PATH, model:NAME."""
    reference_trace: str | None = None
    """The trace that recorded the reference."""
    hackable: dict[str, list[str]] | None = None
    """Eval -> the hollow probes whose reply earned it (empty: none); None when not probed."""


class ScorerRef(_Strict):
    """The task's scorer: evals of the exported evals file, combined by weight."""

    evals_file: str
    """The evals file, relative to the export's data folder."""
    evals: dict[str, float]
    """Eval name -> weight."""
    reward_eval: str
    """The reward's name as the scorer reports it."""


class ExportRow(_Strict):
    task_id: str
    """The task's id in its task set."""
    task_set: str
    """The task set's name."""
    cluster_id: str | None
    """The failure cluster the task was drawn from."""
    split: Split
    """train or heldout."""
    harness: str
    """The harness the task runs in: chat, tools, replay, shell or proxy."""
    prompt: list[dict[str, Any]]
    """The conversation up to the agent's turn, OpenAI chat messages (system first), each with every key of
    MESSAGE_KEYS (None where unset) so that the rows share one schema."""
    tools: list[dict[str, Any]]
    """The tools the agent has, OpenAI tool schemas."""
    reference: list[dict[str, Any]] | None
    """The reference reply the gates play (assistant messages, one per model turn); None when there is none."""
    reference_source: str | None
    """Where the reference came from (see GateVerdict.reference)."""
    gates: GateVerdict
    """The gates' verdict on the task."""
    scorer: ScorerRef
    """How an attempt is scored."""


def build_rows(task_set: TaskSet, tasks: Sequence[TaskSpec], harnesses: HarnessFactory,
               store: Store | None) -> list[ExportRow]:
    """The rows of `tasks`; the references are rebuilt from the source traces in `store` (without a store, only
    supplied and gold references are known)."""
    sources: dict[str, SourceInfo] = load_sources(store, tasks) if store is not None else {}
    entries = {e.task_id: e for e in task_set.manifest.tasks}
    gates = task_set.manifest.gates
    rows = []
    for task in tasks:
        entry = entries[task.task_id]
        reference = _reference(build_probes(task, sources.get(task.provenance.trace_id)))
        verdict = GateVerdict(gated=gates is not None, threshold=gates.threshold if gates else None,
                              passed=True if gates else None, reference=entry.reference,
                              reference_trace=entry.reference_trace, hackable=entry.hackable)
        rows.append(ExportRow(
            task_id=task.task_id, task_set=task_set.manifest.name, cluster_id=task.provenance.cluster_id,
            split=task.split, harness=harnesses.name_for(task), prompt=[full_message(m) for m in task.messages()],
            tools=[{"type": "function", "function": {"name": t.name, "description": t.description,
                                                     "parameters": t.parameters}} for t in task.tools],
            reference=[_assistant(r.text, r.tool_calls) for r in reference.replies] if reference else None,
            reference_source=reference.source if reference else None, gates=verdict,
            scorer=ScorerRef(evals_file=task.scorer.evals_file, evals={e.name: e.weight for e in task.scorer.evals},
                             reward_eval=task.scorer.reward_eval())))
    return rows


def full_message(message: dict[str, Any]) -> dict[str, Any]:
    """A chat message with every key of MESSAGE_KEYS."""
    return {k: message.get(k) for k in MESSAGE_KEYS}


def _assistant(text: str, tool_calls: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return full_message({"role": "assistant", "content": text, "tool_calls": [dict(c) for c in tool_calls] or None})


def _reference(probes: list[Probe]) -> Probe | None:
    return next((p for p in probes if p.kind == "reference"), None)
