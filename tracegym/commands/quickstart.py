"""`tracegym quickstart`: the main job, whole, on its embedded defaults and on a CPU.

ingest the real traces, redacted (../shared/data/traces where this project's checkouts have it, else the public
τ-bench and mini-swe-agent files, fetched once into the user cache: tracegym/public_traces.py) -> mine failures ->
generate tasks from the failure families a small model can learn to fix (mini-swe-agent's format errors, τ-bench's
tool errors; rewarded by examples/evals-learn.yaml's form checks combined with the step that succeeded from the
same point, CONTENT_EVALS) -> train briefly (GRPO from the default model, a curriculum over the clusters) ->
evaluate the base and the new checkpoint on the held-out tasks, per cluster -> write the report. Every step is one
library call that the matching command also makes. Run again, it picks up where it stopped: ingesting is
idempotent, training resumes from its last checkpoint and evaluation skips the samples already stored.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from tracegym.errors import NotFoundError
from tracegym.output import err, out

if TYPE_CHECKING:
    from tracegym.harnesses.gates import GateReport
    from tracegym.store import Store

T = TypeVar("T")

DEFAULT_TRACES = Path("..") / "shared" / "data" / "traces"
"""Where a checkout of this project finds the real traces; elsewhere the quickstart fetches the public ones."""
DEFAULT_WORKDIR = Path(".tracegym") / "quickstart"
FORMAT_ERROR = "Please always provide EXACTLY ONE action in triple backticks"
LEARNABLE_CLUSTERS = """
    SELECT c.cluster_id, any_value(c.signature) AS signature, any_value(c.rank) AS rank,
           any_value(t.format) AS source_format
    FROM clusters c JOIN failures f USING (cluster_id) JOIN traces t USING (trace_id)
    WHERE (c.detector = 'format_error' AND t.format = 'mini-swe-agent' AND starts_with(c.signature, ?))
       OR (c.detector = 'tool_error' AND t.format = 'tau-bench' AND starts_with(c.signature, 'Error:'))
    GROUP BY c.cluster_id ORDER BY rank, c.cluster_id"""
"""Failure families a 135M model can learn to fix on a CPU: mini-swe-agent's format errors and τ-bench's tool
errors (what benchmarks/learn_clusters.py trains on)."""
GENERATE = {"cuts": "recovery", "context": "last-exchange", "heldout_fraction": 0.3}
"""Tasks at the agent's turn after each failure, with its last words before it: how it answers the failure."""

# examples/evals-learn.yaml
EVALS_YAML = """\
version: 1
evals:
  - name: one_bash_action
    kind: python
    description: the reply holds exactly one ```bash block with a command, as mini-swe-agent requires
    function: tracegym.evals.families:one_bash_action
    applies_to: {formats: [mini-swe-agent]}
  - name: handles_tool_error
    kind: python
    description: answers a tool error without retrying the failed call unchanged or inventing the tool's answer
    function: tracegym.evals.families:handles_tool_error
    applies_to: {formats: [tau-bench]}
  - name: follows_success
    kind: reference
    description: takes the step that succeeded from the same point (same call, command or facts), inventing no ids
  - name: one_bash_action_and_content
    kind: weighted
    description: one bash block, running what succeeded from here
    parts: {one_bash_action: 1, follows_success: 1}
    applies_to: {formats: [mini-swe-agent], by_default: false}
  - name: handles_tool_error_and_content
    kind: weighted
    description: answers the tool error as a successful attempt did from here
    parts: {handles_tool_error: 1, follows_success: 1}
    applies_to: {formats: [tau-bench], by_default: false}
"""
CONTENT_EVALS = [("one_bash_action_and_content", 1.0), ("handles_tool_error_and_content", 1.0)]
"""What the quickstart trains on: each format's form check with `follows_success`, the step that succeeded from the
same point (a form check alone is learnt as a reply of the right shape with nothing in it: a bash block holding
`echo Hello`)."""


def learnable_clusters(st: Store) -> list[dict[str, Any]]:
    """The store's clusters of the failure families in LEARNABLE_CLUSTERS, in rank order."""
    return st.query(LEARNABLE_CLUSTERS, [FORMAT_ERROR])


def train_config(task_set: Path, run_dir: Path, model: str = "smollm2-135m", steps: int = 10) -> dict[str, Any]:
    """examples/train-learn.yaml cut to minutes of a 2-core CPU."""
    return {
        "run_dir": str(run_dir), "seed": 0, "steps": steps, "checkpoint_every": steps, "keep_checkpoints": 1,
        "model": {"ref": model},
        "tasks": {"task_set": str(task_set), "split": "train", "sampling": "clusters"},
        "prompt": {"context": "last-exchange", "system_max_chars": 0, "tool_schemas": "compact", "max_tokens": 896},
        "harness": {"run_as": {"shell": "chat"}, "limits": {"max_turns": 1}},
        "sampler": {"temperature": 1.0, "top_p": 0.95, "precision": "auto", "concurrency": 32, "max_new_tokens": 96},
        "grpo": {"group_size": 8, "batch_groups": 4},
        "optim": {"lr": 3.0e-5, "micro_batch_tokens": 2048, "train_layers": 10, "freeze_embeddings": True},
        "async": {"max_staleness": 0},
        "warmup": {"steps": 0},
    }


