"""An eval a team might already run, used by examples/evals.yaml (kind: python).

τ-bench airline policy: before any action that changes a booking, the agent
lists the details and gets an explicit "yes" from the user.
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
    """1.0 when the harness could parse every reply as the agent meant it and every call names a tool the agent
    was given: the format half of the reward in examples/evals-train.yaml.

    With `prompt.tool_schemas: compact` the tools are listed in the system prompt and the task carries no
    schemas, so `trajectory.tools` is empty and only parse errors count here (the replay answers a call to an
    invented tool with an error, and gold_tool counts it against the reply)."""
    malformed = trajectory.malformed_tool_calls or 0
    unknown = sorted({c.name for c in trajectory.tool_calls() if trajectory.tools and c.name not in trajectory.tools})
    return float(malformed == 0 and not unknown), {"malformed": malformed, "unknown_tools": unknown}
