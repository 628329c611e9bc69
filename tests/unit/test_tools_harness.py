"""The tools harness: Python functions as tools, with JSON-schema arguments; a raising tool is the harness failing."""

from __future__ import annotations

import asyncio
import json
import textwrap

import pytest

from tracegym.errors import ConfigError
from tracegym.harnesses.base import Reply
from tracegym.harnesses.config import HarnessFactory, load_harness_config
from tracegym.harnesses.tools import ToolRaised
from tracegym.tasks.spec import TaskSpec

TOOLS_MODULE = '''
USERS = {"mia_li_3668": {"name": "Mia Li", "certificates": [250, 100]}}


def get_user_details(user_id):
    """Look a user up by id.

    Returns their profile."""
    if user_id not in USERS:
        raise KeyError(f"user {user_id} not found")
    return USERS[user_id]


async def transfer_to_human_agents(summary):
    return "Transfer successful"
'''


def task() -> TaskSpec:
    return TaskSpec.model_validate({
        "task_id": "t-tools", "split": "train", "harness": "replay",
        "prompt": {"system": "# Airline Agent Policy", "messages": [{"role": "user", "content": "I am mia_li_3668."}]},
        "tools": [{"name": "get_user_details", "description": "from the trace", "source": "inferred",
                   "parameters": {"type": "object", "properties": {"user_id": {"type": "string"}},
                                  "required": ["user_id"]}}],
        "scorer": {"evals": [{"name": "gold_actions"}]},
        "provenance": {"trace_id": "tau-0", "format": "tau-bench", "source_task": "tau:0", "cut_message_idx": 1},
    })


def factory(tmp_path, on_exception: str = "end_episode") -> HarnessFactory:
    (tmp_path / "airline_tools.py").write_text(TOOLS_MODULE)
    (tmp_path / "harness.yaml").write_text(textwrap.dedent(f"""
        harness: tools
        tools:
          python_path: ["."]
          on_exception: {on_exception}
          terminal_tools: [transfer_to_human_agents]
          functions:
            - function: airline_tools:get_user_details
            - function: airline_tools:transfer_to_human_agents
              parameters: {{type: object, properties: {{summary: {{type: string}}}}, required: [summary]}}
    """))
    config, base = load_harness_config(tmp_path / "harness.yaml")
    return HarnessFactory(config, base)


def call(name: str, arguments: dict) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def started(tmp_path, **kwargs):
    harness = factory(tmp_path, **kwargs).make(task(), "e")
    reset = asyncio.run(harness.reset(task()))
    return harness, reset


def act(harness, text: str, turn: int = 0):
    return asyncio.run(harness.step(Reply(text, "stop", turn)))


def test_functions_answer_with_schemas_from_config_or_the_task(tmp_path):
    harness, reset = started(tmp_path)
    assert harness.name == "tools"
    schemas = {t["function"]["name"]: t["function"] for t in reset.tools}
    assert schemas["get_user_details"]["parameters"]["required"] == ["user_id"]  # the task's schema
    assert schemas["get_user_details"]["description"] == "Look a user up by id."  # the docstring's first paragraph
    assert schemas["transfer_to_human_agents"]["parameters"]["required"] == ["summary"]
    step = act(harness, call("get_user_details", {"user_id": "mia_li_3668"}))
    assert json.loads(step.observations[0]["content"]) == {"name": "Mia Li", "certificates": [250, 100]}
    assert step.observations[0]["tool_call_id"] == "call_0_0" and not step.done
    bad = act(harness, call("get_user_details", {"user": "mia"}), 1)
    assert "'user_id' is a required property" in bad.observations[0]["content"]
    end = act(harness, call("transfer_to_human_agents", {"summary": "wants a refund"}), 2)
    assert end.done and end.reason == "env_done" and end.observations[0]["content"] == "Transfer successful"
    assert (harness.counts.tool_calls, harness.counts.malformed_tool_calls) == (2, 1)


def test_a_tool_that_raises_fails_the_harness_unless_told_to_show_the_model(tmp_path):
    harness, _ = started(tmp_path)
    with pytest.raises(ToolRaised, match="tool 'get_user_details' raised KeyError: 'user bob not found'"):
        act(harness, call("get_user_details", {"user_id": "bob"}))
    shown, _ = started(tmp_path, on_exception="observe")
    step = act(shown, call("get_user_details", {"user_id": "bob"}))
    assert step.observations[0]["content"] == "Error: 'user bob not found'" and not step.done


def test_misconfigured_tools_are_reported_before_any_episode(tmp_path):
    (tmp_path / "harness.yaml").write_text("tools:\n  functions:\n    - function: airline_tools:nope\n")
    (tmp_path / "airline_tools.py").write_text(TOOLS_MODULE)
    config, base = load_harness_config(tmp_path / "harness.yaml")
    with pytest.raises(ConfigError, match="has no function 'nope'"):
        HarnessFactory(config.model_copy(update={"tools": config.tools.model_copy(update={"python_path": ["."]})}),
                       base)
    (tmp_path / "bad.yaml").write_text("tools:\n  function: airline_tools:get_user_details\n")
    with pytest.raises(ConfigError, match="bad.yaml"):
        load_harness_config(tmp_path / "bad.yaml")
    empty = HarnessFactory(load_harness_config(None)[0].model_copy(update={"harness": "tools"}))
    with pytest.raises(ConfigError, match="no functions"):
        asyncio.run(empty.make(task(), "e").reset(task()))
