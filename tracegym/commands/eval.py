"""`tracegym eval CHECKPOINT... --tasks SET`: did a checkpoint get better, per failure cluster, beyond noise?"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from tracegym.models.precision import PrecisionChoice, resolve_precision
from tracegym.output import JsonOpt, StoreOpt, err, literal, out, print_json, progress

ResultFormatChoice = Literal["verifiers", "trl"]

if TYPE_CHECKING:
    from tracegym.evals.checkpoints.comparison import Scores
    from tracegym.evals.checkpoints.evaluate import EvalOptions, EvalPlan, Evaluation
    from tracegym.evals.checkpoints.imported import Imported
    from tracegym.store import Store
    from tracegym.store.access import StoreAccess


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)


def eval_command(
    checkpoints: Annotated[list[str] | None, typer.Argument(
        help="Models to compare with the base: run folders (their latest checkpoint), checkpoint folders, "
             "Hugging Face model folders.")] = None,
    tasks: Annotated[str, typer.Option("--tasks", help="The task set: a folder or its name in the store.")] = ...,
    base: Annotated[str | None, typer.Option(
        help="The base model [default: the model the checkpoints' run started from, else smollm2-135m]; "
             "MODEL@URL for an endpoint.")] = None,
    api: Annotated[list[str] | None, typer.Option(
        "--api", help="An OpenAI-compatible endpoint as a baseline: MODEL@BASE_URL (key from $OPENAI_API_KEY); "
                      "repeatable.")] = None,
    split: Annotated[Literal["heldout", "train"], typer.Option(help="Which tasks to evaluate on.")] = "heldout",
    samples: Annotated[int | None, typer.Option("--samples", "-k", min=1, help=(
        "Episodes per task and model [default: 4; with --from-results, the fewest samples the file holds for a "
        "task]."))] = None,
    seed: Annotated[int, typer.Option(help="Episode seeds derive from it, the same for every model.")] = 0,
    config: Annotated[Path | None, typer.Option(
        help="A train config whose prompt, harness, sampler and task filters to evaluate with [default: the "
             "checkpoints' run config, else the trainer's defaults].")] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Episodes in flight at once.")] = 16,
    pass_threshold: Annotated[float, typer.Option(min=0.0, max=1.0, help="A sample passes at this reward.")] = 1.0,
    precision: Annotated[PrecisionChoice, typer.Option(
        help="Local models' precision; auto is bf16 where the device computes it natively, else fp32.")] = "fp32",
    device: Annotated[str, typer.Option(help="torch device of local models.")] = "cpu",
    score_version: Annotated[str | None, typer.Option(
        help="Compare on this score version of `tracegym rescore` (N, or latest): each sample's latest score up "
             "to it [default: the scores stored with the samples].")] = None,
    component: Annotated[str | None, typer.Option(
        help="Also show this reward component (a part of a weighted eval, say) per cluster.")] = None,
    from_results: Annotated[Path | None, typer.Option(
        "--from-results", help="A results JSONL of a model trained elsewhere (on an exported task set): imported "
                               "as its rollouts and compared with the base per cluster.")] = None,
    results_format: Annotated[ResultFormatChoice, typer.Option(
        "--format", help="The --from-results file's format: verifiers (vf-eval's results.jsonl) or trl (prompt, "
                         "completion, reward and task_id per line).")] = "verifiers",
    model_name: Annotated[str | None, typer.Option(
        "--model-name", help="The --from-results model's name in tables [default: the file's name].")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Evaluate the base model and each checkpoint on held-out tasks; compare them overall and per cluster.

    Mean reward, the share of hollow replies, pass@1 and pass@k with 95% bootstrap intervals over tasks; each change
    against the base with a paired permutation test (beyond noise at p < 0.05); tasks the base passed and a
    checkpoint fails.
    Every sample goes to the store (eval_results; the episode in rollouts with run_id = the eval id). An
    evaluation that stopped resumes where it stopped: samples already stored are not run again. With
    --from-results, a model trained by another trainer joins the comparison through its scored results (see
    `tracegym rollouts import`); only the base (and any checkpoints) run here.
    """
    from tracegym.evals.checkpoints.evaluate import EvalOptions, plan_evaluation
    from tracegym.store.access import StoreAccess

    # Resolved here: the precision is part of the settings an evaluation's id is hashed from.
    options = EvalOptions(split=split, samples=samples or 4, seed=seed, concurrency=concurrency,
                          pass_threshold=pass_threshold, precision=resolve_precision(precision, device),
                          device=device)
    access = StoreAccess(store)
    with access.writing() as st:  # read at the start; the samples are written in batches, not held across them
        plan = plan_evaluation(st, tasks, checkpoints or [], base, api or [], config, options)
        imported = None
        if from_results is not None:
            imported = _import(st, plan, from_results, results_format, model_name)
            options.samples = _imported_samples(imported, plan, samples)
        scores = _scores(st, score_version, component, options.pass_threshold)
    err.print(f"Evaluating {len(plan.candidates)} models on {len(plan.tasks)} {split} tasks of "
              f"{plan.task_set.manifest.name} x {samples} samples (settings: {plan.config_source}"
              f"{f'; {plan.why_fewer()}' if plan.why_fewer() else ''}).")
    say_unchanged(plan)
    table = evaluate_and_compare(access, plan, options, scores, imported)
    if as_json:
        print_json(table)
        return
    print_comparison(table)
    err.print(f"Every sample: tracegym sql \"SELECT * FROM eval_results WHERE eval_id = '{table['eval_id']}'\"")


