"""Values of a PostgreSQL dump's `COPY … FROM stdin;` block, labelled by their columns.

pg_dump writes a table's rows after `COPY public.t (id, email, key) FROM stdin;`, one a line, the columns apart by
tabs, up to a line `\\.` (PostgreSQL's COPY text format: `\\N` is NULL). The n-th field is the n-th column's; each is
given as (label, start, end) for the detector to read as `label: value` (tracegym/redact/structure.py). Inside JSON
text the dump's tabs and line breaks are the escapes `\\t` and `\\n`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tracegym.redact.labelled import Labelled

_COPY = re.compile(r"\b(?i:copy)[ \t]+[\w.\"]{1,200}[ \t]*\(([^()]{1,2000})\)[ \t]+(?i:from[ \t]+stdin)[ \t]*;"
                   r"[ \t]*(\r?\n|\\\r?\n|\\n)")
_BREAK_RAW = re.compile(r"\r?\n|\t")
_BREAK_ESCAPED = re.compile(r"\\\r?\n|\\[nt]")
"""A field's end inside JSON text: the escape, or the backslash and line break the detector reads it as."""
_STRING_END = re.compile(r"(?<!\\)\"")
_ROWS = 1000
_REACH = 100_000
"""Rows and characters after the COPY line where its rows are read."""


def copy_rows(text: str, wanted: Callable[[str], object]) -> Labelled:
    """Each field of a COPY block's rows whose column a label names, labelled with its column."""
    out: Labelled = []
    for copy in _COPY.finditer(text):
        columns = [c.strip(" \t\"") for c in copy.group(1).split(",")]
        if any(wanted(c) for c in columns):
            out += _rows(text, copy.end(), columns, copy.group(2).startswith("\\"), wanted)
    return out


def _rows(text: str, at: int, columns: list[str], escaped: bool, wanted: Callable[[str], object]) -> Labelled:
    """The labelled fields from `at` up to `\\.`, the reach or a line that is no row. Raw, a row is a line of
    one field per column; escaped in JSON text (where the detector reads tabs and line breaks alike) the fields
    are taken a row of columns at a time, up to the string's end."""
    breaks = _BREAK_ESCAPED if escaped else _BREAK_RAW
    end = min(len(text), at + _REACH)
    if escaped and (quote := _STRING_END.search(text, at, end)) is not None:
        end = quote.start()
    out: Labelled = []
    for i in range(_ROWS * len(columns)):
        column = i % len(columns)
        brk = breaks.search(text, at, end)
        stop = brk.start() if brk is not None else end
        line_ends = brk is not None and not escaped and brk.group() != "\t"
        if text.startswith("\\.", at) or line_ends and column == 0 and len(columns) > 1:
            break  # the end of data, or a line of one field: no row
        if stop > at and text[at:stop] != "\\N" and wanted(columns[column]):
            out.append((columns[column], at, stop))
        if brk is None or not escaped and line_ends != (column == len(columns) - 1):
            break  # raw, a row ends with its last column's field: shorter or longer, no row
        at = brk.end()
    return out
