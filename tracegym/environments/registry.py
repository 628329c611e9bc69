"""Export formats by name: each module of `tracegym.environments.formats` that sets FORMAT is one.

A format module defines

    FORMAT = "name"          the name `tracegym tasks export --to` takes
    SUMMARY = "..."          one line for --help and errors
    def export(job: ExportJob, out: Path) -> dict[str, str]

`export` fills the empty folder `out` (written aside and moved into place only when it returns, so a failed export
leaves nothing) and returns the facts the command prints (the name to load it by, the command to install it).
Adding a format is adding a module; nothing here changes.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tracegym.environments import formats
from tracegym.environments.bundle import ExportManifest, write_bundle
from tracegym.environments.row import ExportRow
from tracegym.errors import ConfigError, did_you_mean
from tracegym.harnesses.config import HarnessConfig
from tracegym.tasks.taskset import TaskSet

SplitChoice = Literal["train", "heldout", "all"]


@dataclass(frozen=True)
class ExportJob:
    """What a format exports: the task set, its rows, and the harness config they run under."""

    task_set: TaskSet
    rows: list[ExportRow]
    config: HarnessConfig
    config_dir: Path
    """The folder the harness config's relative paths start from."""
    config_name: str | None
    split: SplitChoice
    format: str
    name: str
    """The export folder's final name (an exporter writes into a scratch folder that is renamed to it)."""

    def write_data(self, folder: Path) -> ExportManifest:
        """The export's data (`tracegym.environments.bundle`) written into `folder`, which must not exist."""
        return write_bundle(folder, self.task_set, self.rows, self.config, self.config_dir, self.format, self.split,
                            self.config_name)


Exporter = Callable[[ExportJob, Path], dict[str, str]]


@dataclass(frozen=True)
class Format:
    name: str
    summary: str
    export: Exporter


def export_formats() -> dict[str, Format]:
    """Every format module under `tracegym.environments.formats`, by name."""
    found = {}
    for info in pkgutil.iter_modules(formats.__path__):
        module = importlib.import_module(f"{formats.__name__}.{info.name}")
        name = getattr(module, "FORMAT", None)
        if isinstance(name, str):
            found[name] = Format(name, str(getattr(module, "SUMMARY", "")), module.export)
    return dict(sorted(found.items()))


def export_format(name: str) -> Format:
    known = export_formats()
    if name not in known:
        raise ConfigError(f"No export format {name!r}.{did_you_mean(name, list(known))} Fix: --to one of "
                          f"{', '.join(known)}.")
    return known[name]
