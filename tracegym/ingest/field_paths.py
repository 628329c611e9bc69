"""Field paths into JSON values: `a.b[0].c`, the syntax the generic adapter's mapping uses."""

from __future__ import annotations

import re
from typing import Any

_SEGMENT = re.compile(r"([^.\[\]]+)?((?:\[-?\d+\])*)")
_INDEX = re.compile(r"\[(-?\d+)\]")

Path = tuple[str | int, ...]


def parse_path(text: str) -> Path:
    """'steps[0].text' -> ('steps', 0, 'text'); raise ValueError on anything else."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("a field path must be a non-empty string such as 'result.status' or 'steps[0].text'")
    path: list[str | int] = []
    for segment in text.strip().split("."):
        match = _SEGMENT.fullmatch(segment)
        if match is None or not segment or (match.group(1) is None and not match.group(2)):
            raise ValueError(f"bad field path {text!r}: segment {segment!r} is not `name`, `name[N]` or `[N]`")
        if match.group(1) is not None:
            path.append(match.group(1))
        path.extend(int(i) for i in _INDEX.findall(match.group(2)))
    return tuple(path)


def get_path(value: Any, path: Path) -> Any:
    """The value at `path`, or None where any step is missing or of the wrong kind."""
    for step in path:
        if isinstance(step, int):
            if not isinstance(value, list) or not -len(value) <= step < len(value):
                return None
            value = value[step]
        else:
            if not isinstance(value, dict):
                return None
            value = value.get(step)
    return value


def format_path(path: Path) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out
