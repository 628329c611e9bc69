"""Every column of a store that can hold text, found in its catalog, and how each is redacted.

The catalog (`duckdb_columns()`), not a list, says which columns there are, so a column a new migration adds is
checked and redacted without anyone remembering to. Its name says how it is redacted:

- `id`: identifiers (`*_id`, `*_ids`, `name`, `key`, `part_key`): a finding is replaced by the store-wide
  placeholder (the keyed one, else the store's salted numbering), so the same id reads the same in every table
  and every ingest, and joins hold;
- `path`: file and folder paths (`path`, `*_path`, `*_dir`): each segment redacted alone, the structure kept;
- `schema`: tool schemas (`tools`), JSON numbered store-wide like ids, as the same schema recurs in traces;
- `json`, `text`, `blob`: content, numbered as the row's trace is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import duckdb

Kind = Literal["id", "path", "schema", "json", "text", "blob"]
LASTING: frozenset[Kind] = frozenset({"id", "path", "schema"})
"""Kinds numbered store-wide rather than per trace."""
TASK_TRACE = "(SELECT task_id, any_value(source_trace_id) AS trace_id FROM tasks GROUP BY task_id)"
TRACE_OF: dict[str, tuple[str, str]] = {
    "tasks": ("t.source_trace_id", ""),
    "rollouts": ("k.trace_id", f"LEFT JOIN {TASK_TRACE} k USING (task_id)"),
}
"""(SQL for the row's trace, join) of tables whose rows belong to a trace without a `trace_id` column."""
BOOKKEEPING = frozenset({"redaction_salt", "redaction_pseudonyms"})
"""Tables redaction writes for itself (a salt, digests): checked, never rewritten."""
TEXT_TYPES = ("VARCHAR", "JSON", "VARCHAR[]", "JSON[]")
CATALOG = """
    SELECT c.table_name, c.column_name, c.data_type, list(c2.column_name) AS siblings
    FROM duckdb_columns() c JOIN duckdb_tables() t USING (database_name, schema_name, table_name)
    JOIN duckdb_columns() c2 USING (database_name, schema_name, table_name)
    WHERE c.database_name = current_database() AND c.schema_name = 'main'
      AND (c.data_type IN ('VARCHAR', 'JSON', 'VARCHAR[]', 'JSON[]') OR c.data_type = 'BLOB')
    GROUP BY ALL ORDER BY c.table_name, c.column_name"""


@dataclass(frozen=True)
class Column:
    """A column that can hold text: where it is, how it is redacted, which trace each row belongs to."""

    table: str
    column: str
    kind: Kind
    trace: str = "NULL"
    """SQL for the row's trace id (over `t` and the `join`), NULL for rows of no one trace."""
    join: str = ""
    is_list: bool = False
    """A list of strings (`VARCHAR[]`): each element is redacted."""

    @property
    def is_json(self) -> bool:
        return self.kind in ("json", "schema")

    @property
    def blob(self) -> bool:
        """Bytes: a piece of a line cut across files, whose edges may split a character (`utf8_core`)."""
        return self.kind == "blob"

    @property
    def where(self) -> str:
        return f"{self.table}.{self.column}"


def kind_of(column: str, data_type: str) -> Kind:
    """How a column is redacted, from its name and type."""
    if data_type == "BLOB":
        return "blob"
    if column in ("path", "run_dir") or column.endswith(("_path", "_dir")):
        return "path"
    if column.endswith(("_id", "_ids")) or column in ("name", "key", "part_key"):
        return "id"
    if column == "tools":
        return "schema"
    return "json" if data_type.startswith("JSON") else "text"


def store_columns(con: duckdb.DuckDBPyConnection) -> list[Column]:
    """Every text, JSON, list-of-text (and byte) column of every table of the store, from its catalog."""
    columns = []
    for table, column, data_type, siblings in con.execute(CATALOG).fetchall():
        if data_type == "BLOB" and table != "line_fragments":
            continue  # bytes that are no text (weights, hashes); the pieces of lines are text cut anywhere
        trace, join = TRACE_OF.get(table, ("t.trace_id" if "trace_id" in siblings else "NULL", ""))
        columns.append(Column(table, column, kind_of(column, data_type), trace, join, data_type.endswith("[]")))
    return columns


def batch_kinds(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], Kind]:
    """(table, column) -> kind, for the tables an ingest batch appends to."""
    return {(c.table, c.column): c.kind for c in store_columns(con)}
