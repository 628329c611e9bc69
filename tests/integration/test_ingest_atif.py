"""ATIF trajectories written with the real `atif` models (Harbor's pydantic package), ingested and compared field
by field with what the trajectories say; also as a Harbor trial folder whose verifier wrote the reward."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tracegym.ingest.pipeline import ingest_paths
from tracegym.store import Store, open_store

atif = pytest.importorskip("atif", reason="the atif package is not installed: pip install -e '.[atif]'")

SYSTEM = "You are a refund agent. Use the tools."
TOOLS = [{"type": "function", "function": {"name": "lookup_order", "parameters": {
    "type": "object", "properties": {"order_id": {"type": "string"}}}}}]
REFUND_ERROR = '{"error": {"code": 504, "message": "upstream timeout"}}'
REFUNDED = '{"status": "refunded", "amount": 42.5}'


def trajectory(n: int, fails: bool, reward: float | None) -> Any:
    """A 3-call refund conversation: look the order up, refund it (an error when `fails`), answer."""
    from atif import Agent, Trajectory
    from atif.final_metrics import FinalMetrics
    from atif.metrics import Metrics
    from atif.observation import Observation
    from atif.observation_result import ObservationResult
    from atif.step import Step
    from atif.tool_call import ToolCall

    t0 = f"2026-03-0{n}T10:00:0"
    refund = REFUND_ERROR if fails else REFUNDED
    steps = [
        Step(step_id=1, source="system", message=SYSTEM, timestamp=t0 + "0Z"),
        Step(step_id=2, source="user", message=f"Refund order A{n}, please.", timestamp=t0 + "1Z"),
        Step(step_id=3, source="agent", message="", timestamp=t0 + "2Z", model_name="gpt-refund",
             tool_calls=[ToolCall(tool_call_id=f"c{n}-1", function_name="lookup_order",
                                  arguments={"order_id": f"A{n}"})],
             observation=Observation(results=[ObservationResult(source_call_id=f"c{n}-1",
                                                                content='{"order_id": "A%d", "paid": 42.5}' % n)]),
             metrics=Metrics(prompt_tokens=120, completion_tokens=18)),
        Step(step_id=4, source="agent", message="Refunding it now.", timestamp=t0 + "4Z", model_name="gpt-refund",
             tool_calls=[ToolCall(tool_call_id=f"c{n}-2", function_name="refund", arguments={"amount": 42.5})],
             observation=Observation(results=[ObservationResult(source_call_id=f"c{n}-2", content=refund)]),
             metrics=Metrics(prompt_tokens=160, completion_tokens=22)),
        Step(step_id=5, source="agent", message="Sorry, the refund failed." if fails else "Refunded 42.50.",
             timestamp=t0 + "6Z", model_name="gpt-refund", metrics=Metrics(prompt_tokens=200, completion_tokens=9)),
    ]
    extra = {"reward": reward} if reward is not None else None
    return Trajectory(schema_version="ATIF-v1.8", session_id=f"s{n}", trajectory_id=f"t{n}",
                      agent=Agent(name="refund-bot", version="0.3", model_name="gpt-refund", tool_definitions=TOOLS),
                      steps=steps, final_metrics=FinalMetrics(total_prompt_tokens=480, total_completion_tokens=49,
                                                              total_steps=5, extra=extra))


def write(path: Path, *trajectories: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(t.to_json_dict()) + "\n" for t in trajectories))
    return path


def check(store: Store, n: int, fails: bool, reward: float | None) -> None:
    tid = f"atif:t{n}"
    messages = store.con.execute("SELECT role, content, tool_call_id, name, input_tokens, output_tokens, ts "
                                 "FROM messages WHERE trace_id = ? ORDER BY idx", [tid]).fetchall()
    assert [m[:4] for m in messages] == [
        ("system", SYSTEM, None, None), ("user", f"Refund order A{n}, please.", None, None),
        ("assistant", None, None, None), ("tool", '{"order_id": "A%d", "paid": 42.5}' % n, f"c{n}-1", "lookup_order"),
        ("assistant", "Refunding it now.", None, None),
        ("tool", REFUND_ERROR if fails else REFUNDED, f"c{n}-2", "refund"),
        ("assistant", "Sorry, the refund failed." if fails else "Refunded 42.50.", None, None)]
    assert [(m[4], m[5]) for m in messages if m[0] == "assistant"] == [(120, 18), (160, 22), (200, 9)]
    assert str(messages[6][6]) == f"2026-03-0{n} 10:00:06"
    calls = store.con.execute("SELECT message_idx, call_id, name, arguments::VARCHAR, result_message_idx, is_error "
                              "FROM tool_calls WHERE trace_id = ? ORDER BY message_idx", [tid]).fetchall()
    assert calls == [(2, f"c{n}-1", "lookup_order", f'{{"order_id":"A{n}"}}', 3, False),
                     (4, f"c{n}-2", "refund", '{"amount":42.5}', 5, fails)]
    outcome, session, model, tools = store.con.execute(
        "SELECT outcome, session_id, model, tools::VARCHAR FROM traces WHERE trace_id = ?", [tid]).fetchone()
    assert (session, model, json.loads(tools)) == (f"s{n}", "gpt-refund", TOOLS)
    scores = store.con.execute("SELECT name, value, kind FROM scores WHERE trace_id = ?", [tid]).fetchall()
    if reward is None:
        assert (outcome, scores) == (None, [])
    else:
        assert scores == [("reward", reward, "environment")]
        assert outcome == ("success" if reward >= 1 else "failure")


def test_atif_trajectories_are_read_step_by_step(tmp_path: Path) -> None:
    path = write(tmp_path / "trajectories.jsonl", trajectory(1, False, 1.0), trajectory(2, True, 0.0),
                 trajectory(3, False, None))
    store = open_store(tmp_path / "s.duckdb")
    summary = ingest_paths(store, [str(path)])
    assert [f.format for f in summary.files] == ["atif"] and summary.total("errors") == 0
    for n, fails, reward in ((1, False, 1.0), (2, True, 0.0), (3, False, None)):
        check(store, n, fails, reward)


def test_a_harbor_trial_gives_its_trajectory_the_verifiers_reward(tmp_path: Path) -> None:
    """A Harbor job folder: each trial's `agent/trajectory.json` (one document) and `verifier/reward.txt`."""
    for n, fails in ((1, False), (2, True)):
        trial = tmp_path / "job" / f"refund__{n}"
        (trial / "agent").mkdir(parents=True)
        (trial / "agent" / "trajectory.json").write_text(json.dumps(trajectory(n, fails, None).to_json_dict(),
                                                                    indent=2))
        (trial / "verifier").mkdir()
        (trial / "verifier" / "reward.txt").write_text("0\n" if fails else "1\n")
    store = open_store(tmp_path / "s.duckdb")
    assert ingest_paths(store, [str(tmp_path / "job")]).total("errors") == 0
    check(store, 1, False, 1.0)
    check(store, 2, True, 0.0)


