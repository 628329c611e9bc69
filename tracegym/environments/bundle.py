"""The data an export carries, and its manifest: a self-contained folder that `runtime` loads.

    export.json      the export's manifest (format, tracegym version required, task set and its hash, counts)
    rows.jsonl       one `ExportRow` per exported task
    harness.yaml     the harness config the rows run under (a shell workspace template under shell_template/)
    task_set/        the task set: manifest.yaml, tasks/*.yaml, evals.yaml, and what its evals load from beside it
                     (python eval modules under eval_modules/, command eval files under eval_files/), the paths in
                     evals.yaml rewritten to point there

Only the task set's files and the evals' own modules and files are copied: the scorers themselves are tracegym's,
which is why the manifest names the version they need.
"""

from __future__ import annotations

import hashlib
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict

import tracegym
from tracegym.environments.row import ExportRow
from tracegym.errors import ExportError
from tracegym.harnesses.config import HarnessConfig
from tracegym.tasks.taskset import MANIFEST, TASKS_DIR, TaskSet

EXPORT_MANIFEST = "export.json"
ROWS = "rows.jsonl"
HARNESS = "harness.yaml"
TASK_SET = "task_set"
SHELL_TEMPLATE = "shell_template"
_MODULES = "eval_modules"
_FILES = "eval_files"