def register(app: typer.Typer) -> None:
    app.command("quickstart")(quickstart)


def quickstart(
    traces: Annotated[Path | None, typer.Option(
        help="Trace files or folder to start from [default: ../shared/data/traces where it exists, else public "
             "τ-bench and mini-swe-agent traces, downloaded once into the user cache].")] = None,
    workdir: Annotated[Path, typer.Option(help="Where the store, the task set, the run and the report go.")]
        = DEFAULT_WORKDIR,
    samples: Annotated[int, typer.Option("--samples", "-k", min=1, help="Eval episodes per held-out task.")] = 3,
    steps: Annotated[int, typer.Option(min=1, help="GRPO steps.")] = 10,
    model: Annotated[str, typer.Option(help="The model to train: 'smollm2-135m' (built in) or a model folder.")]
        = "smollm2-135m",
    store: Annotated[Path | None, typer.Option(
        "--store", help="DuckDB store file (default: WORKDIR/store.duckdb, apart from the default store).")] = None,
) -> None:
    """Run the whole pipeline on the embedded defaults: ingest, mine, tasks, train, eval per cluster, report.

    Without --traces and without ../shared/data/traces, the public traces it runs on are downloaded once (about
    11 MB) from raw.githubusercontent.com into the user cache, each checked against its pinned sha256;
    TRACEGYM_TRACES_URL names a mirror instead.
    """
    path = store or workdir / "store.duckdb"
    started = time.perf_counter()
    task_set = _prepare(trace_paths(traces), workdir, path)
    run_dir = workdir / "run"
    run_id = _step(4, "train", lambda: _train(task_set, run_dir, path, model, steps))
    _step(5, "eval", lambda: _evaluate(task_set, run_dir, path, samples))
    report = _step(6, "report", lambda: _report(run_id, workdir / "report.html", path))
    err.print(f"Done in {(time.perf_counter() - started) / 60:.1f} min. Store: {path}; run: {run_dir}.")
    out.print(f"Report: {report.resolve()}")


def _step(n: int, name: str, work: Callable[[], T]) -> T:
    err.print(f"[bold]{n}/6 {name}[/bold]")
    started = time.perf_counter()
    result = work()
    err.print(f"[dim]{name}: {time.perf_counter() - started:.0f} s[/dim]")
    return result


def trace_paths(given: Path | None) -> list[Path]:
    """The traces to ingest: those given, else this project's copy, else the public files, fetched when missing."""
    if given is not None:
        if not given.exists():
            raise NotFoundError(f"No traces at {given}. Pass --traces PATH (a file or folder of agent traces).")
        return [given]
    if DEFAULT_TRACES.is_dir():
        return [DEFAULT_TRACES]
    from tracegym.public_traces import fetch

    fetched = fetch()
    where = fetched.folders[0].parent
    if fetched.downloaded:
        origins = sorted({f"{f.repo} @ {f.commit[:8]}" for f in fetched.downloaded})
        size = sum(f.size for f in fetched.downloaded) / 1e6
        err.print(f"Fetched {len(fetched.downloaded)} public trace files ({size:.1f} MB) from {fetched.base_url} "
                  f"({'; '.join(origins)}) into {where}, each checked against its sha256.", highlight=False,
                  soft_wrap=True, markup=False)
    else:
        err.print(f"Public traces: {where} (fetched before, checked).", highlight=False, soft_wrap=True,
                  markup=False)
    return fetched.folders


def _prepare(traces: list[Path], workdir: Path, path: Path) -> Path:
    """Ingest, mine and generate the task set; returns its folder."""
    from tracegym.ingest.pipeline import ingest_paths
    from tracegym.mining import MineConfig, mine_failures
    from tracegym.redact.config import RedactConfig
    from tracegym.redact.in_place import redact_store
    from tracegym.redact.session import Run, unredacted_sources
    from tracegym.store import open_store

    with open_store(path) as st:
        # Redacted as it is stored, as `tracegym ingest --redact` does: tasks and training refuse anything else.
        run = Run(st, RedactConfig(), "ingest")
        data = _step(1, "ingest", lambda: ingest_paths(st, [str(p) for p in traces], redact=run).to_dict())
        if unredacted_sources(st):  # a store from before quickstart redacted: redact it in place
            redact_store(Run(st, RedactConfig(), "store"))
        err.print(f"{data['traces']} new traces from {data['files']} files ({data['files_skipped_already_ingested']} "
                  f"files already in the store); {run.redactor.tally.total} values redacted")
        mined = _step(2, "mine", lambda: mine_failures(st, MineConfig()))
        err.print(f"{mined.findings} failures in {mined.traces_with_findings} of {mined.traces} traces, "
                  f"{len(mined.clusters)} clusters")
    return _step(3, "tasks", lambda: _tasks(path, workdir))


