"""A text as a detector should read it, with a map back to the text as written.

Values arrive disguised in ways that break a pattern but not a reader: a zero-width or bidi control character
or a no-break space pasted inside a key, full-width forms (`ｓｋ－ｐｒｏｊ－…`, NFKC folds them), an e-mail
percent-encoded in a URL (`jane%40example.com`, twice over where a URL went into another: `jane%2540example.com`),
JSON-escaped inside text (`jane\\u0040example.com`, also behind an escaped backslash), a byte escape of a C, Python
or JavaScript string (`jane\\x40example.com`, UTF-8 bytes as `\\xc3\\xa9`), written as an HTML character reference
(`jane&#64;example.com`, `&#x40;`, the named ones of ASCII's punctuation and the no-break space: a password's `&` in
a page as `&amp;`, `jane&commat;example.com`, a phone's groups joined by `&nbsp;`), or in a
quoted-printable mail body (RFC 2045 6.7: `anna=40example.com`, `password=3DSecret`, a value cut by a soft line
break `=` at a line's end).
Documents and speech reach a log in forms of their own: a chunker's or a parser's marker line between a label and
its value (`password=` | `--- chunk 12 ---` | `rXmR…`), digits of another script (`٠٥٠ ١٢٣ ٤٥٦٧`), a number read
out by speech-to-text (`oh seven four nine …`). `normalize` takes the marker line out, folds the digits to ASCII
and writes the spoken run as digits.
`normalize` undoes those and remembers where each changed piece came from, so a finding in the normalized text
maps to the span of the original that must be replaced.
"""

from __future__ import annotations

import bisect
import html
import html.entities
import re
import unicodedata
import urllib.parse
from dataclasses import dataclass

# Unicode format characters that render as nothing: soft hyphen, zero-width space/joiners, LRM/RLM, the bidi
# embeddings, overrides and isolates, word joiner and invisible operators, BOM.
_INVISIBLE = "\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
# Compatibility forms NFKC folds to ASCII: full-width ASCII, the ideographic space, no-break and sized spaces (the
# narrow no-break space French typography puts between a number's groups, `06\u202f71\u202f82`), and the small form
# variants of ASCII's punctuation (`jane﹫example.com`).
_WIDE = ("\uff01-\uff5e\u3000\u00a0\u2000-\u200a\u202f\u205f"
         "\ufe50\ufe52\ufe54-\ufe57\ufe59-\ufe5c\ufe5f-\ufe66\ufe68-\ufe6b")
# Decimal digits of the other scripts (Arabic-Indic `٠٥٠`, Persian `۰۹۱۲`, Devanagari `९८`, Thai, Bengali ...): a number
# written in them is the same number. NFKC leaves them; each folds to its ASCII digit.
_DIGITS = "".join(f"{chr(c)}-{chr(c + 9)}" for c in range(0x80, 0x1FBF0)
                  if unicodedata.decimal(chr(c), -1) == 0 and unicodedata.normalize("NFKC", chr(c)) == chr(c))
# A line a chunker, a document parser or an OCR tool writes between the pieces of one text: a chunk or page marker
# (`--- chunk 12 (tokens 0-512) ---`, `[chunk 3/8]`, `=== Page 2 ===`, `<!-- PageBreak -->`, `<!-- page 4 -->`,
# `Page 3 of 12`) or a form feed (pdftotext). A token-count splitter cuts anywhere, between a label and its value
# too (`password=` | `rXmR…`): the text read with the marker line taken out is the text as written.
_LAYOUT = re.compile(r"(?:\r?\n|\\n)[ \t]*(?:(?:-{2,}|={2,}|\*{2,}|#{1,6}|\[|<!--)[ \t]*"
                     r"(?i:chunk|page|pagebreak|page[ _-]break)\b[^\n\\]{0,60}?(?:-{2,}|={2,}|\*{2,}|#{2,6}|\]|-->)|"
                     r"(?i:page)[ \t]+\d{1,4}(?:[ \t]*(?:of|/)[ \t]*\d{1,4})?)[ \t]*(?:\r?\n|\\n)|"
                     r"(?:\r?\n|\\n)?\f(?:\r?\n|\\n)?")
# What a CI runner writes before each line of a job's log: a timestamp (GitHub Actions' `2026-01-21T22:23:14.1270000Z `,
# Jenkins' timestamper `[2026-01-21T22:23:14.127Z] `) or Buildkite's `ESC _bk;t=1782966657617 BEL`. Read without them,
# a label ending one line and its value on a later one are as the job printed them.
_LINE_STAMP = re.compile(r"(?:(?<=\n)|(?<=\\n))(?:\[\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z?\][ \t]?|"
                         r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z[ \t]|"
                         r"(?:\x1b|\\u001[bB])_bk;t=\d{10,16}(?:\x07|\\u0007))")
