"""Failure signatures: evidence with the per-trace details stripped.

The same failure in two traces differs in its numbers, ids, paths, quoted
values and amounts ("flight HAT030 not available on date 2024-05-13" vs
"flight HAT223 not available on date 2024-05-14"). A signature replaces each
of those with a placeholder so both read "flight <id> not available on date
<date>", and findings group by it.

The normaliser is one chain of RE2 `regexp_replace` calls, installed as the
DuckDB macro `tg_signature(text)` so that detectors (and user rules) normalise
inside the query. `signature()` runs that same macro from Python: there is a
single implementation, so Python and SQL cannot disagree.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import duckdb

from tracegym.mining.json_errors import json_error_sql


class Rewrite(NamedTuple):
    name: str
    pattern: str  # RE2 syntax, applied globally
    replacement: str


COUNTRIES = ("AE", "AR", "AU", "BD", "BR", "CH", "CZ", "DE", "DK", "EG", "FI", "FR", "GR", "HK", "HU", "IL", "JP",
             "KE", "KR", "LT", "LU", "LV", "NG", "NL", "NZ", "PL", "RU", "SE", "SG", "SK", "TH", "TW", "UK", "US",
             "USA", "VN", "ZA")
"""ISO 3166 country codes (and UK, USA) that, standing alone in capitals, mean nothing but the country."""
CURRENCIES = ("AED", "ARS", "AUD", "BDT", "BGN", "BRL", "CAD", "CHF", "CLP", "CNY", "COP", "CZK", "DKK", "EGP", "EUR",
              "GBP", "HKD", "HUF", "IDR", "ILS", "INR", "JPY", "KES", "KRW", "MXN", "MYR", "NGN", "NOK", "NZD", "PKR",
              "PLN", "RON", "RUB", "SEK", "SGD", "THB", "TWD", "UAH", "USD", "VND", "ZAR")
"""ISO 4217 currency codes that, standing alone in capitals, mean nothing but the currency."""

# Order matters: wider shapes (URLs, quoted values, paths, dates) are replaced
# before the digit rules would cut them into pieces. Each rewrite is one pass of
# RE2 over the text, so shapes sharing a placeholder share a pattern.
REWRITES: tuple[Rewrite, ...] = (
    Rewrite("url", r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+", "<url>"),
    Rewrite("email", r"[\w.+-]+@[\w-]+\.[\w.-]+", "<email>"),
    # A quote opens and closes only beside a non-word character, so the
    # apostrophes in "don't" and "user's" are not taken for quotes.
    Rewrite("quoted", r"(^|[^\w])(\"[^\"\n]{0,200}\"|'[^'\n]{0,200}')([^\w]|$)|`[^`\n]{0,200}`", r"\1<str>\3"),
    Rewrite("path", r"(~|\.{1,2})?/?[\w.@+-]+(/[\w.@+-]+)+/?|\b[\w-]+\."
                    r"(py|pyi|js|ts|tsx|json|ya?ml|toml|cfg|ini|txt|md|rst|csv|log|sh|c|h|cc|cpp|go|rs|java|rb)\b",
            "<path>"),
    Rewrite("datetime", r"\b\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?\b", "<date>"),
    Rewrite("time", r"\b\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?\b", "<time>"),
    Rewrite("amount", rf"[$€£]\s?\d[\d,]*(\.\d+)?|\b\d[\d,]*(\.\d+)?\s?({'|'.join(CURRENCIES)}|dollars)\b", "<amount>"),
    # Country and currency codes (upper case only): after a word that names them ("country DE", "currency: JPY"),
    # any two (three) capitals; elsewhere only codes that read as nothing else ("shipping to FR"). Codes that are
    # also words or common abbreviations (IN, IT, ID, NO, GB for gigabytes, CN in certificates, TRY, ALL) are left
    # alone there, and so are other short capitals (HTTP, SQL, ENOENT, error codes): they tell failures apart.
    Rewrite("currency", rf"(\b(?i:currency|currencies)(?:[ _-]?(?i:codes?))?(?:\s*[:=]\s*|\s+))[A-Z]{{3}}\b"
                        rf"|\b(?:{'|'.join(CURRENCIES)})\b", r"\1<currency>"),
    Rewrite("country", rf"(\b(?i:country|countries|region|locale|market)(?:[ _-]?(?i:codes?))?(?:\s*[:=]\s*|\s+))"
                       rf"[A-Z]{{2}}\b|\b(?:{'|'.join(COUNTRIES)})\b", r"\1<country>"),
    # UUIDs, and words mixing letters and digits: HAT030, gift_card_5094406, K1NW8N, 60RX9E, 0xDEADBEEF.
    Rewrite("id", r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
                  r"|\b[A-Za-z_]\w*\d\w*\b|\b\d\w*[A-Za-z_]\w*\b", "<id>"),
    Rewrite("number", r"\b\d[\d,]*(\.\d+)?\b", "<n>"),
    # "[1, 2, 3]" and "[1, 2]" are the same shape.
    Rewrite("runs", r"<(n|id|str|path)>([\s,;:|/-]*<(n|id|str|path)>)+", "<\\1>"),
    Rewrite("space", r"\s+", " "),
)

MAX_INPUT = 1000
"""Only the head of a text is normalised: the signature keeps at most MAX_CHARS of it anyway."""

MAX_CHARS = 240
"""Signatures are capped: the head of a message names its failure; the tail is detail."""

MACRO_NAME = "tg_signature"


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def signature_sql(arg: str) -> str:
    """The normaliser as one SQL expression over the SQL expression `arg`."""
    expr = f"left(CAST({arg} AS VARCHAR), {MAX_INPUT})"
    for rw in REWRITES:
        expr = f"regexp_replace({expr}, {_sql_literal(rw.pattern)}, {_sql_literal(rw.replacement)}, 'g')"
    return f"left(trim({expr}), {MAX_CHARS})"


def macros() -> dict[str, str]:
    """The temporary macros detectors and rules may call, name -> the SQL of their body over `t`."""
    return {MACRO_NAME: signature_sql("t"), "tg_unwrap": unwrap_sql("t"), "tg_error_line": error_line_sql("t"),
            "tg_json_error": json_error_sql("t")}


def install_macros(con: duckdb.DuckDBPyConnection) -> None:
    """Define the temporary macros `tg_signature(text)`, `tg_unwrap(text)`, `tg_error_line(text)` and
    `tg_json_error(text)` (json_errors.py)."""
    for name, body in macros().items():
        con.execute(f"CREATE OR REPLACE TEMP MACRO {name}(t) AS {body}")


def unwrap_sql(arg: str) -> str:
    """A tool result without the harness's wrapper (mini-swe-agent's `<returncode>1</returncode><output>…`)."""
    return (rf"regexp_replace(regexp_replace(CAST({arg} AS VARCHAR), "
            r"'^\s*(<returncode>-?\d+</returncode>)?\s*(<warning>(?s:.*?)</warning>)?\s*(<output(_head)?>)?', ''), "
            r"'</output>\s*$', '')")


def error_line_sql(arg: str) -> str:
    """The line of an (unwrapped) result that names its error.

    In order: the exception line of the last Python traceback, pytest's summary
    line, the last line naming an `...Error`/`...Exception`, else the first
    non-blank line. `arg` should be a column, not an expression: it is read
    several times. Each candidate appears once (a CASE testing and then
    returning it would run its regexes twice).
    """
    # After the last traceback header, the first unindented `name: message` line is the exception.
    raised = (rf"regexp_extract(regexp_extract({arg}, '(?s).*Traceback \(most recent call last\):(.*)', 1), "
              r"'(?m)^([A-Za-z_][\w.]*(?::[^\n]*)?)$', 1)")
    pytest = rf"regexp_extract({arg}, '(?m)^=+ ([^=\n]*\b(?:failed|errors?)\b[^=\n]*) =+$', 1)"
    named = rf"regexp_extract_all({arg}, '(?m)^[\w.]*(?:Error|Exception)(?::[^\n]*)?$')"
    first = rf"regexp_extract({arg}, '(?m)^\s*(\S[^\n]*)', 1)"
    return f"coalesce(nullif({raised}, ''), 'pytest: ' || nullif({pytest}, ''), {named}[-1], {first})"


@functools.lru_cache(maxsize=1)
def _connection() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    install_macros(con)
    return con


def signature(text: str | None) -> str | None:
    """The signature of `text`, computed by the same SQL macro the detectors use."""
    if text is None:
        return None
    row = _connection().execute(f"SELECT {MACRO_NAME}(?)", [text]).fetchone()
    return None if row is None else row[0]


def error_line(text: str | None) -> str | None:
    """The line of a tool result that names its error (see `unwrap_sql` and `error_line_sql`)."""
    if text is None:
        return None
    row = _connection().execute("SELECT tg_error_line(u) FROM (SELECT tg_unwrap(?) AS u)", [text]).fetchone()
    return None if row is None else row[0]
