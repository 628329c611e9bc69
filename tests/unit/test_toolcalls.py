"""Tool-call parsing: OpenAI objects, Hermes tags, bare JSON, bash blocks; malformed calls become messages."""

from __future__ import annotations

import json

from tracegym.harnesses.toolcalls import ToolCallStats, parse_bash_action, parse_tool_calls

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def test_hermes_calls_in_order_with_text_around_them():
    text = (
        "Let me check.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
        '<tool_call>{"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}</tool_call>'
    )
    result = parse_tool_calls(text)
    assert result.ok
    assert [(c.name, c.arguments, c.style) for c in result.calls] == [
        ("get_weather", {"city": "Paris"}, "hermes"),
        ("get_weather", {"city": "Oslo"}, "hermes"),
    ]


def test_malformed_hermes_calls_become_messages_for_the_model():
    bad_json = parse_tool_calls('<tool_call>{"name": "get_weather", "arguments": {city: Paris}}</tool_call>')
    assert not bad_json.calls and len(bad_json.errors) == 1
    message = bad_json.errors[0].message
    assert message.startswith("Your tool call was not valid JSON: ") and "<tool_call>" in message
    unclosed = parse_tool_calls('<tool_call>{"name": "get_weather", "arguments": {}}')
    assert "missing its closing </tool_call>" in unclosed.errors[0].message
    nameless = parse_tool_calls('<tool_call>{"arguments": {}}</tool_call>')
    assert 'no "name"' in nameless.errors[0].message
    listy = parse_tool_calls('<tool_call>{"name": "f", "arguments": [1, 2]}</tool_call>')
    assert "must be a JSON object" in listy.errors[0].message


def test_one_bad_call_does_not_hide_a_good_one():
    text = '<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>{"name": "b", </tool_call>'
    result = parse_tool_calls(text)
    assert [c.name for c in result.calls] == ["a"] and len(result.errors) == 1


def test_openai_tool_call_objects():
    calls = [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}},
        {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": '}},
    ]
    result = parse_tool_calls("", openai_tool_calls=calls)
    assert [(c.id, c.arguments, c.style) for c in result.calls] == [("call_1", {"city": "Rome"}, "openai")]
    assert result.errors[0].style == "openai" and "not a valid JSON object" in result.errors[0].message


def test_bare_json_reply_and_plain_answers():
    call = parse_tool_calls('```json\n{"name": "get_weather", "parameters": {"city": "Lima"}}\n```')
    assert [(c.name, c.arguments, c.style) for c in call.calls] == [("get_weather", {"city": "Lima"}, "json")]
    assert parse_tool_calls("The weather in Lima is sunny.") == parse_tool_calls("")
    assert not parse_tool_calls('{"answer": 42}').calls and parse_tool_calls('{"answer": 42}').ok
    broken = parse_tool_calls('{"name": "get_weather", "arguments": {"city": "Lima"}')
    assert not broken.ok and broken.errors[0].style == "json"


def test_schema_checks_catch_unknown_tools_and_bad_arguments():
    unknown = parse_tool_calls('<tool_call>{"name": "get_wether", "arguments": {}}</tool_call>', tools=[WEATHER])
    assert "no tool named 'get_wether'" in unknown.errors[0].message and "get_weather" in unknown.errors[0].message
    missing = parse_tool_calls('<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>', tools=[WEATHER])
    assert "'city' is a required property" in missing.errors[0].message
    good = parse_tool_calls(
        '<tool_call>{"name": "get_weather", "arguments": {"city": "X"}}</tool_call>', tools=[WEATHER]
    )
    assert good.ok and good.calls[0].arguments == {"city": "X"}


def test_bash_block_exactly_one():
    one = parse_bash_action("THOUGHT: list files.\n\n```bash\nls -la\n```")
    assert [(c.name, c.arguments) for c in one.calls] == [("bash", {"command": "ls -la"})]
    two = parse_bash_action("```bash\nls\n```\nand\n```bash\npwd\n```")
    none = parse_bash_action("I think we are done.")
    assert "found 2" in two.errors[0].message and "found none" in none.errors[0].message
    assert parse_bash_action("```python\nprint(1)\n```\n```bash\necho hi\n```").calls[0].arguments == {
        "command": "echo hi"
    }


def test_bash_parsing_agrees_with_mini_swe_agent_on_real_trajectories(traces_dir):
    """Each assistant turn is followed either by the command's output or by mini-swe-agent's format error."""
    agree = disagree = 0
    for path in sorted((traces_dir / "mini-swe-agent" / "trajs").glob("*.traj.json")):
        messages = json.loads(path.read_text())["messages"]
        for turn, reply in zip(messages, messages[1:], strict=False):
            if turn["role"] != "assistant" or not isinstance(reply["content"], str):
                continue
            rejected = reply["content"].startswith("Please always provide EXACTLY ONE action")
            if rejected == (not parse_bash_action(turn["content"]).ok):
                agree += 1
            else:
                disagree += 1
    assert agree > 1000
    assert disagree == 0


def test_stats_count_calls_and_malformed_per_style():
    stats = ToolCallStats()
    stats.add(parse_tool_calls('<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>nope</tool_call>'))
    stats.add(parse_bash_action("no block"))
    stats.add(parse_bash_action("```bash\nls\n```"))
    assert stats.as_dict() == {
        "toolcalls/hermes/ok": 1,
        "toolcalls/bash/ok": 1,
        "toolcalls/hermes/malformed": 1,
        "toolcalls/bash/malformed": 1,
    }