# Digits spoken, as speech-to-text writes a number read out (`my number is oh seven four nine …`, `double seven`),
# in English, German, French, Spanish, Italian and Portuguese: a run of seven or more reads as the digits.
_DIGIT_WORDS = {w: str(d) for d, words in enumerate((
    "zero oh nought null zéro cero", "one eins un uno um", "two zwei zwo deux dos due dois",
    "three drei trois tres tre três", "four vier quatre cuatro quattro quatro", "five fünf cinq cinco cinque",
    "six sechs seis sei", "seven sieben sept siete sette sete", "eight acht huit ocho otto oito",
    "nine neun neuf nueve nove")) for w in words.split()}
_SPOKEN_DIGIT = "(?:" + "|".join(sorted(_DIGIT_WORDS, key=len, reverse=True)) + ")"
_SPOKEN_WORD = _SPOKEN_DIGIT[:-1] + "|double|triple)"
_SPOKEN = re.compile(rf"(?i)\b(?:(?:double|triple)[ ])?{_SPOKEN_DIGIT}"
                     rf"(?:[ ,-]{{1,2}}(?:(?:double|triple)[ ])?{_SPOKEN_DIGIT}){{5,}}\b")
# HTML's named references that stand for ASCII's punctuation or the no-break space (`&commat;`, `&period;`, `&nbsp;`,
# XML's five), from the standard's table: a page or an anti-scraping filter writes a value's punctuation so.
_NAMED = "|".join(sorted((name[:-1] for name, char in html.entities.html5.items() if name.endswith(";")
                          and (char == "\u00a0" or len(char) == 1 and "!" <= char <= "~" and not char.isalnum())),
                         key=len, reverse=True))
# A byte escape of printable ASCII or of a UTF-8 sequence's bytes (`\x40`, `\xc3\xa9`); not a control character's
# (`\x1b[31m`, a terminal colour a log prints), which hides no value.
_BYTE = "x[2-9a-fA-F][0-9A-Fa-f]"
TRIGGER_ESCAPES = (f"[{_INVISIBLE}{_WIDE}]|%[0-9A-Fa-f]{{2}}|\\\\u[0-9A-Fa-f]{{4}}|\\\\{_BYTE}|"
                   f"&#(?:[0-9]{{2,5}}|[xX][0-9A-Fa-f]{{2,4}});|&(?:{_NAMED});|(?i:quoted-printable)|=3D|"
                   r"=(?:\\?\r)?\n|=(?:\\r)?\\n")
"""What a text must hold to need decoding: invisible and wide characters, escapes (RE2 and Python syntax alike)."""
TRIGGER_FORMS = (f"[{_DIGITS}]|(?:--|==|\\*\\*|#|\\[|<!--)[ \t]*(?i:chunk|page)|\n[ \t]*(?i:page)[ \t]+\\d|\f|"
                 r"(?:\n|\\n)\[?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d|(?:\x1b|\\u001[bB])_bk;t=|"
                 rf"\b(?i:{_SPOKEN_WORD} {_SPOKEN_WORD} {_SPOKEN_WORD} {_SPOKEN_WORD})\b")
"""What a text must hold for the other readings: other scripts' digits, a marker line, a CI log's line stamps,
spoken digits (the detector's prefilter runs it in a pass apart from the escapes': joined, it makes RE2's
automaton slower)."""
TRIGGER = f"{TRIGGER_ESCAPES}|{TRIGGER_FORMS}"
"""What a text must hold to need normalizing."""
_PIECE = re.compile(f"[{_INVISIBLE}]+|[{_WIDE}]+|[{_DIGITS}]+|(?:%(?:25){{0,3}}[0-9A-Fa-f]{{2}})+|"
                    f"(?:\\\\{{1,16}}u[0-9A-Fa-f]{{4}})+|(?:\\\\{{1,16}}{_BYTE})+|"
                    f"(?:&#(?:[0-9]{{2,5}}|[xX][0-9A-Fa-f]{{2,4}});|&(?:{_NAMED});)+")
_OTHER_DIGIT = re.compile(f"[{_DIGITS}]")
_ESCAPE = re.compile(r"\\{1,16}u([0-9A-Fa-f]{4})")
"""An escape, its backslash doubled for each level of JSON it sits in: bounded (16), as `\\\\+` would read a long run
of backslashes again from each of them (quadratic)."""
_BYTE_ESCAPE = re.compile(r"\\{1,16}x([0-9A-Fa-f]{2})")
_PERCENT = re.compile("%[0-9A-Fa-f]{2}")
_QP_PIECE = re.compile(r"(?:=[0-9A-F]{2}|=(?:\\?\r)?\n|=(?:\\r)?\\n)+")
"""A run of quoted-printable escapes (`=XX`, upper-case hex as RFC 2045 writes them) and soft line breaks (`=` ending
a line; `=\\n` inside JSON text)."""
_QP_SIGN = re.compile(r"(?i:content-transfer-encoding:[ \t]*quoted-printable)|=3D|"
                      r"(?:^|\n|\\n)(?=[^\n\\]{0,72}=[0-9A-F]{2})[^\n\\]{0,75}=(?:\r?\n|\\(?:r\\)?n)")
