"""`tracegym labels import --score-range`: a support team's 1-5 star CSAT export on its chat log."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.support_log import SupportLog, write_support_log
from tracegym.store import open_store


@pytest.fixture
def support_store(cli, tmp_path: Path) -> tuple[Path, SupportLog]:
    """The generated chat log ingested, each call's session id in `request.metadata` (where ingest reads it)."""
    log = write_support_log(tmp_path / "support", n_sessions=40, seed=3)
    lines = [json.loads(line) for line in log.log.read_text().splitlines()]
    for line in lines:
        line["request"]["metadata"] = {"session_id": line["session_id"]}
    log.log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    store_path = tmp_path / "store.duckdb"
    result = cli("ingest", log.log, "--store", store_path, "--json")
    assert result.exit_code == 0, result.output
    return store_path, log


def _query(store_path: Path, sql: str) -> list[dict]:
    with open_store(store_path, read_only=True) as st:
        return st.query(sql)


def test_stars_without_a_range_store_nothing_and_name_the_range_and_the_flag(cli, support_store):
    store_path, log = support_store
    result = cli("labels", "import", log.csat, "--key", "session_id", "--score", "stars", "--store", store_path)
    assert result.exit_code == 2, result.output
    stars = [s.stars for s in log.sessions if s.stars is not None]
    assert f"holds values from {min(stars)} to {max(stars)}" in result.stderr
    assert "--score-range LOW HIGH" in result.stderr and "Nothing was stored" in result.stderr
    assert _query(store_path, "SELECT count(*) AS n FROM scores")[0]["n"] == 0
    assert _query(store_path, "SELECT (SELECT count(*) FROM labels) + (SELECT count(*) FROM label_imports) AS n"
                  )[0]["n"] == 0


def test_stars_on_a_score_range_label_every_surveyed_session(cli, support_store):
    store_path, log = support_store
    result = cli("labels", "import", log.csat, "--key", "session_id", "--score", "stars", "--score-range", "1", "5",
                 "--outcome", "resolution", "--map", "resolved=success", "--map", "unresolved=failure",
                 "--store", store_path, "--json")
    assert result.exit_code == 0, result.output
    surveyed = {s.session_id: s for s in log.sessions if s.stars is not None}
    assert 0 < len(surveyed) < len(log.sessions) and {s.stars for s in surveyed.values()} >= {1, 5}
    report = json.loads(result.stdout)
    assert report["labelled_traces"] == len(surveyed) and report["bad"] == report["unmatched"] == 0

    stored = _query(store_path, """SELECT t.session_id, s.value, s.comment, t.outcome FROM scores s
                                   JOIN traces t USING (trace_id) WHERE s.name = 'stars' AND s.kind = 'human'""")
    assert {r["session_id"] for r in stored} == set(surveyed)
    for r in stored:
        session = surveyed[r["session_id"]]
        assert r["value"] == pytest.approx((session.stars - 1) / 4)
        assert f": {float(session.stars)} on 1..5)" in r["comment"]
        assert r["outcome"] == ("success" if session.family in ("resolved", "handed_off") else "failure")
    one_star = [r for r in stored if surveyed[r["session_id"]].stars == 1]
    assert one_star and all(r["value"] == 0.0 for r in one_star)


def test_a_value_outside_the_range_is_a_bad_row_the_others_are_stored_exit_1(cli, support_store, tmp_path):
    store_path, log = support_store
    with log.csat.open() as f:
        rows = list(csv.reader(f))
    rows[1][1], rows[2][1] = "11", "three"  # a 0-10 NPS value pasted in, and a word
    edited = tmp_path / "csat-edited.csv"
    with edited.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    result = cli("labels", "import", edited, "--key", "session_id", "--score", "stars", "--score-range", "1", "5",
                 "--store", store_path)
    assert result.exit_code == 1, result.output
    assert "2 bad rows" in result.stdout and "outside --score-range 1 5" in result.stdout
    good = len(rows) - 3
    assert f"2 of {len(rows) - 1} rows not applied (2 bad, 0 match no trace, 0 conflicting)" in result.stderr
    assert _query(store_path, "SELECT count(*) AS n FROM scores WHERE name = 'stars'")[0]["n"] == good
    assert _query(store_path, "SELECT max(value) AS hi, min(value) AS lo FROM scores")[0] == {"hi": 1.0, "lo": 0.0}
