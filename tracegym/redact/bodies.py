"""Values of HTTP request bodies whose label stands away from them: a multipart form's fields and a GraphQL
operation's variables.

A proxy's or a client's debug log prints a body as it went over the wire. In `multipart/form-data` (RFC 7578) a
field's name sits in its part's `Content-Disposition` header and its value after the blank line that ends the
part's headers; in GraphQL (the GraphQL over HTTP spec) an argument names a variable (`login(password: $p)`) whose
value sits in the request's `variables` object (`"variables": {"p": …}`). Each function gives (label, start, end)
for such values, read by the detector as `label: value` (tracegym/redact/structure.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tracegym.redact.labelled import Labelled

_BREAK = r"(?:\\?\r?\n|\\r|\\n)"
"""A line break's CR or LF: as written, escaped inside a JSON string, or as the detector reads an escape (a
backslash before a real line break)."""
_Q = r"\\{0,7}\""
"""A quote, escaped when the body sits inside JSON strings (bounded: `\\*` scans a run from each position)."""
_PART = re.compile(rf"(?i:content-disposition):[ \t]*form-data;[ \t]*name={_Q}([^\"\\\r\n]{{1,48}}){_Q}"
                   rf"[^\r\n\\]{{0,200}}(?:{_BREAK}{{1,2}}(?!(?i:content-disposition))(?i:content-[a-z-]{{1,30}}):[^\r\n\\]{{0,200}}){{0,3}}"
                   rf"{_BREAK}{{2,4}}(?!(?i:content-disposition))([^\r\n\\]{{1,512}})")
_ARGUMENT = re.compile(r"([A-Za-z_]\w{0,47})[ \t]*:[ \t]*\$([A-Za-z_]\w{0,47})")
_MOST_VARIABLES = 64
"""Variables looked up per text: each is a pass over the rest of it (a hostile text could name thousands)."""


def multipart_fields(text: str, wanted: Callable[[str], object]) -> Labelled:
    """The value of each part of a multipart form, labelled by its field's name."""
    return [(m.group(1), m.start(2), m.end(2)) for m in _PART.finditer(text) if wanted(m.group(1))]


def graphql_variables(text: str, wanted: Callable[[str], object]) -> Labelled:
    """The string value of each GraphQL variable an argument names, labelled by the argument's name (and by the
    variable's own, `$password`, where the argument's says nothing)."""
    out: Labelled = []
    start = text.find("variables")
    if start < 0:
        return out
    named = {m.group(2): m.group(1) for m in _ARGUMENT.finditer(text, 0, start)}
    for variable, argument in list(named.items())[:_MOST_VARIABLES]:
        label = argument if wanted(argument) else variable if wanted(variable) else None
        if label is None:
            continue
        value = re.compile(rf"{_Q}{re.escape(variable)}{_Q}[ \t]*:[ \t]*{_Q}((?:[^\"\\\n]|\\[^\"\n]){{1,512}}?){_Q}")
        out += [(label, m.start(1), m.end(1)) for m in value.finditer(text, start)]
    return out


def body_fields(text: str, wanted: Callable[[str], object]) -> Labelled:
    """Both readings, where the text holds what each needs."""
    out: Labelled = []
    if "form-data" in text or "Form-Data" in text or "FORM-DATA" in text:
        out += multipart_fields(text, wanted)
    if "$" in text and "variables" in text:
        out += graphql_variables(text, wanted)
    return out
