"""The context policy: shorter prompts for a small model on a CPU, applied alike to warm-start examples and tasks.

Three knobs (`PromptSection`):

- `context: last-user` keeps only the messages since the last user message, `last-exchange` also the agent's
  last words to the user before it (`tracegym.tasks.spec.trim_context`);
- `system_max_chars` cuts the system prompt (0 drops it);
- `tool_schemas: compact` replaces the JSON tool schemas, which the Hermes-style rendering wraps in
  ~45 tokens of JSON per tool, by one signature line per tool in the system prompt, e.g.
  ``get_user_details(user_id)``, and says how to call them. The task then carries no schemas, so the
  harness does not check arguments against them (the replay still answers only recorded calls).

For τ-bench airline tasks with SmolLM2's tokenizer this takes a prompt from ~2,900 tokens (policy,
14 schemas, history) to ~250 (signatures and the turns since the last user message).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tracegym.tasks.spec import ChatMessage, Context, TaskSpec, ToolSchema, trim_context

COMPACT_TOOLS_PROMPT = (
    "You can call these tools. To call one, reply with only\n"
    '<tool_call>\n{{"name": <tool name>, "arguments": <arguments object>}}\n</tool_call>\n'
    "Tools:\n{signatures}"
)
_FIRST_SENTENCE = re.compile(r"(?<=[.!?])\s")


class PromptSection(BaseModel):
    """How prompts are shortened to fit a small model and a CPU, for warm-start examples and tasks alike."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, populate_by_name=True)

    context: Context = "last-user"
    """last-user: only the messages since the last user message; last-exchange: also the agent's last words to
    the user before it; full: the whole conversation."""
    system_max_chars: int | None = Field(None, ge=0)
    """Cut the system prompt to this many characters (0 drops it); None keeps it whole."""
    tool_schemas: Literal["full", "compact"] = "full"
    """compact: one signature line per tool (name and argument names) in the system prompt instead of JSON
    schemas; the harness then no longer checks arguments against the schemas."""
    max_tokens: int | None = Field(None, ge=1)
    """Leave out tasks and warm-start examples whose rendered prompt is longer (they are counted)."""



def signature(tool: ToolSchema) -> str:
    """`name(arg, ...)`, then the first sentence of the description when there is one."""
    params = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
    args = ", ".join(params) if isinstance(params, dict) else ""
    about = _FIRST_SENTENCE.split(tool.description.strip(), maxsplit=1)[0] if tool.description.strip() else ""
    return f"{tool.name}({args})" + (f": {about}" if about else "")


def compact_tools_text(tools: Sequence[ToolSchema]) -> str:
    return COMPACT_TOOLS_PROMPT.format(signatures="\n".join(signature(t) for t in tools))


def shorten(
    system: str | None, messages: list[dict[str, Any]], tools: Sequence[ToolSchema], policy: PromptSection
) -> tuple[str | None, list[dict[str, Any]], list[ToolSchema]]:
    """(system, messages without the system one, tools) after the policy."""
    messages = trim_context(messages, policy.context)
    if system is not None and policy.system_max_chars is not None:
        system = system[: policy.system_max_chars] or None
    tools = list(tools)
    if policy.tool_schemas == "compact" and tools:
        listing = compact_tools_text(tools)
        system = f"{system}\n\n{listing}" if system else listing
        tools = []
    return system, messages, tools


def shorten_task(task: TaskSpec, policy: PromptSection) -> TaskSpec:
    """The task with its prompt and tools shortened by the policy (the original is left as it is)."""
    messages = [m.model_dump(exclude_none=True) for m in task.prompt.messages]
    system, kept, tools = shorten(task.prompt.system, messages, task.tools, policy)
    prompt = task.prompt.model_copy(update={
        "system": system,
        "messages": [ChatMessage.model_validate(m) for m in kept],
        "dropped_messages": task.prompt.dropped_messages + len(messages) - len(kept),
    })
    return task.model_copy(update={"prompt": prompt, "tools": tools})


def openai_messages(system: str | None, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    head = [{"role": "system", "content": system}] if system is not None else []
    return head + messages


def openai_tool_list(tools: Sequence[ToolSchema]) -> list[dict[str, Any]] | None:
    """The schemas as the harnesses pass them to the chat renderer; None for no tools."""
    if not tools:
        return None
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                               "parameters": t.parameters}} for t in tools]
