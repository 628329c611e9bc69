"""`tracegym redact`: rewrite a store in place, in one transaction, then the task-set folders it registered.

Every text, JSON and list-of-text column of every table is covered, as the store's catalog lists them
(`tracegym/redact/columns.py`): identifiers and paths first, with store-wide placeholders, so trace, session
and call ids still join across tables; then content (messages, tool calls, metadata, scores' comments, bad
records, span parts and pieces of lines, failures and clusters, task specs and manifests, rollouts and eval
results), rows keyed to a trace using that trace's numbering (a task's and a rollout's: their source trace's),
so a value keeps one placeholder across the whole store. Cluster ids are hashes and stay as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from tracegym.errors import TracegymError
from tracegym.redact.columns import BOOKKEEPING, LASTING, Column, store_columns
from tracegym.redact.session import Run
from tracegym.redact.text import redact_spec

if TYPE_CHECKING:
    import duckdb


def column_texts(con: duckdb.DuckDBPyConnection, c: Column, where: str = "",
                 params: list[Any] | None = None) -> pa.Table:
    """(rid, trace, text) of the column's non-null rows (`where`: more conditions on `t`, with `params`); for a
    blob column, text is its bytes' UTF-8 core, and (head, tail) the bytes around it; for a list column, one
    row per element, with its position `pos`."""
    value = f"t.{c.column}" if c.blob else f"CAST(t.{c.column} AS VARCHAR)"
    if c.is_list:
        sql = (f"SELECT rid, trace, pos, CAST(t.items[pos] AS VARCHAR) AS text FROM (SELECT t.rowid AS rid, "
               f"{c.trace} AS trace, t.{c.column} AS items, generate_subscripts(t.{c.column}, 1) AS pos "
               f"FROM {c.table} t {c.join} WHERE t.{c.column} IS NOT NULL {where}) t WHERE t.items[pos] IS NOT NULL")
    else:
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
        columns = [c for c in store_columns(con) if c.table not in BOOKKEEPING]
        task_sets = _task_sets(con, run)  # their folders, found under the paths as they were
        for c in sorted(columns, key=lambda c: c.kind not in LASTING):  # content is numbered per redacted id
            _rewrite(con, run, c)
        sources = [s for (s,) in con.execute(
            "SELECT DISTINCT source_id FROM (SELECT source_id FROM sources UNION ALL SELECT source_id FROM "
            "ingest_errors) WHERE source_id IS NOT NULL AND source_id NOT IN (SELECT source_id FROM "
            "redacted_sources)").fetchall()]
        run.mark(con, sources)
        run.record(con)
    return _rewrite_task_sets(run, task_sets)


def _rewrite(con: duckdb.DuckDBPyConnection, run: Run, c: Column) -> None:
    rows = column_texts(con, c)
    if not rows.num_rows:
        return
    rids, traces = rows.column("rid").to_pylist(), rows.column("trace")
    new: dict[int, str | bytes] = {}
    changed: dict[int, dict[int, str]] = {}
    for row, text, found in run.redactor.detector.find_column(rows.column("text")):
        trace = traces[row].as_py()
        if trace is not None and c.kind in LASTING:  # read before the trace's id was rewritten
            trace = run.identifier(trace, tally=False)
        run.redactor.tally.add(found, trace, c.where)
        if c.where == "tasks.spec":
            redacted: str | bytes = redact_spec(text, found, run.numbering(trace), run.numbering.lasting(),
                                                run.redactor.detector)
        else:
            redacted = run.redactor.redacted(text, found, c.kind, trace)
        if c.blob:
            redacted = rows.column("head")[row].as_py() + str(redacted).encode() + rows.column("tail")[row].as_py()
        if c.is_list:
            changed.setdefault(rids[row], {})[rows.column("pos")[row].as_py()] = str(redacted)
        else:
            new[rids[row]] = redacted
    if changed:
        new = _lists(con, c, changed)
    if not new:
        return
    staged = pa.table({"rid": pa.array(list(new), pa.int64()),  # noqa: F841 - read by name in SQL
                       "v": _values(list(new.values()), c)})
    con.execute(f"UPDATE {c.table} SET {c.column} = staged.v FROM staged WHERE {c.table}.rowid = staged.rid")


def _lists(con: duckdb.DuckDBPyConnection, c: Column, changed: dict[int, dict[int, str]]) -> dict[int, Any]:
    """The whole lists of the rows where elements changed, with the new elements (positions from 1)."""
    wanted = pa.table({"rid": pa.array(list(changed), pa.int64())})  # noqa: F841 - read by name in SQL
    rows = con.execute(f"SELECT t.rowid, t.{c.column} FROM {c.table} t SEMI JOIN wanted w ON t.rowid = w.rid")
    return {rid: [changed[rid].get(i + 1, item) for i, item in enumerate(items)] for rid, items in rows.fetchall()}


def _values(values: list[Any], c: Column) -> pa.Array:
    if c.is_list:
        return pa.array(values, pa.list_(pa.large_string()))
    return pa.array(values, pa.binary() if c.blob else pa.large_string())


def _task_sets(con: duckdb.DuckDBPyConnection, run: Run) -> list[tuple[Path, list[tuple[Path, str, str]]]]:
    """Each registered task-set folder with its task files and their (task set, task) ids as they will read
    once redacted, read before the rewrite renames anything."""
    folders = []
    for (path,) in con.execute("SELECT DISTINCT path FROM task_sets ORDER BY path").fetchall():
        rows = con.execute("SELECT path, task_set_id, task_id FROM tasks WHERE path LIKE ? || '%'", [path]).fetchall()
        folders.append((Path(path), [(Path(p), run.identifier(s), run.identifier(t)) for p, s, t in rows]))
    return folders


def _rewrite_task_sets(run: Run, task_sets: list[tuple[Path, list[tuple[Path, str, str]]]]) -> list[Path]:
    """Write each registered task set's files again from the redacted store: task files rendered from their
    redacted specs, the manifest and README redacted as text."""
    from tracegym.tasks.render import rewrite_spec
    from tracegym.tasks.spec import TaskSpec

    folders = []
    for folder, tasks in task_sets:
        if not folder.is_dir():
            continue
        for task_path, task_set_id, task_id in tasks:
            spec = run.store.scalar("SELECT any_value(spec) FROM tasks WHERE task_set_id = ? AND task_id = ?",
                                    [task_set_id, task_id])
            if spec is not None and task_path.is_file():
                rewrite_spec(task_path, TaskSpec.model_validate_json(spec))
        for name in ("manifest.yaml", "README.md"):
            _redact_file(run, folder / name)
        for rejected in _rejected_files(folder):
            _redact_rejected(run, rejected)
        folders.append(folder)
    return folders


def _rejected_files(folder: Path) -> list[Path]:
    """The files of `SET/rejected/` (task files and their probe results, written by `tasks generate` and in no
    table), redacted as text; links are left alone, as nothing tracegym writes there is one."""
    rejected = folder / "rejected"
    if rejected.is_symlink() or not rejected.is_dir():
        return []
    return sorted(p for p in rejected.rglob("*") if p.is_file() and not p.is_symlink())


def _redact_rejected(run: Run, path: Path) -> None:
    """A rejected task file is redacted as its spec's JSON and written again: as YAML text, a long value folds
    over lines (a key's `-----END` on one line, `RSA PRIVATE KEY-----` on the next) and what is cut so goes
    unfound. Another file (the gates' results, JSON lines) is redacted as text."""
    from tracegym.tasks.render import rewrite_spec
    from tracegym.tasks.spec import TaskSpec, load_spec

    if path.suffix != ".yaml":
        _redact_file(run, path)
        return
    try:
        spec = load_spec(path)
    except TracegymError:
        _redact_file(run, path)
        return
    text = spec.model_dump_json()
    found = run.redactor.detector.find(text)
    if found:
        run.redactor.tally.add(found, None, f"files.{path.name}")
        redacted = redact_spec(text, found, run.numbering(None), run.numbering.lasting(), run.redactor.detector)
        rewrite_spec(path, TaskSpec.model_validate_json(redacted))


def _redact_file(run: Run, path: Path) -> None:
    if not path.is_file():
        return
    text = path.read_text(encoding="utf-8")
    redacted = run.redactor.text(text, column=f"files.{path.name}")
    if redacted != text:
        scratch = path.with_name(f".{path.name}.redacting")
        scratch.write_text(redacted, encoding="utf-8")
        scratch.replace(path)
