"""`tracegym rollouts list`, `tracegym rollouts show ID` (stored episodes, each beside the turn it replaced) and
`tracegym rollouts import FILE` (results scored by another trainer)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from tracegym.output import JsonOpt, StoreOpt, err, literal, out, print_json, print_table

rollouts_app = typer.Typer(help="Stored episodes of runs, training and evaluations.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(rollouts_app, name="rollouts")


@rollouts_app.command("list")
def rollouts_list(
    run: Annotated[str | None, typer.Option(help="Only this run (a `tracegym run`, a training run or an "
                                                 "eval id).")] = None,
    task: Annotated[str | None, typer.Option(help="Only this task id.")] = None,
    task_set: Annotated[str | None, typer.Option(help="Only this task set.")] = None,
    min_reward: Annotated[float | None, typer.Option(help="Only rewards at least this.")] = None,
    max_reward: Annotated[float | None, typer.Option(help="Only rewards at most this.")] = None,
    unscored: Annotated[bool, typer.Option("--unscored", help="Only rollouts without a reward (a harness or "
                                                              "scorer error).")] = False,
    limit: Annotated[int, typer.Option(min=1, help="At most this many rows.")] = 50,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Stored rollouts, newest first: run, task, reward, how each stopped."""
    from tracegym.report.rollout_views import list_rollouts
    from tracegym.store import open_store

    with open_store(store, read_only=True) as st:
        rows = list_rollouts(st, run, task, task_set, min_reward, max_reward, unscored, limit)
    if as_json:
        print_json(rows)
        return
    print_table([{**r, "rollout": r["rollout_id"][:12], "created": str(r["created_at"])[:19]} for r in rows],
                title="Rollouts", columns=("rollout", "run_id", "task_id", "sample_idx", "reward", "stop_reason",
                                           "n_turns", "error", "created"))
    if rows:
        err.print("`tracegym rollouts show ID` for one (a unique prefix of the id will do); --json for every "
                  "column.")


