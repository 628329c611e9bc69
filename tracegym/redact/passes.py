"""RE2 passes over a batch of texts with patterns compiled once per process, each with a DFA budget of its own.

Arrow's regex kernel compiles its pattern at every call, with RE2's default budget (8 MB): each batch starts from
an empty DFA, and the joined triggers outgrow that budget on code and logs, after which RE2 reads on with its NFA,
many times slower. Ingest redacts a file at a time, so a folder of trajectories paid both once per file. Here a
pattern is compiled once (the same RE2 the triggers are written for, through Google's binding) and keeps the states
earlier batches built.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import re2

DFA_BUDGET = 64 << 20
"""Bytes of memory each compiled pattern may use (its program and its DFA states): the largest joined trigger
(19,000 characters) runs out of RE2's default 8 MB on code; past the budget RE2 drops its states and starts again."""

Matches = Callable[[bytes], bool]
"""Whether a compiled pattern matches somewhere in UTF-8 bytes."""
_UNANCHORED = re2._re2.RE2.Anchor.UNANCHORED


def _options() -> re2.Options:
    options = re2.Options()
    options.max_mem = DFA_BUDGET
    options.log_errors = False  # RE2 would write each reset of a full DFA to stderr
    options.never_capture = True  # only whether it matches is asked
    return options


@functools.cache
def compiled(pattern: str) -> Matches:
    """Whether `pattern` matches UTF-8 bytes, compiled once per process. The binding's C++ match is called as its
    own `search` calls it, without the generator and match object that `search` builds in Python around it: a third
    of the time of a search over a short text."""
    match = re2.compile(pattern.encode(), _options())._regexp.Match
    return lambda text: match(_UNANCHORED, text, 0, len(text))[0][0] >= 0


@functools.cache
def _which(members: tuple[str, ...]) -> Callable[[bytes], list[int] | None]:
    """Which of `members` match a text (their indices; None for none, or where the set's automaton ran out of its
    budget), in one pass: an RE2 set, compiled once per process."""
    found = re2.Set.SearchSet(_options())
    for member in members:
        found.Add(member.encode())
    found.Compile()
    return found.Match


def texts_of(column: pa.Array | pa.ChunkedArray) -> list[bytes | None]:
    """A string column's texts as UTF-8 bytes (null as None), without decoding them."""
    binary = pa.large_binary() if pa.types.is_large_string(column.type) else pa.binary()
    return pc.cast(column, binary).to_pylist()


def any_match(texts: list[bytes | None], patterns: tuple[str, ...]) -> np.ndarray:
    """Where any of `patterns` matches; each pass reads only the texts no earlier one matched."""
    hit = np.zeros(len(texts), dtype=bool)
    left = [(row, text) for row, text in enumerate(texts) if text is not None]
    for pattern in patterns:
        search, unmatched = compiled(pattern), []
        for row, text in left:
            if not search(text):
                unmatched.append((row, text))
            else:
                hit[row] = True
        left = unmatched
        if not left:
            break
    return hit


def members_found(texts: list[bytes | None], pattern: str, members: tuple[str, ...]) -> list[tuple[int, str]]:
    """(row, member) for each of `members` (the patterns joined in `pattern`) that matches a text (None, a null,
    matches none). The joined pass reads every text; a set of the members, only those it matched, in one pass more
    (not one per member). Where the set finds none of what the joined pass found, each member is searched alone."""
    search = compiled(pattern)
    rows = [(row, text) for row, text in enumerate(texts) if text is not None and search(text)]
    if len(members) == 1:
        return [(row, members[0]) for row, _ in rows]
    which = _which(members)
    out = []
    for row, text in rows:
        hits = which(text) or [i for i, member in enumerate(members) if compiled(member)(text)]
        out += [(row, members[i]) for i in hits]
    return out


_CLASS_SPACE = "\\t\\n\\x0b\\f\\r "
"""Python's `\\s` under `re.ASCII` (RE2's lacks the vertical tab)."""


