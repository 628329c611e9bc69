"""The train config's key-by-key reference (docs/training.md), written from the pydantic sections' field docstrings,
so the page and the code cannot drift apart. Regenerate with `python -m tracegym.configdoc > docs/training.md`."""

from __future__ import annotations

import inspect
import types
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

INTRO = """# Training config reference

Every key of the YAML file `tracegym train CONFIG` reads (`tracegym/training/config.py`), with its type, default
and meaning. Only `run_dir` and `tasks.task_set` are required; an unknown key is an error that names the file, the
line and the nearest valid key; the resolved config (defaults filled in) is written into the run folder.
Examples: `examples/train-learn.yaml`, `examples/train-tau.yaml`. What a run does with these settings:
[training-runs.md](training-runs.md); the loss and its corrections: [training-math.md](training-math.md).

This page is generated: `python -m tracegym.configdoc > docs/training.md`.
"""


def _is_section(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _type_name(tp: Any) -> str:
    """A field's annotation as a reader of YAML sees it: `int | null`, `"token" | "sequence"`, `list[str]`."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is type(None):
        return "null"
    if origin is Literal:
        return " | ".join(f'"{a}"' if isinstance(a, str) else str(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is not None:
        return f"{getattr(origin, '__name__', str(origin))}[{', '.join(_type_name(a) for a in args)}]"
    if _is_section(tp):
        return "section"
    return "path" if tp is Path else getattr(tp, "__name__", str(tp))


def _yaml(value: Any) -> str:
    """A default as it would be written in YAML."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_yaml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_yaml(v)}" for k, v in value.items()) + "}"
    return str(value)


def _nested(tp: Any) -> type[BaseModel] | None:
    """The section a field holds: itself, inside `X | None`, or the items of `list[X]`."""
    if _is_section(tp):
        return tp
    return next((s for a in typing.get_args(tp) if (s := _nested(a)) is not None), None)


def _text(doc: str | None, indent: str = "") -> str:
    return "\n".join(indent + line if line and i else line for i, line in enumerate((doc or "").splitlines()))


def _section(model: type[BaseModel], path: str, values: BaseModel | None, depth: int) -> list[str]:
    """One section's keys as a list, then its subsections under headings one level down."""
    lines: list[str] = []
    if path:
        lines.append(f"\n{'#' * min(depth + 1, 6)} `{path}`\n")
        if "__doc__" in vars(model) and model.__doc__:
            lines.append(inspect.cleandoc(model.__doc__) + "\n")
    subsections: list[str] = []
    for name, field in model.model_fields.items():
        key = f"{path}.{field.alias or name}" if path else field.alias or name
        current = getattr(values, name) if values is not None else field.get_default(call_default_factory=True)
        if field.is_required():
            default = "required"
        elif _is_section(field.annotation):
            default = "see below"
        else:
            default = f"`{_yaml(current)}`"
        lines.append(f"- **`{key}`** ({_type_name(field.annotation)}, {default}): {_text(field.description, '  ')}")
        inner = _nested(field.annotation)
        if inner is not None:
            key += "[]" if _type_name(field.annotation).startswith("list[") else ""
            subsections += _section(inner, key, current if isinstance(current, inner) else None, depth + 1)
    return lines + subsections


def reference() -> str:
    """docs/training.md: the intro, then every key of `TrainConfig`, section by section."""
    from tracegym.training.config import TrainConfig

    return INTRO + "\n## Top-level keys\n\n" + "\n".join(_section(TrainConfig, "", None, 0)) + "\n"


if __name__ == "__main__":
    print(reference(), end="")
