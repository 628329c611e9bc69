"""`tracegym ingest PATH...`"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from tracegym.output import JsonOpt, StoreOpt, emit, err, literal, print_json, progress


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)


def ingest(
    paths: Annotated[list[str], typer.Argument(
        help="Files, folders (recursive), - for stdin, or a running MLflow server: mlflow+http://HOST:PORT.")],
    fmt: Annotated[str | None, typer.Option(
        "--format", help="Skip detection and read every file as this format.")] = None,
    mapping: Annotated[Path | None, typer.Option(
        "--mapping", help="Field-path mapping file for --format generic.")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 2 if any record could not be ingested.")] = False,
    follow_symlinks: Annotated[bool, typer.Option(
        "--follow-symlinks", help="Also read symbolic links in the folders given that lead outside them.")] = False,
    redact: Annotated[bool, typer.Option(
        "--redact", help="Redact secrets and personal data before anything is stored (see docs/redaction.md).")]
        = False,
    redact_config: Annotated[Path | None, typer.Option(
        "--redact-config", help="With --redact: your redact.yaml (own rules, allow-list, pseudonyms).")] = None,
    replace: Annotated[bool, typer.Option(
        "--replace", help="Read files ingested before again, and replace the stored traces these files bring "
                          "(labels kept), deleted ones too; recorded in the store_changes table.")] = False,
    session_key: Annotated[str | None, typer.Option(
        "--session-key", help="The field of each log line that holds its session id, as a path such as "
                              "meta.conversation_id or $.meta.conversation_id (OpenAI and Anthropic logs).")]
        = None,
    experiment: Annotated[str | None, typer.Option(
        "--experiment", help="With mlflow+http://…: the experiment whose traces to pull.")] = None,
    since: Annotated[str | None, typer.Option(
        "--since", help="With mlflow+http://…: only traces started within this span (30m, 12h, 1d, 2w).")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Load agent traces into the store; the format of each file is detected unless --format is given."""
    from tracegym.errors import is_interrupt, remembered_interrupts
    from tracegym.ingest.mlflow_pull import is_mlflow_source
    from tracegym.ingest.pipeline import gathered, ingest_inputs
    from tracegym.store import open_store

    if any(is_mlflow_source(p) for p in paths) or experiment is not None or since is not None:
        _pull_mlflow(paths, experiment, since, _redact_settings(redact, redact_config), store, as_json, strict)
        return

    options: dict[str, Any] = {"mapping": mapping} if mapping else {}
    if session_key is not None:
        from tracegym.ingest.adapters.log_line import session_key as checked_key

        checked_key(session_key)  # before the store is opened: a bad path changes nothing
        options["session_key"] = session_key
    settings = _redact_settings(redact, redact_config)
    done: list[Path] = []
    files: list[Path] = []
    run = None

    def finished(path: Path) -> None:
        done.append(path)
        bar.advance(_size(path))
        stop_if_interrupted()

    try:
        with (remembered_interrupts() as stop_if_interrupted, gathered(paths, follow_symlinks) as inputs,
              open_store(store) as st,
              progress("ingesting", total=sum(_size(p) for p in inputs.files), in_bytes=True) as bar):
            files.extend(inputs.files)
            if settings is not None:
                from tracegym.redact.session import Run

                run = Run(st, settings, "ingest")
            summary = ingest_inputs(st, inputs, fmt, options, on_file=finished, redact=run, replace=replace)
    except BaseException as e:
        if not is_interrupt(e):
            raise
        _say_interrupted(done, files)
        raise typer.Exit(130) from None
    data = summary.to_dict()
    if run is not None:
        from tracegym.redact.tally import report

        data["redaction"] = report(run)
    if as_json:
        print_json(data)
    else:
        _print_summary(data)
    nothing_loaded = (data["traces"] == 0 and data["duplicates_skipped"] == 0
                      and data["files_skipped_already_ingested"] == 0 and data["files_waiting"] == 0)
    if data["errors"] and (strict or nothing_loaded):
        raise typer.Exit(2)


