"""`tracegym redact check`: does any detector still fire? Over a store, a task-set folder or a run's rollouts.

The check reads what the redaction wrote, with the same rules, so a store redacted with the same settings passes;
a finding names where it is (table and column with the row's trace, or the file) and shows the value masked.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from tracegym.redact.detect import Detector
from tracegym.redact.in_place import COLUMNS, Column, column_texts
from tracegym.redact.text import mask

if TYPE_CHECKING:
    import duckdb

    from tracegym.store import Store

TEXT_SUFFIXES = {".yaml", ".yml", ".json", ".jsonl", ".md", ".txt", ".csv", ".html"}
ROLLOUT_COLUMNS = tuple(c for c in COLUMNS if c.table == "rollouts")


@dataclass(frozen=True)
class Hit:
    rule: str
    where: str
    trace: str | None
    masked: str


def check_store(store: Store, detector: Detector) -> list[Hit]:
    """Findings in every content column of the store."""
    return [h for c in COLUMNS for h in _column(store.con, c, detector)]


def check_run(store: Store, run_id: str, detector: Detector) -> list[Hit]:
    """Findings in one run's rollouts (a training run's, or an evaluation's: its eval id)."""
    return [h for c in ROLLOUT_COLUMNS for h in _column(store.con, c, detector, "AND t.run_id = ?", [run_id])]


def check_folder(folder: Path, detector: Detector) -> list[Hit]:
    """Findings in the text files under a folder (a task set: task files, manifest, README, evals)."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES)
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in files]
    column = pa.array(texts, pa.large_string())
    return [Hit(f.rule.name, str(files[row]), None, mask(f.value))
            for row, _, found in detector.find_column(column) for f in found]


def _column(con: duckdb.DuckDBPyConnection, c: Column, detector: Detector, where: str = "",
            params: list[Any] | None = None) -> Iterator[Hit]:
    rows = column_texts(con, c, where, params)
    if not rows.num_rows:
        return
    traces = rows.column("trace")
    for row, _, found in detector.find_column(rows.column("text")):
        for f in found:
            yield Hit(f.rule.name, f"{c.table}.{c.column}", traces[row].as_py(), mask(f.value))

