"""`tracegym runs list` and `tracegym runs show RUN [--plot DIR]`: what training runs did."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tracegym.output import JsonOpt, StoreOpt, emit, err, literal, out, print_json, print_table

if TYPE_CHECKING:
    from tracegym.report.rundata import RunData
    from tracegym.store import Store

runs_app = typer.Typer(help="Training runs and `tracegym run` runs: status, metrics, charts.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(runs_app, name="runs")


@runs_app.command("list")
def runs_list(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Every run in the store, newest first: training runs (status, step, checkpoints, last training reward,
    evaluations) and `tracegym run` runs (kind run: episodes, mean reward)."""
    from tracegym.report.rundata import list_runs
    from tracegym.store import open_store

    with open_store(store, read_only=True) as st:
        rows = list_runs(st)
    if as_json:
        print_json(rows)
        return
    # reward: the last training step's mean for a training run, the mean over episodes for a `tracegym run` run.
    columns = ("run_id", "kind", "status", "started", "step", "checkpoints", "episodes", "reward", "evaluations")
    print_table([{**r, "started": str(r["started_at"])[:16],
                  "reward": r["last_reward"] if r["kind"] == "train" else r["mean_reward"]} for r in rows],
                title="Runs", columns=columns)
    if rows:
        err.print("`tracegym runs show RUN` for one run; --json for every column.")


