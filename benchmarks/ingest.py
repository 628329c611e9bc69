"""Time of `tracegym ingest` on a large OpenAI-chat JSONL, beside DuckDB's own read_json of the same file.

The file replicates the real τ-bench runs (../shared/data/traces/tau-bench) as
OpenAI chat conversations, one per line, `{id, model, messages, metadata}`, each
copy with a fresh trace id: 50,000 traces are about 1.3 M messages and 880 MB.
The baseline is the floor for reading the file at all:
`CREATE TABLE t AS SELECT * FROM read_json(FILE)` into a fresh DuckDB file.
tracegym's figure is `ingest_paths` into a fresh store: hashing the file,
detection, normalization into traces/messages/tool_calls, tool-result linking,
error flags, content hashes and the commit. Each side runs in its own
subprocess (imports and store creation not timed); the peak RSS is the ingest
subprocess's, from getrusage. With --record-path the record-by-record path is
timed too, on the same file (slow: use a small --traces). On a shared machine,
--repeats N alternates the two sides N times and reports the medians.

    python benchmarks/ingest.py --traces 50000

With --release-files N the same traces are written as N files, and the ingest of the folder is timed twice:
holding the store throughout (no other process waits), and releasing it after every file as it does while
another command waits for the store (closed, then opened and migrated-checked again: `Store.let_waiters_in`,
with a waiting process stood in). Its last line is {"traces", "files", "hold_s", "release_s", "release_ratio"}.

    python benchmarks/ingest.py --traces 20000 --release-files 20 --repeats 3

With --reader-wait the traces stay one file: `tracegym ingest` of it runs as a process, and once it holds the
store a `tracegym sql` counting the traces starts; a file is one transaction, so the reader waits for the whole
file. It reports how long the reader took to answer, beside the same reader on the finished store (its start-up).
Its last line is {"traces", "ingest_s", "reader_s", "reader_alone_s", "reader_count"}.

    python benchmarks/ingest.py --traces 20000 --reader-wait

The last line is one JSON object: {"traces", "tracegym_s", "duckdb_read_s", "ratio", "tracegym_cpu_s",
"duckdb_read_cpu_s", "cpu_ratio", "tracegym_user_s", "duckdb_read_user_s", "user_ratio", "peak_rss_mb"} (the CPU
figures are the processes' own, all threads: on a shared machine they move less than the wall-clock ones). CPU is
user plus kernel time; the user-time ratio is given apart because `read_json`'s kernel time (page faults of its
1.7 GB peak) moves with the host and its load: at 50,000 traces, 5.7 to 17.4 s beside 3.4 to 3.7 s of user time
on one loaded 2-core VM, where an earlier one measured 6.5 s of CPU in all.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
TAU_BENCH = Path(__file__).resolve().parents[2] / "shared" / "data" / "traces" / "tau-bench" / "gpt-4o-airline.json"

INGEST = """
import json, resource, sys, time
from tracegym.store import open_store
from tracegym.ingest.pipeline import ingest_paths
if sys.argv[3] == "record":  # time the record-by-record path: decline the adapter's bulk path
    from tracegym.ingest.adapters.openai_chat import OpenAIChatAdapter
    OpenAIChatAdapter.bulk_load = lambda self, con, src, sink: False
if sys.argv[3] == "release":  # a process stands in as waiting after every file (its waiter file never written)
    from tracegym.store import lock
    lock.waiting_processes = lambda store: [2 ** 22 + 1]
with open_store(sys.argv[2]) as store:
    start, cpu, user = time.perf_counter(), time.process_time(), resource.getrusage(resource.RUSAGE_SELF).ru_utime
    summary = ingest_paths(store, [sys.argv[1]]).to_dict()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"seconds": seconds, "cpu_s": cpu, "user_s": usage.ru_utime - user, "rss_mb": usage.ru_maxrss / 1024,
                  "traces": summary["traces"], "messages": summary["messages"], "errors": summary["errors"]}))
