"""Typed placeholders for found values: the same value, the same placeholder, within a trace or a store.

Counted mode numbers values in the order they are met: `<EMAIL_1>`, `<EMAIL_2>`. Keyed mode (an HMAC key) names
each value by HMAC-SHA256(key, type and value): `<EMAIL_3f9a2c1b7e>`, the same in every trace, store and ingest,
with nothing kept but the key, which stays outside the store.
"""

from __future__ import annotations

import hashlib
import hmac
import json


def canonical(value: str) -> str:
    """The value as it reads: JSON escapes decoded (a key stored in JSON text with `\\n` and the same key in a
    message with line breaks get one placeholder), surrounding whitespace dropped."""
    if "\\" in value:
        try:
            value = json.loads(f'"{value}"')
        except ValueError:
            pass
    return value.strip()


class Pseudonyms:
    """One numbering: a trace's, or a store's (`known` then holds the store's salted digests)."""

    def __init__(self, key: bytes | None = None, salt: bytes | None = None,
                 known: dict[tuple[str, str], int] | None = None) -> None:
        self.key = key
        self.salt = salt
        self.known: dict[tuple[str, str], int] = known if known is not None else {}
        self.counts: dict[str, int] = {}
        for label, _ in self.known:
            self.counts[label] = self.counts.get(label, 0) + 1
        self.added: list[tuple[str, str, int]] = []
        """(label, digest, n) given out by this numbering and not yet in `known` when it started."""

    def placeholder(self, label: str, value: str) -> str:
        value = canonical(value)
        if self.key is not None:
            digest = hmac.new(self.key, f"{label}\0{value}".encode(), hashlib.sha256).hexdigest()
            return f"<{label}_{digest[:10]}>"
        ref = (label, self._digest(value))
        n = self.known.get(ref)
        if n is None:
            n = self.counts.get(label, 0) + 1
            self.counts[label] = n
            self.known[ref] = n
            self.added.append((label, ref[1], n))
        return f"<{label}_{n}>"

    def _digest(self, value: str) -> str:
        """The value itself in a trace's numbering, which lives only while its trace is redacted; a salted
        digest in a store's, which is kept in the store."""
        if self.salt is None:
            return value
        return hashlib.sha256(self.salt + value.encode()).hexdigest()