"""What marks a text as quoted-printable: its MIME header, an encoded `=` (`=3D`: nothing else writes one), or an
escape on a line of 76 characters or fewer that ends in a soft line break (RFC 2045 6.7's limit; a longer line
ending in `=` is a base64 value's padding: `SharedAccessKey=41S9…=`)."""
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
    joins: tuple[tuple[int, int], ...] = ()
    """The spans of the original that were marker lines taken out: a value read across one joins two pieces."""

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
    """`text` with invisible characters dropped, compatibility forms and other scripts' digits folded,
    percent-encoding and `\\uXXXX` escapes decoded, marker lines and CI line stamps taken out, spoken digits written;
    None when nothing changes."""
    parts: list[str] = []
    marks: list[tuple[int, int, int, int]] = []
    joins: list[tuple[int, int]] = []
    at = length = 0
    pieces = list(_LINE_STAMP.finditer(text)) + list(_PIECE.finditer(text))  # a stamp before its escapes
    encoded = "=" in text and _QP_SIGN.search(text) is not None
    if encoded:
        pieces += _QP_PIECE.finditer(text)
    pieces += _LAYOUT.finditer(text)
    pieces += _SPOKEN.finditer(text)
    for m in sorted(pieces, key=lambda m: m.start()):
        if m.start() < at:
            continue  # inside a piece already read
        new = _read(m)
        if _NO_BREAK.fullmatch(m.group()) and 0 < m.start() and m.end() < len(text) \
                and _TOKEN_CHAR.match(text[m.start() - 1]) and _TOKEN_CHAR.match(text[m.end()]):
            new = ""  # a no-break space pasted inside a key (`glpat-Wh51…\u00a0YDb`) is no word break
        if new is None or new == m.group():
            continue
        if m.re is _LAYOUT:
            joins.append(m.span())
        parts.append(text[at:m.start()])
        length += m.start() - at
        marks.append((length, length + len(new), m.start(), m.end()))
        parts.append(new)
        length += len(new)
        at = m.end()
    if not marks:
        return None
    parts.append(text[at:])
    return Normalized("".join(parts), marks, encoded, tuple(joins))


def _read(m: re.Match[str]) -> str | None:
    """What a piece stands for: nothing (a layout line), digits (spoken ones), or its text decoded."""
    if m.re is _LAYOUT or m.re is _LINE_STAMP:
        return ""
    if m.re is _SPOKEN:
        return _spoken(m.group())
    return _quoted_printable(m.group()) if m.re is _QP_PIECE else _decoded(m.group())


def _spoken(piece: str) -> str | None:
    """The digits of a spoken run (`double seven` is 77), when there are seven or more (a phone number's least)."""
    out, times = [], 1
    for word in re.split(r"[ ,-]+", piece.lower()):
        if word in ("double", "triple"):
            times = 2 if word == "double" else 3
            continue
        out.append(_DIGIT_WORDS[word] * times)
        times = 1
    digits = "".join(out)
    return digits if len(digits) >= 7 else None


def _decoded(piece: str) -> str | None:
    if piece[0] == "%":
        return _percent_decoded(piece)
    if _BYTE_ESCAPE.match(piece):
        try:
            return _fold(bytes(int(h, 16) for h in _BYTE_ESCAPE.findall(piece)).decode("utf-8"))
        except UnicodeDecodeError:
            return None  # not UTF-8: a binary value's bytes, nothing to read
    if piece[0] == "\\":
        units = [int(h, 16) for h in _ESCAPE.findall(piece)]
        try:
            raw = "".join(chr(u) for u in units).encode("utf-16", "surrogatepass").decode("utf-16")
        except UnicodeDecodeError:
            return None  # a lone surrogate: leave the escapes as they are
        return _fold(raw)
    if piece[0] == "&":
        return _fold(html.unescape(piece))  # `jane&#64;example.com`, a password's `&amp;` in a page's table
    return _fold(piece)  # invisible characters, compatibility forms, other scripts' digits


def _percent_decoded(piece: str) -> str | None:
    """A run of percent-encoded UTF-8 decoded, as many times as it was encoded (`%2540` is `%40`, then `@`)."""
    for _ in range(4):
        try:
            piece = urllib.parse.unquote(piece, errors="strict")
        except UnicodeDecodeError:
            return None
        if not _PERCENT.search(piece):
            break
    return _fold(piece)


def _quoted_printable(piece: str) -> str | None:
    """A run of quoted-printable escapes decoded (UTF-8, else Latin-1), its soft line breaks dropped."""
    raw = bytes.fromhex(re.sub(r"=(?:\\?\r)?\n|=(?:\\r)?\\n|=", "", piece))
    try:
        return _fold(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return _fold(raw.decode("latin-1"))


def _fold(text: str) -> str:
    """A piece as read: invisible characters dropped, NFKC, and other scripts' digits as ASCII ones (written so, or
    hidden by an escape: `\\u0660\\u0665…` in JSON written with `ensure_ascii`, `%D9%A0…` in a URL)."""
    folded = unicodedata.normalize("NFKC", _DROP.sub("", text))
    return _OTHER_DIGIT.sub(lambda m: str(unicodedata.decimal(m.group())), folded)