def _pull_mlflow(paths: list[str], experiment: str | None, since: str | None, settings: Any, store: Path | None,
                 as_json: bool, strict: bool) -> None:
    """`tracegym ingest mlflow+http://HOST:PORT --experiment NAME [--since 1d]` (tracegym/ingest/mlflow_pull.py)."""
    from tracegym.errors import ConfigError
    from tracegym.ingest.mlflow_pull import is_mlflow_source, parse_since, plan_pull, pull
    from tracegym.store import open_store

    if len(paths) != 1 or not is_mlflow_source(paths[0]) or not experiment:
        raise ConfigError("--experiment and --since go with one MLflow server, and it with --experiment. Fix: "
                          "tracegym ingest mlflow+http://HOST:PORT --experiment NAME [--since 1d], files apart.")
    span = parse_since(since)
    with open_store(store) as st:
        plan = plan_pull(st, paths[0], experiment, span)
        run = None
        if settings is not None:
            from tracegym.redact.session import Run

            run = Run(st, settings, "ingest")
        with progress("pulling traces", total=len(plan.todo)) as bar:
            summary = pull(st, plan, bar.advance, run)
    data = {**summary.to_dict(), "pull": {"server": plan.server, "experiment": plan.experiment,
                                          "traces_listed": plan.listed, "traces_fetched": len(plan.todo),
                                          "traces_unchanged": plan.unchanged, "traces_in_progress": plan.in_progress}}
    if as_json:
        print_json(data)
    else:
        pulled = data["pull"]
        err.print(f"{literal(plan.server)} experiment {literal(plan.experiment)}: {pulled['traces_listed']} traces "
                  f"listed, {pulled['traces_fetched']} new or changed fetched, {pulled['traces_unchanged']} "
                  f"already pulled, {pulled['traces_in_progress']} still in progress (a later pull takes them).",
                  highlight=False)
        _print_summary(data)
    if data["errors"] and strict:
        raise typer.Exit(2)


def _say_interrupted(done: list[Path], files: list[Path]) -> None:
    stored = f"{len(done)} of {len(files)} files ({sum(map(_size, done)) / 1e6:.1f} MB) are stored"
    if len(done) < len(files):
        # Each file is one transaction: the one being read when Ctrl-C came is left out whole.
        err.print(f"Interrupted: {stored}; the file being read is not. Run the same command again to ingest the "
                  "rest (stored files are skipped).")
    else:
        err.print(f"Interrupted: {stored}; failure detection on them did not finish: `tracegym mine failures` "
                  "runs it.")


