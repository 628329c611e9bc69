"""Time of `mine failures` on a large store, beside a plain DuckDB GROUP BY over the same tool-call results.

The store is the real τ-bench file ingested once, then replicated in SQL with
fresh trace ids (`<id>:r<k>`) until it holds --traces traces; every table the
detectors read (traces, messages, tool_calls, scores) is replicated. The
baseline is what someone would write without tracegym to group identical tool
results: `SELECT name, result, count(*) FROM tool_calls WHERE result IS NOT
NULL GROUP BY name, result`.

The per-trace detectors run when traces are ingested (tracegym/mining/detection.py);
the replicated rows bypass ingest, so the benchmark first runs that detection
once, as ingesting them would have, and reports its time (`detect_s`). Then
`mine failures` as a user runs it on an ingested store (the figure compared
with the GROUP BY): the store-wide detector, the clusters summed and ranked,
the summary read back. Beside it, mining with every trace detected again
(`mine failures --redetect`, what a change of thresholds costs: `redetect_s`).

    python benchmarks/mine.py --traces 50000
    python benchmarks/mine.py --traces 50000 --distinct-texts

Copies share their texts (trials of one task), so most texts recur; the
baseline then groups a dictionary-compressed column of a few hundred distinct
results, its cheapest case. --distinct-texts gives every copy its own message
texts, tool results and metadata: the worst case for mining's work done once
per distinct text, and a baseline that must hash every result.

Each figure is the median of --repeats timed runs after one warm-up run, as
wall-clock (the figures in the JSON) and as this process's CPU time (steadier on
a shared machine). Before the figures comes where mining spends its time: each
step of the run (shared scans, detectors, clustering, commit), median wall and
CPU seconds over the timed runs. The last line is one JSON object:
{"traces", "mine_s", "groupby_s", "ratio", "detect_s", "redetect_s", "redetect_ratio"}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from tracegym.ingest.pipeline import ingest_paths
from tracegym.mining import mine_failures
from tracegym.mining.detection import detect_ingested
from tracegym.mining.mine import MineSummary
from tracegym.mining.timing import StepTime
from tracegym.store import Store, open_store

TAU_BENCH = Path(__file__).resolve().parents[2] / "shared" / "data" / "traces" / "tau-bench"
REPLICATED = {
    "traces": "trace_id",
    "messages": "trace_id",
    "tool_calls": "trace_id",
    "scores": "trace_id",
}
# With --distinct-texts, what makes each copy's texts its own (r is the copy's number).
DISTINCT_TEXTS = {
    ("messages", "content"): "content || ' #{r}'",
    ("tool_calls", "result"): "result || ' #{r}'",
    ("traces", "metadata"): """json_merge_patch(metadata, '{{"copy": {r}}}')""",
}
T = TypeVar("T")
GROUP_BY = "SELECT name, result, count(*) AS n FROM tool_calls WHERE result IS NOT NULL GROUP BY name, result"


def build_store(path: Path, source: Path, traces: int, distinct_texts: bool = False) -> int:
    """Ingest `source`, then replicate its rows until the store holds about `traces` traces; returns the count.

    Copies are appended one after another, as ingesting a replicated file would lay them out: a
    copy made row by row (each row followed by its duplicates) would let DuckDB compress the
    duplicates away and make every scan, the baseline's included, unrealistically cheap.

    Copies share their texts, as trials of one task do, so both mining and the baseline see few
    distinct texts. With `distinct_texts` every copy after the first gets its own message texts,
    tool results and metadata (a suffix, a key), as traces of different tasks would have.
    """
    with open_store(path) as store:
        ingest_paths(store, [str(source)])
        base = store.scalar("SELECT count(*) FROM traces")
        copies = max(1, -(-traces // base))  # ceil: the store holds copies x base traces
        with store.transaction() as con:
            for table in REPLICATED:
                con.execute(f"CREATE TEMP TABLE base_{table} AS SELECT * FROM {table}")
            for r in range(1, copies):
                for table, key in REPLICATED.items():
                    columns = [row[0] for row in con.execute(f"DESCRIBE {table}").fetchall()]
                    select = ", ".join(_copied(table, c, key, r, distinct_texts) for c in columns)
                    con.execute(f"INSERT INTO {table} SELECT {select} FROM base_{table}")
        store.con.execute("CHECKPOINT")
        return int(store.scalar("SELECT count(*) FROM traces"))


def _copied(table: str, column: str, key: str, r: int, distinct_texts: bool) -> str:
    """The SQL for `column` of copy `r`."""
    if column == key:
        return f"{key} || ':r{r}' AS {key}"
    if distinct_texts and (table, column) in DISTINCT_TEXTS:
        return DISTINCT_TEXTS[table, column].format(r=r) + f" AS {column}"
    return column


class Timer(Generic[T]):
    """Wall-clock and process CPU seconds of each call of `run`."""

    def __init__(self, run: Callable[[], T]) -> None:
        self.run = run
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def __call__(self) -> T:
        start, start_cpu = time.perf_counter(), time.process_time()
        result = self.run()
        self.wall.append(time.perf_counter() - start)
        self.cpu.append(time.process_time() - start_cpu)
        return result


def measure(store: Store, repeats: int) -> tuple[dict[str, float], dict[str, StepTime]]:
    """Median figures of `repeats` timed runs of each side, and the median time of each step of mining."""
    mine_failures(store)  # warm-up: the buffer pool holds the columns and the macros exist for every timed run
    store.con.execute(GROUP_BY).fetchall()
    mine, groupby = Timer(lambda: mine_failures(store)), Timer(lambda: store.con.execute(GROUP_BY).fetchall())
    # With its checkpoint: its writes would otherwise be checkpointed by the next timed run of plain mining.
    redetect = Timer(lambda: (mine_failures(store, redetect=True), store.con.execute("CHECKPOINT")))
    summaries: list[MineSummary] = []
    for _ in range(repeats):  # alternated, so that load from other processes weighs on both sides alike
        summaries.append(mine())
        groupby()
    for _ in range(repeats):  # after: its writes leave the next statements reading cold blocks
        redetect()
    steps = {name: StepTime(statistics.median(s.timings[name].wall_s for s in summaries),
                            statistics.median(s.timings[name].cpu_s for s in summaries))
             for name in summaries[0].timings}
    figures = {"mine_s": statistics.median(mine.wall), "groupby_s": statistics.median(groupby.wall),
               "mine_cpu_s": statistics.median(mine.cpu), "groupby_cpu_s": statistics.median(groupby.cpu),
               "redetect_s": statistics.median(redetect.wall)}
    return figures, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=50_000, help="traces in the replicated store")
    parser.add_argument("--source", type=Path, default=TAU_BENCH, help="trace files to ingest and replicate")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each; the median is reported")
    parser.add_argument("--distinct-texts", action="store_true",
                        help="give every copy its own texts (the worst case for work done once per distinct text)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "store.duckdb"
        start = time.perf_counter()
        n = build_store(path, args.source, args.traces, args.distinct_texts)
        built_s = time.perf_counter() - start
        with open_store(path) as store:
            sizes = {t: store.scalar(f"SELECT count(*) FROM {t}") for t in ("messages", "tool_calls", "scores")}
            detect = Timer(lambda: detect_ingested(store))
            detected = detect()
            store.con.execute("CHECKPOINT")  # as closing the store at the end of `tracegym ingest` would
            figures, steps = measure(store, args.repeats)
            summary = mine_failures(store)
    print(f"detection at ingest: {detected.traces} traces in {detect.wall[0]:.3f} s wall, {detect.cpu[0]:.3f} s CPU "
          f"(once, as `tracegym ingest` ends)")
    print("where mining spends its time (median of the timed runs):")
    for name, step in steps.items():
        found = f"  {summary.by_detector[name]} findings" if name in summary.by_detector else ""
        print(f"  {name:<28} {step.wall_s:7.3f} s wall {step.cpu_s:7.3f} s CPU{found}")
    ratio = figures["mine_s"] / figures["groupby_s"]
    print(f"store: {n} traces, {sizes['messages']} messages, {sizes['tool_calls']} tool calls, "
          f"{sizes['scores']} scores, {'distinct' if args.distinct_texts else 'shared'} texts across copies "
          f"(built in {built_s:.1f} s)")
    print(f"mine failures: {figures['mine_s']:.3f} s wall, {figures['mine_cpu_s']:.3f} s CPU  "
          f"({summary.findings} findings, {len(summary.clusters)} clusters)")
    print(f"mine failures --redetect (every trace detected again): {figures['redetect_s']:.3f} s wall "
          f"({figures['redetect_s'] / figures['groupby_s']:.1f}x the GROUP BY)")
    print(f"GROUP BY name, result over tool_calls: {figures['groupby_s']:.4f} s wall, "
          f"{figures['groupby_cpu_s']:.4f} s CPU")
    print(f"ratio: {ratio:.1f}x wall, {figures['mine_cpu_s'] / max(figures['groupby_cpu_s'], 1e-9):.1f}x CPU "
          f"(target: within 5x); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(json.dumps({"traces": n, "mine_s": round(figures["mine_s"], 4), "groupby_s": round(figures["groupby_s"], 4),
                      "ratio": round(ratio, 3), "detect_s": round(detect.wall[0], 4),
                      "redetect_s": round(figures["redetect_s"], 4),
                      "redetect_ratio": round(figures["redetect_s"] / figures["groupby_s"], 3)}))


if __name__ == "__main__":
    main()
