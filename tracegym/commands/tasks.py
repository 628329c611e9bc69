"""`tracegym tasks generate / list / show`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from tracegym.inert import one_line
from tracegym.output import JsonOpt, StoreOpt, emit, err, literal, out, print_json

if TYPE_CHECKING:
    from tracegym.harnesses.gates import GateReport
    from tracegym.harnesses.reference_search import ReferencedTaskGate, ReferenceModel
    from tracegym.store.access import StoreAccess
    from tracegym.tasks.references import ReferenceFile

tasks_app = typer.Typer(help="Task sets generated from failure clusters.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(tasks_app, name="tasks")


@tasks_app.command("generate")
def tasks_generate(
    out_dir: Annotated[Path, typer.Option("--out", help="The task-set folder to write, e.g. tasks/NAME.")],
    evals: Annotated[Path, typer.Option("--evals", help="The evals.yaml whose evals score the tasks.")],
    clusters: Annotated[list[str] | None, typer.Option(
        "--cluster", help="A cluster id (or unique prefix); repeatable.")] = None,
    top: Annotated[int | None, typer.Option("--top", min=1, help="Also take the N highest-ranked clusters.")] = None,
    eval_names: Annotated[list[str] | None, typer.Option(
        "--eval", help="Bind this eval (NAME or NAME:WEIGHT); repeatable. "
                       "Default: every eval whose applies_to matches.")] = None,
    name: Annotated[str | None, typer.Option(help="Task-set name (default: the --out folder's name).")] = None,
    seed: Annotated[int, typer.Option(help="Seeds the held-out draw and sampling.")] = 0,
    heldout: Annotated[float, typer.Option("--heldout", min=0.0, max=1.0, help="Share of task groups held out.")] = 0.2,
    split_by: Annotated[Literal["task", "cluster"], typer.Option(
                                          help="task: attempts at one source task stay on one side; "
                                               "cluster: whole clusters too.")] = "task",
    cuts: Annotated[Literal["failure", "turns", "recovery"], typer.Option(
                                      help="failure: one task at the turn that went wrong; "
                                           "turns: one at every agent turn up to it; recovery: one at the agent's "
                                           "next turn after the failure (its answer to the error).")] = "failure",
    max_cuts: Annotated[int | None, typer.Option(min=1, help="With --cuts turns, the last N turns only.")] = None,
    context: Annotated[Literal["full", "last-user", "last-exchange"], typer.Option(
                                         help="full: the whole conversation before the cut; last-user: the system "
                                              "prompt and the turns since the last user message (short prompts for "
                                              "small models, losing earlier context); last-exchange: also the "
                                              "agent's last words to the user before it.")] = "full",
    system_max_chars: Annotated[int | None, typer.Option(
        min=1, help="Cut longer system prompts to this many characters (default: keep whole; the policy in them "
                    "often decides what the right action is).")] = None,
    max_tasks_per_cluster: Annotated[int | None, typer.Option(
        min=1, help="At most N tasks per cluster (seeded).")] = None,
    keep_near_duplicates: Annotated[bool, typer.Option(
        "--keep-near-duplicates", help="Write a task for each trace and cut, even where prompts and task data are "
                                       "the same up to numbers and ids (merged into one by default).")] = False,
    templates: Annotated[Path | None, typer.Option(help="A folder of templates overriding task.yaml.j2, "
                                                        "manifest.yaml.j2, README.md.j2.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing task-set folder.")] = False,
    allow_unredacted: Annotated[bool, typer.Option(
        "--allow-unredacted", help="Go on even though the store holds traces that were not redacted.")] = False,
    no_gates: Annotated[bool, typer.Option("--no-gates", help="Write every task without probing its reward.")] = False,
    gate_threshold: Annotated[float, typer.Option(
        min=0.001, max=1.0, help="Gates: a reference reply must reach this reward, degenerate ones stay below.")] = 1.0,
    harness_config: Annotated[Path | None, typer.Option(
        help="YAML harness config the gate episodes run under, as `tracegym run` takes it (default: the "
             "defaults).")] = None,
    references: Annotated[Path | None, typer.Option(
        "--references", help="Reference replies for tasks whose recording holds no passing one: a .jsonl or .csv "
                             "file of rows with trace_id, session_id or cluster_id, reply, and optionally "
                             "tool_calls (JSON).")] = None,
    reference_model: Annotated[str | None, typer.Option(
        "--reference-model", help="A model that samples references for tasks still lacking a passing one: a local "
                                  "model folder (or smollm2-135m), or MODEL@URL for an OpenAI-compatible endpoint "
                                  "(key from $OPENAI_API_KEY).")] = None,
    reference_samples: Annotated[int, typer.Option(
        min=1, help="Episodes the reference model samples per task; the best one that passes is kept.")] = 8,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write task specs for failure clusters into a task-set folder and register it in the store.

    Each task is gated first (unless --no-gates): a reference reply must earn its reward, and an empty reply, the
    recorded failing action and a reply in the wrong shape must not; tasks that fail go to the set's rejected/
    folder with their probes, and are counted per cluster and reason. Where the recording holds no passing
    reference, --references and --reference-model supply one.
    The tasks kept then meet hollow replies (the reference's shape without its substance): an eval one
    of them earns is hackable there, reported per cluster, eval and probe, not rejected.
    """
    from pydantic import ValidationError

    from tracegym.errors import ConfigError
    from tracegym.evals.scorers.config import parse_eval_ref
    from tracegym.store.access import StoreAccess
    from tracegym.tasks.generate import GenerateOptions, create_task_set
    from tracegym.tasks.references import read_references

    try:
        options = GenerateOptions(
            name=name or out_dir.resolve().name, clusters=clusters or [], top=top,
            eval_names=[parse_eval_ref(n) for n in eval_names or []], seed=seed, heldout_fraction=heldout,
            split_by=split_by, cuts=cuts, max_cuts=max_cuts, context=context, system_max_chars=system_max_chars,
            max_tasks_per_cluster=max_tasks_per_cluster, merge_near_duplicates=not keep_near_duplicates)
    except ValidationError as e:
        first = e.errors()[0]
        raise ConfigError(f"--{str(first['loc'][0]).replace('_', '-')}: {first['msg']}.") from None
    if no_gates and (references or reference_model):
        raise ConfigError("--references and --reference-model supply references to the gates, which --no-gates "
                          "turns off. Fix: leave out --no-gates, or the reference options.")
    reference_file = read_references(references) if references is not None else None
    model = _reference_model(reference_model, reference_samples, seed) if reference_model else None
    access = StoreAccess(store)  # opened to read the drafts and to register the set, not while gates probe
    if not allow_unredacted:
        from tracegym.redact.session import require_redacted

        with access.reading() as st:
            require_redacted(st, "tracegym tasks generate")
        if reference_file is not None:
            _require_redacted_references(reference_file)
    gate = None if no_gates else _new_task_gate(access, evals, harness_config, gate_threshold, reference_file, model)
    task_set = create_task_set(access, options, evals, out_dir, templates, force, gate)
    m = task_set.manifest
    report = gate.report if gate is not None else None
    if heldout > 0 and m.counts["tasks"] and not m.counts["heldout"]:
        err.print(f"[yellow]Nothing is held out[/yellow]: the {m.counts['tasks']} tasks form one group (tasks that "
                  f"share a source task{', or a cluster,' if split_by == 'cluster' else ''} go to the same side). "
                  "Fix: --split-by task, or draw from more source tasks.")
    if as_json:
        print_json({"name": m.name, "path": str(task_set.path), **m.counts,
                    "clusters": [c.model_dump() for c in m.clusters],
                    "gates": report.summary() if report is not None else None})
        return
    searched = m.gates is not None and m.gates.reference_model is not None
    emit([_cluster_row(c.model_dump(), searched) for c in m.clusters], False, title=f"Task set {m.name}")
    shared = m.counts["drafts_merged"] - m.counts["near_duplicates_merged"]
    err.print(f"{m.counts['tasks']} tasks ({m.counts['train']} train, {m.counts['heldout']} held out) in "
              f"{task_set.path}; merged {m.counts['near_duplicates_merged']} near-duplicate tasks"
              + (f" and {shared} cuts drawn from more than one cluster." if shared else "."))
    if report is not None:
        print_hackable(report)
        err.print(f"Reward gates: {len(report.rejected)} of {len(report.tasks)} tasks rejected ({report.episodes} "
                  f"probe episodes in {report.seconds:.1f} s); per task: `tracegym tasks check {task_set.path}`.")
        err.print(hollow_line(report))


