"""Parsing tool calls out of model output, in the styles production agents use.

- ``openai``: structured ``tool_calls`` objects from a chat-completions response
  (``{"id", "type": "function", "function": {"name", "arguments": "<JSON string>"}}``);
- ``hermes``: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` in the text (Hermes, Qwen);
- ``json``: the whole reply is one JSON object ``{"name": ..., "arguments": ...}`` (optionally fenced);
- ``bash``: exactly one fenced ``bash`` block holding a shell command (mini-swe-agent style).

A malformed call is not an exception: it becomes a `ParseError` whose `message` is written for the model
(what was wrong, and the form to use), which the harness sends back as an observation, as production
harnesses do. `ToolCallStats` counts calls and malformed calls per style.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import jsonschema

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

Style = Literal["openai", "hermes", "json", "bash"]

_HERMES_BLOCK = re.compile(r"<tool_call>(.*?)(</tool_call>|$)", re.DOTALL)
# mini-swe-agent's action regex: only fences opened as ```bash count, so other code blocks are ignored.
_BASH_BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
_JSON_FENCE = re.compile(r"^```(?:json)?\s*\n(.*?)\n?```$", re.DOTALL)
_HERMES_FORM = '<tool_call>{"name": "<tool name>", "arguments": {...}}</tool_call>'
_BASH_FORM = "one ```bash block with the command"


@dataclass(frozen=True)
class ToolCall:
    """A well-formed call: a tool name and a JSON-object of arguments (for bash: {"command": ...})."""

    name: str
    arguments: dict[str, Any]
    style: Style
    id: str | None = None


@dataclass(frozen=True)
class ParseError:
    """A malformed call; `message` is the observation the model receives."""

    style: Style
    message: str
    raw: str = ""


@dataclass(frozen=True)
class ParseResult:
    """What one model reply asked for: zero or more calls, and the malformed ones."""

    calls: list[ToolCall] = field(default_factory=list)
    errors: list[ParseError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass
class ToolCallStats:
    """Per-style counts of parsed calls and malformed calls, for a harness's metrics."""

    calls: Counter[str] = field(default_factory=Counter)
    malformed: Counter[str] = field(default_factory=Counter)

    def add(self, result: ParseResult) -> ParseResult:
        self.calls.update(c.style for c in result.calls)
        self.malformed.update(e.style for e in result.errors)
        return result

    def as_dict(self) -> dict[str, int]:
        """Flat metrics: toolcalls/<style>/ok and toolcalls/<style>/malformed."""
        out = {f"toolcalls/{s}/ok": n for s, n in self.calls.items()}
        out.update({f"toolcalls/{s}/malformed": n for s, n in self.malformed.items()})
        return out


def parse_tool_calls(
    text: str,
    openai_tool_calls: Sequence[dict[str, Any]] | None = None,
    tools: Sequence[dict[str, Any]] | None = None,
) -> ParseResult:
    """Calls in a reply: structured OpenAI calls if present, else Hermes tags, else a bare JSON object.

    With `tools` (OpenAI tool schemas), unknown names and arguments that break a schema are errors too.
    Text with none of these forms yields an empty result: a plain answer, not a malformed call.
    """
    if openai_tool_calls:
        result = _merge(_openai_call(c) for c in openai_tool_calls)
    elif "<tool_call>" in text:
        result = _merge(_hermes_call(m.group(1), closed=bool(m.group(2))) for m in _HERMES_BLOCK.finditer(text))
    else:
        result = _json_call(text)
    return check_against_schemas(result, tools) if tools else result


def parse_bash_action(text: str) -> ParseResult:
    """The single ```bash block of a shell agent's reply, as a `bash` call with {"command": ...}."""
    blocks = _BASH_BLOCK.findall(text)
    if len(blocks) != 1:
        found = "none" if not blocks else f"{len(blocks)}"
        message = f"Please reply with exactly {_BASH_FORM}; found {found}."
        return ParseResult(errors=[ParseError("bash", message, text)])
    command = blocks[0].strip()
    if not command:
        return ParseResult(errors=[ParseError("bash", f"Your ```bash block is empty; reply with {_BASH_FORM}.", text)])
    return ParseResult(calls=[ToolCall("bash", {"command": command}, "bash")])