def _tasks(path: Path, workdir: Path) -> Path:
    from tracegym.harnesses.config import HarnessConfig
    from tracegym.harnesses.gates import NewTaskGate
    from tracegym.store.access import StoreAccess
    from tracegym.tasks.generate import GenerateOptions, create_task_set

    store = StoreAccess(path)  # read and written between the gates' probes, not held across them
    with store.reading() as st:
        clusters = learnable_clusters(st)
    if not clusters:
        raise NotFoundError("quickstart trains on mini-swe-agent's format errors and τ-bench's tool errors, and the "
                            "store has neither. Fix: include mini-swe-agent or τ-bench traces in --traces (without "
                            "--traces it fetches public ones).")
    workdir.mkdir(parents=True, exist_ok=True)
    evals = workdir / "evals.yaml"
    evals.write_text(EVALS_YAML, encoding="utf-8")
    options = GenerateOptions(name="quickstart", clusters=[c["cluster_id"] for c in clusters],
                              eval_names=CONTENT_EVALS, **GENERATE)
    # Gated under the harness the run trains in, so each probe is scored as the training episodes will be.
    harness = HarnessConfig(run_as=train_config(workdir / "tasks", workdir / "run")["harness"]["run_as"])
    gate = NewTaskGate(store, evals, harness, workdir, config_name="quickstart: run_as shell: chat")
    task_set = create_task_set(store, options, evals, workdir / "tasks", force=True, gate=gate)
    m = task_set.manifest.counts
    formats = ", ".join(sorted({c["source_format"] for c in clusters}))
    err.print(f"{m['tasks']} tasks ({m['train']} train, {m['heldout']} held out) from {len(clusters)} clusters "
              f"({formats}) in {task_set.path}; reward gates rejected {m['rejected_by_gates']}")
    if gate.report is not None:
        _say_hackable(gate.report)
    return task_set.path


def _say_hackable(report: GateReport) -> None:
    """Which evals a hollow reply (the reference's shape without its substance) earns, per cluster."""
    from tracegym.commands.tasks import hollow_line
    from tracegym.inert import one_line
    from tracegym.output import literal

    err.print(hollow_line(report))
    for row in report.hackable_rows():
        probes = ", ".join(f"{p} {n}" for p, n in row["probes"].items())
        example = row["example"]
        err.print(f"  {literal(row['eval'])} ({'the reward' if row['reward'] else 'a part'}) on {row['tasks']} of "
                  f"{row['probed']} tasks of cluster {row['cluster_id']}: {probes}; e.g. {example['probe']}: "
                  f"{literal(one_line(example['reply'])[:100])}")


def _train(task_set: Path, run_dir: Path, store: Path, model: str, steps: int) -> str:
    from tracegym.tasks.taskset import load_task_set
    from tracegym.training.config import parse_train_config
    from tracegym.training.hackable import hackable_tasks
    from tracegym.training.loop import train

    config = parse_train_config(train_config(task_set, run_dir, model, steps), Path("quickstart.yaml"))
    hackable = hackable_tasks(load_task_set(task_set), config)
    if hackable.tasks:
        err.print("[yellow]The quickstart trains on these hackable evals anyway[/yellow] (as `tracegym train "
                  "--allow-hackable`): it shows the pipeline, and the policy learns what the evals pay for, hollow "
                  "replies included. Your own runs: combine a format eval with a content eval "
                  "(docs/reward-gates.md#hollow-probes).")
    result = train(config, resume=(run_dir / "run.json").is_file(), store_path=store,
                   allow_hackable=bool(hackable.tasks))
    err.print(f"run {result.run_id}: step {result.step}, checkpoint {result.checkpoint}")
    return result.run_id


def _evaluate(task_set: Path, run_dir: Path, store: Path, samples: int) -> None:
    from tracegym.commands.eval import evaluate_and_compare, print_comparison, say_unchanged
    from tracegym.evals.checkpoints.evaluate import EvalOptions, plan_evaluation
    from tracegym.models.precision import resolve_precision
    from tracegym.store.access import StoreAccess

    # The precision the run sampled in (bf16 where the CPU computes it natively), for base and checkpoint alike.
    options = EvalOptions(samples=samples, precision=resolve_precision("auto", "cpu"))
    access = StoreAccess(store)
    with access.writing() as st:
        plan = plan_evaluation(st, str(task_set), [str(run_dir)], None, [], None, options)
    why = f" ({plan.why_fewer()})" if plan.why_fewer() else ""
    err.print(f"{len(plan.tasks)} held-out tasks x {samples} samples, {len(plan.candidates)} models{why}")
    say_unchanged(plan)
    print_comparison(evaluate_and_compare(access, plan, options))


def _report(run_id: str, path: Path, store: Path) -> Path:
    from tracegym.report.html import write_report
    from tracegym.report.rundata import load_run
    from tracegym.report.tensorboard import write_events
    from tracegym.store import open_store

    with open_store(store, read_only=True) as st:
        data = load_run(st, run_id)
    write_events(data, Path(data.run["run_dir"]) / "tensorboard")
    return write_report(data, path)