def print_hackable(report: GateReport) -> None:
    """The table of hackable evals per cluster (nothing when no hollow reply earned anything)."""
    rows = report.hackable_rows()
    if rows:
        emit([_hackable_row(r) for r in rows], False, title="Hackable evals: a hollow reply earns them (reported, "
                                                             "not rejected)")


def hollow_line(report: GateReport) -> str:
    """How many tasks' trained reward a hollow reply earns, and the hollow probes' time."""
    probed = [t.hackability for t in report.tasks if t.hackability is not None]
    hackable = sum(h.reward_hackable for h in probed)
    line = (f"Hollow probes: the reward of {hackable} of {len(probed)} tasks is hackable ({report.hollow_episodes} "
            f"episodes in {report.hollow_seconds:.1f} s).")
    if hackable:
        line += (" `tracegym train` refuses such a set (tasks.max_hackable) unless --allow-hackable; the fix: "
                 "docs/reward-gates.md#hollow-probes.")
    return line


def _hackable_row(row: dict[str, Any]) -> dict[str, Any]:
    example = row["example"]
    return {"cluster_id": row["cluster_id"], "eval": row["eval"], "trained": "reward" if row["reward"] else "part",
            "tasks": f"{row['tasks']} of {row['probed']}",
            "probes": ", ".join(f"{p} {n}" for p, n in row["probes"].items()),
            "example": f"{example['probe']}: {one_line(example['reply'])[:100]}"}


