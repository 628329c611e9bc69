"""How a tool words its errors, learned from the errors a trace recorded, so that an answer the harness makes up
reads as that tool's own.

Two kinds of shape: text after a short label (τ-bench's "Error: reservation not found"), and a JSON object with a
message field (`{"error": "bad id"}`, `{"error": {"code": 504, "message": "upstream timeout"}}`,
`{"status": "error", "message": "invalid postal code"}`). An error is a recorded call marked as one, or a JSON
result shaped as one (an `error` field, or a `status` of error) even where the log did not mark it. A tool's most
common shape is its style. A made-up JSON error keeps the fields every recorded error of that shape had with the same
value (`"status": "error"`), drops those that varied (an order id), puts the message in the message field, and a
"not found" code of the recorded code's kind in the code field: 404 where the codes are HTTP statuses, `not_found`
(in the codes' letter case) where they are words.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tracegym.tasks.spec import RecordedCall

MESSAGE_KEYS = ("message", "error", "detail", "msg", "reason", "description", "error_message")
"""Fields that hold an error's text, in the order they are looked for at each level of the object."""
CODE_KEYS = ("code", "status_code", "error_code", "errno")
_FAILED = frozenset({"error", "failed", "failure", "fail"})
_MAX_PREFIX = 40  # an error "style" prefix is a short label such as "Error: ", not a sentence
_MAX_DEPTH = 3

KeyPath = tuple[str, ...]


@dataclass(frozen=True)
class JsonShape:
    """A JSON error object: the recorded fields to keep, where the message goes, and the code field."""

    template: str
    """The object with its kept fields, as JSON (a hashable, immutable copy)."""
    message: KeyPath
    code: KeyPath | None = None
    code_value: int | str | None = None

    def format(self, message: str) -> str:
        data = json.loads(self.template)
        _put(data, self.message, message)
        if self.code is not None:
            _put(data, self.code, self.code_value)
        return json.dumps(data, ensure_ascii=False)


@dataclass(frozen=True)
class ErrorStyle:
    """How a tool words its errors: a label before the text such as 'Error: ', or a JSON object (`shape`)."""

    prefix: str = "Error: "
    shape: JsonShape | None = None

    def format(self, message: str) -> str:
        return self.shape.format(message) if self.shape is not None else self.prefix + message

    @classmethod
    def learn(cls, calls: Sequence[RecordedCall], name: str) -> ErrorStyle | None:
        """The most common shape of `name`'s recorded errors, else of all the trace's tools' errors; None when
        neither has one."""
        own = [c.result for c in calls if c.name == name and c.result and is_error_result(c.result, c.is_error)]
        every = [c.result for c in calls if c.result and is_error_result(c.result, c.is_error)]
        return style_of(own) or style_of(every)


def is_error_result(result: str, marked: bool | None) -> bool:
    """Whether a recorded result is an error: marked as one, or a JSON object shaped as one."""
    if marked:
        return True
    data = _object(result)
    if data is None or _message_path(data) is None:
        return False
    status = data.get("status")
    return bool(data.get("error")) or (isinstance(status, str) and status.lower() in _FAILED)


def style_of(errors: Sequence[str]) -> ErrorStyle | None:
    """The style most of `errors` share (a label, or a JSON skeleton); None when most have none."""
    if not errors:
        return None
    keys = [_shape_key(e) for e in errors]
    key, _ = Counter(keys).most_common(1)[0]
    if key is None:
        return None
    if key[0] == "prefix":
        return ErrorStyle(prefix=key[1])
    objects = [data for e, k in zip(errors, keys, strict=True) if k == key and (data := _object(e)) is not None]
    return ErrorStyle(shape=_json_shape(objects))


def _shape_key(text: str) -> tuple[str, Any] | None:
    data = _object(text)
    if data is not None and _message_path(data) is not None:
        return "json", tuple(sorted(_leaves(data)))
    head, sep, _ = text.partition(": ")
    if sep and len(head) < _MAX_PREFIX and "\n" not in head:
        return "prefix", head + sep
    return None


def _json_shape(objects: list[dict[str, Any]]) -> JsonShape:
    """The shape of error objects of one skeleton: fields equal in all kept, the others dropped."""
    first = objects[0]
    message = _message_path(first)
    assert message is not None  # the skeleton was chosen for having one
    code = next((p for p in sorted(_leaves(first), key=len) if p[-1] in CODE_KEYS and p != message), None)
    code_value = None if code is None else _not_found([_get(o, code) for o in objects])
    if code_value is None:
        code = None  # a code of no one kind: kept like any other field, where all errors had the same
    template: dict[str, Any] = {}
    for path in _leaves(first):
        value = _get(first, path)
        if path in (message, code) or all(_get(o, path) == value for o in objects[1:]):
            _put(template, path, value)
    return JsonShape(json.dumps(template), message, code, code_value)


def _not_found(codes: list[Any]) -> int | str | None:
    """A "not found" code of the kind the recorded codes are: 404 for HTTP statuses, not_found for words, else the
    most common recorded number (a JSON-RPC code); None for codes of mixed kinds."""
    if all(isinstance(c, int) and not isinstance(c, bool) for c in codes):
        return 404 if all(100 <= c <= 599 for c in codes) else Counter(codes).most_common(1)[0][0]
    if all(isinstance(c, str) for c in codes):
        return "NOT_FOUND" if all(c.isupper() for c in codes) else "not_found"
    return None


def _object(text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _message_path(data: dict[str, Any], depth: int = 0) -> KeyPath | None:
    """Where the text of an error object is: a message field at the top level first, then in nested objects."""
    for key in MESSAGE_KEYS:
        if isinstance(data.get(key), str):
            return (key,)
    if depth >= _MAX_DEPTH:
        return None
    for key, value in data.items():
        if isinstance(value, dict) and (sub := _message_path(value, depth + 1)) is not None:
            return (str(key), *sub)
    return None


def _leaves(data: dict[str, Any], depth: int = 0) -> list[KeyPath]:
    """The key paths of an object's values that are not objects (objects deeper than _MAX_DEPTH count as values)."""
    paths: list[KeyPath] = []
    for key, value in data.items():
        if isinstance(value, dict) and value and depth < _MAX_DEPTH:
            paths += [(str(key), *sub) for sub in _leaves(value, depth + 1)]
        else:
            paths.append((str(key),))
    return paths


def _get(data: Any, path: KeyPath) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return _MISSING
        data = data[key]
    return data


def _put(data: dict[str, Any], path: KeyPath, value: Any) -> None:
    for key in path[:-1]:
        data = data.setdefault(key, {})
    data[path[-1]] = value


_MISSING = object()
