"""Time of `tasks generate` with the reward gates against without them, on the real traces, in one run.

The store is ../shared/data/traces (every format) ingested and mined once. The tasks are the quickstart's:
the learnable failure families (mini-swe-agent's format errors, τ-bench's tool errors), cut at the agent's
answer to the failure, bound to examples/evals-learn.yaml. Both sides run `create_task_set` in this process
(imports done, the same store): without gates, then with them, the gate episodes run under the harness the
quickstart trains in (--harness default: run_as shell: chat, the reply scored as it stands), or with
--harness sandbox under the defaults (each shell task's reference command run in the sandbox: bubblewrap).

Each figure is the median of --repeats timed runs after one warm-up run of each side. Before the figures: the
gate's own time and episodes (of which the hollow probes': `tracegym.tasks.hollow_probes`), and the one-time
import of the episode runner the gates load (torch and transformers, which `tasks generate --no-gates` never
imports). The last line is one JSON object: {"tasks", "rejected", "gen_s", "gen_gated_s", "ratio", "hackable"}
("hackable": the task-eval pairs where a hollow reply earned the eval's reward, parts of a combined reward
counted apart).

    python benchmarks/task_gates.py [--harness chat|sandbox] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
TRACES = REPO.parent / "shared" / "data" / "traces"
EVALS = REPO / "examples" / "evals-learn.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--harness", choices=["chat", "sandbox"], default="chat")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    from tracegym.commands.quickstart import GENERATE, learnable_clusters
    from tracegym.ingest.pipeline import ingest_paths
    from tracegym.mining import MineConfig, mine_failures
    from tracegym.store import open_store
    from tracegym.store.access import StoreAccess
    from tracegym.tasks.generate import GenerateOptions, create_task_set

    work = Path(tempfile.mkdtemp(prefix="tracegym-gates-"))
    with open_store(work / "store.duckdb") as st:
        ingest_paths(st, [str(TRACES)])
        mine_failures(st, MineConfig())
        clusters = [c["cluster_id"] for c in learnable_clusters(st)]
    store = StoreAccess(work / "store.duckdb")
    options = GenerateOptions(name="gates", clusters=clusters, **GENERATE)
    started = time.perf_counter()
    from tracegym.harnesses.config import HarnessConfig
    from tracegym.harnesses.gates import NewTaskGate

    import_s = time.perf_counter() - started
    config = HarnessConfig(run_as={"shell": "chat"}) if args.harness == "chat" else HarnessConfig()
    gate = NewTaskGate(store, EVALS, config, REPO)

    def plain() -> float:
        t = time.perf_counter()
        create_task_set(store, options, EVALS, work / "plain", force=True)
        return time.perf_counter() - t

    def gated() -> tuple[float, int, int, float, int, float, int, int]:
        t = time.perf_counter()
        task_set = create_task_set(store, options, EVALS, work / "gated", force=True, gate=gate)
        report = gate.report
        assert report is not None
        hackable = sum(len(paid) for paid in report.hackability().values())
        return (time.perf_counter() - t, len(task_set.tasks), len(report.rejected), report.seconds,
                report.episodes, report.hollow_seconds, report.hollow_episodes, hackable)

    plain(), gated()  # warm-up: caches, the scorers' imports, the sandbox's first start
    plain_s = [plain() for _ in range(args.repeats)]
    runs = [gated() for _ in range(args.repeats)]
    gen_s = statistics.median(plain_s)
    gen_gated_s = statistics.median(r[0] for r in runs)
    _, tasks, rejected, _, episodes, _, hollow_episodes, hackable = runs[0]
    print(f"harness: {args.harness}; gates: {statistics.median(r[3] for r in runs):.3f} s for {episodes} probe "
          f"episodes and {hollow_episodes} hollow ones ({statistics.median(r[5] for r in runs):.3f} s of it); "
          f"one-time import of the episode runner: {import_s:.2f} s")
    print(json.dumps({"tasks": tasks, "rejected": rejected, "gen_s": round(gen_s, 3),
                      "gen_gated_s": round(gen_gated_s, 3), "ratio": round(gen_gated_s / gen_s, 2),
                      "hackable": hackable}))


if __name__ == "__main__":
    main()
