"""The bulk path for OpenAI-chat JSONL: normalization in DuckDB, not one Python object per message.

The file is read in chunks of whole lines, handed to DuckDB as Arrow strings
without copying. A line takes the SQL path only when it is a plain
conversation `{id, messages, model?, metadata?, tools?}` that the record path
would read the same way; every other line (a request/response pair, a bare
message list, an unknown role, a tool message answering no call, anything
orjson would parse differently from DuckDB) goes through the adapter's
`to_traces`, one record at a time. So the two paths store the same rows, which
`tests/unit/test_chat_sql.py` checks table by table.

A line longer than SQL_LINE_BYTES takes the record path too (the SQL path
would need several copies of it within the scratch database's memory cap), and
so does every line of a chunk that the SQL path cannot take for any reason a
hostile line can cause (invalid UTF-8, a DuckDB error such as running out of
memory): one such line never costs the others.

Per chunk (on a scratch in-memory database): DuckDB describes each line's
JSON structure (`json_structure`); the few distinct structures are checked in
Python (`plain_shape`); matching lines are parsed into typed structs
(`json_transform`) and unnested into message rows (Arrow), then calls are
unnested, paired with their results and error-flagged in SQL; the small JSON
values that must match the record path byte for byte (tool arguments, metadata,
tool schemas) are re-serialized with the same Python function; the rows then
go to the store like any batch (`FileSink.append`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

import duckdb
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from tracegym.exact_json import loads
from tracegym.ingest.adapters.base import FileSink, SourceFile
from tracegym.ingest.adapters.log_line import LINE_KEYS, session_key
from tracegym.ingest.field_paths import Path as FieldPath
from tracegym.ingest.normalize import normalize_role, parse_arguments, to_json
from tracegym.ingest.reading import LongLine, parse_line, read_line
from tracegym.mining.json_errors import json_error_sql

CHUNK_BYTES = 64 << 20
SQL_LINE_BYTES = 64 << 20  # a chunk grows to hold a line up to this long; a longer one takes the record path
BATCH_BYTES = 2 << 20  # Arrow batches of about this size let DuckDB spread a chunk over its threads
EXPORT_ROWS = 8192
SCRATCH_MEMORY = "1GB"  # one chunk's working tables fit well within it
FORMAT = "openai-chat"
# What str.strip() removes (every c with c.isspace()), as an RE2 class body.
_PY_SPACE = r"\t\n\x0b\x0c\r\x1c-\x1f \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}"
_BLANK_LINE = r"[ \t\n\r\x0b\x0c]*"  # what bytes.strip() removes: a line of only these is skipped
# Text orjson rejects but DuckDB's parser accepts goes to the record path, which reports it as it always does:
# trailing commas anywhere, and (in lines whose structure has a DOUBLE) NaN, Infinity or exponents that may overflow.
_TRAILING_COMMA = r",[ \t\r\n]*[\]}]"
_LENIENT_NUMBER = r"[:\[,][ \t\r\n]*-?(?:NaN|Infinity|[0-9]+(?:\.[0-9]+)?[eE][+-]?[0-9]{3})"
# normalize.looks_like_error in RE2 (where [\p{L}\p{N}_] is exactly Python's Unicode \w).
_ERROR = (rf"(?m)\A[{_PY_SPACE}]*(?i:error)[: ]|Traceback \(most recent call last\)"
          r"|^[\p{L}\p{N}_]+(?:Error|Exception): ")
# A key repeated in one object: DuckDB reads the first value, orjson (like Python's json and JSON.parse) the last,
# so such a line takes the record path. `"K":` occurs unescaped only as a key (a quote inside a string is escaped).
# Within a message, tool call or function: K, then strings and objects nested two deep (a message's calls and
# their functions), then K again, all inside one object.
_STR = r'"(?:[^"\\]|\\.)*"'
_NEST0 = rf'(?:[^{{}}"]|{_STR})*'
_NEST2 = rf'(?:[^{{}}"]|{_STR}|\{{(?:[^{{}}"]|{_STR}|\{{{_NEST0}\}})*\}})*'
_INNER_KEYS = ("role", "content", "refusal", "tool_call_id", "name", "tool_calls", "id", "function", "arguments")
_REPEATED_INNER = "|".join(rf'"{k}"\s*:{_NEST2}"{k}"\s*:' for k in _INNER_KEYS)
# At the top level, other keys' objects (messages, metadata, tools) may nest deeper: a line where a key read there
# occurs twice anywhere, or `"id":` more often than the line's tool calls and itself, has its keys listed
# (`json_keys`, which keeps repeats).
_TOP_KEYS = ("model", "metadata", "tools", "messages", *(k for k in LINE_KEYS if k != "metadata"))
_TWICE_TOP = "|".join(rf'"{k}"\s*:.*"{k}"\s*:' for k in _TOP_KEYS)
_VALUES: dict[str, Any] = {
    "id": "VARCHAR", "model": "VARCHAR", "metadata": "JSON", "tools": "JSON",
    "messages": [{
        "role": "VARCHAR", "content": "VARCHAR", "refusal": "VARCHAR", "tool_call_id": "VARCHAR", "name": "VARCHAR",
        "tool_calls": [{"id": "VARCHAR", "function": {"name": "VARCHAR", "arguments": "VARCHAR"}}],
    }],
}
# Keys the record path reads at the top level besides those above: any of them sends the line there.
_OTHER_SHAPES = ("request", "response", "object", "user")
_STRING = ("VARCHAR", "NULL")
_VIEWS = {"traces": "_chat_traces", "tool_calls": "_chat_tool_calls", "scores": "_chat_scores"}


def _error_sql(text: str) -> str:
    """normalize.looks_like_error in SQL: the regex, run only where a cheap necessary condition holds, or a JSON
    error response (json_error_sql, which bounds itself)."""
    # Each clause of the regex needs one of these: "Error: "/"Exception: " or the traceback header somewhere,
    # or "error" (any case) within the first 256 characters unless at least 200 of them are spaces.
    maybe = (f"contains({text}, 'Error: ') OR contains({text}, 'Exception: ') "
             f"OR contains({text}, 'Traceback (most recent call last)') "
             f"OR regexp_matches(left({text}, 256), '(?i)error') "
             f"OR regexp_full_match(left({text}, 200), '[{_PY_SPACE}]{{200}}')")
    return (f"coalesce(CASE WHEN {maybe} THEN regexp_matches({text}, '{_ERROR}') ELSE false END, false) "
            f"OR coalesce({json_error_sql(text)} IS NOT NULL, false)")


def plain_shape(structure: Any) -> bool:
    """Whether lines of this `json_structure` can take the SQL path (values are checked in SQL after)."""
    if not isinstance(structure, dict) or any(k in structure for k in _OTHER_SHAPES):
        return False
    if structure.get("id") != "VARCHAR" or structure.get("model", "NULL") not in _STRING:
        return False
    messages = structure.get("messages")
    if not (isinstance(messages, list) and len(messages) == 1 and isinstance(messages[0], dict)):
        return False
    msg = messages[0]
    if "usage" in msg or "function_call" in msg or msg.get("role") != "VARCHAR":
        return False
    if any(msg.get(k, "NULL") not in _STRING for k in ("content", "refusal", "tool_call_id", "name")):
        return False
    calls = msg.get("tool_calls", "NULL")
    if calls in ("NULL", ["NULL"]):
        return True
    if not (isinstance(calls, list) and len(calls) == 1 and isinstance(calls[0], dict)):
        return False
    fn = calls[0].get("function")
    return (calls[0].get("id", "NULL") in _STRING and isinstance(fn, dict)
            and fn.get("name") == "VARCHAR" and fn.get("arguments") == "VARCHAR")


def _is_plain(structure: str) -> bool:
    """plain_shape of a `json_structure` text; one too deep for orjson is not plain (its lines are reported)."""
    try:
        return plain_shape(orjson.loads(structure))
    except orjson.JSONDecodeError:
        return False


def _role_or_none(raw: str) -> str | None:
    try:
        return normalize_role(raw)
    except ValueError:
        return None


@dataclass
class LineChunk:
    """Whole lines of a file: `data[starts[i]:starts[i+1]]` is line `first_lineno + i`, newline included."""

    first_lineno: int
    data: memoryview
    starts: list[int]

    def line(self, lineno: int) -> bytes:
        i = lineno - self.first_lineno
        return bytes(self.data[self.starts[i]:self.starts[i + 1]])

    def arrow(self) -> pa.Table:
        """The lines as Arrow strings over the chunk's bytes (no copy), in batches DuckDB scans in parallel."""
        n = len(self.starts) - 1
        offsets = pa.array(self.starts, type=pa.int64())
        lines = pa.LargeStringArray.from_buffers(n, offsets.buffers()[1], pa.py_buffer(self.data))
        lines.validate(full=True)  # raises on invalid UTF-8
        table = pa.table({"lineno": pa.array(range(self.first_lineno, self.first_lineno + n), pa.int64()),
                          "line": lines})
        cuts = [0]
        for i in range(1, n):
            if self.starts[i] - self.starts[cuts[-1]] >= BATCH_BYTES:
                cuts.append(i)
        cuts.append(n)
        return pa.concat_tables(table.slice(a, b - a) for a, b in zip(cuts, cuts[1:], strict=False))


