"""Conversations stitched across files and ingests keep what was attached to them: a support log (as per-call
lines, and as an app with no span around its loop exports it) cut into files, labelled from its CSAT export after
the first file, and ingested in several orders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support_log import SupportLog, write_support_log, write_support_spans
from tracegym.store import open_store

pytestmark = pytest.mark.slow  # several ingests, a labels import and a mining run per case

CSAT = ("--key", "session_id", "--score", "stars", "--score-range", "1", "5", "--outcome", "resolution",
        "--map", "resolved=success", "--map", "unresolved=failure")


def _ingest(cli, path: Path, store: Path) -> dict[str, Any]:
    result = cli("ingest", path, "--store", store, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _pieces(log: SupportLog, whole: Path, folder: Path, split: str) -> list[Path]:
    """The file's lines (one per call, in the chat log's order) cut into files: `turn`, each session's first call
    in one file and its later ones in another (so every order of the two is one for every session); `deal`, dealt
    round-robin into three."""
    lines = whole.read_text().splitlines(keepends=True)
    sessions = [json.loads(line)["session_id"] for line in log.log.read_text().splitlines()]
    piece = [min(sessions[:n].count(s), 1) for n, s in enumerate(sessions)] if split == "turn" \
        else [n % 3 for n in range(len(lines))]
    folder.mkdir()
    out = []
    for i in range(max(piece) + 1):
        out.append(folder / f"part-{i}.jsonl")
        out[-1].write_text("".join(line for line, p in zip(lines, piece, strict=True) if p == i))
    return out


def _stored(store: Path) -> dict[str, Any]:
    with open_store(store, read_only=True) as st:
        q = st.con.execute
        return {
            "traces": q("SELECT count(*) FROM traces").fetchone()[0],
            "ids": sorted(q("SELECT trace_id, session_id, metadata->>'calls' FROM traces").fetchall()),
            "labelled": dict(q("""SELECT t.session_id, (t.outcome, s.value, l.score) FROM labels l
                                  JOIN traces t USING (trace_id)
                                  JOIN scores s ON s.trace_id = t.trace_id AND s.name = 'stars'""").fetchall()),
            "orphans": q("""SELECT (SELECT count(*) FROM labels ANTI JOIN traces USING (trace_id))
                              + (SELECT count(*) FROM scores ANTI JOIN traces USING (trace_id))
                              + (SELECT count(*) FROM failures ANTI JOIN traces USING (trace_id))
                              + (SELECT count(*) FROM detected ANTI JOIN traces USING (trace_id))
                              + (SELECT count(*) FROM clusters c WHERE example_trace_id IS NOT NULL AND NOT EXISTS
                                   (SELECT 1 FROM traces t WHERE t.trace_id = c.example_trace_id))""").fetchone()[0],
            "sessions_split": q("SELECT count(*) - count(DISTINCT session_id) FROM traces").fetchone()[0],
        }


def _expected_labels(log: SupportLog, sessions: set[str]) -> dict[str, tuple]:
    return {s.session_id: ("success" if s.family in ("resolved", "handed_off") else "failure",
                           (s.stars - 1) / 4, (s.stars - 1) / 4)
            for s in log.sessions if s.stars is not None and s.session_id in sessions}


@pytest.mark.parametrize(("shape", "split", "order"), [("spans", "turn", (1, 0)), ("spans", "deal", (2, 0, 1)),
                                                       ("calls", "turn", (0, 1))])
def test_labels_set_between_ingests_stay_on_the_conversations_the_later_files_grow(
        cli, tmp_path: Path, shape: str, split: str, order: tuple[int, ...]) -> None:
    """Spans without a parent are stitched in any order; per-call lines in order (out of order they stay a trace
    per file: docs/bring-your-traces.md)."""
    log = write_support_log(tmp_path / "support", n_sessions=10, seed=2)
    whole = log.log if shape == "calls" else write_support_spans(log, tmp_path / "spans.jsonl")
    reference = tmp_path / "whole.duckdb"
    _ingest(cli, whole, reference)
    pieces = _pieces(log, whole, tmp_path / "pieces", split)
    store = tmp_path / "store.duckdb"
    counted = _ingest(cli, pieces[order[0]], store)["traces"]
    labelled = cli("labels", "import", log.csat, *CSAT, "--store", store, "--json")
    assert labelled.exit_code in (0, 1), labelled.output  # 1: surveyed sessions the first piece does not hold
    assert cli("mine", "failures", "--store", store).exit_code == 0
    first = _stored(store)
    assert first["labelled"] and first["sessions_split"] == 0
    for i in order[1:]:
        counted += _ingest(cli, pieces[i], store)["traces"]
    final = _stored(store)
    assert final["traces"] == counted == _stored(reference)["traces"]
    assert final["ids"] == _stored(reference)["ids"]  # the conversations of the whole log, under its ids
    assert final["labelled"] == _expected_labels(log, set(first["labelled"]))
    assert final["orphans"] == 0 and final["sessions_split"] == 0


def _sessions(store: Path) -> dict[str, str]:
    with open_store(store, read_only=True) as st:
        return dict(st.con.execute("SELECT session_id, trace_id FROM traces").fetchall())


@pytest.mark.parametrize("shape", ["calls", "spans"])
def test_a_deleted_trace_stays_deleted_when_its_source_grows_and_replace_brings_it_back(
        cli, tmp_path: Path, shape: str) -> None:
    """A log that grew (per-call lines: its conversation again, with more calls) or another file of the same
    service (spans without a parent: the group rebuilt from its parts) would store a deleted conversation again;
    new sessions of the same source still arrive."""
    log = write_support_log(tmp_path / "support", n_sessions=10, seed=4)
    whole = log.log if shape == "calls" else write_support_spans(log, tmp_path / "spans.jsonl")
    lines = whole.read_text().splitlines(keepends=True)
    early = tmp_path / "early.jsonl"
    early.write_text("".join(lines[:len(lines) // 2]))
    store = tmp_path / "store.duckdb"
    _ingest(cli, early, store)
    before = _sessions(store)
    gone = sorted(before)[0]
    assert cli("traces", "delete", before[gone], "--yes", "--store", store).exit_code == 0
    rest = tmp_path / "rest.jsonl"
    rest.write_text("".join(lines[len(lines) // 2:]))
    grown = _ingest(cli, whole if shape == "calls" else rest, store)
    after = _sessions(store)
    assert gone not in after and grown["traces_deleted_skipped"] == 1
    assert set(after) == {s.session_id for s in log.sessions} - {gone}
    back = cli("ingest", "--replace", whole, "--store", store, "--json")
    assert back.exit_code == 0, back.output
    assert _sessions(store)[gone] == before[gone] and len(_sessions(store)) == len(log.sessions)
