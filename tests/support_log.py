"""A support team's own chat log, written as an app writes it, and the CSAT export beside it.

One JSON line per model call, conversations interleaved by time, with `session_id`, `timestamp`, `latency_ms` and
`user_id` on the log line beside `request` and `response` (not in `request.metadata`). Tool results are JSON, and
failed tools answer with the shapes real backends use (`{"error": {...}}`, `{"status": "error"}`). The CSAT file is
what an analytics tool exports: 1-5 stars and a resolution status per surveyed session.

Families (the truth tests compare with):
- `resolved`: the order is looked up and its delivery date given (5 stars);
- `upstream_timeout`: the order lookup answers `{"error": {"code": 504, ...}}` and the agent apologises vaguely;
- `address_invalid`: address validation fails (one message, the country code varies) and the agent gives up;
- `gave_up`: a refund is asked for and the agent says it cannot help, offering no human;
- `handed_off`: the same request, handed to a human with the hand-off tool (3 stars).
"""

from __future__ import annotations

import csv
import json
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Literal

SYSTEM = "You are Acme's support assistant. Use the tools to look up orders, validate addresses and issue refunds."
FAMILIES = ("resolved", "upstream_timeout", "address_invalid", "gave_up", "handed_off")
STARS = {"resolved": (4, 5), "upstream_timeout": (1, 2), "address_invalid": (1, 2), "gave_up": (1, 1),
         "handed_off": (3, 3)}
COUNTRIES = ("US", "GB", "DE", "FR", "IN")
TOOLS = [
    {"type": "function", "function": {"name": name, "description": desc, "parameters": {
        "type": "object", "properties": {p: {"type": "string"} for p in params}, "required": list(params)}}}
    for name, desc, params in (
        ("lookup_order", "Look up an order by id.", ("order_id",)),
        ("validate_address", "Validate a delivery address.", ("address", "country")),
        ("issue_refund", "Refund an order.", ("order_id", "amount")),
        ("handoff_to_human", "Hand the conversation to a human agent.", ("reason",)),
    )
]


