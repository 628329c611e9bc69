"""`tracegym redact check`: does any detector still fire? Over a store, a task-set folder or a run's rollouts.

Over a store it reads every text, JSON and list-of-text column of every table, as the store's catalog lists them
(`tracegym/redact/columns.py`): ids, names, tool schemas and paths as well as content. It reads what the
redaction wrote, with the same rules, so a store redacted with the same settings passes; a finding names where it
is (table and column with the row's trace, or the file) and its kind, never the value (shown masked).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from tracegym.redact.columns import Column, store_columns
from tracegym.redact.detect import Detector
from tracegym.redact.in_place import column_texts
from tracegym.redact.text import mask

if TYPE_CHECKING:
    import duckdb

    from tracegym.store import Store

TEXT_SUFFIXES = {".yaml", ".yml", ".json", ".jsonl", ".md", ".txt", ".csv", ".html"}


@dataclass(frozen=True)
class Hit:
    rule: str
    where: str
    trace: str | None
    masked: str


def check_store(store: Store, detector: Detector) -> list[Hit]:
    """Findings in every text column of every table of the store."""
    return [h for c in store_columns(store.con) for h in _column(store.con, c, detector)]


def check_run(store: Store, run_id: str, detector: Detector) -> list[Hit]:
    """Findings in one run's rollouts (a training run's, or an evaluation's: its eval id)."""
    columns = [c for c in store_columns(store.con) if c.table == "rollouts"]
    return [h for c in columns for h in _column(store.con, c, detector, "AND t.run_id = ?", [run_id])]


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
            yield Hit(f.rule.name, c.where, _shown(traces[row].as_py(), detector), mask(f.value))



def _shown(trace: str | None, detector: Detector) -> str | None:
    """A row's trace id, masked where it holds a finding itself."""
    return mask(trace) if trace is not None and detector.find(trace) else trace
