"""Values whose label stands away from them in what agents' tools print: JSON result sets (a query API's column
names apart from its rows), Redis' numbered replies, a browser's accessibility snapshot and the automation scripts
browser agents run. Each function gives (label, start, end), as tracegym/redact/structure.py's do.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tracegym.redact.labelled import Labelled
from tracegym.redact.structure import _Q

_COLUMNS = re.compile(rf"{_Q}(?:columns|column_names|fields|headers|header|cols|rowType){_Q}[ \t]*:[ \t]*"
                      r"\[([^\[\]]{1,4000})\]")
_COLUMN_NAME = re.compile(rf"{_Q}name{_Q}[ \t]*:[ \t]*{_Q}((?:[^\"\\\n]|\\[^\"\n]){{1,48}}?){_Q}")
_ROWS = re.compile(rf"{_Q}(?:rows|data|values|records|results){_Q}[ \t]*:[ \t]*\[[ \t\r\n]*\[")
_ROWS_WITHIN = 4096
"""How far after its column names a result set's rows may start: each header is read on from once, not to the
text's end (quadratic in a text of many headers and no rows)."""
_ROW = re.compile(r"\[([^\[\]]*)\]")
_SCALAR = re.compile(rf"{_Q}((?:[^\"\\\n]|\\[^\"\n])*?){_Q}|(-?\d[\d.eE+-]*|null|true|false)")


def result_sets(text: str, wanted: Callable[[str], object]) -> Labelled:
    """Cells of a JSON result set whose column names come apart from its rows: `{"columns": ["id", "phone"],
    "rows": [["7", "…"]]}` (SQL tools and MCP database servers), Snowflake's `rowType` objects and `data` rows."""
    out: Labelled = []
    for head in _COLUMNS.finditer(text):
        names = _names(head.group(1))
        rows = _ROWS.search(text, head.end(), head.end() + _ROWS_WITHIN)
        if not any(n is not None and wanted(n) for n in names) or rows is None:
            continue
        at = rows.end() - 1
        while (row := _ROW.match(text, at)) is not None:
            cells = [m for m in _SCALAR.finditer(row.group(1)) if m.group(1) is not None or m.group(2) is not None]
            for name, cell in zip(names, cells, strict=False):
                group = 1 if cell.group(1) is not None else 2
                if name is not None and wanted(name) and cell.start(group) < cell.end(group):
                    out.append((name, row.start(1) + cell.start(group), row.start(1) + cell.end(group)))
            at = row.end()
            at += len(text[at:]) - len(text[at:].lstrip(" \t\r\n,"))
    return out


def _names(items: str) -> list[str | None]:
    """Column names: strings, or objects' `name` fields (Snowflake's rowType); None where an item is neither."""
    if "{" in items:
        return [m.group(1) for m in _COLUMN_NAME.finditer(items)]
    return [m.group(1) for m in _SCALAR.finditer(items)]


_REPLY = re.compile(r"^[ \t]*(\d{1,6})\)[ \t]+\\?\"((?:[^\"\\\n]|\\[^\"\n])*)\\?\"[ \t]*\\?$", re.MULTILINE)


def redis_replies(text: str, wanted: Callable[[str], object]) -> Labelled:
    """A hash as redis-cli prints it (`HGETALL`, `CONFIG GET`): numbered replies, each odd one a field's name and
    the next its value."""
    replies = {int(m.group(1)): m for m in _REPLY.finditer(text)}
    return [(m.group(2), value.start(2), value.end(2)) for n, m in replies.items()
            if n % 2 and (value := replies.get(n + 1)) is not None and value.start(2) < value.end(2)
            and len(m.group(2)) <= 48 and wanted(m.group(2))]


_FIELD_ROLES = "textbox|searchbox|combobox|spinbutton|textarea|cell|gridcell|listitem"
_A11Y_FIELD = re.compile(rf"^[ \t]*-[ \t]+(?:{_FIELD_ROLES})[ \t]+\\?\"([^\"\\\n]{{1,48}})\\?\"(?:[ \t]*\[[^\]\n]*\])*"
                         r"[ \t]*:[ \t]*(\S(?:[^\n]*?\S)?)[ \t]*\\?$", re.MULTILINE)


def accessibility_fields(text: str, wanted: Callable[[str], object]) -> Labelled:
    """A field in a browser's accessibility snapshot (Playwright MCP's `- textbox "Phone" [ref=e12]: …`): its
    accessible name labels the value after it."""
    return [(m.group(1), m.start(2), m.end(2)) for m in _A11Y_FIELD.finditer(text) if wanted(m.group(1))]


_LOCATOR = (r"(?:getBy(?:Label|Placeholder|TestId|Title)|locator|querySelector|find_element(?:_by_\w+)?|"
            r"findElement|\$)\([ \t]*(?:By\.\w+[ \t]*,[ \t]*)?\\?['\"]([^'\"\\\n]{1,60})\\?['\"]")
_TYPED = (r"(?:fill|type|pressSequentially|send_keys|sendKeys|setValue)\([ \t]*\\?['\"]"
          r"([^'\"\\\n]{1,200})\\?['\"]")
_FILLED = re.compile(rf"{_LOCATOR}[^\n]{{0,200}}?(?:\n[^\n]{{0,200}}?){{0,3}}?{_TYPED}")
_SELECTOR_PUNCTUATION = re.compile(r"[#.\[\]=*^$|~:()>+]+")


def typed_fields(text: str, wanted: Callable[[str], object]) -> Labelled:
    """What a browser script types into a field it found by label, placeholder, id or name (Playwright's
    `getByLabel('Phone').fill('…')`, its `pw:api` log's locator then `fill("…")`, Selenium's
    `find_element(By.NAME, "phone")` then `send_keys("…")` up to three lines below): the field's name, its
    selector's punctuation dropped (`#adminPwd`, `input[name=tel]`), labels the value."""
    out: Labelled = []
    for m in _FILLED.finditer(text):
        name = " ".join(_SELECTOR_PUNCTUATION.sub(" ", m.group(1)).split())
        if name and wanted(name):
            out.append((name, m.start(2), m.end(2)))
    return out


_TOOLS = re.compile(r"\[[ \t\r\n]*\[|\d\) \\?\"|(?:textbox|searchbox|combobox|spinbutton|textarea|cell|listitem) \\?\"|"
                    r"fill\(|type\(|send_keys\(|sendKeys\(|pressSequentially\(|setValue\(")
"""What each reader needs in a text (a row list, a numbered reply, a field's role, a typing call): most texts hold
none, and are not read."""


def labelled(text: str, wanted: Callable[[str], object]) -> Labelled:
    """Every value here whose label stands away from it in a tool's print."""
    if not _TOOLS.search(text):
        return []
    return result_sets(text, wanted) + redis_replies(text, wanted) + accessibility_fields(text, wanted) \
        + typed_fields(text, wanted)
