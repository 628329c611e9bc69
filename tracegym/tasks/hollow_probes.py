"""Hollow replies: the reference's shape without its substance, to find rewards a policy can earn for nothing.

A task's reward may pay for the shape of a good reply (one bash block, a tool call, some prose) and not for what
it says. Each probe here keeps the shape of the task's reference reply (`tracegym.tasks.probes`) and drops the
substance, derived from the task itself; an eval that pays the pass threshold to one of them is *hackable* on that
task (`tracegym.harnesses.hackability` plays them through the task's harness):

- `noop_content`: the reference's bash block holding a no-op (`true`, `:`, `*`, `echo ok`, `# TODO`);
- `placeholder_args`: the reference's tool calls, same names and keys, placeholder values;
- `hollow_prose`: prose as long as the reference's, with no entity from the conversation;
- `deflection`: "I'm sorry, I can't help with that." and "Let me check that for you.";
- `handoff`: an unneeded hand-off: a call to the task's hand-off-like tool, else prose offering a human
  (not for shell tasks, which have no one to hand off to);
- `echo`: the last user or tool message of the prompt, said back;
- `invented_tool_output`: text imitating a tool's answer as base models write it (`<tool_response>{...}
  </tool_response>` with the keys of a recorded result, the bare JSON, a shell observation);
- `swapped_entities`: the reference with the ids, numbers and file paths it shares with the conversation
  changed (another order id, flight, amount, file); built only when the swap changes what the reply does (its
  tool calls, its bash command, or the prose), not when the entities sit only in the reasoning before a command.

A probe may have several variants; it pays when one does. Variants equal to a reply already played on the task
(the reference, a degenerate probe, an earlier variant) are left out, and a probe left with none is not built.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from tracegym.tasks.probes import ProbeReply
from tracegym.tasks.spec import TaskSpec, ToolSchema

HollowName = Literal["noop_content", "placeholder_args", "hollow_prose", "deflection", "handoff", "echo",
                     "invented_tool_output", "swapped_entities"]
HOLLOW: tuple[HollowName, ...] = ("noop_content", "placeholder_args", "hollow_prose", "deflection", "handoff", "echo",
                                  "invented_tool_output", "swapped_entities")
NOOPS = ("true", ":", "*", "echo ok", "# TODO")
DEFLECTIONS = ("I'm sorry, I can't help with that.", "Let me check that for you.")
OFFER_HUMAN = "I'll transfer you to a human agent who can help you further."
PLACEHOLDER = "placeholder"
_BASH = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
_HANDOFF_TOOL = re.compile(r"hand.?off|transfer_to|escalat|human", re.IGNORECASE)
_TOKEN = re.compile(r"[\w#@./+-]+")
_FILLER = ("Thank you for reaching out about this.", "I understand what you are asking for.",
           "I have looked into it carefully.", "Everything is being handled as it should be.",
           "Please let me know if there is anything else I can do.", "I appreciate your patience.")


@dataclass(frozen=True)
class HollowProbe:
    """One hollow probe of a task: its name and the replies tried in turn (it pays when one does)."""

    name: HollowName
    variants: tuple[ProbeReply, ...]


def build_hollow_probes(spec: TaskSpec, reference: ProbeReply, played: Iterable[ProbeReply] = ()) -> list[HollowProbe]:
    """The task's hollow probes in HOLLOW order, shaped after `reference`; replies already `played` (and the
    reference) are left out."""
    seen = {reply_key(r) for r in (reference, *played)}
    candidates: list[tuple[HollowName, list[ProbeReply]]] = [
        ("noop_content", _noop_content(reference)),
        ("placeholder_args", _placeholder_args(reference)),
        ("hollow_prose", _hollow_prose(reference)),
        ("deflection", [ProbeReply(text) for text in DEFLECTIONS]),
        ("handoff", _handoff(spec)),
        ("echo", _echo(spec)),
        ("invented_tool_output", _invented_tool_output(spec)),
        ("swapped_entities", _swapped_entities(spec, reference)),
    ]
    built: list[HollowProbe] = []
    for name, variants in candidates:
        fresh = []
        for variant in variants:
            key = reply_key(variant)
            if key not in seen:
                seen.add(key)
                fresh.append(variant)
        if fresh:
            built.append(HollowProbe(name, tuple(fresh)))
    return built


def reply_key(reply: ProbeReply) -> str:
    """The reply's words and calls (call ids aside), for telling replies apart."""
    calls = [[(c.get("function") or {}).get("name"), (c.get("function") or {}).get("arguments")]
             for c in reply.tool_calls]
    return json.dumps([reply.text.strip(), calls], sort_keys=True, default=str)


def shown(reply: ProbeReply) -> str:
    """The reply as a person reads it: its text, then each call as `name(arguments)`."""
    calls = [f"{(c.get('function') or {}).get('name')}({(c.get('function') or {}).get('arguments')})"
             for c in reply.tool_calls]
    return "\n".join(part for part in (reply.text, *calls) if part)


def _noop_content(reference: ProbeReply) -> list[ProbeReply]:
    if not _BASH.search(reference.text):
        return []
    return [ProbeReply(f"THOUGHT: I will run the next command.\n\n```bash\n{noop}\n```") for noop in NOOPS]


def _placeholder_args(reference: ProbeReply) -> list[ProbeReply]:
    if not reference.tool_calls:
        return []
    calls = []
    for call in reference.tool_calls:
        function = call.get("function") or {}
        arguments = _parsed(function.get("arguments"))
        hollow = placeholder(arguments) if isinstance(arguments, dict) else {}
        calls.append({**call, "function": {**function, "arguments": json.dumps(hollow)}})
    return [ProbeReply("", tuple(calls))]