def _import(st: Store, plan: EvalPlan, path: Path, fmt: ResultFormatChoice, name: str | None) -> Imported:
    from tracegym.evals.checkpoints.imported import import_results

    imported = import_results(st, plan.task_set, path, fmt, name or path.name)
    stored = "already in the store" if imported.already else "imported"
    err.print(f"{literal(imported.model)}: {len(imported.episodes)} samples of {literal(path)} {stored} as run "
              f"{imported.run_id}{f'; {len(imported.bad)} lines left out' if imported.bad else ''}.")
    return imported


def _imported_samples(imported: Imported, plan: EvalPlan, asked: int | None) -> int:
    """Samples per task: `asked`, else the fewest the import holds for a task of the plan that it covers at all."""
    from tracegym.errors import ConfigError

    counts = {t.task_id: sum(1 for e in imported.episodes if e.task_id == t.task_id) for t in plan.tasks}
    held = [n for n in counts.values() if n]
    if not held:
        raise ConfigError(f"{imported.path} holds no sample of the {len(plan.tasks)} tasks evaluated. Fix: export "
                          "and evaluate the same split (`--split train` for results on training tasks).")
    if asked is not None and asked > max(held):
        raise ConfigError(f"--samples {asked}: {imported.path} holds at most {max(held)} samples of a task. Fix: "
                          f"--samples {min(held)} (the fewest it holds for a task), or import more results.")
    return asked or min(held)


def say_unchanged(plan: EvalPlan) -> None:
    """Name the checkpoints left out for having the base model's weights."""
    if plan.unchanged:
        names = ", ".join(literal(label) for label in plan.unchanged)
        err.print(f"[yellow]{names}: the base model's weights, unchanged by training (no GRPO step trained: every "
                  "group's rewards were equal; see `tracegym runs show`), so left out of the comparison.[/yellow]")


def _warn_small_groups(table: dict[str, Any]) -> None:
    """Name the split or clusters too small for any change on them to be told from noise."""
    from tracegym.evals.checkpoints.stats import fewest_tasks_for_a_verdict

    fewest = fewest_tasks_for_a_verdict()
    small = [g for g in table["groups"] if g["tasks"] < fewest]
    if not small:
        return
    names = ", ".join(f"{'the whole split' if g['cluster_id'] is None else literal(g['cluster_id'])} ({g['tasks']})"
                      for g in small)
    err.print(f"[yellow]Too few tasks to tell any change from noise: {names}. A paired test over n tasks cannot "
              f"go below p = 2/2^n, so a verdict needs at least {fewest} tasks; with fewer, read the intervals as "
              "descriptive. Fix: more traces of those failures, or a larger --heldout when generating.[/yellow]")


def _scores(st: Store, version: str | None, component: str | None, threshold: float) -> Scores:
    from tracegym.errors import ConfigError, NotFoundError
    from tracegym.evals.checkpoints.comparison import Scores

    if version is None:
        return Scores(component=component)
    latest = st.scalar("SELECT max(version) FROM score_versions")
    if version == "latest":
        if latest is None:
            raise NotFoundError("--score-version latest: nothing was rescored yet. Fix: run `tracegym rescore`.")
        return Scores(int(latest), threshold, component)
    if not version.isdigit():
        raise ConfigError(f"--score-version {version!r}: give a version number or latest.")
    if int(version) > (latest or 0):
        raise NotFoundError(f"--score-version {version}: the store has versions 0 to {latest or 0}.")
    return Scores(int(version), threshold, component)


