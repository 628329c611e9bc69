"""`tracegym quickstart`: the main job, whole, on its embedded defaults and on a CPU.

ingest the real traces -> mine failures -> generate τ-bench failure tasks (bound to the gold-action eval)
-> train briefly (warm start, then a few GRPO steps of the default model) -> evaluate the base and the
new checkpoint on the held-out tasks, per cluster -> write the report. Every step is one library call
that the matching command also makes. Run again, it picks up where it stopped: ingesting is idempotent,
training resumes from its last checkpoint and evaluation skips the samples already stored.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from tracegym.errors import NotFoundError
from tracegym.output import StoreOpt, err, out

DEFAULT_TRACES = Path("..") / "shared" / "data" / "traces"
DEFAULT_WORKDIR = Path(".tracegym") / "quickstart"
DETECTORS = ("tool_error", "handoff", "repeated_call", "user_repeat")
"""Failures at one agent turn: a single reply can fix them (the whole-trace `outcome` ones it cannot)."""

# examples/evals-train.yaml's gold_tool: the share of the reply's calls that name a gold-action tool.
EVALS_YAML = """\
version: 1
evals:
  - name: gold_tool
    kind: tool_calls
    description: the share of the reply's calls that name a τ-bench gold-action tool (arguments ignored)
    expected_from: metadata.task.actions
    match_arguments: ignore
    partial_credit: true
    credit: precision
    applies_to: {formats: [tau-bench]}