@dataclass
class OneLine:
    """A line longer than SQL_LINE_BYTES, for the record path (only its head when it is too large to read)."""

    lineno: int
    data: bytes | LongLine


def iter_line_chunks(path: Path, chunk_bytes: int = CHUNK_BYTES) -> Iterator[LineChunk | OneLine]:
    """The file in chunks of whole lines; a chunk grows to hold a line up to SQL_LINE_BYTES long.

    A file longer than one chunk is read into one buffer, each chunk over the last: a chunk, and every Arrow
    array over its bytes, must be done with before the next one is asked for. Fresh memory for every chunk
    costs the kernel a zero-filled page per 4 KB read (2.8 s of system time for an 811 MB file on a 2-core
    VM, against 0.2 s into one buffer; benchmarks/RESULTS.md).
    """
    lineno, pos, size = 1, 0, chunk_bytes
    buffer = bytearray(chunk_bytes) if path.stat().st_size > chunk_bytes else None
    with path.open("rb") as f:
        while True:
            if buffer is not None and len(buffer) < size:
                buffer = bytearray(size)  # a new one: the last chunk may still hold a view of the old one
            data, n = _read_span(f, pos, size, buffer)
            if not n:
                return
            cut = data.rfind(b"\n", 0, n) + 1
            if cut == 0 and n == size:
                if size < SQL_LINE_BYTES:
                    size *= 2
                    continue
                del data
                f.seek(pos)
                yield OneLine(lineno, read_line(f))
                lineno, pos, size = lineno + 1, f.tell(), chunk_bytes
                continue
            cut = cut or n  # the last line of a file without a final newline
            starts = [0]
            nl = data.find(b"\n", 0, cut)
            while nl != -1:
                starts.append(nl + 1)
                nl = data.find(b"\n", nl + 1, cut)
            if starts[-1] != cut:
                starts.append(cut)
            yield LineChunk(lineno, memoryview(data)[:cut], starts)
            lineno += len(starts) - 1
            pos, size = pos + cut, chunk_bytes


