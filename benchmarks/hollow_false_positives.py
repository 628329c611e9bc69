"""How often the hollow-reply detectors flag the recorded replies of successful real traces (false positives).

Every assistant turn of every trace with outcome success is judged against the messages before it, as the trainer
judges a sampled reply (tracegym/evals/scorers/hollow.py). Prints, per format, the turns, the share flagged by
each detector and by any, and with --examples the flagged turns; the last line is one JSON object.

    python benchmarks/hollow_false_positives.py --traces ../shared/data/traces/mini-swe-agent \
        ../shared/data/traces/tau-bench
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from pathlib import Path

from tracegym.evals.scorers.hollow import DETECTORS, conversation_findings
from tracegym.evals.scorers.recorded import iter_recorded
from tracegym.ingest.pipeline import ingest_paths
from tracegym.store import open_store


def measure(store_path: Path, outcome: str, examples: int) -> dict[str, dict[str, float]]:
    turns: Counter[str] = Counter()
    flagged: dict[str, Counter[str]] = {}
    shown = 0
    with open_store(store_path, read_only=True) as store:
        for trace in iter_recorded(store, "outcome = ?", [outcome]):
            messages = trace.openai_messages()
            turns[trace.format] += sum(1 for m in messages if m["role"] == "assistant")
            for turn in conversation_findings(messages):
                counts = flagged.setdefault(trace.format, Counter())
                counts["any"] += 1
                counts.update(list(turn.findings))
                if shown < examples:
                    shown += 1
                    print(f"--- {trace.format} {trace.trace_id} message {turn.index}: {turn.findings}")
                    print(repr((messages[turn.index].get("content") or "")[:400]))
    return {fmt: {"turns": n, **{name: flagged.get(fmt, Counter())[name] / n for name in (*DETECTORS, "any")}}
            for fmt, n in sorted(turns.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", nargs="+", required=True, help="trace files or folders to ingest")
    parser.add_argument("--outcome", default="success", help="judge the turns of traces with this outcome")
    parser.add_argument("--examples", type=int, default=0, help="print up to this many flagged turns")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store_path = Path(tmp) / "store.duckdb"
        with open_store(store_path) as store:
            ingest_paths(store, args.traces)
        rates = measure(store_path, args.outcome, args.examples)
    for fmt, row in rates.items():
        print(f"{fmt}: {row['turns']} turns; " + ", ".join(f"{k} {row[k]:.1%}" for k in (*DETECTORS, "any")))
    print(json.dumps({"outcome": args.outcome, "rates": rates}))


if __name__ == "__main__":
    main()
