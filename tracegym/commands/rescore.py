"""`tracegym rescore`: stored rollouts scored again with the current evals, as a new score version."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from tracegym.output import JsonOpt, StoreOpt, emit, err, literal, print_json


def register(app: typer.Typer) -> None:
    app.command("rescore")(rescore_command)


def rescore_command(
    run: Annotated[str | None, typer.Option("--run", help="Rescore the rollouts of this run id.")] = None,
    eval_id: Annotated[str | None, typer.Option(
        "--eval", help="Rescore the samples of this evaluation (its eval id, as `tracegym eval` prints it).")] = None,
    tasks: Annotated[str | None, typer.Option(
        "--tasks", help="Rescore every stored rollout of this task set (its name in the store).")] = None,
    evals: Annotated[Path | None, typer.Option(
        help="Score with this evals.yaml [default: each task set's own evals.yaml, as it is now].")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Score stored rollouts again with the current evals, without sampling; write a new score version.

    The new rewards go beside the old ones (table rollout_scores, view rollout_score_versions; version 0 is each
    rollout's reward as stored), never over them. Reports how many rewards changed, per cluster. Compare
    checkpoints on a version with `tracegym eval ... --score-version N`.
    """
    from tracegym.harnesses.rescore import rescore
    from tracegym.store.access import StoreAccess

    result = rescore(StoreAccess(store), run, eval_id, tasks, evals)
    data = result.to_dict()
    if as_json:
        print_json(data)
        return
    rows = [{**c, "not_rescored": ", ".join(f"{r} {n}" for r, n in c["not_rescored"].items())}
            for c in data["clusters"]]
    emit(rows, False, title=f"Score version {result.version}: rewards changed per cluster")
    if result.not_rescored:
        emit(_not_rescored_rows(result.not_rescored), False,
             title="Not rescored, per cluster and reason (--json lists every rollout)")
    skipped = ", ".join(f"{n} {why}" for why, n in result.skipped.items())
    err.print(f"{result.changed} of {result.rescored} rewards changed (version {result.version}"
              f"{f'; not rescored: {skipped}' if skipped else ''}). Both versions: tracegym sql \"SELECT * FROM "
              f"rollout_score_versions WHERE version IN (0, {result.version})\"; {literal('tracegym eval')} "
              f"--score-version {result.version} compares checkpoints on it.")


def _not_rescored_rows(skipped: list[Any]) -> list[dict[str, Any]]:
    """One row per cluster and reason: how many rollouts, the first few ids, and what to do."""
    groups: dict[tuple[str | None, str], list[Any]] = {}
    for item in skipped:
        groups.setdefault((item.cluster_id, item.reason), []).append(item)
    return [{"cluster_id": cluster, "reason": reason, "rollouts": len(items),
             "rollout_ids": ", ".join(i.rollout_id for i in items[:3]) + (" ..." if len(items) > 3 else ""),
             "detail": items[0].detail}
            for (cluster, reason), items in groups.items()]
