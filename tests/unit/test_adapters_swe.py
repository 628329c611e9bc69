"""mini-swe-agent, SWE-agent and OpenHands adapters on real trajectories and on small hand-written ones."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tracegym.ingest.adapters.base import SourceFile
from tracegym.ingest.adapters.swe_agent import command_name, documented_commands
from tracegym.ingest.normalize import link_tool_results
from tracegym.ingest.pipeline import detect
from tracegym.ingest.reading import take_sample
from tracegym.ingest.records import RawRecord, Trace

MINI_ID = "django__django-14155"  # unresolved, with five format-error corrections
PYDICOM = "gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1/pydicom__pydicom-1458.traj"
FC_REUSED_IDS = (
    "replay__marshmallow-code__marshmallow-1867__function_calling_replace__install-1/marshmallow-code__marshmallow-1867.traj"
)


def load(path: Path) -> list[Trace]:
    """What the pipeline does to one file before storing it: detect, split, normalize, link."""
    sample = take_sample(path)
    adapter = detect(path, sample)
    assert adapter is not None, f"no adapter claimed {path}"
    src = SourceFile(path, "test", sample)
    traces = []
    for rec in adapter.records(src):
        assert isinstance(rec, RawRecord), rec
        for trace in adapter.to_traces(rec, src):
            link_tool_results(trace)
            traces.append(trace)
    return traces


def only(path: Path) -> Trace:
    traces = load(path)
    assert len(traces) == 1
    return traces[0]


def write_json(path: Path, value: object, jsonl: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = value if jsonl else [value]
    path.write_text("\n".join(json.dumps(v) for v in rows) + "\n")
    return path


# --- mini-swe-agent ---------------------------------------------------------------------------------


def test_mini_real_trace_calls_observations_and_report(traces_dir: Path) -> None:
    path = traces_dir / "mini-swe-agent" / "trajs" / f"{MINI_ID}.traj.json"
    raw = json.loads(path.read_text())
    report = json.loads((traces_dir / "mini-swe-agent" / "reports" / f"{MINI_ID}.report.json").read_text())
    trace = only(path)

    assert trace.format == "mini-swe-agent" and trace.session_id == MINI_ID
    assert trace.model == raw["info"]["config"]["model"]["model_name"]
    assert trace.outcome == ("success" if report["resolved"] else "failure") == "failure"
    assert trace.metadata["tests_status"] == report["tests_status"]
    assert trace.metadata["exit_status"] == raw["info"]["exit_status"]
    scores = {s.name: s.value for s in trace.scores}
    f2p = report["tests_status"]["FAIL_TO_PASS"]
    assert scores["resolved"] == 0.0
    assert scores["fail_to_pass_pass_rate"] == len(f2p["success"]) / (len(f2p["success"]) + len(f2p["failure"]))

    # One message per source message, text unchanged; observations become linked tool messages.
    assert [m.content for m in trace.messages] == [m["content"] for m in raw["messages"]]
    observations = [m for m in raw["messages"] if m["role"] == "user" and m["content"].startswith("<returncode>")]
    assert len(trace.tool_calls) == len(observations) + 1  # + the submission, answered by the patch itself
    for call in trace.tool_calls:
        assert call.name == "bash" and set(call.arguments) == {"command"}
        result = trace.messages[call.result_message_idx]
        assert result.role == "tool" and result.tool_call_id == call.call_id and call.result == result.content
        assert f"```bash\n{call.arguments['command']}" in trace.messages[call.message_idx].content
        code = re.match(r"<returncode>(-?\d+)</returncode>", result.content)
        assert call.exit_code == (int(code.group(1)) if code else None)
        if call.exit_code:
            assert call.is_error
    corrections = [m for m in trace.messages if m.content.startswith("Please always provide EXACTLY ONE action")]
    assert len(corrections) == 5 and all(m.role == "user" for m in corrections)
    assert not {c.result_message_idx for c in trace.tool_calls} & {trace.messages.index(m) for m in corrections}
    usage = raw["messages"][2]["extra"]["response"]["usage"]
    assert (trace.messages[2].input_tokens, trace.messages[2].output_tokens) == (
        usage["prompt_tokens"], usage["completion_tokens"])


def test_mini_outcome_falls_back_to_results_summary_then_to_null(traces_dir: Path, tmp_path: Path) -> None:
    src = traces_dir / "mini-swe-agent" / "trajs" / f"{MINI_ID}.traj.json"
    with_summary = tmp_path / "run" / "trajs" / src.name
    with_summary.parent.mkdir(parents=True)
    shutil.copy(src, with_summary)
    shutil.copy(traces_dir / "mini-swe-agent" / "results_summary.json", tmp_path / "run" / "results_summary.json")
    summary = json.loads((traces_dir / "mini-swe-agent" / "results_summary.json").read_text())
    listed = next(i for i in summary["instances"] if i["instance_id"] == MINI_ID)

    trace = only(with_summary)
    assert trace.outcome == ("success" if listed["resolved"] else "failure")
    assert trace.metadata["outcome_source"].endswith("results_summary.json")
    assert trace.metadata["tests_status"] is None

    alone = tmp_path / "alone" / src.name
    alone.parent.mkdir()
    shutil.copy(src, alone)
    trace = only(alone)
    assert trace.outcome is None and not trace.scores and "outcome_source" not in trace.metadata


def _mini_run(messages: list[dict]) -> dict:
    return {
        "trajectory_format": "mini-swe-agent-1",
        "instance_id": "demo__demo-1",
        "info": {"exit_status": "Submitted", "config": {"model": {"model_name": "test-model"}}},
        "messages": messages,
    }


def test_mini_timeouts_and_format_errors_stay_harness_messages(tmp_path: Path) -> None:
    block = "THOUGHT: run it\n\n```bash\n{}\n```"
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "<pr_description>fix it</pr_description>"},
        {"role": "assistant", "content": block.format("sleep 999")},
        {"role": "user", "content": "The last command <command>sleep 999</command> timed out and has been killed."},
        {"role": "assistant", "content": block.format("ls") + "\n\n" + block.format("pwd")},
        {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks, found 2 actions."},
        {"role": "assistant", "content": block.format("python run.py")},
        {"role": "user", "content": "<returncode>2</returncode>\n<output>\nboom\n</output>"},
    ]
    trace = only(write_json(tmp_path / "x.traj.json", _mini_run(messages)))

    assert [m.role for m in trace.messages] == ["system", "user", "assistant", "user", "assistant", "user",
                                                "assistant", "tool"]
    timed_out, ran = trace.tool_calls
    assert timed_out.arguments == {"command": "sleep 999"} and timed_out.is_error and timed_out.result is None
    assert ran.arguments == {"command": "python run.py"} and ran.exit_code == 2 and ran.is_error
    assert ran.result_message_idx == 7 and trace.messages[7].tool_call_id == ran.call_id
    assert trace.trace_id == "mini-swe-agent:test-model:demo__demo-1" and trace.outcome is None


def test_mini_tool_calling_messages_keep_their_ids_and_return_codes(tmp_path: Path) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls /nope"}'}}
    messages = [
        {"role": "user", "content": "list it"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ls: cannot access", "extra": {"returncode": 2}},
    ]
    trace = only(write_json(tmp_path / "y.traj.json", _mini_run(messages)))

    (made,) = trace.tool_calls
    assert made.call_id == "call_1" and made.arguments == {"command": "ls /nope"}
    assert made.result_message_idx == 2 and made.exit_code == 2 and made.is_error


def test_mini_wrong_types_raise_with_the_field_named(tmp_path: Path) -> None:
    bad = _mini_run([{"role": "assistant", "content": "x", "extra": {"response": {"usage": "lots"}}}])
    path = write_json(tmp_path / "bad.traj.json", bad)
    with pytest.raises(ValueError, match=r"messages\[0\]\.extra\.response\.usage"):
        load(path)


# --- SWE-agent --------------------------------------------------------------------------------------


def test_swe_agent_history_demo_and_command_names(traces_dir: Path) -> None:
    path = traces_dir / "swe-agent" / "tests" / "test_data" / "trajectories" / PYDICOM
    raw = json.loads(path.read_text())
    trace = only(path)

    assert trace.trace_id == f"swe-agent:{path.parent.name}/pydicom__pydicom-1458"
    assert trace.model == "gpt4" and trace.outcome is None
    assert trace.metadata["exit_status"] == raw["info"]["exit_status"] == "submitted"
    assert trace.metadata["submission"] == raw["info"]["submission"]
    assert [m.content for m in trace.messages] == [h["content"] for h in raw["history"]]
    # The demonstration stays in the prompt but yields no calls or results.
    assert trace.metadata["demo_message_idxs"] == [1] and trace.messages[1].role == "user"
    assert all(1 not in (c.message_idx, c.result_message_idx) for c in trace.tool_calls)

    actions = [h["action"] for h in raw["history"] if h["role"] == "assistant"]
    assert [c.arguments["command"] for c in trace.tool_calls] == [a.strip() for a in actions]
    names = {c.arguments["command"].split()[0]: c.name for c in trace.tool_calls}
    assert names["create"] == "create" and names["edit"] == "edit" and names["submit"] == "submit"
    assert names["python"] == "bash"
    for call in trace.tool_calls[:-1]:  # the final submit ends the run unanswered
        assert call.result_message_idx == call.message_idx + 1
        assert trace.messages[call.result_message_idx].role == "tool"
    assert trace.tool_calls[-1].result is None


def test_swe_agent_function_calling_with_reused_ids_links_in_order(traces_dir: Path) -> None:
    path = traces_dir / "swe-agent" / "trajectories" / "demonstrations" / FC_REUSED_IDS
    raw = json.loads(path.read_text())
    trace = only(path)

    ids = [c.call_id for c in trace.tool_calls]
    assert len(set(ids)) < len(ids), "this demonstration reuses call ids; the test relies on it"
    calls = [tc for h in raw["history"] for tc in h.get("tool_calls") or []]
    assert [c.name for c in trace.tool_calls] == [tc["function"]["name"] for tc in calls]
    assert trace.tool_calls[0].arguments == json.loads(calls[0]["function"]["arguments"])
    for call in trace.tool_calls:
        assert call.result_message_idx == call.message_idx + 1
        assert call.result == raw["history"][call.result_message_idx]["content"]
    rejected = [c for c in trace.tool_calls if c.result.startswith("Your proposed edit has introduced")]
    assert rejected and all(c.is_error for c in rejected)
    steps = raw["trajectory"]
    first_result = trace.messages[trace.tool_calls[0].result_message_idx]
    assert first_result.latency_ms == pytest.approx(steps[0]["execution_time"] * 1000)


def test_swe_agent_documented_commands_in_both_doc_styles() -> None:
    yaml_style = "COMMANDS:\nopen:\n  docstring: opens\n  signature: open <path>\n\nsubmit:\n  signature: submit\n"
    one_line = ("COMMANDS:\nopen <path> [<line_number>] - opens a file\nsubmit - submits\n"
                "edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit - edits\n\n\nPlease note: python x\n")
    assert {"open", "submit"} <= documented_commands(yaml_style)
    commands = documented_commands(one_line)
    assert {"open", "submit", "edit"} <= commands and "Please" not in commands
    assert command_name("open foo.py 10", commands) == "open"
    assert command_name("python reproduce.py", commands) == "bash"
    assert command_name("   ", commands) == "bash"


# --- OpenHands --------------------------------------------------------------------------------------


def test_openhands_actions_observations_and_errors(traces_dir: Path) -> None:
    path = traces_dir / "openhands" / "basic_gui_mode.json"
    events = json.loads(path.read_text())
    trace = only(path)

    assert trace.trace_id == "openhands:basic_gui_mode" and trace.outcome is None
    assert trace.model == "claude-3-5-sonnet-20241022"
    skipped = [e for e in events if e.get("observation") in ("agent_state_changed", "null")
               or e.get("action") == "change_agent_state"]
    assert trace.metadata["skipped_events"] == len(skipped) == 8
    assert [m.role for m in trace.messages] == ["user"] + ["assistant", "tool"] * 4 + ["assistant"]
    assert trace.messages[0].content.startswith("I want to create a VueJS app")

    calls = {c.call_id: c for c in trace.tool_calls}
    for event in events:
        meta = event.get("tool_call_metadata")
        if "observation" in event and meta:
            call = calls[meta["tool_call_id"]]
            result = trace.messages[call.result_message_idx]
            assert result.role == "tool" and result.tool_call_id == call.call_id
            assert call.result == event["content"] and call.name == meta["function_name"]
            assert call.exit_code == event["extras"].get("metadata", {}).get("exit_code")
    first = trace.tool_calls[0]
    assert first.name == "execute_bash" and first.arguments == {"command": "mkdir -p /workspace/todo-app"}
    assert first.exit_code == 0 and not first.is_error
    server = trace.tool_calls[-1]
    assert server.exit_code == -1 and server.is_error  # killed after 30 s without output
    assert trace.messages[1].input_tokens == 3439 and trace.messages[1].output_tokens == 104


def _event(i: int, **fields: object) -> dict:
    return {"id": i, "timestamp": f"2025-01-01T00:00:{i:02d}", **fields}


def test_openhands_links_by_cause_and_keeps_unlinked_feedback(tmp_path: Path) -> None:
    events = [
        _event(0, source="user", action="message", args={"content": "run the tests"}),
        _event(1, source="agent", action="run", args={"command": "pytest", "thought": "let me run them"}),
        _event(2, source="agent", observation="error", cause=1, content="sandbox crashed", extras={}),
        _event(3, source="environment", observation="error", content="agent stuck in a loop", extras={}),
    ]
    trace = only(write_json(tmp_path / "session-abc.json", events))

    (call,) = trace.tool_calls
    assert call.name == "run" and call.call_id == "event-1" and call.arguments == {"command": "pytest"}
    assert call.is_error and call.result == "sandbox crashed"
    assert trace.messages[1].content == "let me run them"
    assert [m.role for m in trace.messages] == ["user", "assistant", "tool", "user"]
    assert trace.messages[3].content == "agent stuck in a loop"
    assert trace.started_at.second == 0 and trace.ended_at.second == 3


def test_openhands_eval_output_jsonl_one_trace_per_line(traces_dir: Path, tmp_path: Path) -> None:
    history = json.loads((traces_dir / "openhands" / "basic.json").read_text())
    rows = [{"instance_id": f"repo__repo-{i}", "history": history, "test_result": {"ok": i}} for i in (1, 2)]
    traces = load(write_json(tmp_path / "output.jsonl", rows, jsonl=True))

    assert [t.trace_id for t in traces] == [f"openhands:claude-3-5-sonnet-20241022:repo__repo-{i}" for i in (1, 2)]
    assert traces[1].metadata["test_result"] == {"ok": 2} and traces[1].outcome is None
    assert len(traces[0].tool_calls) == 2


# --- companions -------------------------------------------------------------------------------------


@pytest.mark.parametrize("relative", [
    "mini-swe-agent/results_summary.json",
    f"mini-swe-agent/reports/{MINI_ID}.report.json",
    "swe-agent/tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00"
    "__install-1/all_preds.jsonl",
])
def test_swe_bench_companions_are_claimed_not_parsed(traces_dir: Path, relative: str) -> None:
    path = traces_dir / relative
    adapter = detect(path, take_sample(path))
    assert adapter is not None and adapter.name == "swe-bench-companion" and adapter.companion_only
