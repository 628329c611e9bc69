"""One redaction run against a store: its numbering, the marks it leaves, and the check that refuses an
unredacted store.

A store counts as redacted when every file it holds rows from (in `sources` or `ingest_errors`) is listed in
`redacted_sources`: by `ingest --redact` as the file is stored, or by `tracegym redact` over the whole store.
"""

from __future__ import annotations

import json
import secrets
import uuid
from typing import TYPE_CHECKING, Any

from tracegym.errors import TracegymError
from tracegym.redact.columns import Kind, batch_kinds
from tracegym.redact.config import RedactConfig
from tracegym.redact.detect import Detector
from tracegym.redact.pseudonyms import Pseudonyms
from tracegym.redact.tables import Redactor

if TYPE_CHECKING:
    import duckdb

    from tracegym.store import Store


class UnredactedStoreError(TracegymError):
    title = "Unredacted store"


UNREDACTED_SOURCES = """
    SELECT count(DISTINCT source_id) FROM (
        SELECT source_id FROM sources UNION ALL SELECT source_id FROM ingest_errors
    ) s WHERE source_id IS NOT NULL AND source_id NOT IN (SELECT source_id FROM redacted_sources)"""


def unredacted_sources(store: Store) -> int:
    """How many files the store holds rows from that no redaction covered."""
    return int(store.scalar(UNREDACTED_SOURCES))


def require_redacted(store: Store, command: str) -> None:
    """Raise UnredactedStoreError, naming the fixes, when the store holds unredacted traces."""
    n = unredacted_sources(store)
    if n:
        raise UnredactedStoreError(
            f"The store {store.path} holds rows from {n} files that were not redacted, and `{command}` would carry "
            "what users typed and tools returned (e-mails, card numbers, keys) into task files, training data and "
            f"reports. Fix: `tracegym redact --store {store.path}` (rewrites the store in place), or ingest with "
            f"`tracegym ingest --redact`; or pass --allow-unredacted to go on anyway.")


class Numbering:
    """The pseudonyms each trace gets: its own numbering, the store's, or the keyed one."""

    def __init__(self, config: RedactConfig, store: Store) -> None:
        key = config.hmac_key()
        self.keyed = Pseudonyms(key=key) if key is not None else None
        self.shared: Pseudonyms | None = None
        if self.keyed is None and config.pseudonyms.scope == "store":
            self.shared = Pseudonyms(salt=_salt(store), known=_known(store))
        self.per_trace: dict[str | None, Pseudonyms] = {}
        self.lasting_names: Pseudonyms | None = None
        self.store = store

    def lasting(self) -> Pseudonyms:
        """A numbering that holds across ingests (the keyed one, else the store's), for the parts of a trace that a
        later file may add to: a trace's own numbering starts again with each ingest, so two values could meet
        under one placeholder."""
        if self.keyed is not None:
            return self.keyed
        if self.shared is not None:
            return self.shared
        if self.lasting_names is None:
            self.lasting_names = Pseudonyms(salt=_salt(self.store), known=_known(self.store))
        return self.lasting_names

    def __call__(self, trace_id: str | None) -> Pseudonyms:
        if self.keyed is not None:
            return self.keyed
        if self.shared is not None:
            return self.shared
        if trace_id is None:
            return Pseudonyms()
        names = self.per_trace.get(trace_id)
        if names is None:
            names = self.per_trace[trace_id] = Pseudonyms()
        return names

    def save(self, con: duckdb.DuckDBPyConnection) -> None:
        """Write the store-wide numbering's new digests (inside the caller's transaction)."""
        for names in (self.shared, self.lasting_names):
            if names is not None and names.added:
                con.executemany("INSERT INTO redaction_pseudonyms VALUES (?, ?, ?)", names.added)
                names.added = []


class Run:
    """A redaction run: detector, numbering and tally; `mark` records which files it covered."""

    def __init__(self, store: Store, config: RedactConfig, how: str) -> None:
        self.store, self.config, self.how = store, config, how
        self.redaction_id = uuid.uuid4().hex[:16]
        self.numbering = Numbering(config, store)
        self.redactor = Redactor(Detector(config), self.numbering, self.numbering.lasting,
                                 batch_kinds(store.con))

    def identifier(self, value: str, column: str = "id", tally: bool = True) -> str:
        """An identifier (a trace, session, call id) redacted as its columns are: store-wide placeholders."""
        return self._lasting(value, "id", column if tally else None)

    def path(self, value: str, column: str = "path") -> str:
        """A file's path with its personal parts replaced, its folders kept."""
        return self._lasting(value, "path", column)

    def _lasting(self, value: str, kind: Kind, column: str | None) -> str:
        """`value` redacted with the store-wide numbering; its findings counted under `column` unless None."""
        found = self.redactor.detector.find(value)
        if not found:
            return value
        if column is not None:
            self.redactor.tally.add(found, None, column)
        return self.redactor.redacted(value, found, kind, None)

    def batch(self, tables: dict[str, Any]) -> dict[str, Any]:
        """An ingest batch redacted; its traces' numberings are dropped after (a trace never spans batches)."""
        redacted = self.redactor.tables(tables)
        self.numbering.per_trace.clear()
        return redacted

    def part(self, trace_id: str, doc: str) -> str:
        """A kept part of a span-shaped trace (its JSON) redacted, numbered as its trace is across ingests."""
        return self.redactor.text(doc, trace_id, "span_parts.doc", is_json=True, names=self.numbering.lasting())

    def mark(self, con: duckdb.DuckDBPyConnection, source_ids: list[str]) -> None:
        """Inside the transaction that stored or rewrote these files' rows."""
        if source_ids:  # none in a store that holds no file's rows
            con.executemany("INSERT INTO redacted_sources VALUES (?, ?)", [[s, self.redaction_id] for s in source_ids])
        self.numbering.save(con)

    def record(self, con: duckdb.DuckDBPyConnection) -> None:
        """The run's row in `redactions`, with its counts."""
        settings = {"rules": [r.name for r in self.redactor.detector.rules], "fingerprint": self.config.fingerprint(),
                    "scope": self.config.pseudonyms.scope, "keyed": self.numbering.keyed is not None,
                    "allow_values": len(self.config.allow.values), "allow_patterns": len(self.config.allow.patterns)}
        tally = self.redactor.tally
        con.execute("INSERT INTO redactions VALUES (?, ?, current_timestamp, ?, ?, ?)",
                    [self.redaction_id, self.how, json.dumps(settings), json.dumps(dict(tally.by_rule)), tally.total])


def _salt(store: Store) -> bytes:
    salt = store.scalar("SELECT salt FROM redaction_salt")
    if salt is None:
        salt = secrets.token_hex(16)
        store.con.execute("INSERT INTO redaction_salt VALUES (?)", [salt])
    return bytes.fromhex(salt)


def _known(store: Store) -> dict[tuple[str, str], int]:
    rows = store.con.execute("SELECT label, digest, n FROM redaction_pseudonyms").fetchall()
    return {(label, digest): n for label, digest, n in rows}
