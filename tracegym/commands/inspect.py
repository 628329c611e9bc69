"""Looking at the store: `traces list/show`, `sql`, `store stats`; and `traces delete`."""

from __future__ import annotations

from typing import Annotated

import typer

from tracegym.output import JsonOpt, StoreOpt, emit, err, literal, out, print_json

traces_app = typer.Typer(help="Look at ingested traces, or delete them.", no_args_is_help=True)
store_app = typer.Typer(help="The DuckDB store.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(traces_app, name="traces")
    app.add_typer(store_app, name="store")
    app.command("sql")(sql)


@traces_app.command("list")
def traces_list(
    fmt: Annotated[str | None, typer.Option("--format", help="Only this format.")] = None,
    outcome: Annotated[str | None, typer.Option(help="success, failure or none.")] = None,
    model: Annotated[str | None, typer.Option(help="Only this model.")] = None,
    limit: Annotated[int, typer.Option(help="At most this many rows.")] = 50,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List traces with their outcome and tool-call counts."""
    from tracegym.errors import ConfigError, did_you_mean
    from tracegym.store import open_store
    from tracegym.store.queries import list_traces

    outcomes = ("success", "failure", "none")
    if outcome is not None and outcome not in outcomes:
        raise ConfigError(f"--outcome {outcome!r}: choose success, failure or none.{did_you_mean(outcome, outcomes)}")
    with open_store(store, read_only=True) as st:
        emit(list_traces(st, fmt, outcome, model, limit), as_json, title="Traces")


@traces_app.command("show")
def traces_show(
    trace_id: Annotated[str, typer.Argument(help="The trace id (see `tracegym traces list`).")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show one trace as a readable conversation with its tool calls and results."""
    from tracegym.store import open_store
    from tracegym.store.queries import get_trace, trace_as_json

    with open_store(store, read_only=True) as st:
        trace = get_trace(st, trace_id)
    if as_json:
        print_json(trace_as_json(trace))
        return
    _render_conversation(trace)


@traces_app.command("delete")
def traces_delete(
    trace_ids: Annotated[list[str] | None, typer.Argument(help="Trace ids (see `tracegym traces list`).")] = None,
    source: Annotated[str | None, typer.Option(
        "--source", help="Every trace stored from this ingested file, and the store's record of the file.")] = None,
    before: Annotated[str | None, typer.Option(
        "--before", help="Every trace that started before this date or time (UTC), e.g. 2026-11-01.")] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask before deleting more than one trace.")] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Delete stored traces and everything derived from them (messages, tool calls, scores, findings, labels,
    span parts); failure clusters are counted again without them. Recorded in the store_changes table."""
    from tracegym.ingest.delete import delete_traces, preview, select_traces
    from tracegym.store import open_store

    with open_store(store) as st:
        chosen = select_traces(st, trace_ids or [], source, before)
        if not chosen.trace_ids and not chosen.source_ids:
            if as_json:
                print_json({"change_id": None, "traces": 0, "removed": {}, "traces_without_start_kept": chosen.undated})
            err.print(f"No trace started before {literal(before)}; nothing was deleted"
                      f"{_undated(chosen.undated)}.", highlight=False)
            return
        if len(chosen.trace_ids) > 1 and not yes:
            rows = ", ".join(f"{table} {n}" for table, n in preview(st, chosen).items())
            err.print(f"Deleting {len(chosen.trace_ids)} traces removes these rows: {literal(rows)}.", highlight=False)
            if not typer.confirm("Delete them?", err=True):
                err.print("Nothing was deleted.")
                raise typer.Exit(1)
        done = delete_traces(st, chosen)
    if as_json:
        print_json({"change_id": done.change_id, "traces": done.traces, "removed": done.removed,
                    "traces_without_start_kept": chosen.undated})
        return
    emit([{"table": t, "rows": n} for t, n in done.removed.items()], False, title="Removed")
    plural = "" if done.traces == 1 else "s"
    err.print(f"Deleted {done.traces} trace{plural}{_undated(chosen.undated)}; recorded as change {done.change_id} "
              "in store_changes.", highlight=False)


def _undated(n: int) -> str:
    return f" ({n} traces without a start time are kept)" if n else ""


def _render_conversation(trace: dict) -> None:
    from rich.panel import Panel

    colors = {"system": "magenta", "user": "green", "assistant": "cyan", "tool": "yellow"}
    out.print(f"[bold]{literal(trace['trace_id'])}[/bold]  format={literal(trace['format'])}  "
              f"model={literal(trace['model'])}  outcome={literal(trace['outcome'])}")
    calls_by_msg: dict[int, list[dict]] = {}
    for call in trace["tool_calls"]:
        calls_by_msg.setdefault(call["message_idx"], []).append(call)
    for msg in trace["messages"]:
        body = literal(msg["content"] or "")
        for call in calls_by_msg.get(msg["idx"], []):
            flag = " [red]ERROR[/red]" if call["is_error"] else ""
            body += f"\n[bold]→ {literal(call['name'])}[/bold]({literal(call['arguments'])}){flag}"
        out.print(Panel(body or "[dim](empty)[/dim]", title=f"{msg['idx']} {literal(msg['role'])}",
                        border_style=colors.get(msg["role"], "white"), title_align="left"))
    for s in trace["scores"]:
        out.print(f"score {literal(s['name'])} = {literal(s['value'])} {literal(s['label'] or '')} "
                  f"({literal(s['kind'])})")


def sql(
    query: Annotated[str, typer.Argument(help="One SQL statement; it reads the store and nothing else.")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run one read-only SQL statement over the store: no files, extensions or settings."""
    from tracegym.store.usersql import run_user_sql

    emit(run_user_sql(store, query), as_json)


@store_app.command("stats")
def store_stats(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Row counts per table and traces per format."""
    from tracegym.store import open_store
    from tracegym.store.queries import stats

    with open_store(store, read_only=True) as st:
        data = stats(st)
    if as_json:
        print_json(data)
        return
    out.print(f"store: {data['path']}")
    emit([{"table": k, "rows": v} for k, v in data["tables"].items()], False, title="Tables")
    emit(data["by_format"], False, title="Traces by format")