def evaluate_and_compare(store: StoreAccess, plan: EvalPlan, options: EvalOptions, scores: Scores | None = None,
                         imported: Imported | None = None) -> dict[str, Any]:
    """Run the plan (with a progress bar), then the comparison of its models (and an imported one) against its base
    (on `scores`), with counts; names on stderr the groups too small for a verdict."""
    from tracegym.evals.checkpoints.comparison import ModelRef, Scores, compare
    from tracegym.evals.checkpoints.imported import add_to_evaluation

    result = _run(store, plan, options)
    refs = [ModelRef(c.label, c.checkpoint_id, c.run_id, c.step) for c in result.candidates]
    with store.writing() if imported is not None else store.reading() as st:  # the import's results are written
        if imported is not None:
            refs.append(add_to_evaluation(st, result.eval_id, imported, refs[0], result.tasks, options.samples,
                                          options.pass_threshold))
        table = compare(st, result.eval_id, refs[0], refs[1:], options.samples, [t.task_id for t in result.tasks],
                        options.seed, scores or Scores())
    table["counts"] = {label: c.__dict__ for label, c in result.counts.items()}
    _warn_small_groups(table)
    return table


def _run(store: StoreAccess, plan: EvalPlan, options: EvalOptions) -> Evaluation:
    from tracegym.evals.checkpoints.evaluate import evaluate

    with progress("samples", total=len(plan.tasks) * options.samples * len(plan.candidates)) as bar:
        def on_model(candidate: Any, counts: Any) -> None:
            bar.advance(counts.reused, description=f"eval {candidate.label}")
            err.print(f"{literal(candidate.label)}: {counts.reused} of {counts.total} samples already in the store, "
                      f"{counts.total - counts.reused} to run")

        return evaluate(store, plan.task_set, plan.tasks, plan.candidates, plan.config, options,
                        on_sample=lambda c, e: bar.advance(), on_model=on_model)


def fmt_cell(cell: dict[str, float], change: dict[str, Any] | None) -> str:
    """'0.412', '[0.31, 0.52]' and, against the base, '+0.120 ▲ p=0.01', one under the other."""
    text = f"{cell['value']:.3f}\n[{cell['low']:.2f}, {cell['high']:.2f}]"
    if change is None:
        return text
    mark = ("▲" if change["diff"] > 0 else "▼") if change["beyond_noise"] else "≈"
    return f"{text}\n{change['diff']:+.3f} {mark} p={change['p_value']:.2g}"


def group_title(group: dict[str, Any]) -> str:
    if group["cluster_id"] is None:
        return "overall"
    detail = f" {group['detector']}, rank {group['rank']}" if group.get("detector") else ""
    return f"cluster {group['cluster_id']}{detail}"


def print_comparison(table: dict[str, Any]) -> None:
    from rich.table import Table

    k = table["samples"]
    component = table.get("component")
    version = f" (score version {table['score_version']})" if table.get("score_version") is not None else ""
    view = Table(title=f"{literal(table['eval_id'])}{version}: {table['tasks']} tasks x {k} samples against "
                       f"{literal(table['base'])}",
                 caption="mean [95% interval] over tasks; below: change against the base, ▲▼ beyond noise "
                         "(paired permutation test, p < 0.05), ≈ within it; hollow: share of samples a hollow-reply "
                         "detector flags")
    for col in ("model", "tasks", "reward", "hollow", "pass@1", f"pass@{k}",
                *([literal(component)] if component else [])):
        view.add_column(col, overflow="fold")
    for group in table["groups"]:
        view.add_row(f"[bold]{literal(group_title(group))}[/bold]", str(group["tasks"]), "", "", "", "",
                     *([""] if component else []))
        for i, row in enumerate(group["rows"]):
            change = row["change"] or {}
            errors = f" ({row['errors']} unscored)" if row["errors"] else ""
            extra = [fmt_cell(row["component"], row["component"].get("change"))] if component else []
            view.add_row(f"  {literal(row['model'])}{errors}", "", fmt_cell(row["reward"], change.get("reward")),
                         fmt_cell(row["hollow"], change.get("hollow")), fmt_cell(row["pass@1"], change.get("pass@1")),
                         fmt_cell(row["pass@k"], change.get("pass@k")), *extra,
                         end_section=i == len(group["rows"]) - 1)
    out.print(view)
    for group in table["groups"][1:]:
        if group.get("signature"):
            out.print(f"[dim]{literal(group['cluster_id'])}: {literal(group['signature'][:160])}[/dim]",
                      highlight=False)
    _print_regressions(table)


def _print_regressions(table: dict[str, Any]) -> None:
    regressions = table["regressions"]
    if regressions:
        out.print(f"[bold red]{len(regressions)} regressions[/bold red] (the base passed, the model fails):")
        for r in regressions:
            out.print(f"  {literal(r['model'])}: {literal(r['task_id'])} (cluster {literal(r['cluster_id'])}): "
                      f"pass rate {r['base_pass_rate']:.2f} -> {r['pass_rate']:.2f}")
    else:
        out.print("No regressions: no task the base passed is failed by a compared model.")
    for label, n in table["fixed"].items():
        out.print(f"{literal(label)}: {n} task{'' if n == 1 else 's'} the base failed now "
                  f"pass{'es' if n == 1 else ''}.")
