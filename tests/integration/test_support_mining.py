"""Mining a support team's own chat log (tests/support_log.py) finds its failure families, one cluster each.

The log is ingested, its CSAT export imported as outcomes and scores (keyed by the trace each session became), and
mined through the CLI. Each expectation is the generator's truth: which sessions belong to which family.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.support_log import SupportLog, write_support_log
from tracegym.cli import app
from tracegym.store import open_store
from tracegym.tasks import load_task_set

EVALS = """\
version: 1
evals:
  - name: mentions_the_order
    kind: match
    mode: contains
    target: assistant_text
    expected: order
    applies_to: {harnesses: [replay, chat]}
"""
GENERATE = ("tasks", "generate", "--no-gates", "--allow-unredacted")


def _cli(*args: Any) -> Any:
    result = CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module", params=["openai", "anthropic"])
def mined(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp(f"support-{request.param}")
    log = write_support_log(folder / "log", style=request.param)
    store = folder / "store.duckdb"
    _cli("ingest", log.log, "--store", store)
    traces = _traces_by_session(store, log)
    labels = folder / "labels.csv"
    with log.csat.open() as f, labels.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["trace_id", "outcome", "csat"])
        for row in csv.DictReader(f):
            outcome = "success" if row["resolution"] == "resolved" else "failure"
            writer.writerow([traces[row["session_id"]], outcome, (int(row["stars"]) - 1) / 4])
    _cli("labels", "import", labels, "--key", "trace_id", "--match", "trace", "--outcome", "outcome",
         "--score", "csat", "--store", store)
    data = json.loads(_cli("mine", "failures", "--store", store, "--json").stdout)
    (folder / "evals.yaml").write_text(EVALS)
    return {"store": store, "log": log, "traces": traces, "data": data, "folder": folder}


def _traces_by_session(store: Path, log: SupportLog) -> dict[str, str]:
    """The trace each session became, found by its first user message (each names its own order)."""
    with open_store(store, read_only=True) as st:
        firsts = {r["content"]: r["trace_id"] for r in st.query(
            "SELECT trace_id, content FROM messages WHERE role = 'user' "
            "QUALIFY idx = min(idx) OVER (PARTITION BY trace_id)")}
    return {s.session_id: firsts[s.messages[1]["content"]] for s in log.sessions}


def _family(mined: dict[str, Any], *families: str) -> set[str]:
    return {mined["traces"][s.session_id] for f in families for s in mined["log"].by_family(f)}


def _cluster(mined: dict[str, Any], detector: str, signature: str) -> dict[str, Any]:
    (found,) = [c for c in mined["data"]["clusters"] if c["detector"] == detector and c["signature"] == signature]
    return found


def _traces_of(mined: dict[str, Any], cluster: dict[str, Any]) -> set[str]:
    with open_store(mined["store"], read_only=True) as st:
        return {r["trace_id"] for r in st.query("SELECT trace_id FROM failures WHERE cluster_id = ?",
                                                [cluster["cluster_id"]])}


def test_a_json_error_response_is_a_tool_error_named_by_its_message(mined):
    cluster = _cluster(mined, "tool_error", "upstream timeout")
    assert _traces_of(mined, cluster) == _family(mined, "upstream_timeout")
    with open_store(mined["store"], read_only=True) as st:  # flagged at ingest too
        flags = st.query("SELECT DISTINCT is_error FROM tool_calls WHERE contains(result, 'upstream timeout')")
    assert flags == [{"is_error": True}]


def test_one_validation_error_across_country_codes_is_one_cluster(mined):
    countries = {json.loads(m["content"])["message"].rsplit(" ", 1)[1]
                 for s in mined["log"].by_family("address_invalid") for m in s.messages if m["role"] == "tool"}
    assert len(countries) == 5
    postal = [c for c in mined["data"]["clusters"] if "postal code" in c["signature"]]
    assert [c["signature"] for c in postal] == ["invalid postal code for country <country>"]
    assert _traces_of(mined, postal[0]) == _family(mined, "address_invalid")


def test_giving_up_without_offering_a_person_is_found_and_a_hand_off_is_not(mined):
    cluster = _cluster(mined, "gave_up", "gave up: said it cannot help and offered no person")
    # Both families end on "I'm sorry, ... I can't help with ..." with no hand-off; the hand-off family is apart.
    assert _traces_of(mined, cluster) == _family(mined, "gave_up", "address_invalid")
    assert not _traces_of(mined, cluster) & _family(mined, "handed_off", "resolved", "upstream_timeout")


def test_catch_all_clusters_rank_after_the_specific_ones(mined):
    clusters = mined["data"]["clusters"]
    flags = [c["catch_all"] for c in clusters]
    assert any(flags) and not all(flags) and flags == sorted(flags)  # every specific one first
    assert {c["detector"] for c in clusters if c["catch_all"]} == {"outcome", "negative_feedback"}
    catch_all = next(c for c in clusters if c["catch_all"])
    assert catch_all["score"] > min(c["score"] for c in clusters if not c["catch_all"])  # not a matter of score
    table = _cli("mine", "failures", "--store", mined["store"])
    assert "catch-all" in table.stdout and "rank after the specific ones" in table.stderr
    shown = json.loads(_cli("failures", "show", catch_all["cluster_id"], "--store", mined["store"], "--json").stdout)
    assert shown["cluster"]["catch_all"] is True
    specific = sum(not f for f in flags)
    out = mined["folder"] / "top"
    made = json.loads(_cli(*GENERATE, "--top", specific, "--evals", mined["folder"] / "evals.yaml", "--out", out,
                           "--store", mined["store"], "--json").stdout)
    assert [c["cluster_id"] for c in made["clusters"]] == [c["cluster_id"] for c in clusters[:specific]]


def test_near_duplicate_tasks_are_merged_and_counted(mined):
    cluster = _cluster(mined, "gave_up", "gave up: said it cannot help and offered no person")
    args = ("--cluster", cluster["cluster_id"], "--evals", mined["folder"] / "evals.yaml", "--store", mined["store"])
    kept = json.loads(_cli(*GENERATE, *args, "--out", mined["folder"] / "kept", "--keep-near-duplicates",
                           "--json").stdout)
    traces = _family(mined, "gave_up", "address_invalid")
    assert kept["tasks"] == len(traces) and kept["near_duplicates_merged"] == 0
    # The refund requests differ in amounts, order ids and e-mail addresses alone: one task. The address requests
    # differ in their country code too: one task per country.
    countries = {s.messages[1]["content"].rsplit(" ", 1)[1] for s in mined["log"].by_family("address_invalid")}
    tasks, merged = 1 + len(countries), len(traces) - 1 - len(countries)
    table = _cli(*GENERATE, *args, "--out", mined["folder"] / "merged")
    assert f"merged {merged} near-duplicate tasks" in " ".join(table.stderr.split())
    task_set = load_task_set(mined["folder"] / "merged")
    assert len(task_set.tasks) == tasks and task_set.manifest.counts["near_duplicates_merged"] == merged
    assert sum(len(t.provenance.duplicates) for t in task_set.tasks) == merged
    again = json.loads(_cli(*GENERATE, *args, "--out", mined["folder"] / "merged", "--force", "--json").stdout)
    assert (again["tasks"], again["near_duplicates_merged"]) == (tasks, merged)