def check_against_schemas(result: ParseResult, tools: Sequence[dict[str, Any]]) -> ParseResult:
    """Move calls to unknown tools, or whose arguments break their JSON schema, into the errors."""
    schemas = {fn["name"]: fn.get("parameters") or {} for fn in (t.get("function", t) for t in tools)}
    calls, errors = [], list(result.errors)
    for call in result.calls:
        if call.name not in schemas:
            known = ", ".join(sorted(schemas)) or "none"
            errors.append(ParseError(call.style, f"There is no tool named {call.name!r}. Available tools: {known}."))
            continue
        validator = _validator(_schema_key(schemas[call.name]))
        error = jsonschema.exceptions.best_match(validator.iter_errors(call.arguments))
        if error is not None:
            errors.append(ParseError(call.style, f"The arguments of {call.name!r} are invalid: {error.message}."))
            continue
        calls.append(call)
    return ParseResult(calls, errors)


def _schema_key(schema: dict[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True, default=str)


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str) -> Validator:
    """A checked validator per schema, built once: `jsonschema.validate` checks the schema against its meta-schema
    on every call, which made validation most of a replay step's time (the same report as `validate` gives)."""
    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _merge(items: Iterable[ToolCall | ParseError]) -> ParseResult:
    calls: list[ToolCall] = []
    errors: list[ParseError] = []
    for item in items:
        if isinstance(item, ToolCall):
            calls.append(item)
        else:
            errors.append(item)
    return ParseResult(calls, errors)


def _openai_call(call: dict[str, Any]) -> ToolCall | ParseError:
    fn = call.get("function") or {}
    name, raw = fn.get("name"), fn.get("arguments")
    if not name:
        return ParseError("openai", "Your tool call has no function name.", json.dumps(call))
    if isinstance(raw, dict):
        return ToolCall(name, raw, "openai", call.get("id"))
    arguments = _loads_object(raw or "{}")
    if isinstance(arguments, str):
        return ParseError("openai", f"The arguments of {name!r} are not a valid JSON object: {arguments}.", str(raw))
    return ToolCall(name, arguments, "openai", call.get("id"))


def _hermes_call(body: str, closed: bool) -> ToolCall | ParseError:
    if not closed:
        message = f"Your <tool_call> is missing its closing </tool_call>; reply with {_HERMES_FORM}."
        return ParseError("hermes", message, body)
    return _named_object(body.strip(), "hermes")


def _json_call(text: str) -> ParseResult:
    stripped = text.strip()
    fenced = _JSON_FENCE.match(stripped)
    body = fenced.group(1).strip() if fenced else stripped
    if not (body.startswith("{") and '"name"' in body):
        return ParseResult()
    item = _named_object(body, "json")
    return ParseResult(calls=[item]) if isinstance(item, ToolCall) else ParseResult(errors=[item])


def _named_object(body: str, style: Style) -> ToolCall | ParseError:
    """A {"name": str, "arguments": object} payload (arguments may be a JSON string; "parameters" also works)."""
    data = _loads_object(body)
    if isinstance(data, str):
        return ParseError(style, f"Your tool call was not valid JSON: {data}; reply with {_HERMES_FORM}.", body)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        return ParseError(style, f'Your tool call has no "name" string; reply with {_HERMES_FORM}.', body)
    arguments = data.get("arguments", data.get("parameters", {}))
    if isinstance(arguments, str):
        arguments = _loads_object(arguments)
        if isinstance(arguments, str):
            return ParseError(style, f"The arguments of {name!r} are not a valid JSON object: {arguments}.", body)
    if not isinstance(arguments, dict):
        return ParseError(style, f'The "arguments" of {name!r} must be a JSON object; reply with {_HERMES_FORM}.', body)
    return ToolCall(name, arguments, style, data.get("id") if isinstance(data.get("id"), str) else None)


def _loads_object(raw: str) -> dict[str, Any] | str:
    """The parsed JSON object, or a short description of why it is not one."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as e:
        return f"{e.msg} at line {e.lineno} column {e.colno}"
    if not isinstance(value, dict):
        return f"expected an object, got {type(value).__name__}"
    return value
