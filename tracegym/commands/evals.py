"""`tracegym evals check` and `tracegym evals list`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from tracegym.output import JsonOpt, StoreOpt, emit, err, literal, out, print_json, progress

evals_app = typer.Typer(help="Eval definitions (evals.yaml) and their scorers.", no_args_is_help=True)

EvalsOpt = Annotated[Path, typer.Option("--evals", help="The evals.yaml declaring your evals.")]


def register(app: typer.Typer) -> None:
    app.add_typer(evals_app, name="evals")


@evals_app.command("list")
def evals_list(evals: EvalsOpt = Path("evals.yaml"), as_json: JsonOpt = False) -> None:
    """Validate an evals.yaml and list its evals."""
    from tracegym.evals.scorers.config import load_evals

    loaded = load_evals(evals)
    rows = [{"name": e.name, "kind": e.kind, "weight": e.weight, "line": loaded.lines[e.name],
             "description": e.description} for e in loaded.config.evals]
    emit(rows, as_json, title=str(evals))


@evals_app.command("check")
def evals_check(
    names: Annotated[list[str], typer.Option("--eval", help="Eval to check, NAME or NAME:WEIGHT; repeat to combine.")],
    evals: EvalsOpt = Path("evals.yaml"),
    fmt: Annotated[str | None, typer.Option("--format", help="Only traces of this format.")] = None,
    threshold: Annotated[float, typer.Option(
        min=0.0, max=1.0, help="A reward at or above this predicts success.")] = 0.5,
    show_errors: Annotated[int, typer.Option(min=0, help="List at most this many scorer errors.")] = 10,
    show_disagreements: Annotated[int, typer.Option(
        min=0, help="List at most this many traces where scorer and label disagree.")] = 10,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Score recorded traces that have a production outcome and report how well the scorer agrees."""
    from tracegym.errors import ConfigError
    from tracegym.evals.scorers import ScorerContext, scorer_for
    from tracegym.evals.scorers.agreement import check_report, score_traces
    from tracegym.evals.scorers.config import load_evals, parse_eval_ref
    from tracegym.evals.scorers.recorded import iter_recorded
    from tracegym.store import open_store

    loaded = load_evals(evals)
    weighted = [parse_eval_ref(n) for n in names]
    with open_store(store, read_only=True) as st:
        scorer = scorer_for(loaded, weighted, ScorerContext(loaded.folder, st))
        where, params = "outcome IS NOT NULL", []
        if fmt:
            where += " AND format = ?"
            params.append(fmt)
        total = st.scalar(f"SELECT count(*) FROM traces WHERE {where}", params)
        if not total:
            raise ConfigError(f"No traces with an outcome{' of format ' + fmt if fmt else ''} in {st.path}. "
                              "Fix: ingest traces that record success or failure, or drop --format.")
        with progress(f"scoring with {scorer.name}", total=total) as bar:
            scored = score_traces(scorer, iter_recorded(st, where, params), on_each=bar.advance)
    report = {"eval": scorer.name, "evals_file": str(evals), "format": fmt,
              **check_report(scored, threshold, show_errors, show_disagreements)}
    report["disagreement_examples"] = [_masked(d) for d in report["disagreement_examples"]]
    if as_json:
        print_json(report)
    else:
        _print_report(report)


def _print_report(r: dict[str, Any]) -> None:
    a, d, s = r["agreement"], r["reward"], r["no_signal"]
    out.print(f"[bold]{literal(r['eval'])}[/bold] on {r['traces']} traces with an outcome "
              f"({r['scored']} scored, {r['scorer_errors']} scorer errors); success = reward >= {r['threshold']:g}")
    emit({k: a[k] for k in ("n", "accuracy", "precision", "recall", "f1", "cohen_kappa")}, False, title="Agreement")
    c = a["confusion"]
    emit([{"": "production success", "scored success": c["true_positive"], "scored failure": c["false_negative"]},
          {"": "production failure", "scored success": c["false_positive"], "scored failure": c["true_negative"]}],
         False, title="Confusion matrix")
    if d.get("n"):
        emit({k: d[k] for k in ("mean", "std", "min", "p25", "median", "p75", "max", "distinct_values")}, False,
             title="Reward distribution")
        emit([{"bin": k, "count": v} for k, v in d["histogram"].items()], False, title="Reward histogram")
    if r["disagreement_examples"]:
        emit(r["disagreement_examples"], False, title=f"Scorer and label disagree on {r['disagreements']} traces "
                                                      f"(first {len(r['disagreement_examples'])})")
    emit(s, False, title="Tasks whose attempts all score the same (no GRPO signal)")
    for e in r["errors"]:
        err.print(f"[red]scorer error[/red] {literal(e['trace_id'])}: {literal(e['error'])}", highlight=False)


def _masked(row: dict[str, Any]) -> dict[str, Any]:
    """A disagreement with the scorer's details as a short reason. Text is masked as failure signatures are (ids,
    quoted values, numbers, paths, e-mail addresses in it become placeholders): it may quote trace content. The
    scorer's own keys, counts and flags are shown as they are."""
    from tracegym.inert import one_line

    reason = one_line("; ".join(_reason_parts(row.pop("details"))))
    row["reason"] = reason if len(reason) <= 160 else reason[:159] + "…"
    return row


def _reason_parts(details: dict[str, Any], prefix: str = "") -> list[str]:
    parts = []
    for key, value in details.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):  # a weighted scorer's parts: `part.reward`, `part.missing`, ...
            parts += _reason_parts(value, prefix if key == "details" else f"{name}.")
        elif value is None or isinstance(value, (bool, int)):
            parts.append(f"{name}={value}")
        elif isinstance(value, float):
            parts.append(f"{name}={value:.3g}")
        elif isinstance(value, list):
            shown = ", ".join(_mask(str(v)) for v in value[:3]) + (", …" if len(value) > 3 else "")
            parts.append(f"{name}=[{shown}]")
        else:
            parts.append(f"{name}={_mask(str(value))}")
    return parts


def _mask(text: str) -> str:
    from tracegym.mining.signature import signature

    return signature(text[:300]) or ""
