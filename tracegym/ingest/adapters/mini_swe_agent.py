"""mini-swe-agent trajectories (`*.traj.json`, `trajectory_format: mini-swe-agent-1`).

Schema: SWE-agent/mini-swe-agent `docs/usage/output_files.md`. `messages[]` is an
OpenAI-style chat. The agent acts by writing exactly one fenced bash block in an
assistant message; the harness runs it and answers with a user message
`<returncode>N</returncode><output>…</output>` (or, for the final submission, the
raw output, which is the patch). Any other number of blocks gets a format-error
message instead, and a command that runs too long gets a timeout message.

Representation: each executed block becomes a ToolCall named `bash` with
`{"command": …}`, and its observation becomes a `tool` message (original text
kept) whose `tool_call_id` links it to the call, so replay sees call → result.
Format-error and timeout messages are the harness correcting the agent: they
stay `user` messages exactly as written and are not tool results (mining reads
them); a timeout marks its call as an error that returned no result.
The outcome comes from the SWE-bench report beside the run (see swebench.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from tracegym.ingest.adapters.base import Adapter, SourceFile, require
from tracegym.ingest.adapters.chat_messages import append_openai_message
from tracegym.ingest.adapters.swebench import find_resolution, resolution_scores
from tracegym.ingest.normalize import content_text, normalize_role, opt_int, parse_ts
from tracegym.ingest.reading import Sample
from tracegym.ingest.records import Message, RawRecord, ToolCall, Trace

# mini-swe-agent 1.x's default `action_regex`: the agent acts only when exactly one block matches.
ACTION_RE = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
RETURNCODE_RE = re.compile(r"\s*<returncode>(-?\d+)</returncode>")
DEFAULT_TIMEOUT_PREFIX = "The last command <command>"
DEFAULT_FORMAT_ERROR_PREFIX = "Please always provide EXACTLY ONE action"
TRAJ_SUFFIX = ".traj.json"


@dataclass(slots=True)
class _HarnessText:
    """How this run's harness words its corrections (the template text before its first variable)."""

    timeout: str
    format_error: str

    @classmethod
    def from_config(cls, info: dict[str, Any]) -> _HarnessText:
        agent = _obj(_obj(info, "config"), "agent")
        return cls(
            _template_prefix(agent.get("timeout_template"), DEFAULT_TIMEOUT_PREFIX),
            _template_prefix(agent.get("format_error_template"), DEFAULT_FORMAT_ERROR_PREFIX),
        )


def _template_prefix(template: Any, default: str) -> str:
    if not isinstance(template, str):
        return default
    prefix = re.split(r"\{\{|\{%", template, maxsplit=1)[0].strip()
    return prefix if len(prefix) >= 10 else default


class MiniSweAgentAdapter(Adapter):
    name = "mini-swe-agent"
    description = "mini-swe-agent trajectories (*.traj.json: info, messages, trajectory_format mini-swe-agent-1)"

    def sniff(self, sample: Sample) -> bool:
        value = sample.top if sample.top is not None else sample.first
        if isinstance(value, dict):
            fmt = value.get("trajectory_format")
            if isinstance(fmt, str) and fmt.startswith("mini-swe-agent"):
                return True
            info = value.get("info")
            return isinstance(value.get("messages"), list) and isinstance(info, dict) and "mini_version" in info
        # An unparseable file still goes to this adapter so its error names the real problem.
        return value is None and (sample.path.name.endswith(TRAJ_SUFFIX) or b'"mini-swe-agent' in sample.head)

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        run = record.value
        info = require(run, "info", dict)
        messages = require(run, "messages", list)
        instance_id = _instance_id(run, src.path)
        model = _model(info, messages)
        trace = Trace(
            trace_id=f"mini-swe-agent:{model}:{instance_id}" if model else f"mini-swe-agent:{instance_id}",
            format=self.name,
            session_id=instance_id,
            model=model,
            metadata=_metadata(run, info, instance_id),
        )
        _append_messages(trace, messages, _HarnessText.from_config(info))
        _set_times(trace)
        _set_outcome(trace, src.path, instance_id)
        yield trace


def _instance_id(run: dict[str, Any], path: Path) -> str:
    value = run.get("instance_id")
    if value is None:
        return path.name.removesuffix(TRAJ_SUFFIX).removesuffix(".json")
    if not isinstance(value, str) or not value:
        raise ValueError(f"instance_id must be a non-empty string, got {type(value).__name__}")
    return value


def _obj(parent: Any, key: str) -> dict[str, Any]:
    """parent[key] when both are objects, else {} (optional sections may be absent or malformed)."""
    value = parent.get(key) if isinstance(parent, dict) else None
    return value if isinstance(value, dict) else {}