def _read_span(f: BinaryIO, pos: int, size: int, buffer: bytearray | None) -> tuple[bytes | bytearray, int]:
    """Up to `size` bytes of `f` from `pos`, into `buffer` (at least `size` long) or fresh memory; and how many."""
    f.seek(pos)
    if buffer is None:
        data = f.read(size)
        return data, len(data)
    view, n = memoryview(buffer)[:size], 0
    while n < size and (got := f.readinto(view[n:])):
        n += got
    view.release()
    return buffer, n


def load_chat_jsonl(src: SourceFile, sink: FileSink, chunk_bytes: int | None = None) -> None:
    """Load the file through `sink`, which appends each chunk's rows in the file's transaction.

    The per-chunk work runs on a scratch in-memory database: tables created and
    replaced inside the store's long transaction would stay in memory until it
    commits, so memory would grow with the file.
    """
    spill = tempfile.TemporaryDirectory(prefix="tracegym-scratch-")  # not a .tmp folder in the user's cwd
    scratch = duckdb.connect(config={"memory_limit": SCRATCH_MEMORY, "temp_directory": spill.name})
    try:
        scratch.execute("SET enable_progress_bar = false")
        for chunk in iter_line_chunks(src.path, chunk_bytes or CHUNK_BYTES):
            if isinstance(chunk, OneLine):
                sink.take(parse_line(chunk.lineno, chunk.data))
            else:
                _load_chunk(scratch, src, sink, chunk)
    finally:
        scratch.close()
        spill.cleanup()


