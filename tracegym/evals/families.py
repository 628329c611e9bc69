"""Checks for failure families that recur across agents, ready to bind in an evals.yaml as `kind: python`.

```yaml
- name: one_bash_action
  kind: python
  function: tracegym.evals.families:one_bash_action
```

Each takes the trajectory of one reply (tasks cut at the agent's turn after a failure, `tasks generate --cuts
recovery`) and returns (reward, details). A degenerate reply (empty, the failure itself, the wrong shape) earns 0.

- `one_bash_action`: mini-swe-agent's own format rule, exactly one bash block a turn.
- `handles_tool_error`: the answer to a tool error neither retries the failed call unchanged nor invents the
  tool's answer.
"""

from __future__ import annotations

import re
from typing import Any

from tracegym.evals.scorers.trajectory import Trajectory

# mini-swe-agent 1.x (agents/default.py, parse_action): the actions of a reply; anything but exactly one is a format
# error, answered with "Please always provide EXACTLY ONE action in triple backticks".
MINI_SWE_ACTIONS = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
# Tool markup left in a reply's text: a tool's answer the agent wrote itself (the reply invents what the tool said),
# or the remains of a call the harness could not read as one (a parsed call leaves no markup in the text).
TOOL_MARKUP = re.compile(r"</?\s*(tool_response|tool_result|tool_output|function_results?|tool_call)\b", re.IGNORECASE)


def reply_text(trajectory: Trajectory) -> str:
    """The text of the agent's first reply after the prompt ("" when it said nothing)."""
    replies = trajectory.messages[trajectory.prompt_messages:]
    return (replies[0].get("content") or "") if replies else ""


def one_bash_action(trajectory: Trajectory) -> tuple[float, dict[str, Any]]:
    """1.0 when the reply holds exactly one ```bash block with a command in it, as mini-swe-agent requires."""
    actions = MINI_SWE_ACTIONS.findall(reply_text(trajectory))
    return float(len(actions) == 1 and actions[0].strip() != ""), {"actions": len(actions)}


def handles_tool_error(trajectory: Trajectory) -> tuple[float, dict[str, Any]]:
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
