"""The replay harness off the recorded path, on real τ-bench traces and a support team's chat log: every call the
recording cannot answer gets an error in the tool's own style, and no answer tells the policy it is in a replay."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from tests.support_log import write_support_log
from tracegym.harnesses.replay import ReplayConfig, ReplayHarness
from tracegym.harnesses.toolcalls import ToolCall
from tracegym.store import open_store
from tracegym.tasks.spec import TaskSpec

GIVEAWAY = re.compile(r"replay|record|trace|environment|simulat", re.IGNORECASE)
UNSEEN = "no result for these arguments"


def _tasks(store_path: Path) -> list[TaskSpec]:
    """One replay task per stored trace with tool calls, cut after its last call: each call is off the path."""
    with open_store(store_path, read_only=True) as st:
        rows = st.query("SELECT trace_id, message_idx, call_id, name, arguments, result, is_error FROM tool_calls "
                        "ORDER BY trace_id, message_idx")
    calls: dict[str, list[dict]] = {}
    for r in rows:
        arguments = json.loads(r["arguments"]) if r["arguments"] else None
        calls.setdefault(r["trace_id"], []).append({**r, "arguments": arguments})
    return [TaskSpec.model_validate({
        "task_id": f"t-{i}", "split": "train", "harness": "replay", "replay": [
            {k: c[k] for k in ("message_idx", "call_id", "name", "arguments", "result", "is_error")} for c in made],
        "tools": [{"name": n, "parameters": {"type": "object"}, "source": "inferred"}
                  for n in sorted({c["name"] for c in made})],
        "prompt": {"messages": [{"role": "user", "content": "Go on."}]}, "scorer": {"evals": [{"name": "e"}]},
        "provenance": {"trace_id": trace_id, "format": "f", "source_task": trace_id,
                       "cut_message_idx": max(c["message_idx"] for c in made) + 1},
    }) for i, (trace_id, made) in enumerate(calls.items())]


def _answers(task: TaskSpec) -> tuple[dict[str, list[str]], ReplayHarness]:
    """Each tool of the task called again with its recorded arguments and with arguments never recorded."""
    harness = ReplayHarness(ReplayConfig())
    asyncio.run(harness.reset(task))
    answers: dict[str, list[str]] = {}
    for call in task.replay:
        for arguments in (call.arguments, {"id": "never-seen"}):
            answer = asyncio.run(harness.call_tool(ToolCall(call.name, arguments, "openai")))
            answers.setdefault(call.name, []).append(answer)
    return answers, harness


def _own_errors(task: TaskSpec, name: str) -> list[str]:
    return [c.result for c in task.replay if c.name == name and c.is_error and c.result]


def test_tau_bench_tools_answer_unseen_calls_as_their_own_errors(cli, traces_dir, store_path):
    assert cli("ingest", traces_dir / "tau-bench", "--store", store_path).exit_code == 0
    tasks = _tasks(store_path)
    styled = neutral = 0
    for task in tasks:
        answers, harness = _answers(task)
        trace_has_errors = any(c.is_error for c in task.replay)
        for name, said in answers.items():
            for answer in said:
                assert not GIVEAWAY.search(answer), answer
                if _own_errors(task, name) or trace_has_errors:  # τ-bench's errors all read "Error: ..."
                    assert answer == f"Error: {UNSEEN}", (name, answer)
                    styled += 1
                else:
                    assert answer == f"Error: {name}: {UNSEEN}", (name, answer)
                    neutral += 1
        # What left the path is counted in the episode's details, not told to the policy.
        assert harness.counts.replay_misses == 2 * len(task.replay) and harness.metrics["replay/missed_calls"]
    assert len(tasks) > 20 and styled > 0 and neutral > 0


def test_support_log_tools_answer_in_their_json_error_shapes(cli, tmp_path, store_path):
    log = write_support_log(tmp_path / "support", n_sessions=20, seed=1)
    assert cli("ingest", log.log, "--store", store_path).exit_code == 0
    seen: dict[str, set[str]] = {}
    for task in _tasks(store_path):
        answers, _ = _answers(task)
        for name, said in answers.items():
            for answer in said:
                assert not GIVEAWAY.search(answer), answer
                seen.setdefault(name, set()).add(answer)
    # The tool's own shape where it failed in the trace; a neutral error where nothing in the trace failed.
    assert seen["lookup_order"] == {json.dumps({"error": {"code": 404, "message": UNSEEN}}),
                                    f"Error: lookup_order: {UNSEEN}"}
    assert seen["validate_address"] == {json.dumps({"status": "error", "message": UNSEEN})}
    assert seen["handoff_to_human"] == {f"Error: handoff_to_human: {UNSEEN}"}
