"""Setting imported labels on stored traces, in one transaction, with their source recorded.

Keys are compared with trace ids, session ids, or (`auto`) trace ids first and session ids for the keys that
name no trace; a session key labels every trace of the session. The import's id is a hash of the file's bytes
and its options, so importing the same file again changes nothing and records no second label. A trace whose
outcome or score changed is detected again (its verdict findings and cluster counts read both), as ingest
detects new traces, so the next `mine failures` ranks with the new outcomes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import duckdb
import pyarrow as pa

from tracegym.errors import StoreError, TracegymError
from tracegym.ingest.pipeline import file_sha256
from tracegym.labels.rows import LabelFile, LabelSpec, read_labels
from tracegym.mining.detection import detect_ingested, forget_traces
from tracegym.store.connection import Store

Match = Literal["auto", "trace", "session"]
EXAMPLES = 5
_ROWS, _MATCHED, _FINAL = "tg_label_rows", "tg_label_matched", "tg_label_final"


@dataclass(slots=True)
class ImportReport:
    """What one `labels import` did; examples are at most `EXAMPLES` of each kind."""

    import_id: str
    path: str
    rows: int
    labelled_traces: int
    changed: int
    """Labelled traces whose outcome or score this import changed (0 when the file was imported before)."""
    already_imported: bool
    skipped: int
    unmatched: int
    bad: int
    conflicts: int
    """Traces that rows of the file label differently; none of those rows is applied."""
    conflicting_rows: int
    """Rows applied to no trace because each trace they name is labelled differently by another row."""
    unmatched_examples: list[dict[str, str]] = field(default_factory=list)
    bad_examples: list[dict[str, str]] = field(default_factory=list)
    conflict_examples: list[dict[str, Any]] = field(default_factory=list)
    redetected: int = 0
    detection_error: str | None = None
    """Why detection of the relabelled traces failed, if it did: the labels are stored, and `mine failures`
    detects those traces again."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def import_labels(store: Store, path: Path, spec: LabelSpec, match: Match = "auto",
                  fmt: str | None = None, stored_key: Callable[[str], str] | None = None) -> ImportReport:
    """Read `path` and set its outcomes and scores on the traces its keys name. `stored_key`: how a key reads
    in the store, where ids were redacted (`tracegym.redact.ids.stored_ids`)."""
    if store.read_only:
        raise StoreError(f"The store at {store.path} is open read-only; importing labels writes to it.")
    labels = read_labels(path, spec)
    sha = file_sha256(path)
    import_id = _import_id(sha, spec, match, fmt)
    with store.transaction() as con:
        already = con.execute("SELECT count(*) FROM label_imports WHERE import_id = ?", [import_id]).fetchall()[0][0]
        _stage(con, labels, match, fmt, stored_key)
        report = _report(con, import_id, path, labels, bool(already))
        report.changed = _apply(con, import_id, spec)
        _record(con, report, sha, spec, match, fmt)
        for table in (_ROWS, _MATCHED, _FINAL):
            con.execute(f"DROP TABLE {table}")
    if report.changed:
        try:
            report.redetected = detect_ingested(store).traces
        except (TracegymError, duckdb.Error) as e:
            report.detection_error = str(e)
    return report


def _import_id(sha: str, spec: LabelSpec, match: Match, fmt: str | None) -> str:
    options = json.dumps({"file": sha, "spec": spec.model_dump(), "match": match, "format": fmt}, sort_keys=True)
    return hashlib.sha256(options.encode()).hexdigest()[:16]


def _stage(con: duckdb.DuckDBPyConnection, labels: LabelFile, match: Match, fmt: str | None,
           stored_key: Callable[[str], str] | None) -> None:
    """Temp tables: the file's rows (keys as the store holds them); each row with the traces it names; one label
    per trace, conflicts out."""
    rows = labels.rows
    table = pa.table({
        "ord": pa.array(range(len(rows)), pa.int64()),
        "locator": pa.array([r.locator for r in rows], pa.string()),
        "key": pa.array([r.key if stored_key is None else stored_key(r.key) for r in rows], pa.string()),
        "value": pa.array([r.value for r in rows], pa.string()),
        "outcome": pa.array([r.outcome for r in rows], pa.string()),
        "score": pa.array([r.score for r in rows], pa.float64()),
        "raw_score": pa.array([r.raw_score for r in rows], pa.float64()),
    })
    con.register("tg_label_arrow", table)
    con.execute(f"CREATE TEMP TABLE {_ROWS} AS SELECT * FROM tg_label_arrow")
    con.unregister("tg_label_arrow")
    only = "" if fmt is None else " AND t.format = $fmt"
    by_trace = f"SELECT r.*, t.trace_id FROM {_ROWS} r JOIN traces t ON t.trace_id = r.key{only}"
    by_session = f"SELECT r.*, t.trace_id FROM {_ROWS} r JOIN traces t ON t.session_id = r.key{only}"
    if match == "auto":  # session ids only for the keys that name no trace
        by_session += f" WHERE r.key NOT IN (SELECT key FROM ({by_trace}))"
    sql = {"trace": by_trace, "session": by_session, "auto": f"{by_trace} UNION ALL {by_session}"}[match]
    con.execute(f"CREATE TEMP TABLE {_MATCHED} AS {sql}", {"fmt": fmt} if fmt is not None else {})
    con.execute(
        f"""CREATE TEMP TABLE {_FINAL} AS
            SELECT trace_id, arg_min(ord, ord) AS ord, any_value(key) AS key, arg_min(locator, ord) AS locator,
                   arg_min(value, ord) AS value, any_value(outcome) AS outcome, any_value(score) AS score,
                   arg_min(raw_score, ord) AS raw_score
            FROM {_MATCHED} GROUP BY trace_id
            HAVING count(DISTINCT (coalesce(outcome, ''), coalesce(score, -1))) = 1"""
    )


