"""`tracegym labels import FILE` and `tracegym labels list`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from tracegym.output import JsonOpt, StoreOpt, emit, err, literal, out, print_json, print_table

labels_app = typer.Typer(help="Outcome labels kept outside the traces (CSAT, resolution, review).",
                         no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(labels_app, name="labels")


@labels_app.command("import")
def labels_import(
    file: Annotated[Path, typer.Argument(help="A .csv file with a header row, or a .jsonl file of objects.")],
    key: Annotated[str, typer.Option(
        help="Column with a trace id or a session/conversation id (a field path such as meta.id in JSONL).")],
    outcome: Annotated[str | None, typer.Option(
        help="Column with the outcome: success/failure, pass/fail, true/false, 1/0, or values given by --map.")]
    = None,
    value_map: Annotated[list[str] | None, typer.Option(
        "--map", help="VALUE=success, VALUE=failure or VALUE=skip for an outcome value of your own; repeat.")]
    = None,
    score: Annotated[str | None, typer.Option(
        help="Column with a score in [0, 1] (or on --score-range), stored as a human score named after the column.")]
    = None,
    score_range: Annotated[tuple[float, float] | None, typer.Option(
        "--score-range", metavar="LOW HIGH",
        help="The score column's scale, mapped onto [0, 1]: --score-range 1 5 stores 1 star as 0.0, 5 as 1.0.")]
    = None,
    match: Annotated[str, typer.Option(
        help="Compare keys with trace ids (trace), session ids (session), or trace ids first (auto).")] = "auto",
    fmt: Annotated[str | None, typer.Option("--format", help="Label only traces of this format.")] = None,
    redact_config: Annotated[Path | None, typer.Option(
        "--redact-config", help="On a redacted store: the redact.yaml it was redacted with, so that keys holding "
        "personal data match their redacted ids.")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Set outcomes (and scores) on stored traces from a labels file, recording the file, columns and time.

    A session key labels every trace of the session. Rows whose key names no trace, whose value is not mapped,
    or that label one trace differently are reported and the others applied; the exit status is then 1 (0 when
    every row was applied or skipped on purpose). A score column outside [0, 1] without --score-range stores
    nothing (exit 2). Importing the same file again changes nothing. Relabelled traces are detected again, so
    `tracegym mine failures` ranks with the new outcomes. On a redacted store each key is redacted as the stored
    ids were, so the file's original session and trace ids still match.
    """
    from tracegym.errors import ConfigError
    from tracegym.labels import LabelSpec, check_score_range, import_labels, parse_map
    from tracegym.redact.config import load_redact_config
    from tracegym.redact.ids import stored_ids
    from tracegym.store import open_store

    if outcome is None and score is None:
        raise ConfigError("Say which column holds the label: --outcome COLUMN, --score COLUMN, or both.")
    if match not in ("auto", "trace", "session"):
        raise ConfigError(f"--match {match!r}: use auto, trace or session.")
    if value_map and outcome is None:
        raise ConfigError("--map maps outcome values: give --outcome COLUMN too.")
    if score_range is not None and score is None:
        raise ConfigError("--score-range gives the scale of a score column: give --score COLUMN too.")
    spec = LabelSpec(key=key, outcome=outcome, score=score, mapping=parse_map(value_map or []),
                     score_range=None if score_range is None else check_score_range(*score_range))
    with open_store(store) as st:
        stored_key = stored_ids(st, load_redact_config(redact_config))
        report = import_labels(st, file, spec, match, fmt, stored_key)  # type: ignore[arg-type]
        no_sessions = match != "trace" and not st.scalar("SELECT count(session_id) FROM traces")
    if as_json:
        print_json(report.to_dict())
    else:
        _print_report(report.to_dict())
        if no_sessions and report.unmatched and not report.labelled_traces:
            err.print("No stored trace has a session id, so no key could name a session. Ingest reads it from each "
                      "log line (session_id, conversation_id, thread_id) or from the field `tracegym ingest "
                      "--session-key PATH` names; `tracegym ingest --replace FILE` reads a stored file again.")
    not_applied = report.bad + report.unmatched + report.conflicting_rows
    if not_applied:
        err.print(f"{not_applied} of {report.rows} rows not applied ({report.bad} bad, {report.unmatched} match "
                  f"no trace, {report.conflicting_rows} conflicting); the others are stored. Exit status 1.",
                  highlight=False)
        raise typer.Exit(1)


def _print_report(r: dict[str, Any]) -> None:
    again = " (imported before: nothing changed)" if r["already_imported"] and not r["changed"] else ""
    out.print(f"{r['labelled_traces']} traces labelled from {r['rows']} rows, {r['changed']} changed{again}; "
              f"{r['unmatched']} rows match no trace, {r['bad']} bad rows, {r['skipped']} skipped, "
              f"{r['conflicts']} traces with conflicting rows. Import {r['import_id']}.", highlight=False)
    for title, rows in (("Rows whose key matches no trace", r["unmatched_examples"]),
                        ("Bad rows", r["bad_examples"]), ("Conflicting rows (not applied)", r["conflict_examples"])):
        if rows:
            emit(rows, False, title=f"{title} (first {len(rows)})")
    if r["detection_error"]:
        err.print(f"[yellow]Failure detection did not run on the relabelled traces[/yellow] (the labels are "
                  f"stored): {literal(r['detection_error'])} `tracegym mine failures` tries again.",
                  highlight=False)
    elif r["changed"]:
        err.print("Run `tracegym mine failures` to rank clusters with the new outcomes.")


@labels_app.command("list")
def labels_list(
    trace: Annotated[str | None, typer.Option(help="Only the labels of this trace.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many rows.")] = 50,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List imported labels with their source: file, columns, row, time and the outcome they replaced."""
    from tracegym.store import open_store

    where, params = ("WHERE l.trace_id = ?", [trace]) if trace else ("", [])
    with open_store(store, read_only=True) as st:
        rows = st.query(
            f"""SELECT l.trace_id, l.outcome, l.score, l.previous_outcome, l.value, i.path, l.locator AS row,
                       i.key_column, i.outcome_column, i.score_column, l.labelled_at,
                       l.import_id
                FROM labels l JOIN label_imports i USING (import_id) {where}
                ORDER BY l.labelled_at DESC, l.trace_id LIMIT ?""", [*params, limit])
    if as_json:
        print_json(rows)
    else:
        print_table(rows, title="Labels", columns=("trace_id", "outcome", "score", "previous_outcome", "value",
                                                   "path", "row", "labelled_at"))
