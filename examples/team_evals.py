"""Evals a team might already run, used by examples/evals*.yaml (kind: python).

- τ-bench airline policy: before any action that changes a booking, the agent lists the details and gets an
  explicit "yes" from the user (`confirmed_before_write`).
- The reply parses as the harness expects (`well_formed`).
- mini-swe-agent's own format rule: exactly one bash block a turn (`one_bash_action`).
- After a tool error, the agent answers the error instead of retrying blindly or inventing the tool's answer
  (`handles_tool_error`).
"""

from __future__ import annotations

import re
from typing import Any

WRITE_TOOLS = {
    "book_reservation", "cancel_reservation", "update_reservation_flights",
    "update_reservation_baggages", "update_reservation_passengers",
}


def confirmed_before_write(trajectory: Any) -> tuple[float, dict[str, Any]]:
    """The share of booking changes made right after the user said yes (1.0 when there were none)."""
    last_user = ""
    writes = confirmed = 0
    for msg in trajectory.messages:
        if msg["role"] == "user":
            last_user = (msg.get("content") or "").casefold()
        for call in msg.get("tool_calls") or []:
            if call["function"]["name"] in WRITE_TOOLS:
                writes += 1
                confirmed += "yes" in last_user
    return (confirmed / writes if writes else 1.0), {"writes": writes, "confirmed": confirmed}


def well_formed(trajectory: Any) -> tuple[float, dict[str, Any]]:
    """1.0 when the harness could parse every reply as a call to a tool the agent was given (or as plain text):
    the format check in examples/evals-train.yaml. A call to a tool the task does not declare, or with arguments
    that break its schema, is one of the harness's malformed calls. With `prompt.tool_schemas: compact` the task
    carries no schemas, so only parse errors count (the replay answers a call to an invented tool with an error)."""
    malformed = trajectory.malformed_tool_calls or 0
    return float(malformed == 0), {"malformed": malformed}


# mini-swe-agent 1.x (agents/default.py, parse_action): the actions of a reply; anything but exactly one is a format
# error, answered with "Please always provide EXACTLY ONE action in triple backticks".
MINI_SWE_ACTIONS = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
# Tool markup left in a reply's text: a tool's answer the agent wrote itself (the reply invents what the tool said),
# or the remains of a call the harness could not read as one (a parsed call leaves no markup in the text).
TOOL_MARKUP = re.compile(r"</?\s*(tool_response|tool_result|tool_output|function_results?|tool_call)\b", re.IGNORECASE)


def reply_text(trajectory: Any) -> str:
    """The text of the agent's first reply after the prompt ("" when it said nothing)."""
    replies = trajectory.messages[trajectory.prompt_messages:]
    return (replies[0].get("content") or "") if replies else ""


def one_bash_action(trajectory: Any) -> tuple[float, dict[str, Any]]:
    """1.0 when the reply holds exactly one ```bash block with a command in it, as mini-swe-agent requires."""
    actions = MINI_SWE_ACTIONS.findall(reply_text(trajectory))
    return float(len(actions) == 1 and actions[0].strip() != ""), {"actions": len(actions)}


def handles_tool_error(trajectory: Any) -> tuple[float, dict[str, Any]]:
    """After a tool answered with an error: 1.0 for a reply that says something or calls a tool, without
    repeating a failed call unchanged, without a call the harness could not parse, and without tool markup in its
    text (a tool's answer written by the agent itself). The recorded failing call, an empty reply and invented tool
    output all earn 0."""
    calls = trajectory.agent_calls()
    failed = [(c.name, c.arguments) for c in trajectory.tool_calls()[:-len(calls) or None]
              if str(c.result or "").startswith("Error")]
    text = reply_text(trajectory).strip()
    checks = {
        "empty": not calls and not text,
        "malformed": bool(trajectory.malformed_tool_calls),
        "retried_unchanged": any((c.name, c.arguments) in failed for c in calls),
        "tool_markup": bool(TOOL_MARKUP.search(text)),
    }
    return float(not any(checks.values())), {k: v for k, v in checks.items() if v}