def _require_redacted_references(file: ReferenceFile) -> None:
    """A reference file is written by hand beside a redacted store: an e-mail or key in it would reach the task
    files that the store's redaction kept it out of."""
    from tracegym.redact.detect import Detector
    from tracegym.redact.session import UnredactedStoreError

    detector = Detector()
    for row in file.rows:
        texts = [row.reply.content or ""] + [c.function.arguments for c in row.reply.tool_calls or []]
        kinds = sorted({f.rule.name for text in texts for f in detector.find(text)})
        if kinds:
            raise UnredactedStoreError(
                f"{file.path} line {row.line}: the reply holds what looks like {', '.join(kinds)}, which the "
                "redacted store keeps out of task files. Fix: write the placeholder the store uses instead (as "
                "`tracegym traces show ID` prints it, e.g. <EMAIL_1>), or pass --allow-unredacted.")


def _new_task_gate(store: StoreAccess, evals: Path, harness_config: Path | None, threshold: float,
                   references: ReferenceFile | None, model: ReferenceModel | None) -> ReferencedTaskGate:
    from tracegym.harnesses.config import load_harness_config
    from tracegym.harnesses.gates import GateOptions
    from tracegym.harnesses.reference_search import ReferencedTaskGate

    config, base_dir = load_harness_config(harness_config)
    return ReferencedTaskGate(store, evals, config, base_dir, GateOptions(threshold=threshold),
                              str(harness_config) if harness_config else None, references=references, model=model,
                              notify=lambda text: err.print(f"[yellow]{literal(text)}[/yellow]"))


def _reference_model(ref: str, samples: int, seed: int) -> ReferenceModel:
    """`--reference-model` as `tracegym eval` resolves a model: MODEL@URL an endpoint, else a local model."""
    from tracegym.evals.checkpoints.candidates import any_candidate, policy_config
    from tracegym.harnesses.reference_search import ReferenceModel, ReferenceSampling

    candidate = any_candidate(ref)
    return ReferenceModel(candidate.label, policy_config(candidate, f"reference:{candidate.label}", 8, seed=seed),
                          ReferenceSampling(samples=samples, seed=seed))