def _by_records(sink: FileSink, chunk: LineChunk) -> None:
    """Every line of the chunk through the record path, which stores or reports each line on its own."""
    for lineno in range(chunk.first_lineno, chunk.first_lineno + len(chunk.starts) - 1):
        if chunk.line(lineno).strip():
            sink.take(parse_line(lineno, chunk.line(lineno)))


@contextmanager
def _registered(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table]) -> Iterator[None]:
    for name, table in tables.items():
        con.register(name, table)
    try:
        yield
    finally:
        for name in tables:
            con.unregister(name)


def _load_chunk(scratch: duckdb.DuckDBPyConnection, src: SourceFile, sink: FileSink, chunk: LineChunk) -> None:
    with _scope(scratch) as register:
        try:
            msgs, roles = _prepare(scratch, chunk, register, session_key(src.options.get("session_key")))
        except duckdb.InterruptException:
            raise
        except (duckdb.Error, pa.ArrowException):  # e.g. invalid UTF-8, or a line DuckDB has no memory for
            _by_records(sink, chunk)
            return
        # Nothing reached the sink before this point, so the record path above could take the chunk afresh.
        keep = _claim_or_route(scratch, sink, chunk)
        if not keep:
            return
        register("_chat_keep", pa.table({"lineno": pa.array(keep, pa.int64())}))
        register("_chat_args", _arguments(scratch))
        _stage(scratch, src)
        # Batches of a few thousand rows, so that the store's INSERT spreads over its threads too.
        staged = {table: scratch.sql(f"SELECT * FROM {view}").to_arrow_table(EXPORT_ROWS)
                  for table, view in _VIEWS.items()}
    staged["messages"] = _messages(msgs, keep, roles)
    sink.append(staged)


def _prepare(scratch: duckdb.DuckDBPyConnection, chunk: LineChunk, register: Callable[[str, pa.Table], None],
             key: FieldPath | None) -> tuple[pa.Table, pa.Table]:
    """Parse and check the chunk's lines, leaving `_chat_fast` (the lines SQL stores) and their trace JSON."""
    table = chunk.arrow()
    register("_chat_chunk", table)
    keys = _line_keys(key)
    msgs = _parse(scratch, keys)
    register("_chat_msg", msgs)
    roles = _roles(msgs)
    register("_chat_roles", roles)
    _check_values(scratch)
    register("_chat_trace_json", _trace_json(scratch, keys, key))
    return msgs, roles


def _line_keys(key: FieldPath | None) -> list[str]:
    """The top-level keys whose values `log_line.read_line` may read, beside those `_VALUES` already reads."""
    keys = [k for k in LINE_KEYS if k not in _VALUES]
    if key is not None and isinstance(key[0], str) and key[0] not in keys and key[0] not in _VALUES:
        keys.append(key[0])
    return keys


def _sql_text(text: str) -> str:
    return text.replace("'", "''")


