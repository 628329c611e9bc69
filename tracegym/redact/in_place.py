"""`tracegym redact`: rewrite a store in place, in one transaction, then the task-set folders it registered.

Every column that holds trace content is covered: messages, tool calls (arguments and results), metadata,
scores' comments, bad records' raw text, the kept parts of span-shaped traces and pieces of lines cut across
files, failures' evidence and cluster signatures, task specs and manifests, rollouts' conversations and scorer
details. Rows keyed to a trace use that trace's numbering (a task's and a
rollout's: their source trace's), so a value keeps one placeholder across the whole store. Cluster ids are kept
as they were: tasks, runs and evaluations refer to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from tracegym.redact.session import Run
from tracegym.redact.text import apply, redact_json_text

TASK_TRACE = "(SELECT task_id, any_value(source_trace_id) AS trace_id FROM tasks GROUP BY task_id)"


@dataclass(frozen=True)
class Column:
    """A column of trace content: where it is, which trace each row belongs to, whether it holds JSON."""

    table: str
    column: str
    trace: str = "NULL"
    """SQL for the row's trace id (over `t` and the `join`), NULL for rows of no one trace."""
    is_json: bool = False
    join: str = ""
    blob: bool = False
    """Bytes: a piece of a line cut across files, whose edges may split a character (`utf8_core`)."""


COLUMNS: tuple[Column, ...] = (
    Column("messages", "content", "t.trace_id"),
    Column("tool_calls", "arguments", "t.trace_id", is_json=True),
    Column("tool_calls", "result", "t.trace_id"),
    Column("traces", "metadata", "t.trace_id", is_json=True),
    Column("scores", "comment", "t.trace_id"),
    Column("ingest_errors", "raw"),
    Column("ingest_errors", "error"),
    Column("span_parts", "doc", "t.trace_id", is_json=True),
    Column("line_fragments", "text", blob=True),
    Column("failures", "evidence", "t.trace_id"),
    Column("failures", "signature", "t.trace_id"),
    Column("clusters", "signature"),
    Column("cluster_parts", "signature"),
    Column("tasks", "spec", "t.source_trace_id", is_json=True),
    Column("task_sets", "manifest", is_json=True),
    Column("rollouts", "messages", "k.trace_id", is_json=True, join=f"LEFT JOIN {TASK_TRACE} k USING (task_id)"),
    Column("rollouts", "scorer_details", "k.trace_id", is_json=True, join=f"LEFT JOIN {TASK_TRACE} k USING (task_id)"),
    Column("rollouts", "harness_error", "k.trace_id", join=f"LEFT JOIN {TASK_TRACE} k USING (task_id)"),
    Column("rollouts", "scorer_error", "k.trace_id", join=f"LEFT JOIN {TASK_TRACE} k USING (task_id)"),
    Column("eval_results", "scorer_details", is_json=True),
    Column("eval_results", "scorer_error"),
    Column("eval_results", "harness_error"),
)

if TYPE_CHECKING:
    import duckdb


def column_texts(con: duckdb.DuckDBPyConnection, c: Column, where: str = "",
                 params: list[Any] | None = None) -> pa.Table:
    """(rid, trace, text) of the column's non-null rows (`where`: more conditions on `t`, with `params`); for a
    blob column, text is its bytes' UTF-8 core, and (head, tail) the bytes around it."""
    value = f"t.{c.column}" if c.blob else f"CAST(t.{c.column} AS VARCHAR)"
    sql = (f"SELECT t.rowid AS rid, {c.trace} AS trace, {value} AS text "
           f"FROM {c.table} t {c.join} WHERE t.{c.column} IS NOT NULL {where}")
    rows = con.sql(sql, params=params or []).to_arrow_table()
    if not c.blob:
        return rows
    cores = [utf8_core(data) for data in rows.column("text").to_pylist()]
    return pa.table({"rid": rows.column("rid"), "trace": rows.column("trace"),
                     "text": pa.array([text for _, text, _ in cores], pa.large_string()),
                     "head": pa.array([head for head, _, _ in cores], pa.binary()),
                     "tail": pa.array([tail for _, _, tail in cores], pa.binary())})