class ExportManifest(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    export_version: Literal[1] = 1
    """Format version of this file."""
    format: str
    """The target format (verifiers, trl, ...)."""
    tracegym_version: str
    """The tracegym version the export's scorers need: `runtime` refuses another."""
    task_set: str
    """The task set's name."""
    task_set_sha256: str
    """Hash of the task set's manifest, task files and evals file as exported."""
    split: Literal["train", "heldout", "all"]
    """Which tasks were exported."""
    harness_config: str | None
    """The harness config the rows run under (None: the defaults)."""
    counts: dict[str, int]
    """rows, train, heldout, with_reference, and rows per harness (harness:NAME)."""
    created_at: str
    """When the export was written (UTC, ISO 8601)."""


def write_bundle(folder: Path, task_set: TaskSet, rows: list[ExportRow], config: HarnessConfig, config_dir: Path,
                 fmt: str, split: Literal["train", "heldout", "all"], config_name: str | None) -> ExportManifest:
    """Write the data of an export into `folder` (created); its manifest. `config_dir` is the folder the harness
    config's relative paths start from."""
    folder.mkdir(parents=True)
    copy_task_set(task_set, folder / TASK_SET)
    config = portable_config(config, config_dir, folder)
    (folder / HARNESS).write_text(yaml.safe_dump(config.model_dump(mode="json", exclude_defaults=True),
                                                 sort_keys=False), encoding="utf-8")
    (folder / ROWS).write_text("".join(r.model_dump_json() + "\n" for r in rows), encoding="utf-8")
    counts = {"rows": len(rows), "train": sum(r.split == "train" for r in rows),
              "heldout": sum(r.split == "heldout" for r in rows),
              "with_reference": sum(r.reference is not None for r in rows)}
    for row in rows:
        counts[f"harness:{row.harness}"] = counts.get(f"harness:{row.harness}", 0) + 1
    manifest = ExportManifest(format=fmt, tracegym_version=tracegym.__version__, task_set=task_set.manifest.name,
                              task_set_sha256=task_set_sha256(folder / TASK_SET), split=split,
                              harness_config=config_name, counts=counts,
                              created_at=datetime.now(UTC).isoformat(timespec="seconds"))
    (folder / EXPORT_MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return manifest


def portable_config(config: HarnessConfig, config_dir: Path, folder: Path) -> HarnessConfig:
    """The harness config as the export carries it: the shell's workspace template copied beside it, and
    workspaces in a temporary folder (the trainer's machine has no folder of the team's)."""
    shell = config.shell
    if shell.template is None and shell.workspaces is None:
        return config
    template = None
    if shell.template is not None:
        source = config_dir / shell.template
        if not source.is_dir():
            raise ExportError(f"The harness config's shell template {source} is not a folder. Fix: correct "
                              "shell: template: in the harness config, and export again.")
        shutil.copytree(source, folder / SHELL_TEMPLATE, ignore=shutil.ignore_patterns("__pycache__"))
        template = SHELL_TEMPLATE
    return config.model_copy(update={"shell": shell.model_copy(update={"template": template, "workspaces": None})})


def read_rows(folder: Path) -> list[ExportRow]:
    return [ExportRow.model_validate_json(line) for line in (folder / ROWS).read_text(encoding="utf-8").splitlines()]


def read_manifest(folder: Path) -> ExportManifest:
    path = folder / EXPORT_MANIFEST
    if not path.is_file():
        raise ExportError(f"{folder} holds no {EXPORT_MANIFEST}: not the data of a tracegym export. Fix: export the "
                          "task set again with `tracegym tasks export`.")
    return ExportManifest.model_validate_json(path.read_text(encoding="utf-8"))


def task_set_sha256(folder: Path) -> str:
    """Hash of a task set's manifest, task files and evals file (names and bytes, in name order)."""
    digest = hashlib.sha256()
    files = [folder / MANIFEST, folder / "evals.yaml", *sorted((folder / TASKS_DIR).glob("*.yaml"))]
    for path in files:
        if path.is_file():
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def copy_task_set(task_set: TaskSet, dest: Path) -> None:
    """The task set's manifest and task files, and its evals file with what the evals load from beside it."""
    (dest / TASKS_DIR).mkdir(parents=True)
    shutil.copyfile(task_set.path / MANIFEST, dest / MANIFEST)
    for entry in task_set.manifest.tasks:
        shutil.copyfile(task_set.path / entry.file, dest / entry.file)
    evals_files = {t.scorer.evals_file for t in task_set.tasks} | {task_set.manifest.evals_file}
    for name in sorted(evals_files):
        source = task_set.path / name
        if source.is_file():
            _copy_evals(source, dest / name, dest)


def _copy_evals(source: Path, dest: Path, root: Path) -> None:
    """Copy an evals file; python_path folders become one eval_modules/ holding each module a function names,
    and command eval files are copied under eval_files/."""
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    for entry in data.get("evals") or []:
        folders = entry.get("python_path")
        if entry.get("kind") == "python" and isinstance(folders, list) and folders:
            _copy_module(str(entry.get("function", "")), [source.parent / f for f in folders], root / _MODULES)
            entry["python_path"] = [Path(_MODULES).as_posix()]
        files = entry.get("files")
        if entry.get("kind") == "command" and isinstance(files, dict):
            entry["files"] = {inside: _copy_file(source.parent / src, root / _FILES, entry.get("name", "eval"), inside)
                              for inside, src in files.items()}
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(f"# Copied from the task set's {source.name} by `tracegym tasks export`; python_path and files "
                    "point into this folder.\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True),
                    encoding="utf-8")


def _copy_module(function: str, folders: list[Path], dest: Path) -> None:
    top = function.split(":", 1)[0].split(".", 1)[0]
    for folder in folders:
        for candidate in (folder / f"{top}.py", folder / top):
            if candidate.is_file():
                dest.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(candidate, dest / candidate.name)
                return
            if candidate.is_dir():
                shutil.copytree(candidate, dest / candidate.name, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__"))
                return
    raise ExportError(f"The python eval {function!r} names module {top!r}, which is in none of its python_path "
                      f"folders ({', '.join(str(f) for f in folders)}). Fix: put the module back there, or correct "
                      "python_path in the task set's evals.yaml, and export again.")


def _copy_file(source: Path, dest: Path, eval_name: str, inside: str) -> str:
    if not source.exists():
        raise ExportError(f"Command eval {eval_name!r} copies {source} to {inside}, and it is missing. Fix: put it "
                          "back, or correct files: in the task set's evals.yaml, and export again.")
    target = dest / eval_name / inside
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, target, dirs_exist_ok=True)
    else:
        shutil.copyfile(source, target)
    return target.relative_to(dest.parent).as_posix()
