"""Home-grown agent logs, read through a mapping file: `--format generic --mapping map.yaml`.

The mapping (YAML) names where each normalized field lives, as field paths
(`result.status`, `steps[0].text`). A minimal one:

    id: run_id
    messages: transcript
    outcome: {path: result.status, success: [passed], failure: [failed]}

Inside each message, `role` and `content` are read from fields of those names
unless `message:` says otherwise; `roles:` renames a log's own role names;
messages may carry OpenAI-style `tool_calls` and `tool_call_id`; `tools:`
names the list of tool schemas the agent was given. The generic adapter never
claims a file by detection: it runs only when asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tracegym.errors import ConfigError, did_you_mean
from tracegym.ingest.adapters.base import Adapter, SourceFile
from tracegym.ingest.adapters.chat_messages import openai_tool_call
from tracegym.ingest.field_paths import Path as FieldPath
from tracegym.ingest.field_paths import format_path, get_path, parse_path
from tracegym.ingest.normalize import content_text, normalize_role, parse_ts
from tracegym.ingest.reading import Sample
from tracegym.ingest.records import BadRecord, Message, RawRecord, Score, Trace

FORMAT = "generic"


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _path(value: str | None) -> str | None:
    if value is not None:
        parse_path(value)
    return value


class MessageFields(_Config):
    """Where each message keeps its parts, relative to the message."""

    role: str = "role"
    """Path to the author's role (mapped through `roles`, then onto system/user/assistant/tool)."""
    content: str = "content"
    """Path to the text; a list of parts is joined, objects are kept as JSON."""
    tool_calls: str = "tool_calls"
    """Path to OpenAI-style tool calls (`[{id, function: {name, arguments}}]` or flat `{id, name, arguments}`)."""
    tool_call_id: str = "tool_call_id"
    """Path to the id of the call a tool message answers."""
    name: str = "name"
    """Path to the tool name on tool messages (links results to calls when ids are missing)."""
    timestamp: str | None = None
    """Path to the message time (ISO-8601 or epoch seconds/ms), if the log records one."""

    @field_validator("*")
    @classmethod
    def _valid_path(cls, v: str | None) -> str | None:
        return _path(v)


class OutcomeMapping(_Config):
    """Where the outcome lives and which of its values mean success or failure."""

    path: str
    """Path to the outcome value."""
    success: list[Any] = Field(default_factory=list)
    """Values that mean success (compared exactly; strings also case-insensitively)."""
    failure: list[Any] = Field(default_factory=list)
    """Values that mean failure. A value in neither list leaves the outcome unknown."""
    threshold: float | None = None
    """For numeric outcomes: values at or above it are successes, below it failures."""

    @field_validator("path")
    @classmethod
    def _valid_path(cls, v: str) -> str | None:
        return _path(v)

    @model_validator(mode="after")
    def _says_how(self) -> OutcomeMapping:
        if not self.success and not self.failure and self.threshold is None:
            raise ValueError("give `success` and/or `failure` values, or a numeric `threshold`")
        return self

    def outcome(self, value: Any) -> str | None:
        if value is None:
            return None
        if self.threshold is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
            return "success" if value >= self.threshold else "failure"
        for label, values in (("success", self.success), ("failure", self.failure)):
            if any(_same(value, v) for v in values):
                return label
        return None


class Mapping(_Config):
    """A generic adapter mapping: field paths from a record to the normalized trace."""

    id: str
    """Path to the trace id (a string or an integer)."""
    messages: str
    """Path to the list of messages."""
    records: str | None = None
    """Path to a list of records inside each JSON value, when one document or line holds many."""
    message: MessageFields = Field(default_factory=MessageFields)
    """Field paths inside each message."""
    roles: dict[str, str] = Field(default_factory=dict)
    """The log's own role names mapped to system/user/assistant/tool (e.g. `bot: assistant`)."""
    outcome: OutcomeMapping | None = None
    """Where the outcome lives and how its values map to success/failure."""
    model: str | None = None
    """Path to the model name."""
    session: str | None = None
    """Path to a session or conversation id that groups traces."""
    started_at: str | None = None
    """Path to the start time."""
    ended_at: str | None = None
    """Path to the end time."""
    tools: str | None = None
    """Path to the list of tool (function) schemas the agent was given: OpenAI `{type: function, function: {name,
    description, parameters}}`, Anthropic `{name, description, input_schema}` or flat `{name, parameters}` items.
    Stored as given, as the chat formats store theirs; tasks offer these schemas to the model."""
    scores: dict[str, str] = Field(default_factory=dict)
    """Score name -> path to a number (eval results kept beside the outcome)."""
    metadata: list[str] = Field(default_factory=list)
    """Paths whose values are copied into the trace's metadata, keyed by the path."""

    @field_validator("id", "messages", "records", "model", "session", "started_at", "ended_at", "tools")
    @classmethod
    def _valid_path(cls, v: str | None) -> str | None:
        return _path(v)

    @field_validator("scores", "metadata")
    @classmethod
    def _valid_paths(cls, v: dict[str, str] | list[str]) -> dict[str, str] | list[str]:
        for path in v.values() if isinstance(v, dict) else v:
            parse_path(path)
        return v


def _same(value: Any, wanted: Any) -> bool:
    if isinstance(value, str) and isinstance(wanted, str):
        return value.strip().lower() == wanted.strip().lower()
    return value == wanted and type(value) is type(wanted)


