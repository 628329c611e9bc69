"""YAML files validated by pydantic, with errors that name the file, the line and the fix.

Shared by evals.yaml and task specs; any pydantic model with `extra="forbid"`
gets the same messages.
"""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from tracegym.errors import ConfigError, did_you_mean

M = TypeVar("M", bound=BaseModel)


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: ~20x faster on big task files


def read_yaml(path: Path, text: str | None = None) -> tuple[Any, str]:
    """The parsed value and the text it came from; a `ConfigError` naming the line on bad YAML."""
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise ConfigError(f"Cannot read {path}: {e.strerror or e}.") from e
    try:
        return yaml.load(text, Loader=_LOADER), text
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else "?"
        raise ConfigError(
            f"{path}:{line}: invalid YAML: {e.problem or e}. "
            f"Fix: check the indentation and quoting on line {line} and the line before it."
        ) from None


def compose(text: str) -> yaml.Node | None:
    """The node tree of `text`, which knows the line of every value."""
    return yaml.compose(text, Loader=_LOADER)


def load_model(path: Path, model: type[M], text: str | None = None) -> tuple[M, str]:
    """Read `path` and validate it as `model`; errors name the file, the line and the fix."""
    data, text = read_yaml(path, text)
    if data is None:
        raise ConfigError(f"{path}:1: the file is empty. Fix: write a YAML mapping of {model.__name__} fields.")
    return validate(path, model, data, text), text


def validate(path: Path, model: type[M], data: Any, text: str) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as e:
        node = compose(text)  # only now: line numbers cost a second, slower parse
        lines = [describe_error(path, model, err, node) for err in e.errors()[:8]]
        more = f"\n(and {len(e.errors()) - 8} more)" if len(e.errors()) > 8 else ""
        raise ConfigError("\n".join(lines) + more, title=f"Invalid {path.name}") from None


def node_line(node: yaml.Node | None, loc: tuple[Any, ...]) -> int:
    """The 1-based line of the deepest node along `loc` (keys absent from the file are skipped)."""
    if node is None:
        return 1
    line = node.start_mark.line + 1
    for key in loc:
        found = _child(node, key)
        if found is None:
            continue  # a discriminator tag or a missing key: stay on the parent
        line, node = found
    return line


def _child(node: yaml.Node, key: Any) -> tuple[int, yaml.Node] | None:
    """(line of the entry, its value node): a mapping entry's line is its key's line."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if k.value == str(key):
                return k.start_mark.line + 1, v
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
        item = node.value[key]
        return item.start_mark.line + 1, item
    return None


def describe_error(path: Path, model: type[BaseModel], err: dict[str, Any], node: yaml.Node | None) -> str:
    loc = tuple(err["loc"])
    line = node_line(node, loc)
    where = ".".join(str(p) for p in loc) or "(top level)"
    if err["type"] == "value_error":
        # Our validators' messages already say what to do.
        return f"{path}:{line}: {where}: {err['msg'].removeprefix('Value error, ')}."
    return f"{path}:{line}: {where}: {err['msg']}. Fix: {_fix(model, err)}"


def _fix(model: type[BaseModel], err: dict[str, Any]) -> str:
    loc, kind = tuple(err["loc"]), err["type"]
    owner = model_at(model, loc[:-1])
    key = str(loc[-1]) if loc else ""
    if kind == "extra_forbidden":
        allowed = sorted(owner.model_fields) if owner else []
        hint = did_you_mean(key, allowed)
        return f"remove {key!r}.{hint}" + (f" Allowed fields: {', '.join(allowed)}." if allowed else "")
    if kind == "missing":
        info = owner.model_fields.get(key) if owner else None
        about = f" ({info.description.strip().rstrip('.')})" if info and info.description else ""
        return f"add {key!r}{about}."
    if kind == "union_tag_invalid":
        return f"set kind to one of {err['ctx']['expected_tags']}."
    if kind == "union_tag_not_found":
        return f"add {err['ctx']['discriminator']}: to say which kind this is."
    if kind == "literal_error":
        return f"use {err['ctx']['expected']}."
    return f"give {key!r} a value of the right type (see the message)."


def model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The pydantic model that owns the field at `loc`, following lists, dicts and tagged unions."""
    current: Any = model
    for key in loc:
        current = _descend(current, key)
        if current is None:
            return None
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _descend(tp: Any, key: Any) -> Any:
    tp = _unwrap(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        field = tp.model_fields.get(str(key))
        return _unwrap(field.annotation) if field else None
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (list, tuple) and args:
        return _unwrap(args[0])
    if origin is dict and len(args) == 2:
        return _unwrap(args[1])
    if origin in (typing.Union, types.UnionType):
        for member in args:
            member = _unwrap(member)
            if isinstance(member, type) and issubclass(member, BaseModel) and _tag(member) == key:
                return member
        models = [m for m in map(_unwrap, args) if isinstance(m, type) and issubclass(m, BaseModel)]
        return _descend(models[0], key) if len(models) == 1 else None
    return None


def _unwrap(tp: Any) -> Any:
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    if typing.get_origin(tp) in (typing.Union, types.UnionType) and len(args) == 1:
        return _unwrap(args[0])
    return tp


def _tag(member: type[BaseModel]) -> Any:
    field = member.model_fields.get("kind")
    args = typing.get_args(field.annotation) if field else ()
    return args[0] if args else None