def _report(con: duckdb.DuckDBPyConnection, import_id: str, path: Path, labels: LabelFile,
            already: bool) -> ImportReport:
    unmatched = con.execute(
        f"SELECT locator, key FROM {_ROWS} WHERE ord NOT IN (SELECT ord FROM {_MATCHED}) ORDER BY ord").fetchall()
    conflicts = con.execute(
        f"""SELECT trace_id, list(locator || ': ' || coalesce(outcome, '∅') || coalesce(' score ' || score, '')
                                  ORDER BY ord) AS rows
            FROM {_MATCHED} WHERE trace_id NOT IN (SELECT trace_id FROM {_FINAL})
            GROUP BY trace_id ORDER BY min(ord)""").fetchall()
    conflicting_rows = con.execute(
        f"""SELECT count(DISTINCT ord) FROM {_MATCHED} WHERE ord NOT IN
                (SELECT ord FROM {_MATCHED} WHERE trace_id IN (SELECT trace_id FROM {_FINAL}))""").fetchone()[0]
    return ImportReport(
        import_id=import_id, path=str(path), rows=labels.total,
        labelled_traces=con.execute(f"SELECT count(*) FROM {_FINAL}").fetchone()[0],
        changed=0, already_imported=already, skipped=labels.skipped,
        unmatched=len(unmatched), bad=len(labels.bad), conflicts=len(conflicts),
        conflicting_rows=conflicting_rows,
        unmatched_examples=[{"row": loc, "key": key} for loc, key in unmatched[:EXAMPLES]],
        bad_examples=[{"row": b.locator, "reason": b.reason} for b in labels.bad[:EXAMPLES]],
        conflict_examples=[{"trace_id": tid, "rows": rows} for tid, rows in conflicts[:EXAMPLES]],
    )


def _apply(con: duckdb.DuckDBPyConnection, import_id: str, spec: LabelSpec) -> int:
    """Store the labels and set outcomes and scores; returns how many traces changed."""
    score_comment = f"label import {import_id}"
    # With --score-range the comment keeps the value as written: 'label import ID (row 3: 1.0 on 1..5)'.
    scale = "" if spec.score_range is None else f" on {spec.score_range[0]:g}..{spec.score_range[1]:g}"
    con.execute(
        f"""CREATE TEMP TABLE tg_label_changed AS
            SELECT f.trace_id FROM {_FINAL} f JOIN traces t USING (trace_id)
            LEFT JOIN (SELECT trace_id, value FROM scores WHERE kind = 'human' AND name = $name
                       AND starts_with(comment, 'label import ')) s USING (trace_id)
            WHERE (f.outcome IS NOT NULL AND t.outcome IS DISTINCT FROM f.outcome)
               OR (f.score IS NOT NULL AND s.value IS DISTINCT FROM f.score)""",
        {"name": spec.score or ""},
    )
    con.execute(
        f"""INSERT OR IGNORE INTO labels
            SELECT $id, f.trace_id, f.key, f.locator, f.value, f.outcome, f.score, t.outcome, current_timestamp
            FROM {_FINAL} f JOIN traces t USING (trace_id)""", {"id": import_id})
    con.execute(f"""UPDATE traces SET outcome = f.outcome FROM {_FINAL} f
                    WHERE traces.trace_id = f.trace_id AND f.outcome IS NOT NULL""")
    if spec.score is not None:
        # A label score replaces the one an earlier import set under the same name; scores that came with the
        # traces are kept.
        con.execute(f"""DELETE FROM scores WHERE kind = 'human' AND name = $name
                        AND starts_with(comment, 'label import ')
                        AND trace_id IN (SELECT trace_id FROM {_FINAL} WHERE score IS NOT NULL)""",
                    {"name": spec.score})
        con.execute(f"""INSERT INTO scores (trace_id, name, value, label, kind, comment)
                        SELECT trace_id, $name, score, NULL, 'human',
                               $comment || ' (' || locator || if($scale = '', '', ': ' || raw_score || $scale) || ')'
                        FROM {_FINAL} WHERE score IS NOT NULL""",
                    {"name": spec.score, "comment": score_comment, "scale": scale})
    changed = con.execute("SELECT count(*) FROM tg_label_changed").fetchone()[0]
    if changed:
        forget_traces(con, "tg_label_changed")
    con.execute("DROP TABLE tg_label_changed")
    return changed


def _record(con: duckdb.DuckDBPyConnection, r: ImportReport, sha: str, spec: LabelSpec, match: Match,
            fmt: str | None) -> None:
    con.execute(
        """INSERT INTO label_imports VALUES ($id, $path, $sha, $key, $outcome, $score, $mapping, $match, $format,
                                            current_timestamp, current_timestamp, $rows, $labelled, $changed,
                                            $unmatched, $bad)
           ON CONFLICT (import_id) DO UPDATE SET path = excluded.path, imported_at = excluded.imported_at,
               n_rows = excluded.n_rows, n_labelled = excluded.n_labelled, n_changed = excluded.n_changed,
               n_unmatched = excluded.n_unmatched, n_bad = excluded.n_bad""",
        {"id": r.import_id, "path": str(Path(r.path).resolve()), "sha": sha, "key": spec.key, "outcome": spec.outcome,
         "score": spec.score, "mapping": json.dumps(spec.mapping, sort_keys=True), "match": match, "format": fmt,
         "rows": r.rows, "labelled": r.labelled_traces, "changed": r.changed, "unmatched": r.unmatched,
         "bad": r.bad},
    )
