"""τ²-bench results: one JSON document `{timestamp, info, tasks, simulations}`.

Schema: sierra-research/tau2-bench `src/tau2/data_model/simulation.py`
(Results, SimulationRun, RewardInfo, TerminationReason) and `message.py`
(SystemMessage, AssistantMessage, UserMessage, ToolMessage, MultiToolMessage,
ToolCall). Each simulation is a trace. Tool calls are flat `{id, name,
arguments: dict, requestor}` on assistant (or, in some domains, user) messages;
a tool message answers the call whose id it carries, and its `error` flag marks
the call failed. The outcome is `reward_info.reward` (1.0 is a success).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from tracegym.ingest.adapters.base import Adapter, SourceFile, require
from tracegym.ingest.normalize import content_text, normalize_role, opt_int, parse_arguments, parse_ts, to_json
from tracegym.ingest.reading import Sample, clip_raw, iter_json_document
from tracegym.ingest.records import BadRecord, Message, RawRecord, Score, ToolCall, Trace

FORMAT = "tau2-bench"
# A results file too big to parse for detection still shows its `info` block first.
_HEAD_MARKERS = re.compile(rb'"agent_info"\s*:.*"environment_info"\s*:', re.S)
SIM_KEYS = ("trial", "seed", "termination_reason", "duration", "agent_cost", "user_cost", "mode")


class Tau2BenchAdapter(Adapter):
    name = FORMAT
    description = "τ²-bench results (info, tasks, simulations[] with flat tool calls and reward_info)"

    def sniff(self, sample: Sample) -> bool:
        top = sample.top
        if isinstance(top, dict):
            return isinstance(top.get("simulations"), list) and isinstance(top.get("info"), dict)
        return sample.first is None and not sample.jsonl and bool(_HEAD_MARKERS.search(sample.head))

    def records(self, src: SourceFile) -> Iterator[RawRecord | BadRecord]:
        """Each simulation, carrying the run's agent model and its task definition."""
        for doc in iter_json_document(src.path):
            if isinstance(doc, BadRecord):
                yield doc
                continue
            results = doc.value
            if not isinstance(results, dict) or not isinstance(results.get("simulations"), list):
                raw = clip_raw(doc.raw or to_json(doc.value))
                yield BadRecord(doc.locator, "not a τ²-bench results object: no simulations list", raw)
                continue
            yield from _simulations(results)

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        sim = record.value["simulation"]
        sim_id = require(sim, "id", str)
        task_id = require(sim, "task_id", (str, int))
        trace = Trace(
            trace_id=sim_id,
            format=FORMAT,
            session_id=f"task-{task_id}",
            model=record.value["agent_llm"] if isinstance(record.value["agent_llm"], str) else None,
            started_at=parse_ts(sim.get("start_time")),
            ended_at=parse_ts(sim.get("end_time")),
            metadata={"simulation_id": sim_id, "task_id": task_id, "results_file": src.path.name},
        )
        for key in SIM_KEYS:
            if sim.get(key) is not None:
                trace.metadata[key] = sim[key]
        task = record.value["task"]
        if isinstance(task, dict) and task.get("evaluation_criteria") is not None:
            trace.metadata["evaluation_criteria"] = task["evaluation_criteria"]
        _add_messages(trace, sim.get("messages") or [])
        _add_reward(trace, sim.get("reward_info"))
        yield trace


def _simulations(results: dict[str, Any]) -> Iterator[RawRecord]:
    info = results.get("info") if isinstance(results.get("info"), dict) else {}
    agent = info.get("agent_info") if isinstance(info.get("agent_info"), dict) else {}
    tasks = {str(t["id"]): t for t in results.get("tasks") or [] if isinstance(t, dict) and "id" in t}
    for i, sim in enumerate(results["simulations"]):
        task_id = sim.get("task_id") if isinstance(sim, dict) else None
        context = {"simulation": sim, "task": tasks.get(str(task_id)), "agent_llm": agent.get("llm")}
        yield RawRecord(f"$.simulations[{i}]", context)


