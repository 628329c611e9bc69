"""Scans that detectors share, made once per mining run into temporary tables.

Most texts the detectors examine recur: the same tool result, error, tool name
or task metadata in many traces. A scan here lists each distinct value once,
and detectors run their expensive expressions (regular expressions, JSON
parsing, signatures) over that list, then join back to the rows. DuckDB does
not do this by itself: it evaluates a regular expression once per row even on
a dictionary-compressed column, and it pushes a filter on `SELECT DISTINCT`'s
output below the DISTINCT (even out of a MATERIALIZED CTE), back onto every row;
a filter on a separate temporary table stays where it is written.

Reading message text is the largest cost of mining. The content column is
stored with a dictionary per segment, and a segment of messages holds mostly
different texts, so every read decompresses nearly all of it: about 0.12 CPU-s
per 1.3 M messages, even when a filter on `role` keeps few rows (a column like
`tool_calls.result`, whose segments repeat a few texts, costs a tenth of that).
The users' messages are therefore read once, here, for every detector that
needs them (format_error, user_repeat).

They are grouped by their text as they are read: a detector examines each
distinct text once (regular expressions, lower-casing) and reaches the messages
behind a text through their row ids, joined back to `messages` without reading
its text again. Users repeat themselves ("yes", "thank you", the same request
in every trial of a task), so there are far fewer texts than messages; when
every text differs the grouping costs about what reading the column does.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Scan:
    table: str
    """The temporary table the scan fills; detectors read it by this name."""
    sql: str


USER_TEXTS = Scan(
    "tg_user_texts",
    # rowid: which messages hold the text, read back only for the few texts that are findings.
    # trace_keys: which traces, as integers, so that a detector can tell cheaply whether a trace
    # holds a text twice (a hash of the id: a necessary condition, which it then checks exactly).
    """
    SELECT content, list(rowid) AS rowids, list(hash(trace_id)) AS trace_keys
    FROM messages
    WHERE role = 'user' AND content IS NOT NULL
    GROUP BY content
    """,
)

RESULT_TEXTS = Scan("tg_result_texts", "SELECT DISTINCT result FROM tool_calls WHERE result IS NOT NULL")

TOOL_NAMES = Scan("tg_tool_names", "SELECT DISTINCT name FROM tool_calls WHERE name IS NOT NULL")

# Traces of one task or run often share their metadata; where each trace's differs, this costs a
# hash of each, less than the JSON parsing it replaces.
METADATA = Scan("tg_metadata", "SELECT DISTINCT metadata FROM traces WHERE metadata IS NOT NULL")
