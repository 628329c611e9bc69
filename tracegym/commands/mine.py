"""`tracegym mine failures`, `tracegym failures show CLUSTER`, `tracegym failures list`."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from tracegym.output import JsonOpt, StoreOpt, emit, err, literal, out, print_json, print_table

mine_app = typer.Typer(help="Find where the agent fails.", no_args_is_help=True)
failures_app = typer.Typer(help="Look at mined failures and their clusters.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(mine_app, name="mine")
    app.add_typer(failures_app, name="failures")


@mine_app.command("failures")
def mine_failures(
    rules: Annotated[Path | None, typer.Option("--rules", help="YAML file of extra detectors written as SQL.")] = None,
    score_threshold: Annotated[float, typer.Option(
        help="Eval and human-feedback scores below this are failures (scores in [0, 1]).")] = 0.5,
    min_repeats: Annotated[int, typer.Option(
        min=2, help="An identical tool call with an identical result this many times in a trace is a loop.")] = 3,
    max_turns: Annotated[int | None, typer.Option(
        min=1, help="More assistant turns is a runaway (default: 3x the median of the trace's format).")] = None,
    top: Annotated[int | None, typer.Option(
        min=1, help="Show only the N top-ranked clusters (default: 30 in the table, all with --json).")] = None,
    redetect: Annotated[bool, typer.Option(
        help="Run every detector on every trace again, not only on traces no run has seen.")] = False,
    since: Annotated[str | None, typer.Option(
        help="Report what changed since this long ago (1d, 12h, 2w) or this date (2026-12-01) "
             "[default: since the previous mining run].")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run the failure detectors over the store, group the findings into clusters and rank them.

    Most detectors look at one trace at a time and have already run when it was ingested; mining detects traces
    not yet seen (every trace when a threshold changed), runs the detectors that compare traces and the --rules
    again, and ranks. `tracegym failures show CLUSTER` shows one cluster's evidence.

    Clusters rank by the traces they affect times how reliably those traces fail (a Wilson lower bound).

    Each run is recorded, and reports what changed since the previous one (or --since): new clusters, and
    clusters whose share of the traces grew.
    """
    from tracegym.mining import MineConfig
    from tracegym.mining import mine_failures as mine
    from tracegym.mining.feed import changes, parse_since
    from tracegym.store import open_store

    if since is not None:
        parse_since(since, datetime.now())  # a bad window stops the run before it mines
    config = MineConfig(score_threshold=score_threshold, min_repeats=min_repeats, max_turns=max_turns)
    with open_store(store) as st:
        summary = mine(st, config, rules, redetect)
        changed = changes(st, summary.run_id, since)
    data = summary.to_dict()
    if as_json:
        data["clusters"] = data["clusters"][:top]
        print_json({**data, "changes": changed})
        return
    if summary.traces == 0:
        err.print("The store has no traces: run `tracegym ingest PATH` first.")
        return
    rows = [_table_row(c) for c in data["clusters"][: top or 30]]
    print_table(rows, title="Failure clusters, ranked")
    catch_alls = sum(c.catch_all for c in summary.clusters)
    err.print(
        f"{summary.findings} findings in {summary.traces_with_findings} of {summary.traces} traces, "
        f"{len(summary.clusters)} clusters. `tracegym failures show CLUSTER` shows a cluster's evidence."
        + (f" {catch_alls} catch-all clusters (outcome, scores, labels: that traces failed, not where) rank after "
           "the specific ones." if catch_alls else "")
    )
    _print_changes(changed)


def _print_changes(c: dict) -> None:
    if c["baseline_run"] is None and c["cutoff"] is not None:
        err.print(f"No mining run at or before {c['cutoff']:%Y-%m-%d %H:%M} is recorded: every cluster counts as new.")
        return
    if c["baseline_run"] is None:
        err.print("No earlier mining run to compare with. The next run reports what changed since this one.")
        return
    shown = 10
    new = [{"rank": x["rank"], "cluster": x["cluster_id"], "detector": x["detector"], "traces": x["n_traces"],
            "share": f"{x['share']:.1%}", "signature": x["signature"]} for x in c["new_clusters"][:shown]]
    grew = [{"rank": x["rank"], "cluster": x["cluster_id"], "detector": x["detector"],
             "traces": f"{x['n_traces_before']} → {x['n_traces']}",
             "share": f"{x['share_before']:.1%} → {x['share']:.1%}", "signature": x["signature"]}
            for x in c["grown_clusters"][:shown]]
    when = f"{c['baseline_mined_at']:%Y-%m-%d %H:%M}"
    if new:
        print_table(new, title=f"New clusters since the mining run of {when}")
    if grew:
        print_table(grew, title=f"Clusters whose share grew since {when}")
    more = "" if len(new) == len(c["new_clusters"]) and len(grew) == len(c["grown_clusters"]) else (
        f" (the first {shown} of each shown; --json lists them all)")
    err.print(f"Since the mining run of {when} ({literal(c['since'])}): {c['new_traces']} new traces, "
              f"{len(c['new_clusters'])} new clusters, {len(c['grown_clusters'])} clusters grew{more}.")


