"""Tool results that are a backend's JSON error response, and the message each names.

Backends answer a failed call with JSON rather than an "Error: ..." line:
`{"error": {"code": 504, "message": "upstream timeout"}}` (Google, OpenAI, JSON-RPC), `{"error": "text"}`,
`{"status": "error", "message": ...}` and `{"status": "fail"}` (JSend), `{"ok": false, "error": ...}` (Slack),
`{"success": false}`, an HTTP error status in `status`, `status_code`, `statusCode` or `code` (400 to 599, a
number or a three-digit string), and GraphQL's `{"errors": [{"message": ...}]}`. Only the top level of a JSON
object counts: a record that holds an `error` field deeper down is data.

The test exists twice, in Python (`json_error`, which ingest uses to flag `tool_calls.is_error`) and in SQL
(`json_error_sql`, the macro `tg_json_error` the tool_error detector calls), built from the same path lists. So
that both read the same texts as JSON, each first applies the same bounds, which also keep the work bounded on
hostile results: an object at the top holding one of KEYS (the cheap first test), at most
MAX_CHARS characters and MAX_BRACKETS brackets (Python's parser recurses once per level), no comma before a
closing bracket (DuckDB's parser accepts trailing commas, Python's does not), and no lone UTF-16 surrogate
(Python's parser accepts them, DuckDB's does not). A key written twice counts once, as the first (DuckDB's
reading).
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_CHARS = 100_000
"""Longer results are not read as JSON: an error response is short."""
MAX_BRACKETS = 500
"""Results with more `[` and `{` (anywhere, strings included) are not read as JSON."""

KEYS = r'"(?:error|status|ok"|success"|code")'
"""A JSON error response holds one of these, as a key or its opening (`"errors"`, `"status_code"`, ...)."""
_OPENS_OBJECT = r"^[ \t\n\r]*\{"
_TRAILING_COMMA = r",[ \t\n\r]*[\]}]"

ERROR = "$.error"
ERRORS = "$.errors"
STATUS = "$.status"
FALSE_MEANS_FAILED = ("$.ok", "$.success")
HTTP_CODES = ("$.status", "$.status_code", "$.statusCode", "$.code")
ERROR_STATUSES = ("error", "fail")
MESSAGES = (
    "$.error.message", "$.error.msg", "$.error.detail", "$.error.description", "$.error.reason", "$.error.title",
    "$.errors[0].message", "$.errors[0]", "$.error",
    "$.message", "$.msg", "$.detail", "$.error_description", "$.description", "$.reason", "$.title",
    "$.error.type", "$.error.code",
)
"""Where the message is, in order: the first that holds a string with more than white space is it."""
CODE_MESSAGES = (*HTTP_CODES, "$.error.code", "$.error.status")
"""Where an HTTP error status is looked for when nothing names the error: the message is then 'HTTP 502'."""

_WHITE = " \t\n\r"
_STEP = re.compile(r"\.([A-Za-z_]+)|\[(\d+)\]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def json_error(text: str | None) -> str | None:
    """The message of a tool result that is a JSON error response ('' when it names none); None when it is not one.

    Never raises: what is not JSON, or is out of bounds, is not a JSON error.
    """
    value = _parse(text)
    if value is None or not _is_error(value):
        return None
    for path in MESSAGES:
        found = _at(value, path)
        if isinstance(found, str) and found.strip(_WHITE):
            return found
    for path in CODE_MESSAGES:
        found = _at(value, path)
        if _http_error(found):
            return f"HTTP {found}"
    return ""


def candidate(text: str) -> bool:
    """A cheap necessary condition for `json_error`: `text` opens an object and holds one of KEYS."""
    return re.match(_OPENS_OBJECT, text) is not None and re.search(KEYS, text) is not None


def candidate_sql(arg: str) -> str:
    """`candidate` in SQL: the anchored test first, as most results fail it at their first character."""
    return f"(regexp_matches({arg}, {_lit(_OPENS_OBJECT)}) AND regexp_matches({arg}, {_lit(KEYS)}))"


def _parse(text: str | None) -> dict[str, Any] | None:
    """`text` as a JSON object within the module's bounds, else None."""
    if not text or not candidate(text) or len(text) > MAX_CHARS or text.count("[") + text.count("{") > MAX_BRACKETS:
        return None
    if re.search(_TRAILING_COMMA, text):
        return None
    try:
        value = json.loads(text, object_pairs_hook=_first_wins)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or _has_surrogate(value):
        return None
    return value


