"""ATIF, the Agent Trajectory Interchange Format of Harbor and Terminal-Bench: one trajectory per document.

Schema: the `atif` package's pydantic models (`Trajectory`, `Step`, `ToolCall`, `Observation`,
`ObservationResult`, `Metrics`, `FinalMetrics`, `Agent`), ATIF v1.x. A trajectory is `{schema_version:
"ATIF-v1.8", session_id, trajectory_id, agent: {name, version, model_name, tool_definitions}, steps: [...],
final_metrics, extra, subagent_trajectories}`; detected by its `schema_version` beside `steps` and `agent`.
A file holds one trajectory, a JSON array of them, or one per line.

- Steps in order: `source` system / user / agent gives the role; `message` the text (text parts of a
  multimodal message). An agent step's `tool_calls` (`tool_call_id`, `function_name`, `arguments`) are its
  calls, its `metrics` (`prompt_tokens`, `completion_tokens`) the reply's tokens, `model_name` its model
  (else the agent's); its `observation.results` follow it as tool messages answering `source_call_id` (a
  result without one answers no call: a non-tool action). A system step's observation (an infrastructure event)
  is a system message. `timestamp` is each message's time; ATIF records no durations.
- Embedded `subagent_trajectories` are traces of their own (`<trajectory>/<subagent trajectory_id>`).
- Reward: a number `reward` in the trajectory's or its final metrics' `extra`; else Harbor's verifier output
  beside a trial's `agent/trajectory.json` (`verifier/reward.txt`, or the number(s) of `verifier/reward.json`).
  It becomes an environment score, and the outcome: success at 1 or more, else failure (as τ-bench's).
- Trace id: `trajectory_id`, else `session_id` (which continuation segments may share), else a digest of
  the document; the session is `session_id`. Tools: `agent.tool_definitions`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from tracegym import exact_json
from tracegym.ingest.adapters.base import Adapter, SourceFile, require
from tracegym.ingest.adapters.span_messages import text_of
from tracegym.ingest.normalize import opt_int, parse_arguments, parse_ts, to_json
from tracegym.ingest.reading import Sample
from tracegym.ingest.records import Message, RawRecord, Score, ToolCall, Trace

FORMAT = "atif"
ROLES = {"system": "system", "user": "user", "agent": "assistant"}
_REWARD_BYTES = 1 << 16


class AtifAdapter(Adapter):
    name = FORMAT
    description = "ATIF trajectories (Harbor, Terminal-Bench: schema_version, agent, steps)"

    def sniff(self, sample: Sample) -> bool:
        return is_trajectory(sample.first)

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        doc = record.value
        if not is_trajectory(doc):
            raise ValueError("not an ATIF trajectory: no schema_version, agent and steps")
        digest = hashlib.sha1((record.raw or to_json(doc)).encode("utf-8", "surrogatepass")).hexdigest()[:16]
        key = doc.get("trajectory_id") or doc.get("session_id") or digest
        reward = _reward(doc)
        yield from _traces(doc, str(key), reward if reward is not None else _harbor_reward(src.path))


def is_trajectory(value: Any) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("schema_version"), str)
            and isinstance(value.get("steps"), list) and isinstance(value.get("agent"), dict))


def _traces(doc: dict[str, Any], key: str, reward: dict[str, float] | None) -> Iterator[Trace]:
    agent = doc["agent"]
    trace = Trace(trace_id=f"{FORMAT}:{key}", format=FORMAT, session_id=_opt_str(doc.get("session_id")),
                  model=_opt_str(agent.get("model_name")))
    tools = agent.get("tool_definitions")
    trace.tools = tools if isinstance(tools, list) else None
    for i, step in enumerate(doc["steps"]):
        _add_step(trace, step, f"steps[{i}]")
    times = [m.ts for m in trace.messages if m.ts]
    trace.started_at, trace.ended_at = (min(times), max(times)) if times else (None, None)
    trace.model = next((s.get("model_name") for s in reversed(doc["steps"]) if isinstance(s, dict)
                        and isinstance(s.get("model_name"), str)), trace.model)
    trace.metadata = _metadata(doc)
    for name, value in (reward or {}).items():
        trace.scores.append(Score(name, value, kind="environment"))
    if reward and "reward" in reward:
        trace.outcome = "success" if reward["reward"] >= 1.0 else "failure"
    yield trace
    for j, sub in enumerate(doc.get("subagent_trajectories") or []):
        if not is_trajectory(sub) or not isinstance(sub.get("trajectory_id"), str):
            raise ValueError(f"subagent_trajectories[{j}] is not a trajectory with a trajectory_id")
        yield from _traces(sub, f"{key}/{sub['trajectory_id']}", _reward(sub))


def _add_step(trace: Trace, step: Any, where: str) -> None:
    source = require(step, "source", str, where)
    if source not in ROLES:
        raise ValueError(f"{where}.source must be system, user or agent, got {source!r}")
    metrics = step.get("metrics") if isinstance(step.get("metrics"), dict) else {}
    ts = parse_ts(step.get("timestamp"))
    text = text_of(step.get("message"))
    idx = len(trace.messages)
    trace.messages.append(Message(ROLES[source], text if text or source != "agent" else None, ts=ts,
                                  input_tokens=opt_int(metrics.get("prompt_tokens")),
                                  output_tokens=opt_int(metrics.get("completion_tokens"))))
    names = {}
    for j, call in enumerate(step.get("tool_calls") or []):
        name = require(call, "function_name", str, f"{where}.tool_calls[{j}]")
        call_id = _opt_str(call.get("tool_call_id"))
        trace.tool_calls.append(ToolCall(idx, call_id, name, parse_arguments(call.get("arguments"))))
        names[call_id] = name
    observation = step.get("observation")
    results = observation.get("results") if isinstance(observation, dict) else None
    for j, result in enumerate(results or []):
        if not isinstance(result, dict):
            raise ValueError(f"{where}.observation.results[{j}] must be an object")
        call_id = _opt_str(result.get("source_call_id"))
        role = "system" if source == "system" else "tool"
        trace.messages.append(Message(role, text_of(result.get("content")), tool_call_id=call_id,
                                      name=names.get(call_id), ts=ts))
        _flag(trace, call_id, result.get("extra"))


def _flag(trace: Trace, call_id: str | None, extra: Any) -> None:
    """A result's `extra` may say it failed (`is_error`, a nonzero `exit_code`)."""
    if not isinstance(extra, dict) or call_id is None:
        return
    for call in trace.tool_calls:
        if call.call_id == call_id:
            if extra.get("is_error") is True:
                call.is_error = True
            code = extra.get("exit_code")
            if isinstance(code, int) and not isinstance(code, bool):
                call.exit_code = code