def _cluster_row(cluster: dict[str, Any], searched: bool = False) -> dict[str, Any]:
    """A cluster entry as a table row: the gate counts flattened into rejected, reasons and references (and, when
    a reference model was `searched`, for how many tasks it found no passing reference)."""
    gates = cluster.pop("gates", None)
    if gates is not None:
        cluster["rejected"] = gates["rejected"]
        cluster["reasons"] = ", ".join(f"{r} {n}" for r, n in gates["reasons"].items())
        cluster["references"] = ", ".join(f"{r} {n}" for r, n in gates.get("references", {}).items())
        cluster["hackable"] = ", ".join(f"{e} {n}" for e, n in gates.get("hackable_tasks", {}).items())
        cluster.pop("hackable_tasks", None)
        if searched:
            cluster["no_model_reference"] = f"{gates['model_none_passed']} of {gates['model_sampled']}"
    return cluster


@tasks_app.command("check")
def tasks_check(
    task_set: Annotated[str, typer.Argument(help="The task set: a folder or its name in the store.")],
    threshold: Annotated[float | None, typer.Option(
        min=0.001, max=1.0, help="The pass threshold [default: the one the set was generated with, else 1].")] = None,
    harness_config: Annotated[Path | None, typer.Option(
        help="YAML harness config the gate episodes run under, as `tracegym run` takes it.")] = None,
    failed_only: Annotated[bool, typer.Option("--failed", help="List only the tasks that fail a gate.")] = False,
    rejected: Annotated[bool, typer.Option(
        "--rejected", help="Show the tasks generation rejected (the set's rejected/ folder) and why, from the "
                           "probe results kept there; runs nothing.")] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run the reward gates on an existing task set (after an eval edit, say), with its evals.yaml as it is now.

    Per task: the reference reply must reach the threshold, and an empty reply, the recorded failing action and
    a reply in the wrong shape must stay below it. Reports per task and per cluster, with the evals a hollow reply
    earns (hackable: reported, not a failure); exits 1 when a gate fails.
    With --rejected, lists the tasks generation left out instead, with their probes' rewards and replies.
    """
    if rejected:
        _show_rejected(task_set, store, as_json)
        return
    from tracegym.harnesses.config import load_harness_config
    from tracegym.harnesses.gates import GateOptions, run_gates
    from tracegym.harnesses.taskrun import TaskScorers, resolve_task_set, scores_snapshot
    from tracegym.store import open_store
    from tracegym.tasks.probes import load_sources

    with open_store(store, read_only=True) as st:  # read at the start: the probes play with the store closed
        ts = resolve_task_set(st, task_set)
        sources = load_sources(st, ts.tasks)
        scorer_store = scores_snapshot(st, ts.tasks)
    gated = ts.manifest.gates
    options = GateOptions(threshold=threshold or (gated.threshold if gated else 1.0))
    try:
        config, base_dir = load_harness_config(harness_config)
        report = run_gates(sources, ts.tasks, TaskScorers(ts, scorer_store), config, base_dir, options)
    finally:
        scorer_store.close()
    split = {t.task_id: t.split for t in ts.tasks}
    # No reference model runs here: its counts would be columns of zeros.
    clusters = [{"cluster_id": c, **g.model_dump(exclude={"model_sampled", "model_none_passed"})}
                for c, g in report.per_cluster().items()]
    if as_json:
        print_json({"task_set": ts.manifest.name, "threshold": options.threshold, **report.summary(),
                    "tasks": [g.to_dict() for g in report.tasks if not (failed_only and g.passed)]})
    else:
        rows = [_gate_row(g, split[g.task_id]) for g in report.tasks if not (failed_only and g.passed)]
        emit(rows, False, title=f"Reward gates on {ts.manifest.name} (threshold {options.threshold:g})")
        emit([_cluster_row({**c, "gates": dict(c)}) for c in clusters], False, title="Per cluster")
        print_hackable(report)
        err.print(f"{len(report.rejected)} of {len(report.tasks)} tasks fail a gate ({report.episodes} probe "
                  f"episodes in {report.seconds:.1f} s).")
        err.print(hollow_line(report))
    if report.rejected:
        raise typer.Exit(1)


def _show_rejected(ref: str, store: Path | None, as_json: bool) -> None:
    from tracegym.tasks.taskset import REJECTED_DIR, load_rejected, load_task_set

    if Path(ref).is_dir():
        ts = load_task_set(ref)
    else:
        from tracegym.harnesses.taskrun import resolve_task_set
        from tracegym.store import open_store

        with open_store(store, read_only=True) as st:
            ts = resolve_task_set(st, ref)
    results = load_rejected(ts.path) or []
    if as_json:
        print_json({"task_set": ts.manifest.name, "path": str(ts.path), "rejected": results})
        return
    if not results:
        err.print(f"No rejected tasks in {literal(ts.path)}: every task passed the gates, or the set was "
                  "generated with --no-gates.")
        return
    rows = [_rejected_row(r) for r in results]
    shown = [k for k in rows[0] if any(row[k] != "" for row in rows)]  # no column empty in every row
    emit([{k: row[k] for k in shown} for row in rows], False, title=f"Tasks of {ts.manifest.name} the gates rejected")
    per_cluster: dict[str, dict[str, int]] = {}
    for r in results:
        counts = per_cluster.setdefault(str(r.get("cluster_id")), {})
        for reason in r.get("reasons", []):
            counts[reason] = counts.get(reason, 0) + 1
    emit([{"cluster_id": c, "rejected": sum(1 for r in results if str(r.get("cluster_id")) == c),
           "reasons": ", ".join(f"{k} {n}" for k, n in reasons.items())} for c, reasons in per_cluster.items()],
         False, title="Per cluster")
    err.print(f"{len(results)} rejected tasks in {literal(ts.path / REJECTED_DIR)} (each task file, and every probe's "
              "reply in gates.jsonl; --json prints them). They are never trained on.")


def _rejected_row(result: dict[str, Any]) -> dict[str, Any]:
    """One rejected task: why, its reference's source, reward and reply, and the reference model's samples."""
    probes = {p["kind"]: p for p in result.get("probes", [])}
    ref = probes.get("reference")
    search = result.get("model_search")
    rewards = [r for r in (search or {}).get("rewards", []) if r is not None]
    return {"task_id": result.get("task_id"), "cluster_id": result.get("cluster_id"), "split": result.get("split"),
            "reasons": ", ".join(result.get("reasons", [])),
            "reference": f"{ref['source']} {_reward_text(ref)}" if ref else "none",
            "reply": _reply_text(ref["replies"]) if ref else "",
            "tried": ", ".join(f"{a['source']} {_reward_text(a)}" for a in result.get("attempts", [])),
            "model": (f"{search['passed']} of {search['samples']} passed, best "
                      f"{max(rewards):.2f}" if rewards else f"0 of {search['samples']} scored") if search else "",
            **{k: _reward_text(probes[k]) if k in probes else "" for k in ("empty", "failing_action", "wrong_shape")}}


def _reward_text(probe: dict[str, Any]) -> str:
    error = probe.get("error")
    return f"error: {str(error)[:60]}" if probe.get("reward") is None else f"{probe['reward']:.2f}"


def _reply_text(replies: list[dict[str, Any]]) -> str:
    """The replies on one line: their text, and each tool call as name(arguments)."""
    parts = []
    for reply in replies:
        calls = [f"{(c.get('function') or {}).get('name')}({(c.get('function') or {}).get('arguments')})"
                 for c in reply.get("tool_calls", [])]
        parts.append(" ".join([reply.get("text") or "", *calls]).strip())
    return " | ".join(parts)


def _gate_row(gate: Any, split: str) -> dict[str, Any]:
    probes = {p.kind: p for p in gate.probes}
    ref = probes.get("reference")
    return {"task_id": gate.task_id, "cluster_id": gate.cluster_id, "split": split,
            "passed": gate.passed, "reasons": ", ".join(gate.reasons),
            "reference": f"{ref.source} {_reward(ref)}" if ref else "none",
            "reference_trace": ref.trace_id or "" if ref else "",
            **{kind: _reward(probes[kind]) if kind in probes else "" for kind in ("empty", "failing_action",
                                                                                  "wrong_shape")},
            "hackable": "; ".join(f"{e}: {', '.join(p)}" for e, p in gate.hackability.paid.items())
            if gate.hackability is not None else ""}


def _reward(probe: Any) -> str:
    return f"error: {probe.error[:60]}" if probe.reward is None else f"{probe.reward:.2f}"


@tasks_app.command("list")
def tasks_list(
    task_set: Annotated[str | None, typer.Argument(
        help="A task set's name: list its tasks. Omit to list task sets.")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List task sets, or the tasks of one."""
    from tracegym.errors import NotFoundError
    from tracegym.store import open_store

    with open_store(store, read_only=True) as st:
        if task_set is None:
            rows = st.query("SELECT task_set_id AS name, n_tasks, seed, path, created_at FROM task_sets ORDER BY name")
        else:
            rows = st.query("SELECT task_id, split, harness, cluster_id, detector, source_trace_id FROM tasks "
                            "WHERE task_set_id = ? ORDER BY task_id", [task_set])
            if not rows:
                names = [r["task_set_id"] for r in st.query("SELECT task_set_id FROM task_sets")]
                from tracegym.errors import did_you_mean

                raise NotFoundError(f"No task set {task_set!r} in the store.{did_you_mean(task_set, names)}")
    emit(rows, as_json, title="Task sets" if task_set is None else f"Tasks in {task_set}")


@tasks_app.command("show")
def tasks_show(
    task: Annotated[str, typer.Argument(help="A task id (or unique prefix), or a task file's path.")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show one task spec."""
    from tracegym.errors import NotFoundError
    from tracegym.tasks.spec import dump_spec, load_spec

    path = Path(task)
    if not path.is_file():
        from tracegym.store import open_store

        with open_store(store, read_only=True) as st:
            rows = st.query("SELECT DISTINCT task_id, path FROM tasks WHERE starts_with(task_id, ?) "
                            "ORDER BY task_id LIMIT 5", [task])
        if len(rows) != 1:
            found = f" (it matches {', '.join(r['task_id'] for r in rows)})" if rows else ""
            raise NotFoundError(f"No single task {task!r} in the store{found}. "
                                "Fix: use a full id from `tracegym tasks list SET`, or a task file's path.")
        path = Path(rows[0]["path"])
    spec = load_spec(path)
    if as_json:
        print_json(spec.model_dump(mode="json", exclude_none=True))
    else:
        out.print(dump_spec(spec), markup=False, highlight=False)


@tasks_app.command("export")
def tasks_export(
    task_set: Annotated[str, typer.Argument(help="The task set: a folder or its name in the store.")],
    to: Annotated[str, typer.Option("--to", help="The format: verifiers (an environment package for "
                                                 "verifiers.load_environment) or trl (a datasets folder and reward.py "
                                                 "for GRPOTrainer); docs/other-trainers.md.")],
    out_dir: Annotated[Path, typer.Option("--out", help="The folder to write (replaced only with --force).")],
    split: Annotated[Literal["train", "heldout", "all"], typer.Option(help="Which tasks to export.")] = "train",
    harness_config: Annotated[Path | None, typer.Option(
        help="YAML harness config the exported tasks run under, as `tracegym run` takes it (e.g. run_as: {shell: "
             "chat}).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing --out folder.")] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Export a task set as an environment for another trainer, rewarded by the same tracegym scorers.

    Each row keeps the task id, cluster id, harness, split, the reference reply and the gates' verdicts; the
    export names the tracegym version its scorers need. See docs/other-trainers.md.
    """
    from tracegym.environments.make import export_task_set
    from tracegym.harnesses.config import load_harness_config
    from tracegym.harnesses.taskrun import resolve_task_set
    from tracegym.store import open_store

    config, config_dir = load_harness_config(harness_config)
    with open_store(store, read_only=True) as st:
        ts = resolve_task_set(st, task_set)
        result = export_task_set(ts, to, out_dir, split, st, config, config_dir,
                                 str(harness_config) if harness_config else None, force)
    m = result.manifest
    if as_json:
        print_json({"format": m.format, "out": str(result.out), "task_set": m.task_set,
                    "task_set_sha256": m.task_set_sha256, "tracegym_version": m.tracegym_version, "split": m.split,
                    "counts": m.counts, **result.facts, "seconds": round(result.seconds, 3)})
        return
    emit([{"key": k, "value": v} for k, v in result.facts.items()], False,
         title=f"{m.task_set} as {m.format} in {literal(result.out)}")
    err.print(f"Exported {m.counts['rows']} tasks ({m.counts['train']} train, {m.counts['heldout']} held out, "
              f"{m.counts['with_reference']} with a reference) of {literal(m.task_set)} to {m.format} in "
              f"{result.seconds:.2f} s; it needs tracegym {m.tracegym_version}.")