def _first_wins(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in pairs:
        out.setdefault(key, item)
    return out


def _has_surrogate(value: object) -> bool:
    """Whether a string (or key) anywhere in `value` holds a lone surrogate; iterative, as nesting is deep."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _at(value: object, path: str) -> object:
    """The value at a path of the forms `$.a.b` and `$.a[0].b`; None where it leads nowhere."""
    for key, index in _STEP.findall(path):
        if key and isinstance(value, dict):
            value = value.get(key)
        elif index and isinstance(value, list) and int(index) < len(value):
            value = value[int(index)]
        else:
            return None
    return value


def _is_error(value: dict[str, Any]) -> bool:
    error, errors, status = _at(value, ERROR), _at(value, ERRORS), _at(value, STATUS)
    return (error is True
            or (isinstance(error, str) and bool(error.strip(_WHITE)))
            or (isinstance(error, (dict, list)) and bool(error))
            or (isinstance(errors, (dict, list)) and bool(errors))
            or (isinstance(status, str) and status.lower() in ERROR_STATUSES)
            or any(_at(value, path) is False for path in FALSE_MEANS_FAILED)
            or any(_http_error(_at(value, path)) for path in HTTP_CODES))


def _http_error(code: object) -> bool:
    if isinstance(code, bool):
        return False
    if isinstance(code, int):
        return 400 <= code <= 599
    return isinstance(code, str) and re.fullmatch("[45][0-9][0-9]", code) is not None


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def json_error_sql(arg: str) -> str:
    """`json_error` as one SQL expression over `arg` (a column: it is read several times); NULL for not an error."""
    paths = [ERROR, ERRORS, STATUS, *FALSE_MEANS_FAILED, *HTTP_CODES, *MESSAGES, *CODE_MESSAGES]
    at = {path: f"v[{paths.index(path) + 1}]" for path in paths}  # where json_extract puts it (from 1)

    def text(path: str) -> str:
        return f"CASE WHEN json_type({at[path]}) = 'VARCHAR' THEN {at[path]}->>'$' END"

    def http(path: str) -> str:
        j = at[path]
        number = f"json_type({j}) IN ('UBIGINT', 'BIGINT') AND TRY_CAST({j}->>'$' AS BIGINT) BETWEEN 400 AND 599"
        digits = f"json_type({j}) = 'VARCHAR' AND regexp_full_match({j}->>'$', '[45][0-9][0-9]')"
        return f"coalesce({number} OR {digits}, false)"

    def filled(path: str) -> str:
        j = at[path]
        return (f"(json_type({j}) = 'OBJECT' AND {j}::VARCHAR <> '{{}}' "
                f"OR json_type({j}) = 'ARRAY' AND json_array_length({j}) > 0)")

    statuses = ", ".join(_lit(s) for s in ERROR_STATUSES)
    is_error = " OR ".join([
        f"coalesce(json_type({at[ERROR]}) = 'BOOLEAN' AND {at[ERROR]}->>'$' = 'true', false)",
        f"coalesce(trim({text(ERROR)}, {_lit(_WHITE)}) <> '', false)",
        f"coalesce({filled(ERROR)}, false)",
        f"coalesce({filled(ERRORS)}, false)",
        f"coalesce(lower({text(STATUS)}) IN ({statuses}), false)",
        *(f"coalesce(json_type({at[p]}) = 'BOOLEAN' AND {at[p]}->>'$' = 'false', false)"
          for p in FALSE_MEANS_FAILED),
        *(http(p) for p in HTTP_CODES),
    ])
    message = ", ".join(
        [f"CASE WHEN trim({text(p)}, {_lit(_WHITE)}) <> '' THEN {text(p)} END" for p in MESSAGES]
        + [f"CASE WHEN {http(p)} THEN 'HTTP ' || ({at[p]}->>'$') END" for p in CODE_MESSAGES] + ["''"])
    bounded = (f"length({arg}) <= {MAX_CHARS} AND length({arg}) - length(replace(replace({arg}, '[', ''), '{{', '')) "
               f"<= {MAX_BRACKETS} AND NOT regexp_matches({arg}, {_lit(_TRAILING_COMMA)})")
    paths_sql = "[" + ", ".join(_lit(p) for p in paths) + "]"
    # Nested CASEs: DuckDB evaluates a branch only for the rows that reach it, so nothing parses what failed a bound.
    return (f"CASE WHEN {candidate_sql(arg)} THEN CASE WHEN {bounded} THEN CASE WHEN json_valid({arg}) THEN "
            f"CASE WHEN json_type({arg}) = 'OBJECT' THEN list_transform([json_extract({arg}, {paths_sql})], lambda v: "
            f"CASE WHEN {is_error} THEN coalesce({message}) END)[1] END END END END")
