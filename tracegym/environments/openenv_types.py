"""The action and observation of a tracegym task as an OpenEnv environment (`tracegym tasks export --to openenv`).

This file is copied as it stands into every OpenEnv export (its models.py), so a client needs only openenv-core.
Messages and tool calls are OpenAI chat form.
"""

from typing import Any

from openenv.core.env_server.types import Action, Observation
from pydantic import Field


class TracegymAction(Action):
    """One model reply: its text and the tool calls it makes."""

    content: str = Field(default="", description="The reply's text (tool-call markup in it is parsed too).")
    tool_calls: list[dict[str, Any]] = Field(
        default_factory=list,
        description='Structured calls: {"id", "type": "function", "function": {"name", "arguments"}}.')


class TracegymObservation(Observation):
    """What the model sees next; after reset, the task's prompt; after a step, the environment's answer."""

    task_id: str = Field(default="", description="The tracegym task of the episode.")
    cluster_id: str | None = Field(default=None, description="The failure cluster the task was drawn from.")
    messages: list[dict[str, Any]] = Field(
        default_factory=list,
        description="New messages: the prompt after reset, tool results and feedback after a step.")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="OpenAI tool schemas the model may call.")
    scorer_details: dict[str, Any] = Field(
        default_factory=dict, description="The tracegym scorer's details, when the episode is done.")
    error: str | None = Field(default=None, description="Why the episode has no reward, when it has none.")