"""


def train_config(task_set: Path, run_dir: Path) -> dict[str, Any]:
    """examples/train-tau.yaml cut to minutes of a 2-core CPU: 6 warm-start steps of 6 examples, 4 GRPO steps."""
    return {
        "run_dir": str(run_dir), "seed": 0, "steps": 4, "checkpoint_every": 4, "keep_checkpoints": 2,
        "model": {"ref": "smollm2-135m"},
        "tasks": {"task_set": str(task_set), "split": "train", "detectors": list(DETECTORS)},
        "prompt": {"context": "last-user", "system_max_chars": 0, "tool_schemas": "compact", "max_tokens": 320},
        "harness": {"kind": "replay", "replay": {"terminal_tools": ["transfer_to_human_agents"]},
                    "limits": {"max_turns": 1}},
        "sampler": {"temperature": 1.0, "top_p": 0.95, "precision": "fp32", "max_new_tokens": 48},
        "grpo": {"group_size": 4, "batch_groups": 2},
        "optim": {"lr": 3.0e-5, "micro_batch_tokens": 2048, "train_layers": 10, "freeze_embeddings": True},
        "async": {"max_staleness": 0},
        "warmup": {"steps": 6, "formats": ["tau-bench"], "lr": 5.0e-5, "batch_size": 6},
    }


def register(app: typer.Typer) -> None:
    app.command("quickstart")(quickstart)


def quickstart(
    traces: Annotated[Path, typer.Option(help="Trace files or folder to start from.")] = DEFAULT_TRACES,
    workdir: Annotated[Path, typer.Option(help="Where the task set, the run and the report go.")] = DEFAULT_WORKDIR,
    samples: Annotated[int, typer.Option("--samples", "-k", min=1, help="Eval episodes per held-out task.")] = 2,
    store: StoreOpt = None,
) -> None:
    """Run the whole pipeline on the embedded defaults: ingest, mine, tasks, train, eval per cluster, report."""
    from tracegym.store import default_store_path

    if not traces.exists():
        raise NotFoundError(f"No traces at {traces}. Pass --traces PATH (a file or folder of agent traces).")
    path = store or default_store_path()
    started = time.perf_counter()
    task_set = _prepare(traces, workdir, path)
    run_dir = workdir / "run"
    run_id = _step(4, "train", lambda: _train(task_set, run_dir, path))
    _step(5, "eval", lambda: _evaluate(task_set, run_dir, path, samples))
    report = _step(6, "report", lambda: _report(run_id, workdir / "report.html", path))
    err.print(f"Done in {(time.perf_counter() - started) / 60:.1f} min. Store: {path}; run: {run_dir}.")
    out.print(f"Report: {report.resolve()}")


def _step(n: int, name: str, work: Any) -> Any:
    err.print(f"[bold]{n}/6 {name}[/bold]")
    started = time.perf_counter()
    result = work()
    err.print(f"[dim]{name}: {time.perf_counter() - started:.0f} s[/dim]")
    return result


def _prepare(traces: Path, workdir: Path, path: Path) -> Path:
    """Ingest, mine and generate the task set; returns its folder."""
    from tracegym.ingest.pipeline import ingest_paths
    from tracegym.mining import MineConfig, mine_failures
    from tracegym.store import open_store

    with open_store(path) as st:
        data = _step(1, "ingest", lambda: ingest_paths(st, [str(traces)]).to_dict())
        err.print(f"{data['traces']} new traces from {data['files']} files ({data['files_skipped_already_ingested']} "
                  f"files already in the store)")
        mined = _step(2, "mine", lambda: mine_failures(st, MineConfig()))
        err.print(f"{mined.findings} failures in {mined.traces_with_findings} of {mined.traces} traces, "
                  f"{len(mined.clusters)} clusters")
        return _step(3, "tasks", lambda: _tasks(st, workdir))


def _tasks(st: Any, workdir: Path) -> Path:
    from tracegym.tasks.generate import GenerateOptions, create_task_set

    clusters = [r["cluster_id"] for r in st.query(
        "SELECT c.cluster_id, any_value(c.rank) AS rank FROM clusters c JOIN failures f USING (cluster_id) "
        "JOIN traces t USING (trace_id) WHERE t.format = 'tau-bench' AND c.detector IN (SELECT unnest(?)) "
        "GROUP BY c.cluster_id ORDER BY rank", [list(DETECTORS)])]
    if not clusters:
        raise NotFoundError("quickstart trains on τ-bench failures at one agent turn, and the store has none. "
                            "Fix: include τ-bench traces in --traces (../shared/data/traces/tau-bench).")
    workdir.mkdir(parents=True, exist_ok=True)
    evals = workdir / "evals.yaml"
    evals.write_text(EVALS_YAML, encoding="utf-8")
    options = GenerateOptions(name="quickstart-tau", clusters=clusters, eval_names=[("gold_tool", 1.0)],
                              context="last-user")
    task_set = create_task_set(st, options, evals, workdir / "tasks", force=True)
    m = task_set.manifest.counts
    err.print(f"{m['tasks']} tasks ({m['train']} train, {m['heldout']} held out) from {len(clusters)} clusters "
              f"in {task_set.path}")
    return task_set.path


def _train(task_set: Path, run_dir: Path, store: Path) -> str:
    from tracegym.training.config import parse_train_config
    from tracegym.training.loop import train

    config = parse_train_config(train_config(task_set, run_dir), Path("quickstart.yaml"))
    result = train(config, resume=(run_dir / "run.json").is_file(), store_path=store)
    err.print(f"run {result.run_id}: step {result.step}, checkpoint {result.checkpoint}")
    return result.run_id


def _evaluate(task_set: Path, run_dir: Path, store: Path, samples: int) -> None:
    from tracegym.commands.eval import evaluate_and_compare, print_comparison
    from tracegym.store import open_store
    from tracegym.training.evaluate import EvalOptions, plan_evaluation

    options = EvalOptions(samples=samples)
    with open_store(store) as st:
        plan = plan_evaluation(st, str(task_set), [str(run_dir)], None, [], None, options)
        err.print(f"{len(plan.tasks)} held-out tasks x {samples} samples, base and checkpoint")
        print_comparison(evaluate_and_compare(st, plan, options))


def _report(run_id: str, path: Path, store: Path) -> Path:
    from tracegym.report.html import write_report
    from tracegym.report.rundata import load_run
    from tracegym.report.tensorboard import write_events
    from tracegym.store import open_store

    with open_store(store, read_only=True) as st:
        data = load_run(st, run_id)
    write_events(data, Path(data.run["run_dir"]) / "tensorboard")
    return write_report(data, path)
