"""`tasks generate`: failure clusters in the store -> a task-set folder of TaskSpecs.

Deterministic: for the same store, options and seed, the same files byte for
byte (everything is ordered by rank, trace id and message index; the only
randomness is seeded).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from tracegym.errors import ConfigError, NotFoundError, NothingPassedError, did_you_mean
from tracegym.evals.scorers.config import EvalsFile, load_evals
from tracegym.evals.scorers.recorded import RecordedTrace, iter_recorded
from tracegym.tasks.cuts import CutMode, build_prompt, cut_points, duplicate_key, recorded_turn
from tracegym.tasks.reference_steps import add_reference_steps
from tracegym.tasks.references import with_reference
from tracegym.tasks.render import sha256_file, write_task_set
from tracegym.tasks.schemas import declared_tools, format_tools
from tracegym.tasks.spec import (
    Context,
    Duplicate,
    EvalRef,
    Provenance,
    RecordedCall,
    Reference,
    ScorerBinding,
    TaskSpec,
    ToolSchema,
)
from tracegym.tasks.splits import SplitBy, assign_splits
from tracegym.tasks.taskset import (
    REJECTED_DIR,
    TASKS_DIR,
    ClusterEntry,
    GateCounts,
    GateSettings,
    Manifest,
    TaskEntry,
    TaskSet,
    register_task_set,
)

if TYPE_CHECKING:
    from tracegym.store import Store
    from tracegym.store.access import StoreAccess

# Agents whose actions are shell commands: their tasks run in a sandboxed shell, not a replay.
SHELL_FORMATS = frozenset({"mini-swe-agent", "swe-agent"})


class GenerateOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    """The task set's name (its folder's name and its id in the store)."""
    clusters: list[str] = []
    """Cluster ids (or unique prefixes) to draw tasks from."""
    top: int | None = Field(None, ge=1)
    """Also take the N highest-ranked clusters."""
    eval_names: list[tuple[str, float]] = []
    """Evals to bind (name, weight); empty binds each eval whose applies_to matches the task."""
    seed: int = 0
    """Seeds the held-out draw and any per-cluster sampling."""
    heldout_fraction: float = Field(0.2, ge=0.0, le=1.0)
    """Share of task groups held out for evaluation."""
    split_by: SplitBy = "task"
    """task: attempts at one source task stay together; cluster: whole clusters are held out too."""
    cuts: CutMode = "failure"
    """failure: one task at the turn that went wrong; turns: one at every agent turn up to it; recovery: one at
    the agent's next turn after the failure (its answer to the error, correction or complaint)."""
    max_cuts: int | None = Field(None, ge=1)
    """With cuts: turns, keep only the last N turns before each failure."""
    context: Context = "full"
    """full: the whole conversation before the cut; last-user: the system prompt and the turns since the last
    user message (short prompts for small models, at the cost of earlier context); last-exchange: also the agent's
    last words to the user before it."""
    system_max_chars: int | None = Field(None, ge=1)
    """Cut system prompts longer than this (kept whole by default: policies matter to the agent's choices)."""
    max_tasks_per_cluster: int | None = Field(None, ge=1)
    """At most this many tasks per cluster (a seeded sample), after merging duplicates."""
    merge_near_duplicates: bool = True
    """Merge tasks whose prompt and task data are the same up to numbers and ids into the first (the others are
    listed in its provenance.duplicates); False keeps one task per trace and cut."""


@dataclass
class Draft:
    """A task before splitting: one cut in one trace, for one cluster."""

    cluster: dict[str, Any]
    failure: dict[str, Any]
    trace: RecordedTrace
    cut: int
    spec_fields: dict[str, Any]
    key: str
    duplicates: list[Duplicate] = field(default_factory=list)


