"""Scans that detectors share, made once per mining run into temporary tables.

A scan reads a wide column once for every detector that needs it, and keeps
only what they need. Reading message text is the largest cost of mining: the
content column is stored with a dictionary per segment, and a segment of
messages holds mostly different texts, so every read decompresses nearly all
of it, about 0.12 CPU-s per 1.3 M messages even when a filter on `role` keeps
few rows. The users' messages are therefore read once, here, for format_error
and user_repeat.

They are grouped by their text as they are read, so that a detector runs its
regular expressions and lower-casing once per distinct text, and reaches the
messages behind a text through their row ids, joined back to `messages`
without reading its text again. Users repeat themselves ("yes", "thank you",
the same request in every trial of a task); where every text differs, the
grouping costs about what examining each message would.

Why detectors need a separate statement for per-distinct work: DuckDB runs a
regular expression once per row, even over a dictionary-compressed column, and
pushes a filter on the output of `SELECT DISTINCT` below the DISTINCT (even out
of a MATERIALIZED CTE), back onto every row. A filter on a temporary table made
by an earlier statement stays where it is written. Distinct values pay off only
where they are few: tool names always are; tool results and metadata often are
not (every file listing, every trace id in the metadata), and hashing each of
those costs more than an anchored regex over it, so those are read row by row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

STORE_TABLES = {"traces": "traces", "messages": "messages", "tool_calls": "tool_calls", "scores": "scores"}
"""What detectors' `@table` names mean when they read the whole store."""


def over(sql: str, tables: dict[str, str]) -> str:
    """`sql` with each `@traces`, `@messages`, `@tool_calls` and `@scores` replaced by the table `tables` names."""
    return re.sub(r"@(traces|messages|tool_calls|scores)\b", lambda m: tables[m.group(1)], sql)


@dataclass(frozen=True, slots=True)
class Scan:
    table: str
    """The temporary table the scan fills; detectors read it by this name."""
    sql: str

    def over(self, tables: dict[str, str]) -> str:
        """The SQL with each `@table` it reads replaced by `tables[table]`."""
        return over(self.sql, tables)


USER_TEXTS = Scan(
    "tg_user_texts",
    # rowid: which messages hold the text, read back only for the few texts that are findings.
    # trace_keys: which traces, as integers, so that a detector can tell cheaply whether a trace
    # holds a text twice (a hash of the id: a necessary condition, which it then checks exactly).
    """
    SELECT content, list(rowid) AS rowids, list(hash(trace_id)) AS trace_keys
    FROM @messages
    WHERE role = 'user' AND content IS NOT NULL
    GROUP BY content
    """,
)

TOOL_NAMES = Scan("tg_tool_names", "SELECT DISTINCT name FROM @tool_calls WHERE name IS NOT NULL")

RUN_METADATA = Scan(
    "tg_run_metadata",
    # The fields that say how a run ended (SWE-agent, mini-swe-agent and the like; τ-bench has none),
    # parsed once for failing_tests, terminated and empty_submission. One regex over the metadata text
    # picks the traces that have any of them, so JSON is parsed only for those.
    """
    SELECT trace_id,
           coalesce(metadata->>'$.exit_status', metadata->>'$.termination_reason',
                    metadata->>'$.stop_reason') AS status,
           metadata->>'$.exit_status' AS exit_status,
           CASE WHEN json_exists(metadata, '$.submission')
                THEN trim(coalesce(metadata->>'$.submission', '')) = '' END AS empty_submission,
           CASE WHEN json_exists(metadata, '$.tests_status.FAIL_TO_PASS')
                THEN json_extract(metadata, '$.tests_status') END AS tests_status
    FROM @traces
    WHERE regexp_matches(CAST(metadata AS VARCHAR),
                         '"(?:exit_status|termination_reason|stop_reason|submission|FAIL_TO_PASS)"')
    """,
)