def _metadata(doc: dict[str, Any]) -> dict[str, Any]:
    agent = doc["agent"]
    meta: dict[str, Any] = {"schema_version": doc["schema_version"], "agent": agent.get("name"),
                            "agent_version": agent.get("version"), "steps": len(doc["steps"])}
    for key in ("trajectory_id", "session_id", "continued_trajectory_ref", "notes"):
        if doc.get(key) is not None:
            meta[key] = doc[key]
    if isinstance(doc.get("final_metrics"), dict):
        meta["final_metrics"] = doc["final_metrics"]
    copied = sum(1 for s in doc["steps"] if isinstance(s, dict) and s.get("is_copied_context") is True)
    if copied:
        meta["copied_context_steps"] = copied
    return meta


def _reward(doc: dict[str, Any]) -> dict[str, float] | None:
    final = doc.get("final_metrics") if isinstance(doc.get("final_metrics"), dict) else {}
    for extra in (doc.get("extra"), final.get("extra")):
        value = extra.get("reward") if isinstance(extra, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return {"reward": float(value)}
    return None


def _harbor_reward(path: Path) -> dict[str, float] | None:
    """Harbor's verifier output for the trial whose `agent/trajectory.json` this is (no links followed)."""
    verifier = path.parent.parent / "verifier"
    if path.parent.name != "agent" or not verifier.is_dir() or verifier.is_symlink():
        return None
    text_file, json_file = verifier / "reward.txt", verifier / "reward.json"
    if text_file.is_file() and not text_file.is_symlink():
        try:
            return {"reward": float(text_file.read_bytes()[:_REWARD_BYTES].decode().strip())}
        except (ValueError, UnicodeDecodeError):
            return None
    if json_file.is_file() and not json_file.is_symlink():
        try:
            value = exact_json.loads(json_file.read_bytes()[:_REWARD_BYTES])
        except orjson.JSONDecodeError:
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return {"reward": float(value)}
        if isinstance(value, dict):
            return {k: float(v) for k, v in value.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    return None


def _opt_str(value: Any) -> str | None:
    return str(value).strip() if value not in (None, "") else None