def _sql_name(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'



@contextmanager
def _scope(scratch: duckdb.DuckDBPyConnection) -> Iterator[Callable[[str, pa.Table], None]]:
    """Arrow tables registered for one chunk, all unregistered when it is done."""
    names: list[str] = []

    def register(name: str, table: pa.Table) -> None:
        scratch.register(name, table)
        names.append(name)

    try:
        yield register
    finally:
        for name in names:
            scratch.unregister(name)


def _claim_or_route(scratch: duckdb.DuckDBPyConnection, sink: FileSink, chunk: LineChunk) -> list[int]:
    """Lines to store from SQL (first time their id is seen); every other line goes to the record path."""
    fast = dict(scratch.execute("SELECT lineno, trace_id FROM _chat_fast").fetchall())
    routed_sql = "SELECT lineno FROM _chat_st ANTI JOIN _chat_fast USING (lineno)"
    routed = [r for (r,) in scratch.execute(routed_sql).fetchall()]
    keep = []
    # In file order, so that the first of two lines with one id wins whichever path each takes.
    for lineno in sorted([*fast, *routed]):
        if lineno in fast:
            if sink.claim(fast[lineno]):
                keep.append(lineno)
        else:
            sink.take(parse_line(lineno, chunk.line(lineno)))
    return keep


def _parse(con: duckdb.DuckDBPyConnection, keys: list[str]) -> pa.Table:
    """Describe each non-blank line's structure; parse the plain conversations into message rows (Arrow), the
    first row of each line with the JSON text of its `keys` (`line_values`, in that order)."""
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE _chat_st AS
        SELECT lineno, CASE WHEN regexp_matches(line, '{_TRAILING_COMMA}') THEN NULL
                            ELSE TRY(json_structure(line)) END AS st
        FROM _chat_chunk WHERE NOT regexp_full_match(line, '{_BLANK_LINE}')
    """)
    shapes = [row[0] for row in con.execute("SELECT DISTINCT st FROM _chat_st WHERE st IS NOT NULL").fetchall()]
    plain = [s for s in shapes if _is_plain(s)]
    spec = orjson.dumps({**_VALUES, **{k: "JSON" for k in keys}}).decode()
    table = pa.table({"st": pa.array(plain, pa.string()), "has_double": pa.array(['"DOUBLE"' in s for s in plain])})
    with _registered(con, {"_chat_plain": table}):
        # Trace-level fields ride on each line's first message row; lines of a plain shape have at least one.
        return con.sql(f"""
            SELECT lineno, r.id AS trace_id, (i - 1)::INTEGER AS idx,
                   CASE WHEN i = 1 THEN r.model END AS model, CASE WHEN i = 1 THEN r.metadata END AS metadata,
                   CASE WHEN i = 1 THEN r.tools END AS tools,
                   CASE WHEN i = 1 THEN len(r.messages)::INTEGER END AS n_messages,
                   CASE WHEN i = 1 THEN [{', '.join('r.' + _sql_name(k) for k in keys)}] END AS line_values,
                   m.role AS raw_role, coalesce(m.content, m.refusal) AS content, m.tool_call_id, m.name, m.tool_calls
            FROM (
                SELECT lineno, r, unnest(r.messages) AS m, generate_subscripts(r.messages, 1) AS i
                FROM (
                    SELECT c.lineno, json_transform(c.line, '{_sql_text(spec)}') AS r
                    FROM _chat_chunk c JOIN _chat_st s USING (lineno) JOIN _chat_plain p ON s.st = p.st
                    WHERE NOT p.has_double OR NOT regexp_matches(c.line, '{_LENIENT_NUMBER}')
                )
            )
        """).to_arrow_table(EXPORT_ROWS)


def _roles(msgs: pa.Table) -> pa.Table:
    """Each distinct raw role of the chunk and its normalized role (NULL where normalize_role raises)."""
    raw = pc.unique(msgs["raw_role"].drop_null()) if msgs.num_rows else pa.array([], pa.string())
    return pa.table({"raw_role": raw.cast(pa.string()),
                     "role": pa.array([_role_or_none(r) for r in raw.to_pylist()], pa.string())})


def _messages(msgs: pa.Table, keep: list[int], roles: pa.Table) -> pa.Table:
    """The kept lines' messages as the store's rows; the content is not copied when every line is kept."""
    kept_lines = pa.array(keep, pa.int64())
    if len(keep) < len(pc.unique(msgs["lineno"])):
        msgs = msgs.filter(pc.is_in(msgs["lineno"], value_set=kept_lines))
    role = pc.take(roles["role"], pc.index_in(msgs["raw_role"], value_set=roles["raw_role"]))
    n = msgs.num_rows
    return pa.table({
        "trace_id": msgs["trace_id"], "idx": msgs["idx"], "role": role, "content": msgs["content"],
        "tool_call_id": msgs["tool_call_id"], "name": msgs["name"], "input_tokens": pa.nulls(n, pa.int32()),
        "output_tokens": pa.nulls(n, pa.int32()), "latency_ms": pa.nulls(n, pa.float64()),
        "ts": pa.nulls(n, pa.timestamp("us")),
    })


def _check_values(con: duckdb.DuckDBPyConnection) -> None:
    """Pair tool messages with calls, and sort lines into `_chat_fast` and the rest.

    Pairing follows `link_tool_results` where it needs no fallback: per id, the k-th
    tool message answers the k-th call (ids may repeat), provided that call came
    first; extra answers answer nothing. A line where a tool message has no id,
    names an id no call has, or precedes its call goes to the record path.
    """
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _chat_call AS
        SELECT lineno, trace_id, idx AS message_idx, (j - 1)::INTEGER AS pos, c.id AS call_id,
               c.function.name AS name, c.function.arguments AS raw_arguments
        FROM (SELECT lineno, trace_id, idx, unnest(tool_calls) AS c, generate_subscripts(tool_calls, 1) AS j
              FROM _chat_msg WHERE tool_calls IS NOT NULL);
        CREATE OR REPLACE TEMP TABLE _chat_answer AS
        SELECT lineno, tool_call_id AS call_id, idx,
               row_number() OVER (PARTITION BY lineno, tool_call_id ORDER BY idx) AS k
        FROM _chat_msg JOIN _chat_roles USING (raw_role) WHERE role = 'tool';
        CREATE OR REPLACE TEMP TABLE _chat_link AS
        SELECT c.lineno, c.message_idx, c.pos, a.idx AS result_message_idx
        FROM (SELECT lineno, call_id, message_idx, pos,
                     row_number() OVER (PARTITION BY lineno, call_id ORDER BY message_idx, pos) AS k
              FROM _chat_call WHERE call_id <> '') c
        JOIN _chat_answer a USING (lineno, call_id, k);
    """)
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE _chat_repeated AS
        SELECT c.lineno FROM _chat_chunk c SEMI JOIN (SELECT lineno FROM _chat_msg WHERE idx = 0) USING (lineno)
        LEFT JOIN (SELECT lineno, count(*) AS n FROM _chat_call GROUP BY lineno) k USING (lineno)
        WHERE regexp_matches(c.line, '{_sql_text(_REPEATED_INNER)}')
           OR ((regexp_matches(c.line, '(?s){_sql_text(_TWICE_TOP)}')
                OR len(regexp_extract_all(c.line, '"id"\\s*:')) > 1 + coalesce(k.n, 0))
               AND len(TRY(json_keys(c.line))) > len(list_distinct(TRY(json_keys(c.line)))))
    """)
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _chat_bad AS
        SELECT lineno FROM _chat_msg LEFT JOIN _chat_roles USING (raw_role)
        WHERE role IS NULL OR (idx = 0 AND (trace_id = '' OR (metadata IS NOT NULL AND left(metadata, 1) <> '{')
                                            OR (tools IS NOT NULL AND left(tools, 1) <> '[')))
        UNION SELECT lineno FROM _chat_answer WHERE coalesce(call_id, '') = ''
        UNION SELECT lineno FROM _chat_answer a ANTI JOIN _chat_call c USING (lineno, call_id)
        UNION SELECT lineno FROM _chat_call WHERE coalesce(name, '') = '' OR raw_arguments IS NULL
        UNION SELECT lineno FROM _chat_link WHERE message_idx > result_message_idx
        UNION SELECT lineno FROM _chat_repeated;
        CREATE OR REPLACE TEMP TABLE _chat_fast AS
        SELECT lineno, trace_id FROM _chat_msg WHERE idx = 0 AND lineno NOT IN (SELECT lineno FROM _chat_bad);
    """)