def _add_messages(trace: Trace, messages: Any) -> None:
    if not isinstance(messages, list):
        raise ValueError(f"messages must be a list, got {type(messages).__name__}")
    calls_by_id: dict[str, ToolCall] = {}
    for i, raw in enumerate(messages):
        if not isinstance(raw, dict):
            raise ValueError(f"messages[{i}] must be an object, got {type(raw).__name__}")
        # MultiToolMessage groups several tool messages in one turn.
        parts = raw["tool_messages"] if isinstance(raw.get("tool_messages"), list) else [raw]
        for part in parts:
            _add_message(trace, part, f"messages[{i}]", calls_by_id)


def _add_message(trace: Trace, raw: dict[str, Any], where: str, calls_by_id: dict[str, ToolCall]) -> None:
    role = normalize_role(raw.get("role"))
    usage = raw.get("usage") if isinstance(raw.get("usage"), dict) else {}
    seconds = raw.get("generation_time_seconds")
    timed = isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
    msg = Message(
        role=role,
        content=content_text(raw.get("content")),
        tool_call_id=_opt_id(raw.get("id"), where) if role == "tool" else None,
        input_tokens=opt_int(usage.get("prompt_tokens")),
        output_tokens=opt_int(usage.get("completion_tokens")),
        latency_ms=float(seconds) * 1000 if timed else None,
        ts=parse_ts(raw.get("timestamp")),
    )
    idx = len(trace.messages)
    trace.messages.append(msg)
    if role == "tool" and raw.get("error") is True and msg.tool_call_id in calls_by_id:
        calls_by_id[msg.tool_call_id].is_error = True
    calls = raw.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        raise ValueError(f"{where}.tool_calls must be a list, got {type(calls).__name__}")
    for j, call in enumerate(calls or []):
        tc = _tool_call(call, idx, f"{where}.tool_calls[{j}]")
        trace.tool_calls.append(tc)
        if tc.call_id:
            calls_by_id[tc.call_id] = tc


def _opt_id(value: Any, where: str) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    raise ValueError(f"{where}.id must be a string, got {type(value).__name__}")


def _tool_call(call: Any, idx: int, where: str) -> ToolCall:
    name = require(call, "name", str, where)
    if not name:
        raise ValueError(f"{where}.name is empty")
    call_id = call.get("id")
    return ToolCall(
        message_idx=idx,
        call_id=call_id if isinstance(call_id, str) and call_id else None,
        name=name,
        arguments=parse_arguments(call.get("arguments")),
    )


def _add_reward(trace: Trace, reward_info: Any) -> None:
    """reward → outcome and a score; the breakdown and the checks' pass rates → scores."""
    if not isinstance(reward_info, dict):
        return
    reward = reward_info.get("reward")
    if isinstance(reward, (int, float)) and not isinstance(reward, bool):
        trace.outcome = "success" if reward >= 1.0 else "failure"
        trace.scores.append(Score("reward", float(reward), kind="environment"))
    for key, value in (reward_info.get("reward_breakdown") or {}).items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            trace.scores.append(Score(f"reward_breakdown.{key}", float(value), kind="environment"))
    db_check = reward_info.get("db_check")
    if isinstance(db_check, dict) and isinstance(db_check.get("db_match"), bool):
        trace.scores.append(Score("db_match", float(db_check["db_match"]), kind="environment"))
    for key, flag in (("action_checks", "action_match"), ("communicate_checks", "met"), ("nl_assertions", "met"),
                      ("env_assertions", "met")):
        checks = reward_info.get(key)
        if isinstance(checks, list) and checks:
            passed = sum(1 for c in checks if isinstance(c, dict) and c.get(flag) is True)
            trace.scores.append(Score(key, passed / len(checks), label=f"{passed}/{len(checks)}", kind="environment"))
    if isinstance(reward_info.get("reward_basis"), list):
        trace.metadata["reward_basis"] = reward_info["reward_basis"]
