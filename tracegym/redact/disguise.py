"""A text as a detector should read it, with a map back to the text as written.

Values arrive disguised in ways that break a pattern but not a reader: a zero-width or bidi control character
or a no-break space pasted inside a key, full-width forms (`ｓｋ－ｐｒｏｊ－…`, NFKC folds them), an e-mail
percent-encoded in a URL (`jane%40example.com`), JSON-escaped inside text (`jane\\u0040example.com`, also behind an
escaped backslash) or written as an HTML character reference (`jane&#64;example.com`, `&#x40;`), or in a
quoted-printable mail body (RFC 2045 6.7: `anna=40example.com`, `password=3DSecret`, a value cut by a soft line
break `=` at a line's end).
`normalize` undoes those and remembers where each changed piece came from, so a finding in the normalized text
maps to the span of the original that must be replaced.
"""

from __future__ import annotations

import bisect
import html
import re
import unicodedata
from dataclasses import dataclass

# Unicode format characters that render as nothing: soft hyphen, zero-width space/joiners, LRM/RLM, the bidi
# embeddings, overrides and isolates, word joiner and invisible operators, BOM.
_INVISIBLE = "\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
# Compatibility forms NFKC folds to ASCII: full-width ASCII, the ideographic space, no-break and sized spaces.
_WIDE = "\uff01-\uff5e\u3000\u00a0\u2000-\u200a"
TRIGGER = (f"[{_INVISIBLE}{_WIDE}]|%[0-9A-Fa-f]{{2}}|\\\\u[0-9A-Fa-f]{{4}}|&#(?:[0-9]{{2,5}}|[xX][0-9A-Fa-f]{{2,4}});|"
           r"(?i:quoted-printable)|=3D|=(?:\\?\r)?\n|=(?:\\r)?\\n")
"""What a text must hold to need normalizing (RE2 and Python syntax alike)."""
_PIECE = re.compile(f"[{_INVISIBLE}]+|[{_WIDE}]+|(?:%[0-9A-Fa-f]{{2}})+|(?:\\\\{{1,16}}u[0-9A-Fa-f]{{4}})+|"
                    f"(?:&#(?:[0-9]{{2,5}}|[xX][0-9A-Fa-f]{{2,4}});)+")
_ESCAPE = re.compile(r"\\{1,16}u([0-9A-Fa-f]{4})")
"""An escape, its backslash doubled for each level of JSON it sits in: bounded (16), as `\\\\+` would read a long run
of backslashes again from each of them (quadratic)."""
_QP_PIECE = re.compile(r"(?:=[0-9A-F]{2}|=(?:\\?\r)?\n|=(?:\\r)?\\n)+")
"""A run of quoted-printable escapes (`=XX`, upper-case hex as RFC 2045 writes them) and soft line breaks (`=` ending
a line; `=\\n` inside JSON text)."""
_QP_SIGN = re.compile(r"(?i:content-transfer-encoding:[ \t]*quoted-printable)|=3D|=[0-9A-F]{2}[^\n]*=(?:\r?\n|\\n)")
"""What marks a text as quoted-printable: its MIME header, an encoded `=` (`=3D`: nothing else writes one), or an
escape with a soft line break on its line."""
_DROP = re.compile(f"[{_INVISIBLE}]")
_NO_BREAK = re.compile("[\u00a0\u2007]+")
"""No-break spaces (and figure spaces) between two characters of a token."""
_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_\-+/=.]")


@dataclass(frozen=True)
class Normalized:
    text: str
    marks: list[tuple[int, int, int, int]]
    """(start, end) in `text` and (start, end) in the original of each replaced piece, in order."""
    encoded: bool = False
    """The original is a quoted-printable text: read as written, its escapes would be taken into values
    (`password=3DSecret` as `3DSecret`), so only this reading counts."""

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that `text[start:end]` came from (a piece touched is taken whole)."""
        starts = [m[0] for m in self.marks]
        i = bisect.bisect_right(starts, start) - 1
        if i < 0:
            o_start = start
        else:
            n_start, n_end, o_s, o_e = self.marks[i]
            o_start = o_s if start < n_end else o_e + start - n_end
        j = bisect.bisect_left(starts, end) - 1
        if j < 0:
            o_end = end
        else:
            n_start, n_end, o_s, o_e = self.marks[j]
            o_end = o_e if end <= n_end else o_e + end - n_end
        return o_start, o_end


def normalize(text: str) -> Normalized | None:
    """`text` with invisible characters dropped, compatibility forms folded, percent-encoding and `\\uXXXX`
    escapes decoded; None when nothing changes."""
    parts: list[str] = []
    marks: list[tuple[int, int, int, int]] = []
    at = length = 0
    pieces = list(_PIECE.finditer(text))
    encoded = "=" in text and _QP_SIGN.search(text) is not None
    if encoded:
        pieces = sorted(pieces + list(_QP_PIECE.finditer(text)), key=lambda m: m.start())
    for m in pieces:
        if m.start() < at:
            continue  # inside a piece already read
        new = _quoted_printable(m.group()) if m.group()[0] == "=" else _decoded(m.group())
        if _NO_BREAK.fullmatch(m.group()) and 0 < m.start() and m.end() < len(text) \
                and _TOKEN_CHAR.match(text[m.start() - 1]) and _TOKEN_CHAR.match(text[m.end()]):
            new = ""  # a no-break space pasted inside a key (`glpat-Wh51…\u00a0YDb`) is no word break
        if new is None or new == m.group():
            continue
        parts.append(text[at:m.start()])
        length += m.start() - at
        marks.append((length, length + len(new), m.start(), m.end()))
        parts.append(new)
        length += len(new)
        at = m.end()
    if not marks:
        return None
    parts.append(text[at:])
    return Normalized("".join(parts), marks, encoded)


def _decoded(piece: str) -> str | None:
    if piece[0] == "%":
        try:
            raw = bytes.fromhex(piece.replace("%", "")).decode("utf-8")
        except UnicodeDecodeError:
            return None
        return _fold(raw)
    if piece[0] == "\\":
        units = [int(h, 16) for h in _ESCAPE.findall(piece)]
        try:
            raw = "".join(chr(u) for u in units).encode("utf-16", "surrogatepass").decode("utf-16")
        except UnicodeDecodeError:
            return None  # a lone surrogate: leave the escapes as they are
        return _fold(raw)
    if piece[0] == "&":
        return _fold(html.unescape(piece))  # numeric character references: `jane&#64;example.com`
    return _fold(piece)


def _quoted_printable(piece: str) -> str | None:
    """A run of quoted-printable escapes decoded (UTF-8, else Latin-1), its soft line breaks dropped."""
    raw = bytes.fromhex(re.sub(r"=(?:\\?\r)?\n|=(?:\\r)?\\n|=", "", piece))
    try:
        return _fold(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return _fold(raw.decode("latin-1"))


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", _DROP.sub("", text))
