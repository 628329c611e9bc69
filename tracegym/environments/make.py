"""`tracegym tasks export`: a task set's rows handed to a format's exporter, written aside, then moved into place."""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tracegym.environments.bundle import ExportManifest, read_manifest
from tracegym.environments.registry import ExportJob, SplitChoice, export_format
from tracegym.environments.row import build_rows
from tracegym.errors import ExportError
from tracegym.harnesses.config import HarnessConfig, HarnessFactory
from tracegym.harnesses.taskrun import select_tasks
from tracegym.store import Store
from tracegym.tasks.taskset import TaskSet


@dataclass(frozen=True)
class ExportResult:
    out: Path
    manifest: ExportManifest
    facts: dict[str, str]
    """What the format says to do next (the name to load, the command to install)."""
    seconds: float


def export_task_set(task_set: TaskSet, fmt: str, out: Path, split: SplitChoice, store: Store | None,
                    config: HarnessConfig | None = None, config_dir: Path | None = None,
                    config_name: str | None = None, force: bool = False) -> ExportResult:
    """Export the tasks of `split` to `fmt` in folder `out`, under the harness `config` (whose relative paths start
    at `config_dir`); nothing is left at `out` when it fails."""
    started = time.perf_counter()
    target = export_format(fmt)
    config = config or HarnessConfig()
    if out.exists() and not force and (not out.is_dir() or any(out.iterdir())):
        raise ExportError(f"{out} exists and is not empty. Fix: choose another --out, or pass --force to replace it.")
    _refuse_unportable(config)
    tasks = select_tasks(task_set, split)
    harnesses = HarnessFactory(config)
    try:
        rows = build_rows(task_set, tasks, harnesses, store)
    finally:
        harnesses.close()
    job = ExportJob(task_set, rows, config, config_dir or Path.cwd(), config_name, split, fmt, out.name)
    out.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.export-"))
    try:
        facts = target.export(job, scratch)
        manifest = read_manifest(_data_folder(scratch))
        if out.exists():
            shutil.rmtree(out) if out.is_dir() else out.unlink()
        scratch.rename(out)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return ExportResult(out, manifest, facts, time.perf_counter() - started)


def _data_folder(folder: Path) -> Path:
    """The data folder a format wrote (the one holding export.json)."""
    found = sorted(p.parent for p in folder.rglob("export.json"))
    if len(found) != 1:
        raise ExportError(f"The exporter wrote {len(found)} export.json files into {folder}; it must write one.")
    return found[0]


def _refuse_unportable(config: HarnessConfig) -> None:
    """A harness config whose parts live in the team's own modules cannot travel with the export."""
    if config.tools.functions:
        raise ExportError("The harness config's tools: functions are the team's own modules, which an export does not "
                          "carry. Fix: export with a harness config without tools: (the replay harness answers from "
                          "the recording).")
    if config.replay.unseen == "fallback":
        raise ExportError("The harness config's replay fallback is a function of the team's own module, which an "
                          "export does not carry. Fix: export with replay: {unseen: error}.")