def test_atif_in_three_files_ingested_newest_first_is_the_whole(tmp_path: Path) -> None:
    made = [(1, False, 1.0), (2, True, 0.0), (3, False, None)]
    whole = open_store(tmp_path / "whole.duckdb")
    ingest_paths(whole, [str(write(tmp_path / "all.jsonl", *(trajectory(*m) for m in made)))])
    pieces = [write(tmp_path / f"part{i}.json", trajectory(*m)) for i, m in enumerate(made)]
    store = open_store(tmp_path / "s.duckdb")
    for piece in reversed(pieces):
        assert ingest_paths(store, [str(piece)]).total("errors") == 0
    q = {"traces": "SELECT * EXCLUDE (source_id) FROM traces", "messages": "SELECT * FROM messages",
         "tool_calls": "SELECT * FROM tool_calls", "scores": "SELECT * FROM scores"}
    assert {k: sorted(store.con.execute(v).fetchall(), key=repr) for k, v in q.items()} == \
        {k: sorted(whole.con.execute(v).fetchall(), key=repr) for k, v in q.items()}


def test_a_file_that_is_not_a_trajectory_is_no_atif(tmp_path: Path) -> None:
    """Detection needs the schema version beside agent and steps; a trajectory with a bad step is an ingest error
    naming it, and the other trajectories of the file are stored."""
    good = trajectory(1, False, 1.0).to_json_dict()
    bad = {**trajectory(2, False, 1.0).to_json_dict()}
    bad["steps"] = [*bad["steps"], {"step_id": 6, "source": "robot", "message": "?"}]
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    store = open_store(tmp_path / "s.duckdb")
    summary = ingest_paths(store, [str(path)])
    assert summary.total("traces") == 1 and summary.total("errors") == 1
    assert "steps[5].source must be system, user or agent" in store.scalar("SELECT error FROM ingest_errors")