@dataclass
class Session:
    session_id: str
    family: str
    stars: int | None
    """None when the customer was not surveyed."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    """The whole conversation, OpenAI-style, system prompt first."""


@dataclass
class SupportLog:
    log: Path
    csat: Path
    sessions: list[Session]

    def by_family(self, family: str) -> list[Session]:
        return [s for s in self.sessions if s.family == family]


def write_support_log(folder: Path, n_sessions: int = 40, seed: int = 0,
                      style: Literal["openai", "anthropic"] = "openai", surveyed: float = 0.8,
                      request_metadata: bool = False) -> SupportLog:
    """Write `chat.jsonl` and `csat.csv` under `folder`; sessions cycle through the families. With
    `request_metadata`, an OpenAI-style request also carries `metadata: {"session_id": ...}`, where some loggers
    put it (and where ingest reads it)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    start = datetime(2026, 11, 3, 9, 0, tzinfo=timezone.utc)
    sessions, lines = [], []
    for i in range(n_sessions):
        family = FAMILIES[i % len(FAMILIES)]
        stars = rng.randint(*STARS[family]) if rng.random() < surveyed else None
        session = Session(f"sess-{i:04d}", family, stars, _conversation(family, i, rng))
        sessions.append(session)
        begin = start + timedelta(seconds=rng.randint(0, 3600))
        lines += _log_lines(session, begin, rng, style, request_metadata)
    lines.sort(key=lambda line: line["timestamp"])
    (folder / "chat.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    _write_csat(folder / "csat.csv", sessions)
    return SupportLog(folder / "chat.jsonl", folder / "csat.csv", sessions)


def _conversation(family: str, i: int, rng: random.Random) -> list[dict[str, Any]]:
    order = f"A-{1000 + i}"
    email = f"customer{i}@example.com"
    if family in ("resolved", "upstream_timeout"):
        user = f"Hi, where is my order {order}? You can reach me at {email} or +1 415 555 01{i % 100:02d}."
        result = ({"order_id": order, "status": "shipped", "eta": f"2026-11-{10 + i % 15}"} if family == "resolved"
                  else {"error": {"code": 504, "message": "upstream timeout"}})
        last = (f"Your order {order} has shipped and should arrive on {result.get('eta')}." if family == "resolved"
                else "Sorry, something went wrong on our side. Please try again later.")
        return _with_tool(user, "lookup_order", {"order_id": order}, result, last, i)
    if family == "address_invalid":
        country = COUNTRIES[i // len(FAMILIES) % len(COUNTRIES)]  # i % len(FAMILIES) is this family's, fixed
        user = f"Please ship order {order} to 12 Long Street, {rng.randint(10000, 99999)}, {country}."
        result = {"status": "error", "message": f"invalid postal code for country {country}"}
        return _with_tool(user, "validate_address", {"address": "12 Long Street", "country": country}, result,
                          "I'm sorry, I can't help with that address.", i)
    user = f"I want a refund of ${20 + i}.00 for order {order}, it arrived broken. My email is {email}."
    if family == "gave_up":
        return [_msg("system", SYSTEM), _msg("user", user),
                _msg("assistant", "I'm sorry, but I can't help with refunds. Unfortunately there is nothing I can do.")]
    return _with_tool(user, "handoff_to_human", {"reason": f"refund for damaged order {order}"},
                      {"ok": True, "ticket": f"T-{i}"}, "I've passed this to a colleague who will email you today.", i)


def _with_tool(user: str, tool: str, args: dict[str, Any], result: dict[str, Any], last: str,
               i: int) -> list[dict[str, Any]]:
    call_id = f"call_{tool}_{i}"
    call = {"id": call_id, "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}
    return [_msg("system", SYSTEM), _msg("user", user), {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)}, _msg("assistant", last)]


def _msg(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "content": content}


def _log_lines(session: Session, begin: datetime, rng: random.Random, style: str,
               request_metadata: bool) -> list[dict[str, Any]]:
    """One line per assistant turn: the request holds everything before it, the response the turn."""
    out = []
    at = begin
    for idx, message in enumerate(session.messages):
        if message["role"] != "assistant":
            continue
        latency = rng.randint(300, 2500)
        at += timedelta(milliseconds=latency + rng.randint(500, 20000))
        request, response = (_openai_call if style == "openai" else _anthropic_call)(
            session.messages[:idx], message, f"{session.session_id}-{idx}")
        if request_metadata and style == "openai":
            request["metadata"] = {"session_id": session.session_id}
        out.append({"timestamp": at.isoformat().replace("+00:00", "Z"), "session_id": session.session_id,
                    "user_id": f"u-{session.session_id[-4:]}", "latency_ms": latency,
                    "request": request, "response": response})
    return out


def _openai_call(prior: list[dict[str, Any]], message: dict[str, Any],
                 rid: str) -> tuple[dict[str, Any], dict[str, Any]]:
    request = {"model": "gpt-4o-mini", "messages": prior, "tools": TOOLS}
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    response = {"id": f"chatcmpl-{rid}", "object": "chat.completion", "model": "gpt-4o-mini-2024-07-18",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 40 * len(prior), "completion_tokens": 25,
                          "total_tokens": 40 * len(prior) + 25}}
    return request, response


def _anthropic_call(prior: list[dict[str, Any]], message: dict[str, Any],
                    rid: str) -> tuple[dict[str, Any], dict[str, Any]]:
    tools = [{"name": t["function"]["name"], "description": t["function"]["description"],
              "input_schema": t["function"]["parameters"]} for t in TOOLS]
    request = {"model": "claude-haiku-4-5", "max_tokens": 1024, "system": SYSTEM,
               "messages": [_anthropic_message(m) for m in prior if m["role"] != "system"], "tools": tools}
    content = _anthropic_message(message)["content"]
    stop = "tool_use" if message.get("tool_calls") else "end_turn"
    response = {"id": f"msg_{rid}", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
                "content": content, "stop_reason": stop,
                "usage": {"input_tokens": 40 * len(prior), "output_tokens": 25}}
    return request, response


def _anthropic_message(m: dict[str, Any]) -> dict[str, Any]:
    if m["role"] == "tool":
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": m["tool_call_id"],
                                             "content": m["content"]}]}
    if m.get("tool_calls"):
        return {"role": "assistant", "content": [
            {"type": "tool_use", "id": c["id"], "name": c["function"]["name"],
             "input": json.loads(c["function"]["arguments"])} for c in m["tool_calls"]]}
    return {"role": m["role"], "content": [{"type": "text", "text": m["content"]}]}


