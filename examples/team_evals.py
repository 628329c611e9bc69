"""Evals a team might already run, used by examples/evals*.yaml (kind: python).

- τ-bench airline policy: before any action that changes a booking, the agent lists the details and gets an
  explicit "yes" from the user (`confirmed_before_write`).
- The reply parses as the harness expects (`well_formed`).

Checks for failure families that recur across agents (mini-swe-agent's format rule, answering a tool error) ship
with tracegym in `tracegym.evals.families`; examples/evals-learn.yaml binds them.
"""

from __future__ import annotations

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