def utf8_core(data: bytes) -> tuple[bytes, str, bytes]:
    """Bytes cut at arbitrary offsets as (head, text, tail): the end of a character cut off before them, the
    whole characters as text, the start of one cut off after them. Bytes that are no UTF-8 in between (no
    producer's JSON line has them) are replaced."""
    start = 0
    while start < min(3, len(data)) and data[start] & 0xC0 == 0x80:  # continuation bytes
        start += 1
    end = len(data)
    for back in range(1, min(4, end - start) + 1):
        byte = data[end - back]
        if byte & 0xC0 == 0x80:
            continue
        if byte >= 0xC0 and (2 if byte < 0xE0 else 3 if byte < 0xF0 else 4) > back:
            end -= back  # a lead byte whose character runs past the end
        break
    return data[:start], data[start:end].decode("utf-8", errors="replace"), data[end:]


def redact_store(run: Run) -> list[Path]:
    """Rewrite the store in one transaction and mark every file it holds as redacted; then rewrite the task-set
    folders it registered. Returns those folders."""
    with run.store.transaction() as con:
        for c in COLUMNS:
            _rewrite(con, run, c)
        sources = [s for (s,) in con.execute(
            "SELECT DISTINCT source_id FROM (SELECT source_id FROM sources UNION ALL SELECT source_id FROM "
            "ingest_errors) WHERE source_id IS NOT NULL AND source_id NOT IN (SELECT source_id FROM "
            "redacted_sources)").fetchall()]
        run.mark(con, sources)
        run.record(con)
    return _rewrite_task_sets(run)


def _rewrite(con: duckdb.DuckDBPyConnection, run: Run, c: Column) -> None:
    rows = column_texts(con, c)
    if not rows.num_rows:
        return
    rids, traces = rows.column("rid").to_pylist(), rows.column("trace")
    new: list[tuple[int, str | bytes]] = []
    for row, text, found in run.redactor.detector.find_column(rows.column("text")):
        trace = traces[row].as_py()
        run.redactor.tally.add(found, trace, f"{c.table}.{c.column}")
        names = run.numbering(trace)
        redacted = redact_json_text(text, found, names, run.redactor.detector) if c.is_json \
            else apply(text, found, names)
        if c.blob:
            redacted = rows.column("head")[row].as_py() + redacted.encode() + rows.column("tail")[row].as_py()
        new.append((rids[row], redacted))
    if not new:
        return
    staged = pa.table({"rid": pa.array([r for r, _ in new], pa.int64()),  # noqa: F841 - read by name in SQL
                       "v": pa.array([v for _, v in new], pa.binary() if c.blob else pa.large_string())})
    con.execute(f"UPDATE {c.table} SET {c.column} = staged.v FROM staged WHERE {c.table}.rowid = staged.rid")


def _rewrite_task_sets(run: Run) -> list[Path]:
    """Write each registered task set's files again from the redacted store: task files rendered from their
    redacted specs, the manifest and README redacted as text."""
    from tracegym.tasks.render import rewrite_spec
    from tracegym.tasks.spec import TaskSpec

    folders = []
    for (path,) in run.store.con.execute("SELECT DISTINCT path FROM task_sets ORDER BY path").fetchall():
        folder = Path(path)
        if not folder.is_dir():
            continue
        rows = run.store.con.execute("SELECT path, spec FROM tasks WHERE path LIKE ? || '%'", [path]).fetchall()
        for task_path, spec in rows:
            if Path(task_path).is_file():
                rewrite_spec(Path(task_path), TaskSpec.model_validate_json(spec))
        for name in ("manifest.yaml", "README.md"):
            _redact_file(run, folder / name)
        for rejected in _rejected_files(folder):
            _redact_file(run, rejected)
        folders.append(folder)
    return folders


def _rejected_files(folder: Path) -> list[Path]:
    """The files of `SET/rejected/` (task files and their probe results, written by `tasks generate` and in no
    table), redacted as text; links are left alone, as nothing tracegym writes there is one."""
    rejected = folder / "rejected"
    if rejected.is_symlink() or not rejected.is_dir():
        return []
    return sorted(p for p in rejected.rglob("*") if p.is_file() and not p.is_symlink())


def _redact_file(run: Run, path: Path) -> None:
    if not path.is_file():
        return
    text = path.read_text(encoding="utf-8")
    redacted = run.redactor.text(text, column=f"files.{path.name}")
    if redacted != text:
        scratch = path.with_name(f".{path.name}.redacting")
        scratch.write_text(redacted, encoding="utf-8")
        scratch.replace(path)