def _write_csat(path: Path, sessions: list[Session]) -> None:
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["session_id", "stars", "resolution", "surveyed_at"])
        for s in sessions:
            if s.stars is not None:
                resolution = "resolved" if s.family in ("resolved", "handed_off") else "unresolved"
                writer.writerow([s.session_id, s.stars, resolution, "2026-11-04"])


def write_conversations(path: Path, first: int, n: int, seed: int = 0) -> Path:
    """`n` whole conversations (numbered from `first`, families in turn) as an OpenAI chat JSONL file, one
    `{"id", "messages"}` per line: many traces in little time to ingest, for tests of the store under load."""
    rng = random.Random(seed + first)
    with path.open("w") as f:
        for i in range(first, first + n):
            messages = _conversation(FAMILIES[i % len(FAMILIES)], i, rng)
            f.write(json.dumps({"id": f"conversation-{i}", "messages": messages}) + "\n")
    return path


def write_support_spans(log: SupportLog, path: Path, service: str = "support-app") -> Path:
    """The OpenAI-style support log's calls as an app with no span around its loop exports them: one OTLP/JSON
    line per call, each call a trace of its own with one parentless `chat` span (OTel GenAI semantic conventions:
    `gen_ai.input.messages` / `gen_ai.output.messages` as parts, `gen_ai.conversation.id` the session id)."""
    lines = []
    for n, line in enumerate(json.loads(raw) for raw in log.log.read_text().splitlines()):
        end = datetime.fromisoformat(line["timestamp"].replace("Z", "+00:00"))
        start = end - timedelta(milliseconds=line["latency_ms"])
        reply = line["response"]["choices"][0]["message"]
        attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": line["request"]["model"],
                 "gen_ai.conversation.id": line["session_id"],
                 "gen_ai.input.messages": json.dumps([_parts(m) for m in line["request"]["messages"]]),
                 "gen_ai.output.messages": json.dumps([{**_parts(reply), "finish_reason": "stop"}]),
                 "gen_ai.usage.input_tokens": line["response"]["usage"]["prompt_tokens"],
                 "gen_ai.usage.output_tokens": line["response"]["usage"]["completion_tokens"]}
        span = {"traceId": f"{n + 1:032x}", "spanId": f"{n + 1:016x}", "name": "chat gpt-4o-mini", "kind": 3,
                "startTimeUnixNano": str(int(start.timestamp() * 1e9)),
                "endTimeUnixNano": str(int(end.timestamp() * 1e9)),
                "attributes": [_attr(k, v) for k, v in attrs.items()], "status": {}}
        resource = {"attributes": [_attr("service.name", service)]}
        lines.append({"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {"name": "support"},
                                                                                "spans": [span]}]}]})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _parts(m: dict[str, Any]) -> dict[str, Any]:
    if m["role"] == "tool":
        return {"role": "tool", "parts": [{"type": "tool_call_response", "id": m["tool_call_id"],
                                           "response": m["content"]}]}
    parts: list[dict[str, Any]] = [{"type": "text", "content": m["content"]}] if m.get("content") else []
    parts += [{"type": "tool_call", "id": c["id"], "name": c["function"]["name"],
               "arguments": json.loads(c["function"]["arguments"])} for c in m.get("tool_calls") or []]
    return {"role": m["role"], "parts": parts}


def _attr(key: str, value: str | int) -> dict[str, Any]:
    return {"key": key, "value": {"intValue": str(value)} if isinstance(value, int) else {"stringValue": value}}