@runs_app.command("show")
def runs_show(
    run: Annotated[str, typer.Argument(help="A run id (or unique prefix), or a run folder.")],
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Write PNG charts into this folder (and TensorBoard event files beside the run, "
                       "when tensorboard is installed).")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """A run's config, status, metrics per key, training reward and hollow replies per failure cluster, warnings of
    possible reward hacking, quarantined sampler pools, rollout cost per pool, checkpoints and its newest
    evaluation."""
    from tracegym.report.cluster_chart import TABLE_STEPS, cluster_table, short_signature
    from tracegym.report.rundata import load_run, metric_summary
    from tracegym.store import open_store
    from tracegym.training.runfolder import CONFIG_FILE

    with open_store(store, read_only=True) as st:
        sampled = _sampled_run(st, run)
        if sampled is not None:
            _show_sampled(sampled, as_json)
            return
        data = load_run(st, run)
    if plot is not None:
        _plot(data, plot)
    clusters = cluster_table(data)
    if as_json:
        print_json({"run": data.run, "metrics": metric_summary(data.metrics), "clusters": clusters,
                    "hack_warnings": data.hack_warnings, "quarantines": data.quarantines, "cost": data.cost(),
                    "checkpoints": data.checkpoints, "evaluation": data.comparison})
        return
    info = {k: v for k, v in data.run.items() if k != "config"}
    emit(info, False, title=f"Run {data.run_id}")
    # The per-cluster and cost keys (a few per cluster or pool and step) are summed up in tables of their own.
    summary = [row for row in metric_summary(data.metrics) if not row["key"].startswith(_OWN_TABLES)]
    print_table(summary, title="Metrics (per key, over steps)")
    grpo, idle = data.grpo_steps()
    if idle:
        err.print(f"[yellow]{len(idle)} of {len(grpo)} GRPO steps trained nothing (every group's rewards were equal): "
                  f"steps {_ranges(idle)}.[/yellow]")
    if clusters:
        print_table([{**row, "signature": short_signature(row["cluster_id"], row, 32)} for row in clusters],
                    title=f"Training reward per failure cluster, with its hollow replies (first vs last sampled "
                          f"steps, up to {TABLE_STEPS}; reply tokens and distinct share over the last)",
                    columns=_CLUSTER_COLUMNS + (("draw_weight",) if clusters[0]["draw_weight"] is not None else ()))
    _print_hacking(data)
    _print_pools(data)
    print_table(data.checkpoints, title="Checkpoints")
    if data.comparison is not None:
        from tracegym.commands.eval import print_comparison

        print_comparison(data.comparison)
    else:
        out.print(f"Not evaluated yet: tracegym eval {literal(data.run['run_dir'])} "
                  f"--tasks {literal(data.run['task_set_id'])}")
    err.print(f"Config: tracegym sql \"SELECT config FROM runs WHERE run_id = '{data.run_id}'\" "
              f"or {literal(data.run['run_dir'])}/{CONFIG_FILE}")


def _sampled_run(store: Store, ref: str) -> dict[str, Any] | None:
    """The `tracegym run` run `ref` names; None when it names a training run."""
    from tracegym.report.rollout_views import sampled_run, sampled_run_ids
    from tracegym.report.rundata import find_run

    run_id = find_run(store, ref)
    return sampled_run(store, run_id) if run_id in sampled_run_ids(store) else None


def _show_sampled(data: dict[str, Any], as_json: bool) -> None:
    """A `tracegym run` run: what it ran, per task figures, its rollouts."""
    if as_json:
        print_json(data)
        return
    emit(data["run"], False, title=f"Run {data['run']['run_id']} (tracegym run)")
    print_table(data["tasks"], title="Per task")
    print_table(data["rollouts"], title="Rollouts", columns=("rollout_id", "task_id", "sample_idx", "reward",
                                                             "stop_reason", "n_turns", "error"))
    err.print("`tracegym rollouts show ID` for one rollout beside the recorded turn it replaced.")


_OWN_TABLES = ("cluster/", "curriculum/", "cost/")
_CLUSTER_COLUMNS = ("cluster_id", "signature", "steps", "episodes", "reward_first", "reward_last", "change",
                    "hollow_first", "hollow_last", "reply_tokens", "distinct")


def _print_hacking(data: RunData) -> None:
    """The run's warnings of possible reward hacking, each with a rollout to read."""
    if not data.hack_warnings:
        return
    print_table([{"step": w["step"], "cluster": w["cluster_id"],
                  "reward": f"{w['reward_before']:.2f} -> {w['reward_after']:.2f}",
                  "hollow": f"{w['hollow_before']:.0%} -> {w['hollow_after']:.0%}",
                  "steps": f"{w['first_step']}-{w['split_step'] - 1} vs {w['split_step']}-{w['step']}",
                  "p": w["p_value"], "detector": w["detector"], "example": w["example_rollout_id"]}
                 for w in data.hack_warnings],
                title="Possible reward hacking (reward rose while replies turned hollow)")
    example = next((w["example_rollout_id"] for w in data.hack_warnings if w["example_rollout_id"]), None)
    if example is not None:
        err.print(f"[yellow]Read an example: tracegym rollouts show {literal(example)}. What to do: "
                  "docs/training-runs.md, 'Hollow replies and reward hacking'.[/yellow]")


def _print_pools(data: RunData) -> None:
    """The sampler pools the run quarantined (limit and evidence), and its rollout cost per pool."""
    if data.quarantines:
        print_table([{"step": q["step"], "pool": q["pool"], "cause": q["cause"], "value": q["value"],
                      "limit": q["limit_value"], "window": _ranges(list(range(q["first_step"], q["last_step"] + 1))),
                      "evidence": f"{q['evidence']:.0f} {q['evidence_unit']}"} for q in data.quarantines],
                    title="Quarantined sampler pools (no task after the step)")
    cost = data.cost()
    if cost is None:
        return
    run = cost["run"]
    rows = [*cost["pools"], {"pool": "all pools", **{k: sum(r[k] or 0.0 for r in cost["pools"])
                                                     for k in ("device_hours", "tokens", "trained_groups")},
                             "total": run["total"], "per_1k_tokens": run["per_1k_tokens"],
                             "per_trained_group": run["per_trained_group"]}]
    print_table([{name: row.get(key) for name, key in _COST_COLUMNS} for row in rows],
                title=f"Rollout cost per pool at step {cost['step']} (price per sampler-hour)")
    if run["most_expensive_alone"] is not None:
        saved = run["saving_frac"]
        verdict = "" if saved is None else f": {abs(saved):.1%} {'less' if saved >= 0 else 'more'} than that"
        out.print(f"The same rollouts on the most expensive pool alone ({literal(run['most_expensive_pool'])}, at its "
                  f"measured tokens per device-hour) would have cost {run['most_expensive_alone']:.4g}; they cost "
                  f"{run['total']:.4g}{verdict}.")


_COST_COLUMNS = (("pool", "pool"), ("price/h", "price_per_hour"), ("device h", "device_hours"), ("tokens", "tokens"),
                 ("trained groups", "trained_groups"), ("cost", "total"), ("per 1k tokens", "per_1k_tokens"),
                 ("per group", "per_trained_group"))


def _ranges(steps: list[int]) -> str:
    """'3-5, 8' for [3, 4, 5, 8]."""
    runs: list[list[int]] = []
    for s in steps:
        if runs and s == runs[-1][-1] + 1:
            runs[-1].append(s)
        else:
            runs.append([s])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def _plot(data: RunData, folder: Path) -> None:
    from tracegym.report.plots import build_charts, write_pngs
    from tracegym.report.tensorboard import write_events

    charts, missing = build_charts(data)
    for path in write_pngs(charts, folder):
        err.print(f"wrote {path}")
    for line in missing:
        err.print(f"[dim]{line}[/dim]")
    events = write_events(data, Path(data.run["run_dir"]) / "tensorboard")
    if events is not None:
        err.print(f"TensorBoard: tensorboard --logdir {events}")