@functools.cache
def prematch(pattern: str) -> Matches | None:
    """A search that finds no match only where the Python `re` pattern finds none either (`superset`), compiled
    once; None where RE2 cannot read the pattern."""
    try:
        return compiled(superset(pattern))
    except re2.error:
        return None


def may_match(pattern: str, text: bytes) -> bool:
    """False only where RE2 finds that the Python `re` pattern cannot match `text` (UTF-8): `re` tries a pattern
    that opens with a long list of labels at every position of a text, RE2 reads the text once."""
    search = prematch(pattern)
    return search is None or search(text)


def superset(pattern: str) -> str:
    """A Python `re` pattern (compiled with `re.ASCII`) as an RE2 pattern that matches every text it does (RE2 may
    still refuse it: a backreference, an unknown escape). Lookarounds are dropped (a zero-width condition less
    matches more); `{m,n}` past RE2's limit opens (`{m,}`); `$` may also stand before a last line break, as in
    Python; `\\Z`, `\\uXXXX`, `{,n}` and `\\s` are written as RE2 writes them."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i = _escape(pattern, i, out)
        elif c == "[":
            i = _char_class(pattern, i, out)
        elif pattern.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
            i = _group_end(pattern, i)
        elif pattern.startswith("(?m:", i):  # line anchors, as RE2 reads them too
            end = _group_end(pattern, i)
            out.append(pattern[i:end])
            i = end
        elif c == "{":
            i = _repeat(pattern, i, out)
        else:
            out.append("(?:\\n?\\z)" if c == "$" else c)
            i += 1
    return "".join(out)


_REPEAT = re.compile(r"\{(\d*)(,?)(\d*)\}")


def _repeat(pattern: str, i: int, out: list[str]) -> int:
    """Write the counted repeat at `i` (or a literal `{`) as RE2 takes it; return the index after it."""
    m = _REPEAT.match(pattern, i)
    if m is None or not m.group(1) and not m.group(3):
        out.append("\\{")
        return i + 1
    low, comma, high = int(m.group(1) or 0), m.group(2), m.group(3)
    if not comma:
        high = m.group(1)
    out.append(f"{{{low},{high}}}" if high and int(high) <= 1000 else f"{{{min(low, 1000)},}}")
    return m.end()


def _escape(pattern: str, i: int, out: list[str]) -> int:
    """Write the escape at `i` as RE2 writes it; return the index after it."""
    nxt = pattern[i + 1:i + 2]
    if nxt == "u":
        out.append(f"\\x{{{pattern[i + 2:i + 6]}}}")
        return i + 6
    out.append({"Z": "\\z", "s": f"[{_CLASS_SPACE}]"}.get(nxt, "\\" + nxt))
    return i + 2


def _char_class(pattern: str, i: int, out: list[str]) -> int:
    """Copy the character class at `i` (its `\\s` and `\\uXXXX` as RE2 writes them); return the index after it."""
    j = i + 1
    out.append("[")
    if pattern.startswith("^", j):
        out.append("^")
        j += 1
    if pattern.startswith("]", j):
        out.append("\\]")
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        if pattern[j] == "\\":
            nxt = pattern[j + 1:j + 2]
            out.append(_CLASS_SPACE if nxt == "s" else f"\\x{{{pattern[j + 2:j + 6]}}}" if nxt == "u"
                       else pattern[j:j + 2])
            j += 6 if nxt == "u" else 2
        else:
            out.append("\\[" if pattern[j] == "[" else pattern[j])
            j += 1
    out.append("]")
    return j + 1


def _group_end(pattern: str, i: int) -> int:
    """The index after the group that opens at `i`."""
    depth, j = 0, i
    while j < len(pattern):
        c = pattern[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            j = _char_class(pattern, j, [])
            continue
        depth += {"(": 1, ")": -1}.get(c, 0)
        j += 1
        if depth == 0:
            return j
    return j
