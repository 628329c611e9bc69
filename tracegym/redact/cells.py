"""Cells of CSV rows and markdown tables with the label that gives them their meaning.

A number under a `phone` column or a key in the row `| API key | … |` carries no label beside it in the text,
so the rules that need one (phones in national formats, SSNs without dashes, compact IBANs in lower case, keys
that are only random characters) would not see it. `labelled_cells` finds, in one text, the blocks of lines that
share a delimiter (`,` `;` tab `|`), takes a block's first line as its header and gives each later cell its
column's header as its label, and in a `|` table also the cell before it in its row (a key-value table). The
detector then reads each cell as `label: value`.

Text before a table on its first line, or after it on its last (a log prefix, the rest of a JSON document the
table sits in) may hold the delimiter too: a row with fewer cells than its header is aligned from the right, one
with more from the left.
"""

from __future__ import annotations

import re
from collections.abc import Callable

DELIMITERS = (",", ";", "\t", "|")
MAX_LABEL = 48
"""A header longer than this reads as prose, not a column name."""
MAX_CELLS = 2_000
"""Cells read per text: a table larger than this in one message is read in part (its first rows)."""
_RULE_LINE = re.compile(r"[ \t|:+-]*-[ \t|:+-]*")  # a markdown table's |---|:--| line, psql's and MySQL's +---+
_TRIM = " \t\"'`\\"


def _lines(text: str) -> list[tuple[int, str]]:
    """(start, line) of each line; a JSON line break read as a backslash and a line break leaves the backslash
    at the end of its line, and it is dropped."""
    out = []
    at = 0
    for line in text.split("\n"):
        out.append((at, line[:-1] if line.endswith("\\") else line))
        at += len(line) + 1
    return out


def _cells(start: int, line: str, delimiter: str) -> list[tuple[int, int]]:
    """The spans of a line's cells, trimmed of spaces, quotes and backticks (a markdown line's outer `|` make no
    cell)."""
    spans = []
    at = 0
    for part in _split(line, delimiter):
        lead = len(part) - len(part.lstrip(_TRIM))
        body = part.strip(_TRIM)
        spans.append((start + at + lead, start + at + lead + len(body)))
        at += len(part) + 1
    if delimiter == "|":
        spans = [s for i, s in enumerate(spans) if s[0] < s[1] or 0 < i < len(spans) - 1]
    return spans


_NAME = re.compile("[^\\W\\d_][\\w .#/()°º№\u0300-\u036f\u0900-\u0dff\u0e00-\u0e7f-]*")
"""A column name: a letter, then letters, digits, spaces, `_.#/()-` (not code: `label=_("Password")`), the
number signs of Romance and Slavic headers (`N° de sécurité sociale`, `Nº cliente`, `паспорт №`); the
combining marks of Latin, Indic and Thai words too (`ফোন নম্বর`, `เบอร์โทร`: vowel signs are no `\\w`)."""


def _split(line: str, delimiter: str) -> list[str]:
    """A line's fields: split at the delimiter outside double-quoted fields (RFC 4180: `"Hoodie, black"` is one
    field; a `\\"` quote too, as a CSV inside a JSON string writes it)."""
    if '"' not in line:
        return line.split(delimiter)
    parts: list[str] = []
    at = 0
    while True:
        m = _FIELD_RE[delimiter].match(line, at)
        if m is None:  # not reached: the second alternative matches anywhere, empty at worst
            return parts + [line[at:]]
        parts.append(m.group())
        if m.end() >= len(line):
            return parts
        at = m.end() + 1  # past the delimiter that ends the field


_FIELD_RE = {d: re.compile(rf'{b}*\\?"(?:[^"\\]|\\[^"]|"")*\\?"{b}*(?={re.escape(d)}|$)|[^{re.escape(d)}]*')
             for d, b in ((",", "[ \t]"), (";", "[ \t]"), ("\t", " "), ("|", "[ \t]"))}
"""A field: a quoted one up to its closing quote when the delimiter or the line's end follows, or the text up to
the next delimiter. The blanks around a quoted field are not the delimiter: a tab-separated line's empty fields
stay fields, and a long run of tabs is not read again from each of its tabs (quadratic)."""


_LAST_NAME = re.compile(r"(?:^|[\s>\]])([^\W\d_][\w .#/-]*)$")
"""A name ending a line's first cell after a prefix (`> phone`, `[tool] phone`, a log line's head); not after a
quote, as in code (`attrs={"autocomplete": "new-password", …`)."""


def _label(text: str, span: tuple[int, int], first: bool = False) -> str | None:
    label = text[span[0]:span[1]]
    if first and not _NAME.fullmatch(label) and (m := _LAST_NAME.search(label)):
        label = m.group(1)
    return label if len(label) <= MAX_LABEL and _NAME.fullmatch(label) else None


_BOX = str.maketrans("│┃┆┇┊┋║─━┄┅┈┉═╌╍┌┐└┘├┤┬┴┼╞╡╪╤╧╟╢╫╔╗╚╝╠╣╦╩╬╒╕╘╛╓╖╙╜",
                     "|||||||" + "-" * 9 + "+" * 34)
"""Box-drawing tables (sqlite3's `.mode box`, DuckDB's and polars' prints, `rich`) read as `|` tables: their
verticals as `|`, their rules as `+---+` lines; one character for one, so spans stay put."""


