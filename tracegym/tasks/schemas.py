"""Tool schemas: the trace's own definitions when it has them, else inferred from recorded calls.

Inference reads every observed argument value: JSON-schema types from the
values (integers and floats together are numbers; several types give anyOf),
objects recurse, and a key is required when every observation has it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from tracegym.evals.scorers.recorded import json_or_text
from tracegym.tasks.spec import ToolSchema

if TYPE_CHECKING:
    from tracegym.store import Store

_SAMPLE = 1000  # calls per tool read for inference; enough to see every argument shape in practice


def infer_schema(values: list[Any]) -> dict[str, Any]:
    """The narrowest JSON schema that every value satisfies (under the rules above)."""
    groups: dict[str, list[Any]] = {}
    for v in values:
        groups.setdefault(_json_type(v), []).append(v)
    if "integer" in groups and "number" in groups:
        groups["number"] += groups.pop("integer")
    schemas = [_schema_of(kind, groups[kind]) for kind in sorted(groups)]
    if not schemas:
        return {}
    return schemas[0] if len(schemas) == 1 else {"anyOf": schemas}


def _schema_of(kind: str, values: list[Any]) -> dict[str, Any]:
    if kind == "object":
        keys = sorted({k for v in values for k in v})
        return {
            "type": "object",
            "properties": {k: infer_schema([v[k] for v in values if k in v]) for k in keys},
            "required": [k for k in keys if all(k in v for v in values)],
        }
    if kind == "array":
        items = [x for v in values for x in v]
        return {"type": "array", "items": infer_schema(items)} if items else {"type": "array"}
    return {"type": kind}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object"


def inferred_tools(calls: Iterable[tuple[str, Any]]) -> list[ToolSchema]:
    """One inferred schema per tool name, sorted by name; non-object arguments become `{input: ...}`."""
    by_name: dict[str, list[Any]] = {}
    for name, args in calls:
        by_name.setdefault(name, []).append(args if isinstance(args, dict) else {"input": args})
    return [ToolSchema(name=name, parameters=infer_schema(args) or {"type": "object"}, source="inferred")
            for name, args in sorted(by_name.items())]


def declared_tools(raw: Any) -> list[ToolSchema] | None:
    """The trace's own tool definitions (OpenAI `{type, function}` or flat `{name, parameters|input_schema}`)."""
    if not isinstance(raw, list) or not raw:
        return None
    tools = []
    for item in raw:
        fn = item.get("function") if isinstance(item, dict) and isinstance(item.get("function"), dict) else item
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            continue
        params = fn.get("parameters") or fn.get("input_schema") or fn.get("inputSchema") or {"type": "object"}
        if isinstance(params, str):
            params = json.loads(params)
        tools.append(ToolSchema(name=fn["name"], description=str(fn.get("description") or ""),
                                parameters=params if isinstance(params, dict) else {"type": "object"},
                                source="declared"))
    return sorted(tools, key=lambda t: t.name) or None


def format_tools(store: Store, fmt: str) -> list[ToolSchema]:
    """Schemas inferred from every recorded call in traces of format `fmt` (the tools its agent had)."""
    rows = store.query(
        """SELECT name, arguments FROM (
               SELECT c.name, c.arguments,
                      row_number() OVER (PARTITION BY c.name ORDER BY c.trace_id, c.message_idx, c.rowid) AS n
               FROM tool_calls c JOIN traces t USING (trace_id) WHERE t.format = ?)
           WHERE n <= ? ORDER BY name, n""",
        [fmt, _SAMPLE],
    )
    return inferred_tools((r["name"], json_or_text(r["arguments"])) for r in rows)