def _model(info: dict[str, Any], messages: list[Any]) -> str | None:
    model_cfg = _obj(_obj(info, "config"), "model")
    if isinstance(model_cfg.get("model_name"), str):
        return model_cfg["model_name"]
    for msg in messages:
        response = _response(msg)
        if isinstance(response.get("model"), str):
            return response["model"]
    return None


def _metadata(run: dict[str, Any], info: dict[str, Any], instance_id: str) -> dict[str, Any]:
    config = _obj(info, "config")
    return {
        "instance_id": instance_id,
        "trajectory_format": run.get("trajectory_format"),
        "exit_status": info.get("exit_status"),
        "submission": info.get("submission"),
        "model_stats": info.get("model_stats"),
        "mini_version": info.get("mini_version"),
        "agent_type": config.get("agent_type"),
        "environment": _obj(config, "environment").get("image"),
    }


def _append_messages(trace: Trace, messages: list[Any], harness: _HarnessText) -> None:
    """Messages in order; bash blocks become calls, their observations `tool` messages."""
    pending: ToolCall | None = None
    for i, raw in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(raw, dict):
            raise ValueError(f"{where} must be an object, got {type(raw).__name__}")
        extra = _obj(raw, "extra")
        if isinstance(raw.get("tool_calls"), list) or raw.get("role") == "tool":
            # Tool-calling models: already OpenAI tool calls, answered by `tool` messages.
            _append_tool_calling(trace, raw, extra, where)
            pending = None
            continue
        role = normalize_role(raw.get("role"))
        content = content_text(raw.get("content"))
        msg = Message(role=role, content=content, ts=_message_ts(extra))
        if pending is not None and role == "user":
            _answer(pending, msg, extra, harness)
        pending = None
        if role == "assistant":
            _usage(msg, _response(raw), where)
            pending = _action(trace, content, len(trace.messages))
        trace.messages.append(msg)


def _append_tool_calling(trace: Trace, raw: dict[str, Any], extra: dict[str, Any], where: str) -> None:
    msg = append_openai_message(trace, raw, where)
    msg.ts = _message_ts(extra)
    code = opt_int(extra.get("returncode"))
    if msg.role == "tool" and code is not None:
        for call in trace.tool_calls:
            if call.call_id == msg.tool_call_id and call.exit_code is None:
                call.exit_code = code
                break


def _action(trace: Trace, content: str | None, idx: int) -> ToolCall | None:
    blocks = ACTION_RE.findall(content or "")
    if len(blocks) != 1:
        return None  # the harness runs nothing and answers with a format error
    call = ToolCall(message_idx=idx, call_id=f"call-{idx}", name="bash", arguments={"command": blocks[0].strip()})
    trace.tool_calls.append(call)
    return call


def _answer(call: ToolCall, msg: Message, extra: dict[str, Any], harness: _HarnessText) -> None:
    """The harness's reply to a call: an observation (made a `tool` message) or a correction (left as is)."""
    text = msg.content or ""
    if text.lstrip().startswith(harness.timeout):
        call.is_error = True  # the command was killed; the message stays the harness's, not a result
        return
    if text.lstrip().startswith(harness.format_error):
        return
    msg.role, msg.tool_call_id, msg.name = "tool", call.call_id, call.name
    code = RETURNCODE_RE.match(text)
    call.exit_code = int(code.group(1)) if code else opt_int(extra.get("returncode"))


def _response(raw: Any) -> dict[str, Any]:
    return _obj(_obj(raw, "extra"), "response")


def _usage(msg: Message, response: dict[str, Any], where: str) -> None:
    usage = response.get("usage")
    if usage is None:
        return
    if not isinstance(usage, dict):
        raise ValueError(f"{where}.extra.response.usage must be an object, got {type(usage).__name__}")
    msg.input_tokens = opt_int(usage.get("prompt_tokens", usage.get("input_tokens")))
    msg.output_tokens = opt_int(usage.get("completion_tokens", usage.get("output_tokens")))


def _message_ts(extra: dict[str, Any]) -> datetime | None:
    if extra.get("timestamp") is not None:
        return parse_ts(extra["timestamp"])
    return parse_ts(_obj(extra, "response").get("created"))  # when the model answered, for runs without timestamps


def _set_times(trace: Trace) -> None:
    times = [m.ts for m in trace.messages if m.ts is not None]
    if times:
        trace.started_at, trace.ended_at = min(times), max(times)


def _set_outcome(trace: Trace, path: Path, instance_id: str) -> None:
    resolution = find_resolution(path, instance_id)
    if resolution is None:
        return
    trace.outcome = "success" if resolution.resolved else "failure"
    trace.scores.extend(resolution_scores(resolution))
    trace.metadata.update(
        outcome_source=resolution.source,
        patch_applied=resolution.patch_applied,
        tests_status=resolution.tests_status,
    )
