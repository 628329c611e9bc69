"""Redacting one text, or one JSON document, with a numbering; counting what was found."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import orjson

from tracegym import exact_json
from tracegym.redact.detect import Detector, Finding
from tracegym.redact.pseudonyms import Pseudonyms


@dataclass
class Tally:
    """What one redaction found: per rule, per trace, and a few masked examples per rule."""

    by_rule: Counter[str] = field(default_factory=Counter)
    by_trace: Counter[str] = field(default_factory=Counter)
    by_column: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, findings: list[Finding], trace: str | None, column: str) -> None:
        for f in findings:
            self.by_rule[f.rule.name] += 1
            self.by_column[column] += 1
            if trace is not None:
                self.by_trace[trace] += 1
            shown = self.examples.setdefault(f.rule.name, [])
            if len(shown) < 3:
                masked = mask(f.value)
                if masked not in shown:
                    shown.append(masked)

    def merge(self, other: Tally) -> None:
        self.by_rule.update(other.by_rule)
        self.by_trace.update(other.by_trace)
        self.by_column.update(other.by_column)
        for rule, shown in other.examples.items():
            mine = self.examples.setdefault(rule, [])
            mine.extend(s for s in shown if s not in mine and len(mine) < 3)

    @property
    def total(self) -> int:
        return sum(self.by_rule.values())


def mask(value: str) -> str:
    """A value shown in a report without giving it away: its first two and last two characters, the rest `*`
    (all of it `*` when short); line breaks shown as ⏎."""
    flat = value.replace("\r", "").replace("\n", "⏎")
    if len(flat) <= 8:
        return "*" * len(flat)
    return flat[:2] + "*" * min(len(flat) - 4, 24) + flat[-2:]


def apply(text: str, findings: list[Finding], names: Pseudonyms) -> str:
    """`text` with each finding replaced by its placeholder."""
    parts: list[str] = []
    at = 0
    for f in findings:
        parts.append(text[at:f.start])
        parts.append(names.placeholder(f.rule.label, f.key))
        at = f.end
    parts.append(text[at:])
    return "".join(parts)


def redact_json_text(text: str, findings: list[Finding], names: Pseudonyms, detector: Detector) -> str:
    """Redact JSON text (tool-call arguments) in place; if that would not parse (a value written with escapes
    the spans cannot follow), redact every string of the parsed document instead and write it back."""
    redacted = apply(text, findings, names)
    try:
        orjson.loads(redacted)
        return redacted
    except orjson.JSONDecodeError:
        pass
    try:
        document = exact_json.loads(text)
    except orjson.JSONDecodeError:
        return redacted  # it was not JSON before either
    return exact_json.dumps(_walk(document, names, detector))


def _walk(value: object, names: Pseudonyms, detector: Detector) -> object:
    if isinstance(value, str):
        return apply(value, detector.find(value), names)
    if isinstance(value, list):
        return [_walk(v, names, detector) for v in value]
    if isinstance(value, dict):
        return {_walk(k, names, detector): _walk(v, names, detector) for k, v in value.items()}
    return value


def redact_path(path: str, detector: Detector, names: Pseudonyms) -> str:
    """A path with each segment redacted alone, so that no placeholder swallows a separator and the folders
    stay as they were: `/home/x/jane.doe@acme.com.jsonl` -> `/home/x/<EMAIL_3>.jsonl`."""
    return "/".join(apply(part, detector.find(part), names) if part else part for part in path.split("/"))


def redact_spec(text: str, found: list[Finding], names: Pseudonyms, lasting: Pseudonyms, detector: Detector) -> str:
    """A task spec (JSON) redacted as its trace's content, except the values it took from the store's identifier
    columns and tool schemas (`trace_id`, `call_id`, `name`, `tools`, ...), numbered store-wide as those are."""
    redacted = exact_json.loads(redact_json_text(text, found, names, detector))
    return exact_json.dumps(_overlay(redacted, exact_json.loads(text), lasting, detector))


SPEC_LASTING = frozenset({"trace_id", "session_id", "call_id", "tool_call_id", "id", "name", "tools"})


def _overlay(redacted: object, original: object, lasting: Pseudonyms, detector: Detector) -> object:
    """`redacted` with each value under a `SPEC_LASTING` key redacted again from `original`, store-wide."""
    if isinstance(redacted, dict) and isinstance(original, dict) and len(redacted) == len(original):
        return {rk: _lasting(ov, lasting, detector) if ok in SPEC_LASTING else _overlay(rv, ov, lasting, detector)
                for (rk, rv), (ok, ov) in zip(redacted.items(), original.items(), strict=True)}
    if isinstance(redacted, list) and isinstance(original, list) and len(redacted) == len(original):
        return [_overlay(r, o, lasting, detector) for r, o in zip(redacted, original, strict=True)]
    return redacted


def _lasting(value: object, lasting: Pseudonyms, detector: Detector) -> object:
    text = exact_json.dumps(value)
    found = detector.find(text)
    return exact_json.loads(redact_json_text(text, found, lasting, detector)) if found else value
