"""The things a reply names that a conversation can vouch for: ids, amounts, dates, file paths, names, and its
content words.

Each entity is a (kind, canonical value) pair, so that `$1,250.00` and `1250` are one amount, `2024-05-20` and
`May 20` one date, and `/testbed/src/app.py` and `src/app.py` one path (`same_path`). Ids, amounts and dates are
what a reply can invent; names and paths are only looked for where a reference names them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

Entity = tuple[str, str]
"""(kind, canonical value): kind is id, amount, date, path or name."""

INVENTABLE = frozenset({"id", "amount", "date"})
"""Kinds a reply can make up: a value of these kinds that neither the conversation nor a reference holds is
invented."""

_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                       "dec"), start=1)}
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_DATE = re.compile(r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_PATH = re.compile(r"(?<![\w/.~-])/?(?:[\w.~-]+/)+[\w.-]+"  # with a slash
                   r"|(?<![\w/.-])[\w-]{2,}(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,5}\b")  # or a file name
_AMOUNT = re.compile(r"(?<![\w.])[$€£]?\s?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])"  # 1,250.50
                     r"|(?<![\w.,])[$€£]?\s?\d+(?:\.\d+)?(?![\w])")
_ID = re.compile(r"#?\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]{2,}\b")
# 1st, 10am, 1990s, 24h, 2x, 24-hour
_NOT_ID = re.compile(r"\d+(?:st|nd|rd|th|am|pm|s|h|m|k|x|d|-[a-z]+)", re.IGNORECASE)
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\b|\b[A-Z]{3,5}\b")
_WORD = re.compile(r"[a-z]{4,}")
# Capitalised words that begin sentences or are the agent's own formulas, not names.
_NOT_NAMES = frozenset("""
    the this that these those there then than here hello dear thank thanks please sorry yes okay sure great
    certainly unfortunately however also would could should shall will can may might must let what when where
    which who whom whose why how your you our we it its is are was were be been have has had do does did and but
    or so if for with to in on at by from of as an all any each both some no not now just once after before
    while since until because note here's there's let's it's i'm i've i'll i'd thought error errors true false
    none null json yaml usd eur gbp html http https api okay alright absolutely perfect welcome regards kind best
""".split())
_STOPWORDS = frozenset("""
    that this these those there their them they then than with from have has had been were will would could should
    shall your yours what when where which while about into onto upon over under again also just only very more
    most some such each other another same here also being does doing done make made like want need please thank
    thanks sorry help know seems seem able unable cannot can't couldn't won't don't isn't aren't wasn't
    let's it's i'm i've i'll you're we're they're there's here's okay sure great certainly unfortunately
    however assist assistance further anything something everything nothing information provide proceed
    would like happy glad apologize apologies inconvenience understand details detail issue moment right
    time today contact reach team support message response request requests question questions
""".split())


def entities(text: str) -> set[Entity]:
    """Every entity `text` names, canonicalised."""
    found: set[Entity] = set()
    rest = text
    for m in _EMAIL.finditer(rest):
        found.add(("id", m.group(0).casefold()))
    rest = _EMAIL.sub(" ", rest)
    for pattern in (_ISO_DATE, _MONTH_DATE):
        found.update(("date", _date(m)) for m in pattern.finditer(rest))
        rest = pattern.sub(" ", rest)
    for m in _PATH.finditer(rest):
        found.add(("path", canonical_path(m.group(0))))
    rest = _PATH.sub(" ", rest)
    for m in _ID.finditer(rest):
        if not _NOT_ID.fullmatch(m.group(0)):
            found.add(("id", m.group(0).lstrip("#").casefold()))
    rest = _ID.sub(" ", rest)
    for m in _AMOUNT.finditer(rest):
        value = _number(m.group(0))
        if value is not None and (abs(value) >= 10 or "." in m.group(0) or m.group(0).lstrip()[0] in "$€£"):
            found.add(("amount", _number_text(value)))
    found.update(("name", name) for name in _names(text))
    return found


def _names(text: str) -> set[str]:
    """Capitalised words and runs of them (`Mia Li`, `JFK`), a sentence's first word and common words left out."""
    names = set()
    for m in _NAME.finditer(text):
        words = m.group(0).split()
        before = text[:m.start()].rstrip(" \t")
        if words[0][1:].islower() and (not before or before[-1] in ".!?:\n*-#>|"):
            words = words[1:]  # a capital that starts a sentence or a line says nothing
        words = [w for w in words if w.casefold() not in _NOT_NAMES]
        if words:
            names.add(" ".join(words).casefold())
    return names


def terms(text: str) -> set[str]:
    """The content words of `text` (lower case, four letters or more, common words left out)."""
    return {w for w in _WORD.findall(text.casefold()) if w not in _STOPWORDS}


def canonical_path(path: str) -> str:
    """A path as comparable text: `./` and trailing slashes dropped."""
    path = path.strip().strip("'\"")
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/") or "/"


def same_path(a: str, b: str) -> bool:
    """The same file seen from two folders: equal, or one ends with the other after a `/`
    (`/testbed/src/app.py` and `src/app.py`)."""
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def found_in(entity: Entity, pool: Iterable[Entity]) -> bool:
    """Whether `pool` holds `entity` (paths compared with `same_path`)."""
    kind, value = entity
    if kind != "path":
        return entity in pool if isinstance(pool, (set, frozenset)) else entity in set(pool)
    return any(k == "path" and same_path(value, v) for k, v in pool)


def _date(m: re.Match[str]) -> str:
    """A date as month-day (`05-20`): replies seldom repeat the year."""
    if m.re is _ISO_DATE:
        return f"{int(m.group(2)):02d}-{int(m.group(3)):02d}"
    return f"{_MONTHS[m.group(1)[:3].casefold()]:02d}-{int(m.group(2)):02d}"


def _number(text: str) -> float | None:
    try:
        return float(text.strip().lstrip("$€£").strip().replace(",", ""))
    except ValueError:
        return None


def _number_text(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)