def _table_row(cluster: dict) -> dict:
    rate = cluster["failure_rate"]
    return {
        "rank": cluster["rank"],
        "cluster": cluster["cluster_id"],
        "detector": cluster["detector"],
        "traces": cluster["n_traces"],
        "failed": "?" if rate is None else f"{rate:.0%}",
        "catch-all": "yes" if cluster["catch_all"] else "",
        "signature": cluster["signature"],
    }


@mine_app.command("detectors")
def mine_detectors(as_json: JsonOpt = False) -> None:
    """List the built-in failure detectors: name, category and what each finds."""
    from tracegym.mining import DETECTORS

    rows = [{"name": d.name, "category": d.category, "verdict": d.verdict, "description": d.description}
            for d in DETECTORS]
    if as_json:
        print_json(rows)
        return
    from rich.markup import escape

    for row in rows:
        verdict = ", a verdict: the trace failed" if row["verdict"] else ""
        out.print(f"[bold]{row['name']}[/bold] [dim]({row['category']}{verdict})[/dim]")
        out.print(f"  {escape(row['description'])}\n", highlight=False)


@failures_app.command("show")
def failures_show(
    cluster: Annotated[str, typer.Argument(help="A cluster id, or its start (see `tracegym mine failures`).")],
    traces: Annotated[int, typer.Option(min=1, help="Show evidence from at most this many traces.")] = 10,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show one failure cluster: its detector, evidence and example traces."""
    from tracegym.mining.findings import cluster_evidence, describe_detector, get_cluster
    from tracegym.store import open_store

    with open_store(store, read_only=True) as st:
        found = get_cluster(st, cluster)
        evidence = cluster_evidence(st, found.cluster_id, traces)
    detector = describe_detector(found.detector)
    if as_json:
        print_json({"cluster": found.to_dict(), "detector": detector, "evidence": evidence})
        return
    _render_cluster(found.to_dict(), detector, evidence)


def _render_cluster(cluster: dict, detector: dict, evidence: list[dict]) -> None:
    rate = "unknown" if cluster["failure_rate"] is None else f"{cluster['failure_rate']:.0%}"
    out.print(f"[bold]cluster {literal(cluster['cluster_id'])}[/bold]  rank {cluster['rank']}  detector "
              f"{literal(cluster['detector'])}\nsignature: {literal(cluster['signature'])}\n"
              f"{cluster['n_traces']} traces, {cluster['n_findings']} findings; {cluster['n_failed']} of "
              f"{cluster['n_known']} traces with a known outcome failed ({rate})\n"
              + ("catch-all: it says that traces failed, not where; it ranks after the specific clusters\n"
                 if cluster["catch_all"] else "")
              + f"[dim]{literal(detector['description'])}[/dim]")
    for row in evidence:
        at = "" if row["message_idx"] is None else f" message {row['message_idx']}"
        title = f"{row['trace_id']}{at}  outcome={row['outcome']}  ({row['findings_in_trace']} in this trace)"
        out.print(f"\n[bold]{literal(title)}[/bold]")
        out.print(literal(row["evidence"] or ""), highlight=False)
    out.print(f"\nExample trace: `tracegym traces show {literal(cluster['example_trace_id'])}`")


@failures_app.command("list")
def failures_list(
    detector: Annotated[str | None, typer.Option(help="Only this detector.")] = None,
    trace: Annotated[str | None, typer.Option(help="Only this trace.")] = None,
    cluster: Annotated[str | None, typer.Option(help="Only this cluster id.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many rows.")] = 50,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List individual findings (one row per failure found in a trace)."""
    from tracegym.mining.findings import list_findings
    from tracegym.store import open_store

    with open_store(store, read_only=True) as st:
        emit(list_findings(st, detector, trace, cluster, limit), as_json, title="Findings")
