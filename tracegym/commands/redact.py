"""`tracegym redact` (rewrite the store in place) and `tracegym redact check` (does any detector still fire?)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from tracegym.output import JsonOpt, StoreOpt, emit, err, print_json

redact_app = typer.Typer(help="Redact secrets and personal data in the store; check that none is left.",
                         invoke_without_command=True)

ConfigOpt = Annotated[Path | None, typer.Option(
    "--config", help="redact.yaml: your own rules, allow-listed values, pseudonym scope and keyed mode "
                     "(default: every built-in rule, numbering per trace). See docs/redaction.md.")]


def register(app: typer.Typer) -> None:
    app.add_typer(redact_app, name="redact")


@redact_app.callback()
def redact(
    ctx: typer.Context,
    config: ConfigOpt = None,
    report_path: Annotated[Path | None, typer.Option(
        "--report", help="Also write the full report (every trace's count) to this JSON file.")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Rewrite the store in place, in one transaction: messages, tool calls, metadata, failures' evidence,
    task specs and rollouts; then the task-set folders it registered. Prints counts per detector."""
    if ctx.invoked_subcommand is not None:
        return
    from tracegym.redact.config import load_redact_config
    from tracegym.redact.in_place import redact_store
    from tracegym.redact.session import Run
    from tracegym.redact.tally import report
    from tracegym.store import open_store

    settings = load_redact_config(config)
    with open_store(store) as st:
        run = Run(st, settings, "store")
        folders = redact_store(run)
    print_report(report(run), as_json, report_path, report(run, None))
    if not as_json and folders:
        err.print(f"Task-set folders rewritten: {', '.join(str(f) for f in folders)}")


def print_report(data: dict[str, Any], as_json: bool, path: Path | None = None,
                 full: dict[str, Any] | None = None) -> None:
    """The report on stdout (a table per detector, or JSON), and in full to `path` if given."""
    if path is not None:
        from tracegym import exact_json

        path.write_text(exact_json.dumps(full or data, sort_keys=False, indent=True) + "\n", encoding="utf-8")
    if as_json:
        print_json(data)
        return
    rows = [{"rule": r["rule"], "placeholder": f"<{r['label']}_n>", "findings": r["findings"],
             "examples (masked)": ", ".join(r["examples"])} for r in data["by_rule"]]
    emit(rows, False, title="Redacted")
    err.print(f"{data['findings']} values redacted in {data['traces_with_findings']} traces "
              f"(redaction {data['redaction_id']}).")


@redact_app.command("check")
def redact_check(
    config: ConfigOpt = None,
    tasks: Annotated[Path | None, typer.Option(
        "--tasks", help="Check a task-set folder (every text file in it) instead of the store.")] = None,
    run: Annotated[str | None, typer.Option(
        "--run", help="Check one run's rollouts (a run id, or an evaluation's id) instead of the whole store.")]
        = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Exit 1 if any detector still fires (0 if none): over the store, a task-set folder or a run's rollouts."""
    from tracegym.errors import NotFoundError
    from tracegym.redact.check import check_folder, check_run, check_store
    from tracegym.redact.config import load_redact_config
    from tracegym.redact.detect import Detector
    from tracegym.store import open_store

    detector = Detector(load_redact_config(config))
    if tasks is not None:
        if not tasks.is_dir():
            raise NotFoundError(f"No task-set folder at {tasks}.")
        hits, scope = check_folder(tasks, detector), str(tasks)
    else:
        with open_store(store, read_only=True) as st:
            hits = check_run(st, run, detector) if run is not None else check_store(st, detector)
            scope = f"run {run}" if run is not None else str(st.path)
    rows = [{"rule": h.rule, "where": h.where, "trace_id": h.trace, "value (masked)": h.masked} for h in hits]
    if as_json:
        print_json({"scope": scope, "findings": len(rows), "hits": rows})
    elif rows:
        emit(rows[:50], False, title=f"Still found in {scope}")
        kinds: dict[str, set[str]] = {}
        for h in hits:
            kinds.setdefault(h.where, set()).add(h.rule)
        err.print("Found in: " + "; ".join(f"{w} ({', '.join(sorted(k))})" for w, k in sorted(kinds.items())),
                  soft_wrap=True)
        err.print(f"{len(rows)} findings{' (first 50 shown; --json lists all)' if len(rows) > 50 else ''}. "
                  "Fix: `tracegym redact` (the store), then regenerate or redact the task sets.")
    else:
        err.print(f"Clean: no detector fires in {scope}.")
    if rows:
        raise typer.Exit(1)
