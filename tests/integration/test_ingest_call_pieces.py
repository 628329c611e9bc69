"""A per-call chat log cut at whole lines into files, ingested in any order: the store ends as the whole file's."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from tests.integration.test_replace_delete import CSAT, dump, run
from tests.support_log import write_support_log
from tracegym.ingest.pipeline import ingest_paths
from tracegym.store import open_store

SOURCES = {"sources", "ingest_errors", "line_fragments"}
"""Rows about the files ingested, which differ between a whole file and its pieces by nature."""


def _content(db: Path) -> dict[str, list[str]]:
    return dump(db, skip={"source_id"}, without=SOURCES)


def _pieces(tmp_path: Path, style: str) -> tuple[Path, list[Path]]:
    """The log and its three pieces, cut at whole lines between calls of the interleaved conversations."""
    log = write_support_log(tmp_path / style, n_sessions=6, seed=3, style=style).log  # type: ignore[arg-type]
    lines = log.read_text().splitlines(keepends=True)
    cuts = [0, len(lines) // 3, 2 * len(lines) // 3, len(lines)]
    folder = tmp_path / f"{style}-pieces"
    folder.mkdir()
    paths = []
    for i, (a, b) in enumerate(itertools.pairwise(cuts)):
        paths.append(folder / f"chat.jsonl.{i}")
        paths[-1].write_text("".join(lines[a:b]))
    return log, paths


@pytest.mark.slow
@pytest.mark.parametrize("style", ["openai", "anthropic"])
def test_a_call_log_cut_in_three_and_ingested_in_any_order_equals_the_whole_file(tmp_path: Path, style: str) -> None:
    """Each order, one ingest per piece, and all pieces in one ingest newest first: calls that arrive before the
    calls they go on with join their conversation when those arrive, under the whole file's ids."""
    log, pieces = _pieces(tmp_path, style)
    whole_db = tmp_path / f"{style}-whole.duckdb"
    with open_store(whole_db) as whole:
        ingest_paths(whole, [str(log)])
        n_traces = whole.scalar("SELECT count(*) FROM traces")
    expected = _content(whole_db)
    runs = [[[p] for p in order] for order in itertools.permutations(pieces)] + [[pieces[::-1]]]
    for n, order in enumerate(runs):
        db = tmp_path / f"{style}-{n}.duckdb"
        with open_store(db) as store:
            summaries = [ingest_paths(store, [str(p) for p in paths]) for paths in order]
            assert store.scalar("SELECT count(*) FROM ingest_errors") == 0, order
            # the counts of every ingest add up to what the store holds
            assert sum(s.total("traces") for s in summaries) == n_traces, order
        assert _content(db) == expected, order


@pytest.mark.slow
def test_labels_and_findings_of_a_conversation_stored_before_its_start_follow_it(cli, tmp_path: Path) -> None:
    """The newest piece ingested, labelled and mined first: when the pieces before it arrive, its conversations
    join theirs under the whole file's ids, the labels go with them, and mining again leaves the store as the whole
    file's ingested, labelled and mined."""
    log, pieces = _pieces(tmp_path, "openai")
    newest = {json.loads(line)["session_id"] for line in pieces[2].read_text().splitlines()}
    rows = (log.parent / "csat.csv").read_text().splitlines(keepends=True)
    csat = tmp_path / "csat.csv"  # the sessions the newest piece has calls of, so that each label finds its trace
    csat.write_text(rows[0] + "".join(r for r in rows[1:] if r.split(",")[0] in newest))
    label = ("labels", "import", csat, "--key", "session_id", *CSAT, "--match", "session")
    whole, db = tmp_path / "whole.duckdb", tmp_path / "pieces.duckdb"
    run(cli, "ingest", log, "--store", whole)
    run(cli, *label, "--store", whole)
    run(cli, "mine", "failures", "--store", whole)

    run(cli, "ingest", pieces[2], "--store", db)
    run(cli, *label, "--store", db)
    run(cli, "mine", "failures", "--store", db)
    with open_store(db, read_only=True) as st:
        labelled = st.scalar("SELECT count(*) FROM labels")
        assert labelled > 0
    joined = [run(cli, "ingest", p, "--store", db) for p in (pieces[1], pieces[0])]
    assert sum(j["traces_merged"] for j in joined) > 0
    with open_store(db, read_only=True) as st:
        assert st.scalar("SELECT count(*) FROM labels") == labelled  # moved, none lost
        assert st.scalar("SELECT count(*) FROM store_changes WHERE action = 'join'") == 2
    run(cli, "mine", "failures", "--store", db)
    assert _content(db) == _content(whole)
