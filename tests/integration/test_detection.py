"""Per-trace detection at ingest: findings made as traces arrive equal those of mining the whole store at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracegym.ingest.pipeline import expand_paths, ingest_paths
from tracegym.mining import MineConfig, mine_failures
from tracegym.store import open_store

TRACES = Path(__file__).resolve().parents[3] / "shared" / "data" / "traces"
TAU_FILE = TRACES / "tau-bench" / "gpt-4o-airline.json"


@pytest.fixture(scope="module")
def files() -> list[Path]:
    if not TRACES.is_dir():
        pytest.skip(f"real traces not found at {TRACES} (they live in ../shared beside the checkout)")
    # The τ-bench file first: each later file then adds fewer traces than the store holds, so ingest detects
    # them from copies of their rows rather than by detecting the whole store again.
    return [TAU_FILE, *(f for f in expand_paths([str(TRACES)]) if f != TAU_FILE)]


def _tables(store) -> dict[str, list[tuple]]:
    return {
        "failures": store.con.execute("SELECT * FROM failures ORDER BY ALL").fetchall(),
        "clusters": store.con.execute("SELECT * FROM clusters ORDER BY rank").fetchall(),
    }


@pytest.mark.slow  # ingests and mines all the real traces twice
def test_traces_detected_as_they_arrive_mine_like_the_whole_store(tmp_path, files):
    with open_store(tmp_path / "one-by-one.duckdb") as store:
        detections = [ingest_paths(store, [str(f)]).detection for f in files]
        mined = mine_failures(store)
        one_by_one = _tables(store)
    assert detections[0].whole_store and detections[0].traces > 0
    scoped = [d for d in detections[1:] if d.traces]
    assert scoped and not any(d.whole_store for d in scoped)
    assert mined.detection.traces == 0  # ingest left nothing to detect
    assert sum(d.traces for d in detections) == mined.traces

    with open_store(tmp_path / "at-once.duckdb") as store:
        ingest_paths(store, [str(f) for f in files])
        again = mine_failures(store, redetect=True)
        at_once = _tables(store)
    assert again.detection.whole_store and again.detection.traces == mined.traces
    assert one_by_one["failures"] and one_by_one["clusters"]
    assert one_by_one == at_once


def test_new_thresholds_detect_every_trace_again(tmp_path, files):
    with open_store(tmp_path / "store.duckdb") as store:
        ingest_paths(store, [str(files[0])])
        first = mine_failures(store)
        assert first.detection.traces == 0
        stricter = mine_failures(store, MineConfig(min_repeats=2))
        assert stricter.detection.whole_store and stricter.detection.traces == first.traces
        assert stricter.by_detector["repeated_call"] > first.by_detector["repeated_call"]
        ingest_paths(store, [str(files[1])])  # ingest detects with the thresholds of the last mining run
        assert mine_failures(store, MineConfig(min_repeats=2)).detection.traces == 0


def test_ingest_reports_how_many_traces_it_detected(tmp_path, files):
    with open_store(tmp_path / "store.duckdb") as store:
        data = ingest_paths(store, [str(files[0])]).to_dict()
        again = ingest_paths(store, [str(files[0])]).to_dict()
    assert data["traces_detected"] == data["traces"] > 0 and data["detection_error"] is None
    assert again["traces_detected"] == 0