def labelled_cells(text: str, wanted: Callable[[str], object] = bool) -> list[tuple[str, int, int]]:
    """(label, start, end) of each non-empty cell below a header line, or after a label cell in a `|` row, whose
    label is `wanted` (the detector asks for labels holding a context word: a block without one costs little)."""
    if not text.isascii():
        text = text.translate(_BOX)
    lines = _lines(text)
    out: list[tuple[str, int, int]] = []
    for delimiter in (d for d in DELIMITERS if d in text):
        block: list[tuple[int, str]] = []
        for start, line in lines + [(len(text), "")]:
            if delimiter in line and not (delimiter == "|" and _RULE_LINE.fullmatch(line)):
                block.append((start, line))
                continue
            if delimiter == "|" and line and _RULE_LINE.fullmatch(line):
                continue
            if len(block) >= 2 or delimiter == "|" and block:
                out += _block(text, block, delimiter, wanted)
            block = []
            if len(out) >= MAX_CELLS:
                return out[:MAX_CELLS]
    if "  " in text:
        out += _aligned(lines, wanted)
    return out[:MAX_CELLS]


_ELIDED = ("...", "…")
"""What a DataFrame's repr prints for the columns it leaves out: no name, and no cell under it is labelled."""
_RUN = re.compile(r"\S+(?: \S+)*")
"""A cell of a grid aligned by spaces: words apart by single spaces, two or more between cells."""


def _aligned(lines: list[tuple[int, str]], wanted: Callable[[str], object]) -> list[tuple[str, int, int]]:
    """Cells of grids aligned by spaces (a pandas DataFrame's repr, `docker ps`, fixed-width reports): a header
    line of two or more names, two spaces or more apart, then the lines up to a blank one, each cell labelled with
    the name whose columns it overlaps (a DataFrame right-aligns its values under their names; the index before
    them has none)."""
    out: list[tuple[str, int, int]] = []
    at = 0
    while at < len(lines):
        head = [(m.start(), m.end(), m.group()) for m in _RUN.finditer(lines[at][1]) if m.group() not in _ELIDED]
        at += 1
        if len(head) < 2 or not all(len(h) <= MAX_LABEL and _NAME.fullmatch(h) for _, _, h in head) \
                or not any(wanted(h) for _, _, h in head):
            continue
        while at < len(lines) and lines[at][1].strip():
            start, line = lines[at]
            for m in _RUN.finditer(line):
                name = next((h for s, e, h in head if m.start() < e and s < m.end()), None)
                if name is not None and wanted(name):
                    out.append((name, start + m.start(), start + m.end()))
            at += 1
    return out


def _block(text: str, block: list[tuple[int, str]], delimiter: str, wanted: Callable[[str], object]
           ) -> list[tuple[str, int, int]]:
    while len(block) > 2 and _merged(block[0][1], delimiter):
        block = block[1:]
    head_start, head = block[0]
    if delimiter == "|" and len(block) > 1 and all(line.lstrip().startswith("|") for _, line in block[1:]):
        # Rows that open with a pipe: so does the header, and what its line holds before the first pipe is a
        # prefix (the start of the JSON document or log line the table sits in), not a column.
        cut = head.index("|")
        head_start, head = head_start + cut, head[cut:]
    header = _cells(head_start, head, delimiter)
    names = [name if (name := _label(text, h, i == 0)) is not None and wanted(name) else None
             for i, h in enumerate(header)]
    out = []
    for start, line in block[1:] if len(block) > 1 and any(names) else []:
        row = _cells(start, line, delimiter)
        shift = len(header) - len(row) if len(row) < len(header) else 0
        for i, (s, e) in enumerate(row):
            name = names[i + shift] if i + shift < len(names) else None
            if s < e and name is not None:
                out.append((name, s, e))
    if delimiter == "|":
        for start, line in block:
            row = _cells(start, line, delimiter)
            out += [(name, s, e) for (ls, le), (s, e) in zip(row, row[1:], strict=False)
                    if s < e and (name := _label(text, (ls, le))) is not None and wanted(name)]
    else:
        out += _key_value_rows(text, block, delimiter, header, wanted)
    return out


_KEY_COLUMN = frozenset({"field", "key", "name", "attribute", "parameter", "param", "setting", "property",
                         "variable", "item"})
_VALUE_COLUMN = frozenset({"value", "val"})
"""The header of a key-value export (entity-attribute-value rows: `record_id;field;value`, `key,value`,
`name,value`): the cell under the key column names the cell under the value column, as a `|` row's label cell
does."""


def _key_value_rows(text: str, block: list[tuple[int, str]], delimiter: str, header: list[tuple[int, int]],
                    wanted: Callable[[str], object]) -> list[tuple[str, int, int]]:
    heads = [text[s:e].strip().lower() for s, e in header]
    pair = next((i for i in range(len(heads) - 1) if heads[i] in _KEY_COLUMN and heads[i + 1] in _VALUE_COLUMN),
                None)
    if pair is None:
        return []
    out = []
    for start, line in block[1:]:
        row = _cells(start, line, delimiter)
        at = pair - (len(header) - len(row) if len(row) < len(header) else 0)
        if 0 <= at < len(row) - 1 and row[at + 1][0] < row[at + 1][1] \
                and (name := _label(text, row[at])) is not None and wanted(name):
            out.append((name, *row[at + 1]))
    return out


def _merged(line: str, delimiter: str) -> bool:
    """A header row of merged cells over the names (a spreadsheet's group titles: `\tCustomer\t\t\tRecord`):
    more of its cells empty than not; the names are on the line below."""
    cells = [c.strip(_TRIM) for c in _split(line, delimiter)]
    return sum(not c for c in cells) * 2 > len(cells)
