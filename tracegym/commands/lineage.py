"""`tracegym lineage CLUSTER`: from a failure cluster to its tasks, the runs trained on them, and the verdict."""

from __future__ import annotations

from typing import Annotated

import typer

from tracegym.output import JsonOpt, StoreOpt, err, literal, out, print_json, print_table


def register(app: typer.Typer) -> None:
    app.command("lineage")(lineage)


def lineage(
    cluster: Annotated[str, typer.Argument(help="A failure cluster id (or a unique prefix).")],
    rows: Annotated[bool, typer.Option("--rows", help="Print the view's rows instead of the summary.")] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Follow a failure cluster to its tasks, the rollouts trained on them, and each checkpoint's eval results.

    One query of the `lineage` view: `tracegym sql "SELECT * FROM lineage WHERE cluster_id = 'ID'"`.
    """
    from tracegym.evals.checkpoints.lineage import find_cluster, lineage_rows, summarize_lineage
    from tracegym.store import open_store

    with open_store(store, read_only=True) as st:
        cluster_id = find_cluster(st, cluster)
        found = lineage_rows(st, cluster_id)
    if rows:
        print_json(found) if as_json else print_table(found, title=f"lineage of {cluster_id}")
        return
    summary = summarize_lineage(found)
    if as_json:
        print_json(summary)
        return
    _print(cluster_id, summary)


def _print(cluster_id: str, summary: dict) -> None:
    c = summary["cluster"]
    if c is None:
        err.print(f"Cluster {literal(cluster_id)} has no tasks yet. "
                  f"Fix: `tracegym tasks generate --cluster {literal(cluster_id)} ...`.")
        return
    out.print(f"[bold]cluster {literal(c['cluster_id'])}[/bold] (rank {c['cluster_rank']}, {literal(c['detector'])}): "
              f"{literal(c['signature'])}")
    splits = [t["split"] for t in summary["tasks"]]
    out.print(f"tasks: {splits.count('train')} train, {splits.count('heldout')} held out")
    if summary["runs"]:
        print_table(summary["runs"], title="runs that trained on its tasks")
    else:
        out.print("No training run has trained on its tasks yet.")
    if summary["checkpoints"]:
        rows = [{"run": c["run_id"], "step": c["step"], "eval": c["eval_id"], "tasks": c["tasks"],
                 "reward": c["eval_reward"], "base reward": c["base_eval_reward"], "pass": c["eval_pass_rate"],
                 "base pass": c["base_eval_pass_rate"]} for c in summary["checkpoints"]]
        print_table(rows, title="their checkpoints, evaluated on its tasks, against the base")
    else:
        out.print("No checkpoint of those runs has been evaluated on its tasks yet (`tracegym eval`).")
