"""Ids from outside the store (a labels file's session or trace ids) as they read in a redacted store.

Ids are redacted with store-wide placeholders: the keyed one, computed from the key, or the store's salted
numbering, whose digests the store keeps. Either gives the placeholder of a known value again without the value
ever being stored; a value the store never held gets a placeholder no stored id has.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tracegym.redact.config import RedactConfig
from tracegym.redact.detect import Detector
from tracegym.redact.pseudonyms import Pseudonyms
from tracegym.redact.text import apply

if TYPE_CHECKING:
    from tracegym.store import Store


def stored_ids(store: Store, config: RedactConfig) -> Callable[[str], str] | None:
    """How an id reads in `store` (None when nothing in it was redacted): each finding replaced by its
    store-wide placeholder, looked up and never added to the store."""
    if not store.scalar("SELECT count(*) FROM redacted_sources"):
        return None
    key = config.hmac_key()
    salt = store.scalar("SELECT salt FROM redaction_salt")
    if key is None and salt is None:
        return None  # no id was given a store-wide placeholder
    if key is not None:
        names = Pseudonyms(key=key)
    else:
        rows = store.con.execute("SELECT label, digest, n FROM redaction_pseudonyms").fetchall()
        names = Pseudonyms(salt=bytes.fromhex(salt), known={(label, digest): n for label, digest, n in rows})
    detector = Detector(config)

    def stored(value: str) -> str:
        found = detector.find(value)
        return apply(value, found, names) if found else value
    return stored