@rollouts_app.command("show")
def rollouts_show(
    rollout: Annotated[str, typer.Argument(help="A rollout id or a unique prefix (see `tracegym rollouts list`).")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """One rollout: the model's reply beside the recorded turn it replaced, the reward and the scorer's details, the
    hollow-reply detectors that flag its replies, then the rest of the episode."""
    from tracegym.report.rollout_views import rollout_view
    from tracegym.store import open_store

    with open_store(store, read_only=True) as st:
        view = rollout_view(st, rollout)
    if as_json:
        print_json(view)
        return
    _print_view(view)


@rollouts_app.command("import")
def rollouts_import(
    file: Annotated[Path, typer.Argument(help="The results JSONL another trainer wrote on an exported task set.")],
    task_set: Annotated[str, typer.Option("--task-set", help="The task set exported: a folder or its name in the "
                                                             "store.")] = ...,
    fmt: Annotated[Literal["verifiers", "trl"], typer.Option(
        "--format", help="verifiers: vf-eval's results.jsonl; trl: prompt, completion, reward and task_id per "
                         "line.")] = "verifiers",
    model: Annotated[str | None, typer.Option(help="The model's name in tables [default: the file's name].")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Store scored results of a model trained elsewhere as rollouts of the task set (one run, kind import).

    Each sample keeps the reward the other trainer recorded; lines that cannot be read are named and left out.
    Importing the same file again adds nothing. Compare the model with a base per cluster with `tracegym eval
    --tasks SET --from-results FILE`.
    """
    from tracegym.evals.checkpoints.imported import import_results
    from tracegym.harnesses.taskrun import resolve_task_set
    from tracegym.store import open_store

    with open_store(store) as st:
        imported = import_results(st, resolve_task_set(st, task_set), file, fmt, model or file.name)
    rewards = [e.reward for e in imported.episodes if e.reward is not None]
    summary = {"run_id": imported.run_id, "model": imported.model, "already_imported": imported.already,
               "samples": len(imported.episodes), "tasks": len({e.task_id for e in imported.episodes}),
               "unscored": len(imported.episodes) - len(rewards),
               "mean_reward": sum(rewards) / len(rewards) if rewards else None, "lines_left_out": imported.bad}
    if as_json:
        print_json(summary)
        return
    verb = "were already in the store" if imported.already else "stored"
    mean = "none" if summary["mean_reward"] is None else f"{summary['mean_reward']:.3f}"
    out.print(f"{summary['samples']} samples of {summary['tasks']} tasks {verb} as run {imported.run_id} "
              f"(model {literal(imported.model)}; mean reward {mean}; {summary['unscored']} unscored).")
    for line in imported.bad:
        err.print(f"[yellow]left out: {literal(line)}[/yellow]")
    err.print(f"`tracegym rollouts list --run {imported.run_id}` to see them.")


def _text(message: dict[str, Any] | None) -> str:
    """A chat message as rich markup: its text, then one line per tool call; all of it literal."""
    if message is None:
        return "[dim](none)[/dim]"
    from tracegym import exact_json

    content = message.get("content")
    text = content if isinstance(content, str) or content is None else exact_json.dumps(content, sort_keys=False)
    parts = [literal(text)] if text else []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        parts.append(f"[bold]→ {literal(function.get('name'))}[/bold]({literal(function.get('arguments'))})")
    return "\n".join(parts) or "[dim](empty)[/dim]"


def _print_view(view: dict[str, Any]) -> None:
    from rich.panel import Panel
    from rich.table import Table

    r, source = view["rollout"], view["source"]
    out.print(f"[bold]rollout {literal(r['rollout_id'])}[/bold]  run {literal(r['run_id'])} "
              f"({literal(r['kind'])})  task {literal(r['task_set_id'])}/{literal(r['task_id'])} "
              f"({literal(r['split'])}, {literal(r['harness'])})  model {literal(r['model'])}  "
              f"sample {r['sample_idx']}")
    if view["last_prompt_message"] is not None:
        last = view["last_prompt_message"]
        out.print(Panel(_text(last), title=f"the prompt ended with ({literal(last.get('role'))})",
                        title_align="left", border_style="green"), soft_wrap=False)
    if source:
        out.print(f"The task was cut from trace {literal(source['trace_id'])} before message "
                  f"{source['cut_message_idx']}: the recorded turn is what the agent did there.")
    side = Table(show_lines=True, expand=True)
    side.add_column("model's reply", ratio=1, overflow="fold")
    side.add_column("recorded turn", ratio=1, overflow="fold")
    side.add_row(_text(view["reply"]), _text(view["recorded_turn"]) if source else
                 "[dim]unknown: the store no longer holds this task[/dim]")
    out.print(side, soft_wrap=False)
    reward = "[dim]none[/dim]" if r["reward"] is None else f"[bold]{r['reward']:.4g}[/bold]"
    out.print(f"reward {reward}  stop {literal(r['stop_reason'])}  turns {r['n_turns']}  tool calls "
              f"{r['n_tool_calls']} ({r['n_malformed_tool_calls']} malformed)  replay hits/misses "
              f"{r['n_replay_hits']}/{r['n_replay_misses']}  off the recorded path: {r['left_recorded_path']}")
    for name in ("scorer_error", "harness_error"):
        if r[name]:
            out.print(f"[red]{name.replace('_', ' ')}:[/red] {literal(r[name])}")
    details = view["scorer_details"]
    if details:
        print_table(_detail_rows(details), title="Scorer details")
    for detector, reason in view["hollow"].items():
        out.print(f"[yellow]hollow reply ({detector}):[/yellow] {literal(reason)}")
    if source and source.get("detector"):
        out.print(f"failure: {literal(source['detector'])}: {literal(source['signature'])} "
                  f"(cluster {literal(source['cluster_id'])})")
    for i, message in enumerate(view["after_reply"], start=view["prompt_messages"] + 1):
        out.print(Panel(_text(message), title=f"{i} {literal(message.get('role'))}", title_align="left",
                        border_style="yellow" if message.get("role") == "tool" else "cyan"), soft_wrap=False)


def _detail_rows(details: dict[str, Any], prefix: str = "") -> list[dict[str, Any]]:
    """Nested scorer details as key/value rows (`eval.field`), lists and scalars kept whole."""
    from tracegym import exact_json

    rows: list[dict[str, Any]] = []
    for key, value in details.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            rows += _detail_rows(value, f"{name}.")
        else:
            text = value if isinstance(value, str) else exact_json.dumps(value, sort_keys=False)
            rows.append({"detail": name, "value": text})
    return rows
