"""Text from traces and models, made inert: every control character shown as an escape, never acted on.

Trace content and model output are untrusted (SECURITY.md). On a terminal, an ESC starts a sequence
that can set the window title, write the clipboard (OSC 52), forge a hyperlink or clear the screen; C1 controls
(U+0080-U+009F) do the same on terminals that read them, and bidi overrides (U+202E) show text in another order
than it is. In a YAML file, a line break starts a new key and most controls make the file unreadable. Printable
text, Unicode included, is left as it is.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL and C1; Unicode bidi marks, embeddings, overrides and isolates; the line and
# paragraph separators; lone surrogates (not encodable, so unprintable); the BOM and the two non-characters YAML
# does not allow in a file.
_HIDDEN = (r"\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
           r"\ufeff\ufffe\uffff")
_HIDDEN_CHARS = re.compile(f"[{_HIDDEN}]")
_HIDDEN_OR_LAYOUT = re.compile(f"[{_HIDDEN}\t\n]")
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def visible(text: str) -> str:
    """`text` with each control character replaced by its escape (ESC as `\\x1b`, U+202E as `\\u202e`); tabs and
    newlines stay, for the layout of multi-line text."""
    return _HIDDEN_CHARS.sub(_escape, text)


def one_line(text: str) -> str:
    """As `visible`, with tabs and newlines escaped too: the text of one line (a YAML comment, a table key)."""
    return _HIDDEN_OR_LAYOUT.sub(_escape, text)


def inert_json(text: str) -> str:
    """JSON text with the control characters JSON lets strings hold raw (DEL, C1, bidi) written as `\\uXXXX`.

    Only for JSON that has no raw control character between its tokens (orjson writes spaces and newlines there),
    so that every escape lands inside a string and the data parses to the same values."""
    return _HIDDEN_CHARS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _SHORT:
        return _SHORT[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