"""

READ_JSON = """
import json, resource, sys, time, duckdb
con = duckdb.connect(sys.argv[2])
con.execute("SET enable_progress_bar = false")
start, cpu, user = time.perf_counter(), time.process_time(), resource.getrusage(resource.RUSAGE_SELF).ru_utime
con.execute("CREATE TABLE t AS SELECT * FROM read_json(?)", [sys.argv[1]])
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"seconds": seconds, "cpu_s": cpu, "user_s": usage.ru_utime - user, "rss_mb": usage.ru_maxrss / 1024,
                  "rows": con.execute("SELECT count(*) FROM t").fetchall()[0][0]}))
"""


def build_file(path: Path, traces: int, seed: int = 0) -> int:
    """Write `traces` conversations replicating the τ-bench runs; returns the message count."""
    runs = orjson.loads(TAU_BENCH.read_bytes())
    rng = random.Random(seed)
    messages = 0
    with path.open("wb") as f:
        for i in range(traces):
            run = runs[i % len(runs)]
            line = {
                "id": f"bench-{i:07d}-{rng.getrandbits(64):016x}",
                "model": "gpt-4o",
                "messages": run["traj"],
                "metadata": {"task_id": str(run["task_id"]), "trial": str(run["trial"]), "reward": str(run["reward"])},
            }
            f.write(orjson.dumps(line) + b"\n")
            messages += len(run["traj"])
    return messages


def split_file(data: Path, folder: Path, files: int) -> None:
    """The lines of `data` dealt in turn into `files` files under `folder`."""
    folder.mkdir()
    outs = [(folder / f"part-{k:03d}.jsonl").open("wb") for k in range(files)]
    with data.open("rb") as f:
        for i, line in enumerate(f):
            outs[i % files].write(line)
    for out in outs:
        out.close()


def compare_release(work: Path, data: Path, traces: int, files: int, repeats: int) -> None:
    """Ingest of `files` files, holding the store throughout vs releasing it after every file (medians)."""
    folder = work / "parts"
    split_file(data, folder, files)
    held, released = [], []
    for i in range(repeats):
        for mode, runs in (("hold", held), ("release", released)):
            runs.append(run_child(INGEST, str(folder), str(work / f"{mode}{i}.duckdb"), mode))
            if runs[-1]["traces"] != traces:
                raise SystemExit(f"ingest stored {runs[-1]}, expected {traces} traces")
            print(f"ingest of {files} files, {mode}: {runs[-1]['seconds']:.2f} s", flush=True)
    hold_s = statistics.median(r["seconds"] for r in held)
    release_s = statistics.median(r["seconds"] for r in released)
    print(json.dumps({"traces": traces, "files": files, "hold_s": round(hold_s, 3), "release_s": round(release_s, 3),
                      "release_ratio": round(release_s / hold_s, 3)}))


def reader_wait(work: Path, data: Path, traces: int) -> None:
    """How long a reader that starts as the ingest of one file takes the store waits for its answer."""
    store = work / "wait.duckdb"
    cli = [sys.executable, "-m", "tracegym.cli"]
    env = {**os.environ, "PYTHONPATH": str(REPO), "TRACEGYM_STORE": ""}
    count = [*cli, "sql", "--json", "SELECT count(*) AS n FROM traces", "--store", str(store)]
    started = time.perf_counter()
    ingest = subprocess.Popen([*cli, "ingest", str(data), "--store", str(store)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not store.with_name(store.name + ".holder").exists():  # the ingest holds the store
        if ingest.poll() is not None:
            raise SystemExit(f"the ingest ended (exit {ingest.returncode}) before it held the store")
        time.sleep(0.01)
    asked = time.perf_counter()
    answer = subprocess.run(count, env=env, check=True, capture_output=True, text=True)
    reader_s = time.perf_counter() - asked
    if ingest.wait() != 0:
        raise SystemExit(f"the ingest failed (exit {ingest.returncode})")
    ingest_s = time.perf_counter() - started
    alone = time.perf_counter()
    subprocess.run(count, env=env, check=True, capture_output=True)
    print(json.dumps({"traces": traces, "ingest_s": round(ingest_s, 3), "reader_s": round(reader_s, 3),
                      "reader_alone_s": round(time.perf_counter() - alone, 3),
                      "reader_count": json.loads(answer.stdout)[0]["n"]}))


def run_child(script: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", script, *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=int, default=50_000, help="conversations in the generated file")
    parser.add_argument("--repeats", type=int, default=1,
                        help="alternate the two sides this many times and report medians (for a noisy machine)")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="where to write the file and the stores (default: a temp dir)")
    parser.add_argument("--record-path", action="store_true", help="also time the record-by-record path")
    parser.add_argument("--release-files", type=int, default=0,
                        help="instead: the traces in this many files, ingest holding the store vs releasing it "
                             "after every file")
    parser.add_argument("--reader-wait", action="store_true",
                        help="instead: how long a reader waits while the traces, one file, are ingested")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        work = Path(tmp)
        data = work / "chat.jsonl"
        messages = build_file(data, args.traces)
        print(f"file: {args.traces} traces, {messages} messages, {data.stat().st_size / 1e6:.0f} MB", flush=True)
        if args.release_files:
            compare_release(work, data, args.traces, args.release_files, args.repeats)
            return
        if args.reader_wait:
            reader_wait(work, data, args.traces)
            return
        bases, ours = [], []
        for i in range(args.repeats):
            bases.append(run_child(READ_JSON, str(data), str(work / f"read_json{i}.duckdb")))
            print(f"duckdb read_json into a table: {bases[-1]['seconds']:.2f} s (process CPU "
                  f"{bases[-1]['cpu_s']:.1f} s, user {bases[-1]['user_s']:.1f} s, "
                  f"peak RSS {bases[-1]['rss_mb']:.0f} MB)", flush=True)
            ours.append(run_child(INGEST, str(data), str(work / f"store{i}.duckdb"), "bulk"))
            print(f"tracegym ingest: {ours[-1]['seconds']:.2f} s (process CPU {ours[-1]['cpu_s']:.1f} s, "
                  f"user {ours[-1]['user_s']:.1f} s, peak RSS {ours[-1]['rss_mb']:.0f} MB)", flush=True)
            if (ours[-1]["traces"], ours[-1]["messages"], ours[-1]["errors"]) != (args.traces, messages, 0):
                raise SystemExit(f"ingest stored {ours[-1]}, expected {args.traces} traces, {messages} messages")
        if args.record_path:
            slow = run_child(INGEST, str(data), str(work / "record.duckdb"), "record")
            print(f"tracegym ingest, record by record: {slow['seconds']:.2f} s (process CPU {slow['cpu_s']:.1f} s, "
                  f"peak RSS {slow['rss_mb']:.0f} MB)", flush=True)

    ours_s = statistics.median(r["seconds"] for r in ours)
    base_s = statistics.median(r["seconds"] for r in bases)
    ours_cpu = statistics.median(r["cpu_s"] for r in ours)  # process CPU: steadier than wall time on a busy machine
    base_cpu = statistics.median(r["cpu_s"] for r in bases)
    ours_user = statistics.median(r["user_s"] for r in ours)
    base_user = statistics.median(r["user_s"] for r in bases)
    print(json.dumps({
        "traces": args.traces,
        "tracegym_s": round(ours_s, 3),
        "duckdb_read_s": round(base_s, 3),
        "ratio": round(ours_s / base_s, 3),
        "tracegym_cpu_s": round(ours_cpu, 3),
        "duckdb_read_cpu_s": round(base_cpu, 3),
        "cpu_ratio": round(ours_cpu / base_cpu, 3),
        "tracegym_user_s": round(ours_user, 3),
        "duckdb_read_user_s": round(base_user, 3),
        "user_ratio": round(ours_user / base_user, 3),
        "peak_rss_mb": round(max(r["rss_mb"] for r in ours), 1),
    }))


if __name__ == "__main__":
    main()