def _stage(con: duckdb.DuckDBPyConnection, src: SourceFile) -> None:
    """Views shaped like the store's tables over the kept lines (messages are built in Arrow, `_messages`).

    The tool results are copied out of the Arrow messages first: the error test reads each several times, and
    runs about twice as fast on DuckDB's own strings.
    """
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE _chat_result AS
        SELECT lineno, idx, content FROM _chat_msg JOIN _chat_roles USING (raw_role) WHERE role = 'tool';
        CREATE OR REPLACE TEMP VIEW _chat_traces AS
        SELECT m.trace_id, '{src.source_id}' AS source_id, '{FORMAT}' AS format, j.session_id, m.model,
               j.started_at, NULL::TIMESTAMP AS ended_at, NULL::VARCHAR AS outcome,
               m.n_messages, j.tools, j.metadata
        FROM _chat_msg m JOIN _chat_trace_json j USING (lineno) SEMI JOIN _chat_keep USING (lineno)
        WHERE m.idx = 0;
        CREATE OR REPLACE TEMP VIEW _chat_tool_calls AS
        SELECT c.trace_id, c.message_idx, c.call_id, c.name, a.arguments, r.content AS result,
               l.result_message_idx, {_error_sql('r.content')} AS is_error,
               NULL::INTEGER AS exit_code
        FROM _chat_call c SEMI JOIN _chat_keep USING (lineno) JOIN _chat_args a USING (raw_arguments)
        LEFT JOIN _chat_link l USING (lineno, message_idx, pos)
        LEFT JOIN _chat_result r ON r.lineno = l.lineno AND r.idx = l.result_message_idx;
        CREATE OR REPLACE TEMP VIEW _chat_scores AS
        SELECT NULL::VARCHAR AS trace_id, NULL::VARCHAR AS name, NULL::DOUBLE AS value, NULL::VARCHAR AS label,
               NULL::VARCHAR AS kind, NULL::VARCHAR AS comment
        WHERE false;
    """)


def _trace_json(con: duckdb.DuckDBPyConnection, keys: list[str], key: FieldPath | None) -> pa.Table:
    """Metadata, session, start and tool schemas of the `_chat_fast` lines, read as the record path reads them
    (`openai_chat.line_metadata` over the values of the line's `keys`, which are all `read_line` reads).

    Lines often repeat these values (an app's fixed metadata, the same tool schemas on every call): each
    distinct combination is read once. A line whose metadata or tools the record path could not read either (an
    integer too long to keep, a number that is infinite as a double) leaves `_chat_fast`, so that the record
    path reports it.
    """
    rows = con.execute("SELECT lineno, trace_id, model, metadata, tools, line_values FROM _chat_msg "
                       "SEMI JOIN _chat_fast USING (lineno) WHERE idx = 0").fetchall()
    types = {"lineno": pa.int64(), "session_id": pa.string(), "started_at": pa.timestamp("us"),
             "metadata": pa.string(), "tools": pa.string()}
    out: dict[str, list[Any]] = {name: [] for name in types}
    unread = []
    by_id = key is not None and key[0] == "id"  # only then does the line's id take part (as its session)
    read: dict[tuple[Any, ...], _LineJson | None] = {}
    for lineno, trace_id, model, meta_json, tools_json, values in rows:
        seen = (trace_id if by_id else None, model, meta_json, tools_json, *values)
        if seen not in read:
            read[seen] = _line_json(keys, key, trace_id, model, meta_json, tools_json, values)
        fields = read[seen]
        if fields is None:
            unread.append(lineno)
            continue
        for name, value in zip(types, (lineno, *fields), strict=True):
            out[name].append(value)
    if unread:
        con.execute("DELETE FROM _chat_fast WHERE lineno IN (SELECT unnest(?))", [unread])
    return pa.table({name: pa.array(values, types[name]) for name, values in out.items()})


_LineJson = tuple[str | None, datetime | None, str, str | None]
"""A line's session id, start, metadata JSON and tool schemas JSON, as `_trace_json` stores them."""


def _line_json(keys: list[str], key: FieldPath | None, trace_id: str, model: str | None, meta_json: str | None,
               tools_json: str | None, values: list[str | None]) -> _LineJson | None:
    """What the record path reads from a line of these values; None where it could not read them."""
    from tracegym.ingest.adapters.openai_chat import line_metadata, unanswered

    try:
        line = {k: loads(v) for k, v in zip(keys, values, strict=True) if v is not None}
        line.update({k: v for k, v in (("id", trace_id), ("model", model)) if v is not None})
        for name, text in (("metadata", meta_json), ("tools", tools_json)):
            if text is not None:
                line[name] = loads(text)
        meta, fields = line_metadata(line, line, key)
    except ValueError:  # orjson's JSONDecodeError included
        return None
    started = unanswered(meta, fields)
    tools = to_json(line["tools"]) if "tools" in line else None
    return fields.session_id, started, to_json(meta), tools


def _arguments(con: duckdb.DuckDBPyConnection) -> pa.Table:
    """Each distinct raw arguments string of the kept calls, as the record path stores it (parsed, sorted keys)."""
    query = "SELECT DISTINCT raw_arguments FROM _chat_call SEMI JOIN _chat_keep USING (lineno)"
    raw = [a for (a,) in con.execute(query).fetchall()]
    canonical = [to_json(parse_arguments(a)) for a in raw]
    return pa.table({"raw_arguments": pa.array(raw, pa.string()), "arguments": pa.array(canonical, pa.string())})