def _size(path: Path) -> int:
    """The file's size in bytes; 0 for one that went away (ingest reports it)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _redact_settings(redact: bool, config: Path | None) -> Any:
    """The redaction settings when --redact is given (--redact-config alone is a mistake worth naming)."""
    if not redact:
        if config is not None:
            from tracegym.errors import ConfigError

            raise ConfigError("--redact-config is read only with --redact. Fix: add --redact.")
        return None
    from tracegym.redact.config import load_redact_config

    return load_redact_config(config)


def _print_summary(data: dict) -> None:
    rows = [{"format": k, **v} for k, v in sorted(data["by_format"].items())]
    emit(rows, False, title="Ingested")
    err.print(
        f"{data['traces']} traces, {data['messages']} messages, {data['tool_calls']} tool calls; "
        f"{data['errors']} bad records, {data['duplicates_skipped']} duplicate traces skipped, "
        f"{data['conflicts']} id conflicts, {data['files_skipped_already_ingested']} files already ingested."
    )
    if data["traces_replaced"]:
        err.print(f"{data['traces_replaced']} of these traces replaced stored ones, with what derives from them "
                  "(labels kept); the store_changes table records it.")
    _print_differences(data)
    if data["traces_merged"]:
        err.print(f"{data['traces_merged']} stored traces completed by spans, runs or scores in these files.")
    if data["traces_deleted_skipped"]:
        err.print(f"{data['traces_deleted_skipped']} traces in these files were deleted (`traces delete`) and are "
                  "left out; `tracegym ingest --replace FILE` brings them back.")
    if data["calls_stitched"]:
        err.print(f"{data['calls_stitched']} logged API calls went on with a conversation of their file and are "
                  "stored in its trace.")
    if data["traces_waiting"]:
        err.print(f"{data['traces_waiting']} traces wait for their LLM calls: what these files hold of them (a root "
                  "run, log records, scores) is kept, and joins them when a file with their calls is ingested.")
        spans_only = [why for why in data["waiting_why"] if "spans (" in why]
        if spans_only:
            err.print(f"[yellow]{len(spans_only)} of them hold spans that are none of them an LLM call or a tool "
                      "execution[/yellow]: if no other file has their calls, their producer writes attributes this "
                      "format does not read (docs/bring-your-traces.md lists what each producer must set):"
                      + "".join(f"\n  {literal(why)}" for why in spans_only[:5]), highlight=False)
    if data["line_pieces_waiting"]:
        err.print(f"{data['line_pieces_waiting']} pieces of lines cut across files wait in the store for the rest of "
                  "their line: each is stored as part of its line once the file before or after it is ingested.")
    if data["files_blank"]:
        err.print(f"{data['files_blank']} files hold nothing but whitespace after the files before them in their "
                  "folder (the end of a line cut across files, or blank lines between lines): nothing to store.")
    if data["links_skipped"]:
        _print_skipped_links(data["links_skipped"])
    if data["traces"] == 0 and not data["traces_differing"] and (
            data["files_skipped_already_ingested"] or data["duplicates_skipped"]):
        again = " (`--replace` reads ingested files again)" if data["files_skipped_already_ingested"] else ""
        err.print(f"Nothing new: everything here was already in the store{again}.")
    if data["detection_error"]:
        err.print(f"[yellow]Failure detection did not run on the new traces[/yellow] (they are stored): "
                  f"{literal(data['detection_error'])} `tracegym mine failures` tries again.", highlight=False)
    if "redaction" in data:
        red = data["redaction"]
        rules = ", ".join(f"{r['rule']} {r['findings']}" for r in red["by_rule"]) or "nothing found"
        err.print(f"Redacted {red['findings']} values in {red['traces_with_findings']} traces ({literal(rules)}).")
    if data["errors"]:
        err.print("Bad records are in the ingest_errors table: `tracegym sql \"SELECT * FROM ingest_errors\"`.")


def _print_differences(data: dict) -> None:
    """Stored traces these files bring changed, and traces that labels cannot find by session."""
    if data["traces_differing"]:
        content = data["conflicts"]
        err.print(f"[yellow]{data['traces_differing']} stored traces differ from these files[/yellow] "
                  f"({content} in content, {data['traces_differing'] - content} only in session, times or "
                  "metadata, counted as duplicates): the stored ones are kept. `tracegym ingest --replace` replaces "
                  "them.", highlight=False)
    stored = data["traces"] + data["traces_merged"]
    if data["traces_without_session"]:
        err.print(f"{data['traces_without_session']} of the {stored} traces stored have no session id: "
                  "`labels import --key` finds them by trace id only. `--session-key PATH` names the field of "
                  "a log line that holds it.")


def _print_skipped_links(links: list[str]) -> None:
    from rich.markup import escape

    # repr: a file name may hold control characters, which must not reach the terminal as such.
    shown = "".join(f"\n  {escape(repr(link))}" for link in links[:5])
    more = f"\n  … and {len(links) - 5} more (--json lists them all)" if len(links) > 5 else ""
    err.print(f"[yellow]Skipped {len(links)} symbolic links that lead outside the folders given[/yellow] "
              f"(--follow-symlinks reads them):{shown}{more}", highlight=False)
