"""The daily feed of `tracegym mine failures`: the real traces ingested over two days, and what day 2 added."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tracegym.cli import app
from tracegym.errors import ConfigError
from tracegym.mining.feed import parse_since
from tracegym.store import open_store


def _mine(cli, store_path: Path, *args: str) -> dict:
    result = cli("mine", "failures", "--store", store_path, "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _ingest(cli, store_path: Path, *paths: Path) -> None:
    result = cli("ingest", *paths, "--store", store_path, "--json")
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def mined_two_days(tmp_path_factory):
    """Day 1: the swe-agent runs and τ-bench trials 0-1; day 2: τ-bench trials 2-3. Each day mined."""
    from tests.conftest import TRACES

    if not TRACES.is_dir():
        pytest.skip(f"real traces not found at {TRACES}")
    runner = CliRunner()

    def cli(*args):
        return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)

    tmp = tmp_path_factory.mktemp("feed")
    runs = json.loads((TRACES / "tau-bench" / "gpt-4o-airline.json").read_text())
    days = []
    for day, trials in ((1, {0, 1}), (2, {2, 3})):
        folder = tmp / f"day{day}"
        folder.mkdir()
        (folder / "gpt-4o-airline.json").write_text(json.dumps([r for r in runs if r["trial"] in trials]))
        days.append(folder)
    store_path = tmp / "store.duckdb"
    _ingest(cli, store_path, TRACES / "swe-agent", days[0])
    day1 = _mine(cli, store_path)
    _ingest(cli, store_path, days[1])
    day2 = _mine(cli, store_path)
    return store_path, day1, day2


@pytest.fixture
def two_days(mined_two_days, tmp_path):
    """A copy of the two days' store for one test, with both mining results."""
    store_path, day1, day2 = mined_two_days
    copy = tmp_path / "two-days.duckdb"
    shutil.copyfile(store_path, copy)
    return copy, day1, day2


def test_mining_reports_new_clusters_and_grown_shares_since_the_previous_run(two_days):
    _, day1, day2 = two_days
    assert day1["changes"]["baseline_run"] is None  # the first run has nothing to compare with
    before = {c["cluster_id"]: c["n_traces"] for c in day1["clusters"]}
    after = {c["cluster_id"]: c["n_traces"] for c in day2["clusters"]}
    n1, n2 = day1["traces"], day2["traces"]
    changes = day2["changes"]
    assert changes["new_traces"] == n2 - n1 == 100
    assert [c["cluster_id"] for c in changes["new_clusters"]] == [
        c["cluster_id"] for c in day2["clusters"] if c["cluster_id"] not in before]
    grown = {c for c in after if c in before and after[c] / n2 > before[c] / n1}
    assert {c["cluster_id"] for c in changes["grown_clusters"]} == grown
    assert changes["new_clusters"] and grown  # the real data has both
    for c in changes["grown_clusters"]:
        assert (c["n_traces_before"], c["n_traces"]) == (before[c["cluster_id"]], after[c["cluster_id"]])
        assert c["share"] == pytest.approx(after[c["cluster_id"]] / n2)
    rises = [c["share"] - c["share_before"] for c in changes["grown_clusters"]]
    assert rises == sorted(rises, reverse=True)


def test_since_picks_the_last_run_before_the_window(cli, two_days):
    store_path, day1, day2 = two_days
    # Nothing was mined before the last day: every cluster counts as new.
    recent = _mine(cli, store_path, "--since", "1d")["changes"]
    assert recent["baseline_run"] is None and len(recent["new_clusters"]) == len(day2["clusters"])
    with open_store(store_path) as st:  # day 1 was two days ago
        st.query("UPDATE mining_runs SET mined_at = mined_at - INTERVAL 2 DAY WHERE n_traces = ?", [day1["traces"]])
        assert st.scalar("SELECT count(*) FROM mining_runs") == 3
    window = _mine(cli, store_path, "--since", "1d")["changes"]
    assert window["new_traces"] == 100
    assert window["new_clusters"] == day2["changes"]["new_clusters"]
    assert window["grown_clusters"] == day2["changes"]["grown_clusters"]
    dated = _mine(cli, store_path, "--since", f"{datetime.now() - timedelta(days=1):%Y-%m-%d %H:%M}")["changes"]
    assert dated["baseline_run"] == window["baseline_run"]
    # The default compares with the run just before: the store has not changed since.
    latest = _mine(cli, store_path)["changes"]
    assert latest["new_traces"] == 0 and latest["new_clusters"] == [] and latest["grown_clusters"] == []


def test_mining_table_shows_what_changed_and_bad_windows_exit_2(cli, two_days):
    store_path, day1, day2 = two_days
    with open_store(store_path) as st:
        st.query("UPDATE mining_runs SET mined_at = mined_at - INTERVAL 2 DAY WHERE n_traces = ?", [day1["traces"]])
    table = cli("mine", "failures", "--store", store_path, "--since", "1d")
    assert table.exit_code == 0
    assert "New clusters" in table.stdout and "share grew" in table.stdout
    assert f"{len(day2['changes']['new_clusters'])} new clusters" in table.stderr.replace("\n", " ")
    bad = cli("mine", "failures", "--store", store_path, "--since", "yesterday")
    assert bad.exit_code == 2 and "--since 'yesterday'" in bad.stderr


def test_parse_since():
    now = datetime(2026, 12, 3, 12, 0)
    assert parse_since("1d", now) == datetime(2026, 12, 2, 12, 0)
    assert parse_since("12h", now) == datetime(2026, 12, 3, 0, 0)
    assert parse_since("2w", now) == datetime(2026, 11, 19, 12, 0)
    assert parse_since("2026-12-01", now) == datetime(2026, 12, 1)
    with pytest.raises(ConfigError):
        parse_since("-1d", now)