def load_mapping(path: Path | str | None) -> Mapping:
    """Read and check a mapping file; every problem is a ConfigError naming the file."""
    if path is None:
        raise ConfigError(
            "--format generic needs --mapping FILE: a YAML file naming the field paths of your log "
            "(at least `id` and `messages`; see docs/custom-formats.md)."
        )
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"Mapping file {path} does not exist.")
    return _load_mapping(path.resolve(), path.stat().st_mtime_ns)


@lru_cache(maxsize=16)
def _load_mapping(path: Path, mtime_ns: int) -> Mapping:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise ConfigError(f"Mapping file {path} is not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"Mapping file {path} must be a YAML mapping with at least `id` and `messages`.")
    try:
        return Mapping.model_validate(data)
    except ValidationError as e:
        raise ConfigError(f"Mapping file {path} is not a valid mapping:\n{_explain(e)}") from None


def _explain(error: ValidationError) -> str:
    lines = []
    known = list(Mapping.model_fields) + list(MessageFields.model_fields) + list(OutcomeMapping.model_fields)
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or "(top)"
        hint = did_you_mean(str(item["loc"][-1]), known) if item["type"] == "extra_forbidden" else ""
        lines.append(f"- {where}: {item['msg'].removeprefix('Value error, ')}.{hint}")
    return "\n".join(lines)


class GenericAdapter(Adapter):
    name = FORMAT
    description = "any JSON/JSONL log, read through a --mapping file of field paths"

    def sniff(self, sample: Sample) -> bool:
        return False  # only by --format generic: a mapping is needed to read anything

    def check_options(self, options: dict[str, Any]) -> None:
        load_mapping(options.get("mapping"))  # also when every file was ingested before and none is read

    def records(self, src: SourceFile) -> Iterator[RawRecord | BadRecord]:
        mapping = load_mapping(src.options.get("mapping"))
        if mapping.records is None:
            yield from super().records(src)
            return
        inner = parse_path(mapping.records)
        for outer in super().records(src):
            if isinstance(outer, BadRecord):
                yield outer
                continue
            items = get_path(outer.value, inner)
            if not isinstance(items, list):
                yield BadRecord(outer.locator, f"no list at records path {mapping.records!r}", outer.raw or "")
                continue
            for i, item in enumerate(items):
                yield RawRecord(f"{outer.locator}.{format_path(inner)}[{i}]", item)

    def to_traces(self, record: RawRecord, src: SourceFile) -> Iterable[Trace]:
        mapping = load_mapping(src.options.get("mapping"))
        rec = record.value
        yield _trace(rec, mapping)


def _trace(rec: Any, m: Mapping) -> Trace:
    trace_id = _get(rec, m.id)
    if isinstance(trace_id, int) and not isinstance(trace_id, bool):
        trace_id = str(trace_id)
    if not isinstance(trace_id, str) or not trace_id:
        raise ValueError(f"no id at {m.id!r} (a non-empty string or an integer is needed)")
    trace = Trace(trace_id=trace_id, format=FORMAT)
    trace.model = _opt_str(_get(rec, m.model), m.model)
    trace.session_id = _opt_str(_get(rec, m.session), m.session)
    trace.started_at = parse_ts(_get(rec, m.started_at))
    trace.ended_at = parse_ts(_get(rec, m.ended_at))
    if m.outcome is not None:
        value = _get(rec, m.outcome.path)
        trace.outcome = m.outcome.outcome(value)
        trace.metadata["outcome_value"] = value
    for name, path in m.scores.items():
        value = _get(rec, path)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            trace.scores.append(Score(name, float(value), kind="eval"))
    for path in m.metadata:
        trace.metadata[path] = _get(rec, path)
    trace.tools = _tools(_get(rec, m.tools), m.tools)
    messages = _get(rec, m.messages)
    if not isinstance(messages, list):
        raise ValueError(f"no message list at {m.messages!r}")
    for i, raw in enumerate(messages):
        _add_message(trace, raw, m, f"{m.messages}[{i}]")
    return trace


def _tools(value: Any, where: str | None) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise ValueError(f"{where} must be a list of tool schema objects, got {type(value).__name__}")
    return value


def _add_message(trace: Trace, raw: Any, m: Mapping, where: str) -> None:
    f = m.message
    role = _get(raw, f.role)
    if isinstance(role, str) and role in m.roles:
        role = m.roles[role]
    msg = Message(
        role=normalize_role(role),
        content=content_text(_get(raw, f.content)),
        tool_call_id=_opt_str(_get(raw, f.tool_call_id), f"{where}.{f.tool_call_id}"),
        name=_opt_str(_get(raw, f.name), f"{where}.{f.name}"),
        ts=parse_ts(_get(raw, f.timestamp)),
    )
    idx = len(trace.messages)
    trace.messages.append(msg)
    calls = _get(raw, f.tool_calls)
    if calls is None:
        return
    if not isinstance(calls, list):
        raise ValueError(f"{where}.{f.tool_calls} must be a list")
    for j, call in enumerate(calls):
        trace.tool_calls.append(openai_tool_call(call, idx, f"{where}.{f.tool_calls}[{j}]"))


def _get(value: Any, path: str | None) -> Any:
    return None if path is None else get_path(value, _parsed(path))


@lru_cache(maxsize=256)
def _parsed(path: str) -> FieldPath:
    return parse_path(path)


def _opt_str(value: Any, where: str | None) -> str | None:
    if value is None or isinstance(value, str):
        return value or None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"{where} must be a string, got {type(value).__name__}")
