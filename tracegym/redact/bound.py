"""Values an ORM's or a driver's log binds to an INSERT's placeholders, labelled by their columns.

A query log prints the statement with placeholders (`INSERT INTO t (user, password) VALUES (?, ?)`, `%s`,
`%(name)s`, `$1`, `:name`) and the values apart from it: SQLAlchemy's echo on the next line (`[generated in
0.0001s] ('bob', '…')`, `[cached since 4.2s ago] (…)`) or in an error's `[parameters: (…)]`, Hibernate's `binding
parameter [2] as [VARCHAR] - […]` (5.x) and `binding parameter (2:VARCHAR) <- […]` (6.x). The n-th value is the n-th
column's; each is given as (label, start, end) for the detector to read as `label: value`
(tracegym/redact/structure.py, which reads literal VALUES rows with the same `sql_row`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tracegym.redact.labelled import Labelled

INSERT_HEAD = r"(?i:insert[ \t]+into)[ \t]+[`\"\w.\[\]]+[ \t]*\(([^()]{1,2000})\)[ \t]*(?i:values)[ \t]*"
"""`INSERT INTO t (a, b, …) VALUES`, its column list the group."""
_HOLDER = r"(?:\?|%s|%\(\w{1,40}\)s|\$\d{1,3}|:\w{1,40})"
_INSERT = re.compile(rf"{INSERT_HEAD}\([ \t]*{_HOLDER}(?:[ \t]*,[ \t]*{_HOLDER}){{0,199}}[ \t]*\)")
_TUPLE = re.compile(r"\[(?:parameters: |(?:generated in|cached since|no key)[^\]\n]{0,40}\] )\(")
_SQL_VALUE = re.compile(r"\\?'((?:[^'\\\n]|\\\\.|\\'|'')*)\\?'|(NULL|null|None|True|False|-?[\d.]+)")
"""A value of a VALUES row or of a printed parameter tuple: a quoted string (its text the group), or a literal."""
_BINDING = re.compile(r"binding parameter (?:\[(\d{1,3})\] as \[\w{1,30}\] - |\((\d{1,3}):\w{1,30}\) <- )"
                      r"\[([^\]\n]*)\]")
_REACH = 4000
"""Characters after the statement where its values are looked for."""


def bound_parameters(text: str, wanted: Callable[[str], object]) -> Labelled:
    """Each bound value of an INSERT whose columns a label names, labelled with its column."""
    out: Labelled = []
    for insert in _INSERT.finditer(text):
        columns = [c.strip(" \t`\"[]") for c in insert.group(1).split(",")]
        if not any(wanted(c) for c in columns):
            continue
        after = text[insert.end():insert.end() + _REACH]
        spans = _tuple_values(after) or _bindings(after, len(columns))
        out += [(columns[i], insert.end() + s, insert.end() + e) for i, (s, e) in enumerate(spans)
                if i < len(columns) and s < e and wanted(columns[i])]
    return out


def _tuple_values(after: str) -> list[tuple[int, int]]:
    """The spans of the values of the first parameter tuple SQLAlchemy printed, in order (a literal's empty)."""
    start = _TUPLE.search(after)
    return [] if start is None else sql_row(after, start.end())[1]


def sql_row(text: str, at: int) -> tuple[int, list[tuple[int, int]]]:
    """The spans of a tuple's items from `at` (after its `(`: a VALUES row, a printed parameter tuple), a
    literal's empty, and where the tuple ends."""
    spans: list[tuple[int, int]] = []
    while at < len(text):
        m = _SQL_VALUE.match(text, at)
        if m is None:
            return at, spans
        spans.append(m.span(1) if m.group(1) is not None else (m.start(), m.start()))
        at = m.end()
        while at < len(text) and text[at] in " \t":
            at += 1
        if at < len(text) and text[at] == ")":
            return at + 1, spans
        if at >= len(text) or text[at] != ",":
            return at, spans
        at += 1
        while at < len(text) and text[at] in " \t":
            at += 1
    return at, spans


def _bindings(after: str, count: int) -> list[tuple[int, int]]:
    """The spans of Hibernate's bound values by their position (1-based), empty spans where none is printed."""
    spans = [(0, 0)] * count
    for m in _BINDING.finditer(after):
        position = int(m.group(1) or m.group(2)) - 1
        if 0 <= position < count and spans[position] == (0, 0):
            spans[position] = m.span(3)
    return spans if any(s < e for s, e in spans) else []