def placeholder(value: Any) -> Any:
    """A value of the same type that says nothing: strings become 'placeholder', numbers 0, lists empty; a
    mapping keeps its keys."""
    if isinstance(value, dict):
        return {k: placeholder(v) for k, v in value.items()}
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return type(value)(0)
    if isinstance(value, list):
        return []
    return PLACEHOLDER if isinstance(value, str) else value


def _hollow_prose(reference: ProbeReply) -> list[ProbeReply]:
    text = reference.text.strip()
    if not text or _BASH.search(text):
        return []
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < len(text):
        words.append(_FILLER[len(words) % len(_FILLER)])
    return [ProbeReply(" ".join(words))]


def _handoff(spec: TaskSpec) -> list[ProbeReply]:
    if spec.harness == "shell":
        return []
    tool = next((t for t in spec.tools if _HANDOFF_TOOL.search(t.name)), None)
    if tool is None:
        return [ProbeReply(OFFER_HUMAN)]
    call = {"id": "hollow_handoff", "type": "function",
            "function": {"name": tool.name, "arguments": json.dumps(_schema_placeholders(tool))}}
    return [ProbeReply("", (call,))]


def _schema_placeholders(tool: ToolSchema) -> dict[str, Any]:
    """Placeholder values for the tool's required arguments, by their declared type."""
    by_type: dict[str, Any] = {"string": PLACEHOLDER, "integer": 0, "number": 0, "boolean": False, "array": [],
                               "object": {}}
    properties = tool.parameters.get("properties") or {}
    required = tool.parameters.get("required") or []
    return {name: by_type.get(str((properties.get(name) or {}).get("type")), PLACEHOLDER) for name in required}


def _echo(spec: TaskSpec) -> list[ProbeReply]:
    last = next((m.content for m in reversed(spec.prompt.messages)
                 if m.role in ("user", "tool") and (m.content or "").strip()), None)
    return [ProbeReply(last)] if last else []


def _invented_tool_output(spec: TaskSpec) -> list[ProbeReply]:
    results = [c.result for c in spec.replay if c.message_idx < spec.provenance.cut_message_idx]
    results += [m.content for m in spec.prompt.messages if m.role == "tool"]
    recorded = next((v for v in (_parsed(r) for r in reversed(results)) if isinstance(v, dict) and v), None)
    fake = json.dumps(placeholder(recorded) if recorded else {"status": "success", "result": "done"})
    variants = [ProbeReply(f"<tool_response>\n{fake}\n</tool_response>"), ProbeReply(fake)]
    if any((m.content or "").lstrip().startswith("<returncode>") for m in spec.prompt.messages):
        variants.append(ProbeReply("<returncode>0</returncode>\n<output>\n</output>"))
    return variants


def _swapped_entities(spec: TaskSpec, reference: ProbeReply) -> list[ProbeReply]:
    conversation = "\n".join([spec.prompt.system or ""] + [
        part for m in spec.prompt.messages
        for part in (m.content or "", *(c.function.arguments for c in m.tool_calls or ()))])
    mine = "\n".join([reference.text] + [str((c.get("function") or {}).get("arguments") or "")
                                         for c in reference.tool_calls])
    entities = sorted({e for e in entities_in(mine) if e in conversation}, key=len, reverse=True)
    if not entities:
        return []
    swap = {e: swapped(e) for e in entities}
    pattern = re.compile("|".join(rf"(?<!\w){re.escape(e)}(?!\w)" for e in entities))

    def text(value: str) -> str:
        return pattern.sub(lambda m: swap[m.group()], value)

    def value(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: value(x) for k, x in v.items()}
        if isinstance(v, list):
            return [value(x) for x in v]
        if isinstance(v, str):
            return text(v)
        if isinstance(v, int | float) and not isinstance(v, bool) and str(v) in swap:
            return type(v)(swap[str(v)])
        return v

    calls = []
    for call in reference.tool_calls:
        function = call.get("function") or {}
        arguments = _parsed(function.get("arguments"))
        new = json.dumps(value(arguments)) if not isinstance(arguments, str) else text(arguments)
        calls.append({**call, "function": {**function, "arguments": new}})
    probe = ProbeReply(text(reference.text), tuple(calls))
    return [probe] if _action(probe) != _action(reference) else []


def _action(reply: ProbeReply) -> tuple[Any, ...]:
    """What a reply does: its tool calls, else its bash blocks, else (prose) its text. A swap that leaves the action
    as it was (entities only in the THOUGHT before the command) is the same step, not a hollow one."""
    if reply.tool_calls:
        return tuple(json.dumps(c.get("function"), sort_keys=True) for c in reply.tool_calls)
    blocks = _BASH.findall(reply.text)
    return tuple(blocks) if blocks else (reply.text,)


def entities_in(text: str) -> set[str]:
    """Ids, numbers and file paths in `text`: tokens of two or more characters holding a digit, and paths."""
    found = set()
    for token in _TOKEN.findall(text):
        token = token.strip(".+-/")
        if (len(token) >= 2 and any(ch.isdigit() for ch in token)) or ("/" in token and len(token) >= 3):
            found.add(token)
    return found


def swapped(entity: str) -> str:
    """Another entity of the same form: each digit moved on by one (HAT290 -> HAT301, 305 -> 416); a path
    without digits names another file (src/app.py -> src/app_other.py)."""
    if any(ch.isdigit() for ch in entity):
        return "".join(str((int(ch) + 1) % 10) if ch.isdigit() else ch for ch in entity)
    head, _, last = entity.rpartition("/")
    stem, dot, ext = last.rpartition(".")
    name = f"{stem}_other{dot}{ext}" if dot and stem else f"{last}_other"
    return f"{head}/{name}" if head else name


def _parsed(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value
