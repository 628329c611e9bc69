"""Gate references from sibling trials: another attempt at the same τ-bench task that succeeded from the same
point gives the reference a task's own trace cannot.

On the real traces, task 15's trial 1 (failed) and trial 3 (succeeded) both looked up the same user and the
same three reservations, then hit `Error: not enough seats on flight HAT290` with the same call; trial 3's
answer to the error drew no finding. Trial 1's own answer (message 18) drew none either, so it is its own
reference; the tests flag it as a reviewer or judge would (a finding at message 18), which leaves the sibling
as the only recorded answer at that point. Trial 2 also succeeded and hit the same error with the same call,
but from another state (it looked up one reservation, not three): it must not be used.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tracegym.evals.scorers.config import load_evals
from tracegym.store import open_store
from tracegym.tasks import load_task_set
from tracegym.tasks.generate import GenerateOptions, generate
from tracegym.tasks.probes import build_probes, load_sources, point_at

EVALS = Path(__file__).resolve().parents[2] / "examples" / "evals-learn.yaml"
TRIAL = "tau-bench:gpt-4o-airline:task-15:trial-{}"
CUT = 18  # trial 1's answer to its first `not enough seats` error


@pytest.fixture(scope="module")
def tau_store(tmp_path_factory) -> tuple[Path, str]:
    """τ-bench ingested and mined; the `not enough seats` tool-error cluster."""
    from typer.testing import CliRunner

    from tests.conftest import TRACES
    from tracegym.cli import app

    if not (TRACES / "tau-bench").is_dir():
        pytest.skip(f"real traces not found at {TRACES}")
    store = tmp_path_factory.mktemp("siblings") / "store.duckdb"
    for args in (["ingest", str(TRACES / "tau-bench")], ["mine", "failures"]):
        assert CliRunner().invoke(app, [*args, "--store", str(store)]).exit_code == 0
    with open_store(store, read_only=True) as st:
        [row] = st.query("SELECT cluster_id FROM clusters WHERE detector = 'tool_error' "
                         "AND signature = 'Error: not enough seats on flight <id>'")
    return store, row["cluster_id"]


def _task(store: Path, cluster: str):
    with open_store(store, read_only=True) as st:
        options = GenerateOptions(name="sib", clusters=[cluster], cuts="recovery", context="last-exchange")
        specs = generate(st, options, load_evals(EVALS)).specs
        [spec] = [s for s in specs if (s.provenance.trace_id, s.provenance.cut_message_idx) == (TRIAL.format(1), CUT)]
        return spec, load_sources(st, [spec])[spec.provenance.trace_id]


def _reference(spec, source):
    return next(p for p in build_probes(spec, source) if p.kind == "reference")


def test_a_successful_trial_at_the_same_point_gives_the_reference_only_when_the_own_answer_is_flawed(tau_store):
    spec, source = _task(*tau_store)
    assert [s.trace.trace_id for s in source.siblings] == [TRIAL.format(n) for n in (2, 3)]
    own = _reference(spec, source)
    assert (own.source, own.trace_id) == ("recorded_turn", TRIAL.format(1))
    source.findings.add(CUT)
    sibling = _reference(spec, source)
    assert (sibling.source, sibling.trace_id) == ("sibling_turn", TRIAL.format(3))
    [reply] = sibling.replies
    assert "not enough seats" in reply.text and not reply.tool_calls  # trial 3's message 36


def test_a_sibling_whose_context_differs_is_not_used(tau_store):
    spec, source = _task(*tau_store)
    source.findings.add(CUT)
    trial2, trial3 = source.siblings
    here = point_at(source.trace, CUT, "last-exchange")
    # Trial 2 made the same failing call and got the same error, from another state.
    there = point_at(trial2.trace, 22, "last-exchange")
    assert there.exchange == here.exchange and there.state != here.state
    source.siblings = [trial2]
    assert _reference(spec, source).source == "later_turn"  # trial 1's own later answer (message 22)
    # Trial 3 with another error text: the same state, another failing call context.
    calls = [dataclasses.replace(c, result="Error: flight HAT290 is not available") if c.message_idx == 34 else c
             for c in trial3.trace.calls]
    source.siblings = [dataclasses.replace(trial3, trace=dataclasses.replace(trial3.trace, calls=calls))]
    assert _reference(spec, source).source == "later_turn"
    source.siblings = [trial3]
    assert _reference(spec, source).source == "sibling_turn"


def test_generate_and_check_record_the_sibling_that_gave_the_reference(cli, tau_store, tmp_path):
    store, cluster = tau_store
    copy = tmp_path / "store.duckdb"
    copy.write_bytes(store.read_bytes())
    with open_store(copy) as st:  # a reviewer flags trial 1's own answer to the error
        st.query("INSERT INTO failures VALUES (?, 'review', 'flagged answer', 'flagged', ?, NULL)",
                   [TRIAL.format(1), CUT])
    out = tmp_path / "set"
    result = cli("tasks", "generate", "--allow-unredacted", "--evals", EVALS, "--out", out, "--store", copy,
                 "--json", "--cuts", "recovery", "--context", "last-exchange", "--cluster", cluster)
    assert result.exit_code == 0, result.output
    gates = json.loads(result.stdout)["gates"]
    assert gates["clusters"][cluster]["references"]["sibling_turn"] == 1
    task_set = load_task_set(out)
    [entry] = [e for e in task_set.manifest.tasks if e.reference == "sibling_turn"]
    assert (entry.trace_id, entry.reference_trace) == (TRIAL.format(1), TRIAL.format(3))
    assert all(e.reference_trace == e.trace_id for e in task_set.manifest.tasks if e.reference != "sibling_turn")
    check = cli("tasks", "check", out, "--store", copy, "--json")
    assert check.exit_code == 0, check.output
    [task] = [t for t in json.loads(check.stdout)["tasks"] if t["task_id"] == entry.task_id]
    probes = {p["kind"]: p for p in task["probes"]}
    # The sibling's answer earns handles_tool_error; retrying the failing call (trial 1's message 16) does not.
    assert (probes["reference"]["source"], probes["reference"]["trace_id"]) == ("sibling_turn", TRIAL.format(3))
    assert probes["reference"]["reward"] == 1.0 and task["passed"]
    assert probes["failing_action"]["reward"] == 0.0
