"""JSON as tracegym reads and writes trace data: orjson, except that integers beyond 64 bits stay exact.

orjson reads an integer outside [-2**63, 2**64) as a double (so an id or a
counter of 70 bits silently loses its low digits) and rejects one beyond about
1e308 as infinity. JSON itself puts no bound on integers, and DuckDB keeps
their digits in a JSON column, so `loads` reads such text again with the
standard library, which makes them Python ints, and `dumps` writes those ints
back digit for digit. Only text holding a run of 20 digits takes that slower
path; everything orjson rejects for another reason is still rejected.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from typing import Any

import orjson

_DIGITS = bytes(ord("0") if ord("0") <= i <= ord("9") else ord(" ") for i in range(256))
_LONG_RUN = b"0" * 20  # 2**64 has 20 digits: a shorter integer always fits orjson's int
_INT_RANGE = (-(2**63), 2**64 - 1)


class JSONLimitError(orjson.JSONDecodeError):
    """Well-formed JSON beyond what ingest keeps: an infinity, an integer past Python's digit limit (no reader
    of the store could parse it back), nesting past Python's recursion limit.

    A JSONDecodeError, so code that catches orjson's errors catches it too.
    """

    def __init__(self, message: str) -> None:
        ValueError.__init__(self, message)
        self.msg, self.doc, self.pos, self.lineno, self.colno = message, "", 0, 1, 1


def loads(data: bytes | str) -> Any:
    """Parse JSON as orjson does; integers it cannot hold exactly come back as Python ints.

    Raises orjson.JSONDecodeError for anything orjson would reject, and for an integer
    longer than Python's digit limit (sys.get_int_max_str_digits, 4300 by default),
    which no reader of the store could parse back.
    """
    raw = data.encode("utf-8", errors="surrogatepass") if isinstance(data, str) else data
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        if not _has_long_digits(raw):
            raise
        return _loads_exact(raw, e)
    return _loads_exact(raw, None) if _has_long_digits(raw) else value


def dumps(value: Any, *, sort_keys: bool = True, indent: bool = False,
          default: Callable[[Any], Any] = str) -> str:
    """JSON text (compact unless `indent`); ints beyond 64 bits are written digit for digit, where orjson alone
    would raise (such ints reach rollouts, eval details and `--json` from trace metadata)."""
    option = (orjson.OPT_SORT_KEYS if sort_keys else 0) | (orjson.OPT_INDENT_2 if indent else 0)
    try:
        return orjson.dumps(value, option=option, default=default).decode()
    except orjson.JSONEncodeError:
        exact = _fragments(value)
        if exact is value:
            raise
        return orjson.dumps(exact, option=option, default=default).decode()


def _has_long_digits(raw: bytes) -> bool:
    return _LONG_RUN in raw.translate(_DIGITS)


def _loads_exact(raw: bytes, orjson_error: orjson.JSONDecodeError | None) -> Any:
    """The standard library's reading, held to orjson's rules (UTF-8, no NaN or infinity, no lone surrogates)."""
    try:
        value = json.loads(raw.decode("utf-8"), parse_int=_int, parse_float=_float, parse_constant=_constant)
        dumps(value)  # raises where orjson would have refused the text: unpaired surrogate escapes
    except JSONLimitError:
        raise
    except (ValueError, TypeError, RecursionError) as e:
        if orjson_error is not None:
            raise orjson_error from None
        raise JSONLimitError("too deeply nested" if isinstance(e, RecursionError) else str(e)) from None
    return value


def _int(literal: str) -> int:
    try:
        return int(literal)
    except ValueError:
        raise JSONLimitError(f"an integer of {len(literal.lstrip('-'))} digits is longer than the "
                             f"{sys.get_int_max_str_digits()} digits tracegym keeps") from None


def _float(literal: str) -> float:
    number = float(literal)
    if math.isinf(number):
        raise JSONLimitError(f"number is infinity when parsed as double: {literal[:40]}")
    return number


def _constant(name: str) -> float:
    raise JSONLimitError(f"{name} is not JSON")


def _fragments(value: Any) -> Any:
    """`value` with each int beyond 64 bits as an orjson.Fragment of its digits; `value` itself if it has none."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if _INT_RANGE[0] <= value <= _INT_RANGE[1] else orjson.Fragment(str(value))
    if isinstance(value, dict):
        items = {k: _fragments(v) for k, v in value.items()}
        return value if all(items[k] is v for k, v in value.items()) else items
    if isinstance(value, (list, tuple)):
        items = [_fragments(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value