@dataclass
class Generated:
    specs: list[TaskSpec]
    clusters: list[dict[str, Any]]
    counts: dict[str, int]
    options: GenerateOptions
    gates: dict[str | None, GateCounts] | None = None
    gate_settings: GateSettings | None = None
    references: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """Per gated task: where its reference came from, and the trace that recorded it."""
    rejected: list[TaskSpec] = field(default_factory=list)
    """The tasks that failed a gate (written to the set's rejected/ folder, never as tasks)."""
    gate_results: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per rejected task: its gate results (reasons, probes with rewards and replies)."""
    hackable: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    """Per task the hollow probes ran on: eval -> the probes whose reply earned it."""


class GateOutcome(Protocol):
    """What gating the drafted tasks found (`tracegym.harnesses.gates.GateReport`)."""

    @property
    def rejected(self) -> set[str]:
        """Ids of the tasks that failed a gate."""

    def per_cluster(self) -> dict[str | None, GateCounts]:
        """Counts per cluster."""

    def references(self) -> dict[str, tuple[str, str | None]]:
        """Per task: where its reference came from (recorded_turn, sibling_turn, ...) and the trace it was in."""

    @property
    def supplied(self) -> dict[str, Reference]:
        """By task id: the supplied reference (file:..., model:...) its gates played, kept in its spec."""

    def results(self) -> dict[str, dict[str, Any]]:
        """Per task: its gate results (reasons, probes with rewards and replies)."""

    def hackability(self) -> dict[str, dict[str, list[str]]]:
        """Per task that passed: eval -> the hollow probes whose reply earned it."""


class Gate(Protocol):
    """Probes drafted tasks before they are written (`tracegym.harnesses.gates.NewTaskGate`): this layer cannot
    run episodes, so the command hands it one."""

    settings: GateSettings

    def __call__(self, specs: list[TaskSpec], /) -> GateOutcome:
        """Gate `specs`."""


def generate(store: Store, options: GenerateOptions, evals: EvalsFile) -> Generated:
    """Build the task specs (nothing is written here)."""
    clusters = select_clusters(store, options.clusters, options.top)
    failures = _failures(store, [c["cluster_id"] for c in clusters])
    traces = {t.trace_id: t for t in iter_recorded(
        store, "trace_id IN (SELECT unnest(?))", [sorted({f["trace_id"] for f in failures})])}
    tools: dict[str, list[ToolSchema]] = {}
    by_cluster: dict[str, list[dict[str, Any]]] = {}
    for f in failures:
        by_cluster.setdefault(f["cluster_id"], []).append(f)
    drafts, skipped = [], 0
    for cluster in clusters:
        for failure in by_cluster.get(cluster["cluster_id"], []):
            trace = traces.get(failure["trace_id"])
            cuts = cut_points(trace, failure["message_idx"], options.cuts) if trace else []
            skipped += not cuts
            if trace is None:
                continue
            for cut in cuts[-options.max_cuts:] if options.max_cuts else cuts:
                drafts.append(_draft(store, cluster, failure, trace, cut, options, evals, tools))
    merged = _merge(drafts, options.merge_near_duplicates)
    kept = _cap(merged, options)
    splits = assign_splits([_split_keys(d, options.split_by) for d in kept], options.heldout_fraction, options.seed)
    specs = [_spec(d, split) for d, split in zip(kept, splits, strict=True)]
    add_reference_steps(store, specs, evals)
    near = sum(len({(x.trace_id, x.cut_message_idx) for x in d.duplicates} - {(d.trace.trace_id, d.cut)})
               for d in merged)
    counts = {"tasks": len(specs), "train": splits.count("train"), "heldout": splits.count("heldout"),
              "failures": len(failures), "failures_without_agent_turn": skipped,
              "drafts_merged": len(drafts) - len(merged), "near_duplicates_merged": near,
              "dropped_by_cap": len(merged) - len(kept)}
    return Generated(specs, clusters, counts, options)


def select_clusters(store: Store, ids: list[str], top: int | None) -> list[dict[str, Any]]:
    """The chosen clusters in rank order; ids may be unique prefixes."""
    rows = store.query("SELECT * FROM clusters ORDER BY rank, cluster_id")
    if not rows:
        raise NotFoundError("No failure clusters in the store. Fix: run `tracegym mine failures` first.")
    if not ids and top is None:
        raise ConfigError("Say which clusters to draw tasks from: --cluster ID (repeatable) or --top N. "
                          "See them with `tracegym sql \"SELECT cluster_id, rank, signature FROM clusters\"`.")
    chosen = {r["cluster_id"]: r for r in rows[:top or 0]}
    for ident in ids:
        matches = ([r for r in rows if r["cluster_id"] == ident]
                   or [r for r in rows if r["cluster_id"].startswith(ident)])
        if len(matches) != 1:
            what = "is ambiguous" if matches else "is not a cluster in the store"
            raise NotFoundError(f"--cluster {ident!r} {what}.{did_you_mean(ident, [r['cluster_id'] for r in rows])} "
                                "Fix: use a full id from the clusters table.")
        chosen[matches[0]["cluster_id"]] = matches[0]
    return sorted(chosen.values(), key=lambda r: (r["rank"] is None, r["rank"] or 0, r["cluster_id"]))


def _failures(store: Store, cluster_ids: list[str]) -> list[dict[str, Any]]:
    return store.query(
        """SELECT trace_id, detector, signature, evidence, message_idx, cluster_id FROM failures
           WHERE cluster_id IN (SELECT unnest(?))
           ORDER BY cluster_id, trace_id, message_idx NULLS FIRST, evidence""",
        [cluster_ids],
    )


def harness_for(fmt: str, tools: list[ToolSchema]) -> Literal["replay", "shell", "chat"]:
    """shell for bash-action agents; replay when the agent had tools (its own or its format's); else chat."""
    if fmt in SHELL_FORMATS:
        return "shell"
    return "replay" if tools else "chat"


def _draft(store: Store, cluster: dict[str, Any], failure: dict[str, Any], trace: RecordedTrace, cut: int,
           options: GenerateOptions, evals: EvalsFile, tools: dict[str, list[ToolSchema]]) -> Draft:
    own = declared_tools(trace.tools)
    if own is None and trace.format not in tools:
        tools[trace.format] = format_tools(store, trace.format)
    available = own if own is not None else tools[trace.format]
    harness = harness_for(trace.format, available)
    prompt = build_prompt(trace, cut, options.context, options.system_max_chars)
    fields = {
        # Unique in the store (rollouts and eval results name tasks by id), and stable when regenerated.
        "task_id": "t-" + hashlib.sha256(f"{options.name}\x1f{trace.trace_id}\x1f{cut}".encode()).hexdigest()[:12],
        "harness": harness,
        "prompt": prompt,
        "tools": available,
        "replay": [RecordedCall(message_idx=c.message_idx, call_id=c.call_id, name=c.name, arguments=c.arguments,
                                result=c.result, is_error=c.is_error) for c in trace.calls],
        "scorer": ScorerBinding(evals=bind_evals(evals, options.eval_names, trace, harness)),
        "metadata": trace.metadata,
    }
    return Draft(cluster, failure, trace, cut, fields, duplicate_key(prompt, harness, trace.metadata))


def bind_evals(evals: EvalsFile, names: list[tuple[str, float]], trace: RecordedTrace, harness: str) -> list[EvalRef]:
    """The evals that score a task from `trace`: those named (that apply), else every eval whose applies_to matches."""
    specs = [(evals.get(n), w) for n, w in names] or [(e, e.weight) for e in evals.config.evals
                                                      if e.applies_to and e.applies_to.by_default]
    bound = [EvalRef(name=e.name, weight=w) for e, w in specs if _applies(e, trace.format, harness, bool(names))]
    if not bound:
        raise ConfigError(
            f"No eval in {evals.path} applies to trace {trace.trace_id} (format {trace.format}, harness {harness}). "
            "Fix: add an eval whose applies_to names that format or harness, or pass --eval NAME.")
    return bound


def _applies(spec: Any, fmt: str, harness: str, named: bool) -> bool:
    scope = spec.applies_to
    if scope is None:
        return named
    return (scope.formats is None or fmt in scope.formats) and (scope.harnesses is None or harness in scope.harnesses)


def _merge(drafts: list[Draft], near_duplicates: bool) -> list[Draft]:
    """Near-duplicates (same key) collapse into the first, which records the others; without `near_duplicates`,
    only the drafts of one cut of one trace (one task id) do.

    The same cut of the same trace reached from another cluster is recorded
    too, so every chosen cluster stays traceable to the tasks that cover it.
    """
    first: dict[str, Draft] = {}
    for d in drafts:
        keep = first.setdefault(d.key if near_duplicates else d.spec_fields["task_id"], d)
        if keep is d:
            continue
        dup = Duplicate(trace_id=d.trace.trace_id, cluster_id=d.cluster["cluster_id"], cut_message_idx=d.cut)
        same = (keep.trace.trace_id, keep.cluster["cluster_id"], keep.cut) == (dup.trace_id, dup.cluster_id, d.cut)
        if not same and dup not in keep.duplicates:
            keep.duplicates.append(dup)
    return list(first.values())


def _cap(drafts: list[Draft], options: GenerateOptions) -> list[Draft]:
    if options.max_tasks_per_cluster is None:
        return drafts
    by_cluster: dict[str, list[int]] = {}
    for i, d in enumerate(drafts):
        by_cluster.setdefault(d.cluster["cluster_id"], []).append(i)
    keep: set[int] = set()
    for cid, idxs in by_cluster.items():
        rng = random.Random(f"{options.seed}\x1f{cid}")
        keep.update(idxs if len(idxs) <= options.max_tasks_per_cluster
                    else rng.sample(idxs, options.max_tasks_per_cluster))
    return [d for i, d in enumerate(drafts) if i in keep]


def _split_keys(d: Draft, split_by: SplitBy) -> list[str]:
    keys = [f"task:{d.trace.task_key()}"] + [f"trace:{x.trace_id}" for x in d.duplicates]
    keys.append(f"trace:{d.trace.trace_id}")
    if split_by == "cluster":
        keys.append(f"cluster:{d.cluster['cluster_id']}")
    return keys


def _spec(d: Draft, split: str) -> TaskSpec:
    return TaskSpec(
        split=split,
        provenance=Provenance(
            trace_id=d.trace.trace_id, format=d.trace.format, source_task=d.trace.task_key(),
            cluster_id=d.cluster["cluster_id"], detector=d.failure["detector"], signature=d.failure["signature"],
            evidence=d.failure["evidence"], failure_message_idx=d.failure["message_idx"], cut_message_idx=d.cut,
            recorded_turn=recorded_turn(d.trace, d.cut), duplicates=d.duplicates),
        **d.spec_fields,
    )



def create_task_set(store: StoreAccess, options: GenerateOptions, evals_path: Path, out: Path,
                    templates: Path | None = None, force: bool = False, gate: Gate | None = None) -> TaskSet:
    """Generate, gate (when given a gate), write the folder (every file checked to load back as its spec) and
    register it in the store. The store is open to read the drafts and to register the set, not while the gate
    plays its probes."""
    evals = load_evals(evals_path)
    with store.reading() as st:
        generated = generate(st, options, evals)
    if not generated.specs:
        raise NotFoundError(f"The chosen clusters gave no tasks ({generated.counts['failures']} failures, none with an "
                            "agent turn to cut at). Fix: choose other clusters.")
    if gate is not None:
        apply_gate(generated, gate)
    manifest = manifest_for(generated, sha256_file(evals_path))
    rejected = [(s, generated.gate_results[s.task_id]) for s in generated.rejected]
    write_task_set(out, generated.specs, manifest, evals_path, templates, force, rejected)
    if not generated.specs:
        raise NothingPassedError(_nothing_passed(generated, out))
    task_set = TaskSet(out, manifest, generated.specs)  # each file was checked to load back as these
    with store.writing() as st:
        register_task_set(st, task_set)
    return task_set


def apply_gate(generated: Generated, gate: Gate) -> None:
    """Set apart the tasks that fail a gate (with their gate results, for the rejected/ folder) and put each
    supplied reference into its task's spec; the counts say how many, per cluster and reason."""
    outcome = gate(generated.specs)
    rejected = outcome.rejected
    specs = [with_reference(s, outcome.supplied[s.task_id]) if s.task_id in outcome.supplied else s
             for s in generated.specs]
    generated.specs = [s for s in specs if s.task_id not in rejected]
    generated.rejected = [s for s in specs if s.task_id in rejected]
    results = outcome.results()
    generated.gate_results = {s.task_id: results[s.task_id] for s in generated.rejected}
    generated.gates = outcome.per_cluster()
    generated.references = outcome.references()
    generated.hackable = outcome.hackability()
    generated.gate_settings = gate.settings
    splits = [s.split for s in generated.specs]
    generated.counts.update(tasks=len(splits), train=splits.count("train"), heldout=splits.count("heldout"),
                            rejected_by_gates=len(rejected))


def _nothing_passed(generated: Generated, out: Path) -> str:
    searched = [(c, g) for c, g in (generated.gates or {}).items() if g.model_sampled]
    model = "".join(f" The reference model found no passing reply for {g.model_none_passed} of {g.model_sampled} "
                    f"tasks of cluster {c}." for c, g in searched)
    return (f"Every one of the {generated.counts['rejected_by_gates']} tasks failed a reward gate "
            f"({_reasons(generated)}), so no task was written; the rejected tasks and their probes are in "
            f"{out / REJECTED_DIR}: `tracegym tasks check {out} --rejected` shows why, per task.{model} Fix: "
            "where the failed conversations hold no good reply, supply one: --references FILE (a reply per "
            "trace_id, session_id or cluster_id) or --reference-model MODEL (samples replies and keeps one the "
            "evals pass); or fix the evals; or pass --no-gates to write every task unprobed.")


def _reasons(generated: Generated) -> str:
    total: dict[str, int] = {}
    for counts in (generated.gates or {}).values():
        for reason, n in counts.reasons.items():
            total[reason] = total.get(reason, 0) + n
    return ", ".join(f"{n} {reason}" for reason, n in sorted(total.items()))


def manifest_for(generated: Generated, evals_sha256: str) -> Manifest:
    per_cluster: dict[str | None, int] = {}
    merged: dict[str | None, int] = {}
    for spec in generated.specs:
        per_cluster[spec.provenance.cluster_id] = per_cluster.get(spec.provenance.cluster_id, 0) + 1
        for dup in spec.provenance.duplicates:
            merged[dup.cluster_id] = merged.get(dup.cluster_id, 0) + 1
    return Manifest(
        name=generated.options.name,
        seed=generated.options.seed,
        evals_sha256=evals_sha256,
        options=generated.options.model_dump(mode="json", exclude={"name", "seed"}),
        counts=generated.counts,
        clusters=[ClusterEntry(cluster_id=c["cluster_id"], rank=c["rank"], detector=c["detector"],
                               signature=c["signature"], tasks=per_cluster.get(c["cluster_id"], 0),
                               merged=merged.get(c["cluster_id"], 0),
                               gates=_cluster_gates(generated, c["cluster_id"]))
                  for c in generated.clusters],
        tasks=[TaskEntry(task_id=s.task_id, file=f"{TASKS_DIR}/{s.task_id}.yaml", split=s.split, harness=s.harness,
                         cluster_id=s.provenance.cluster_id, trace_id=s.provenance.trace_id,
                         hackable=generated.hackable.get(s.task_id), **_reference(generated, s.task_id))
               for s in generated.specs],
        gates=generated.gate_settings,
    )


def _reference(generated: Generated, task_id: str) -> dict[str, str | None]:
    source, trace_id = generated.references.get(task_id, (None, None))
    return {"reference": source, "reference_trace": trace_id}


def _cluster_gates(generated: Generated, cluster_id: str) -> GateCounts | None:
    if generated.gates is None:
        return None
    return generated.gates.get(cluster_id, GateCounts(checked=0, rejected=0))
