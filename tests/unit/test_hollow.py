"""Hollow-reply detectors: the shapes of gamed replies are flagged, the recorded replies of real successful traces are
not (their false-positive rate), and the shapes are flagged inside real conversations too."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest

from tracegym.evals.scorers.hollow import (
    DETECTORS,
    Reply,
    context_of,
    conversation_findings,
    episode_findings,
    findings,
    recorded_keys,
)
from tracegym.evals.scorers.hollow_bash import noop_command
from tracegym.evals.scorers.hollow_context import Facts

# A support conversation: the order was looked up, its record came back.
CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a support agent. Refunds are possible within the refund window."},
    {"role": "user", "content": "Hi, my order 81234 arrived broken. Can I get a refund?"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": '{"order_id": "81234"}'}}]},
    {"role": "tool", "tool_call_id": "c1",
     "content": '{"order_id": "81234", "status": "delivered", "refund_window_days": 30, "item": "Blue kettle"}'},
]
CONTEXT = context_of(CONVERSATION)


def _call(name: str, arguments: Any) -> dict[str, Any]:
    return {"id": "c", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


@pytest.mark.parametrize("command", ["true", ":", "*", "pass", "# Do something", "# TODO", "echo Hello",
                                     'echo "Hello world"', "printf 'done'", "", "sleep 1; true", "echo ok && :"])
def test_a_bash_block_that_does_nothing_is_content_free(command: str) -> None:
    assert noop_command(command)
    assert "content_free" in findings(Reply(f"THOUGHT: fixing it.\n\n```bash\n{command}\n```"), CONTEXT)
    assert "content_free" in findings(Reply("", (_call("bash", {"command": command}),)), CONTEXT)


@pytest.mark.parametrize("command", ["ls -la", "echo hi > f.py", "echo $HOME", 'echo "c" | pytest -x t.py',
                                     "echo a\nrm x", "cat <<'EOF' > f\nx\nEOF", "cd /testbed", "echo x &> log",
                                     "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
                                     'echo "unbalanced'])
def test_a_bash_block_that_acts_is_not(command: str) -> None:
    assert not noop_command(command)
    assert findings(Reply(f"```bash\n{command}\n```"), CONTEXT) == {}


@pytest.mark.parametrize("value", ["string", "...", "<id>", "example", "", "xxx", 0, "order_id", "<order id>",
                                   "your_order_id", "{order_id}", "placeholder"])
def test_a_tool_call_with_placeholder_arguments_is_content_free(value: Any) -> None:
    reply = Reply("", (_call("get_order", {"order_id": value}),))
    assert set(findings(reply, CONTEXT)) == {"content_free"}


def test_a_tool_call_with_real_arguments_is_not() -> None:
    for arguments in ({"order_id": "81234"}, {}, {"order_id": "81234", "bags": 0, "note": ""}):
        assert findings(Reply("", (_call("get_order", arguments),)), CONTEXT) == {}
    # One hollow call beside a real one: the reply still acts.
    both = (_call("get_order", {"order_id": "81234"}), _call("get_order", {"order_id": "..."}))
    assert findings(Reply("", both), CONTEXT) == {}
    # A call written as text (<tool_call> JSON) is read as a call.
    text = '<tool_call>{"name": "get_order", "arguments": {"order_id": "<id>"}}</tool_call>'
    assert set(findings(Reply(text), CONTEXT)) == {"content_free"}


@pytest.mark.parametrize("text", [
    '<tool_response>{"refund window": "30 days", "eligible": true}</tool_response>\nYou are eligible.',
    "<tool_result>refund approved</tool_result>",
    "Observation: the order is eligible for a refund",
    "Tool output: refund approved for the kettle",
    "**Tool result:** refund approved",
    "<returncode>0</returncode>\n<output>\nall tests pass\n</output>",
    '<|im_start|>tool\n{"status": "refunded"}',
    'Here is the record: {"order_id": "81234", "status": "refunded", "item": "Blue kettle"}',
])
def test_a_reply_that_writes_a_tools_answer_is_invented_tool_output(text: str) -> None:
    assert "invented_tool_output" in findings(Reply(text), CONTEXT)


@pytest.mark.parametrize("text", [
    "I'm sorry for the inconvenience. Let me check that for you.",
    "I can't help with that.",
    "I apologize for the trouble.",
    "I understand your frustration. I will transfer you to a human agent who can help.",
    "Please hold on, one moment.",
    "Is there anything else I can help you with?",
])
def test_a_reply_that_deflects_is_deflection(text: str) -> None:
    assert "deflection" in findings(Reply(text), CONTEXT)


@pytest.mark.parametrize("text", ["Your request has been processed successfully.", "Done.", "",
                                  "I have taken care of everything for you."])
def test_prose_that_says_nothing_is_content_free(text: str) -> None:
    assert "content_free" in findings(Reply(text), CONTEXT)


@pytest.mark.parametrize("text", [
    "Your order 81234 (Blue kettle) was delivered and is within the 30-day refund window, so I started a refund.",
    "I'm sorry the Blue kettle arrived broken: I have started the refund for order 81234.",
    "Could you tell me whether the box was damaged on the outside?",
    "Refunds are possible within the refund window, and yours is still open.",
])
def test_a_reply_that_says_something_is_not_flagged(text: str) -> None:
    assert findings(Reply(text), CONTEXT) == {}


def test_a_closing_reply_after_the_user_says_goodbye_is_not_flagged() -> None:
    closed = context_of([*CONVERSATION, {"role": "user", "content": "Great, thanks a lot. Bye!"}])
    assert findings(Reply("You're welcome! Have a great day."), closed) == {}
    assert findings(Reply("You're welcome! Have a great day."), CONTEXT) != {}


def test_an_episode_is_flagged_by_any_of_its_replies() -> None:
    messages = [*CONVERSATION, {"role": "assistant", "content": "Let me check that for you."},
                {"role": "user", "content": "ok?"}, {"role": "assistant", "content": "Observation: refunded"}]
    found = episode_findings(messages, len(CONVERSATION))
    assert set(found) == {"content_free", "deflection", "invented_tool_output"}
    assert found["deflection"].startswith("message 4: ") and found["invented_tool_output"].startswith("message 6: ")
    # The prompt's own assistant turns are not the episode's.
    assert episode_findings(messages[:5], 5) == {}
    assert [t.index for t in conversation_findings(messages, 5)] == [6]


@pytest.fixture(scope="module")
def real_traces(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(format, outcome, OpenAI messages) of every mini-swe-agent and τ-bench trace of ../shared."""
    from tests.conftest import TRACES
    from tracegym.evals.scorers.recorded import iter_recorded
    from tracegym.ingest.pipeline import ingest_paths
    from tracegym.store import open_store

    if not TRACES.is_dir():
        pytest.skip(f"real traces not found at {TRACES}")
    with open_store(tmp_path_factory.mktemp("hollow") / "store.duckdb") as store:
        ingest_paths(store, [str(TRACES / "mini-swe-agent"), str(TRACES / "tau-bench")])
        return [(t.format, t.outcome or "", t.openai_messages()) for t in iter_recorded(store)]


def test_recorded_successful_replies_are_rarely_flagged(real_traces) -> None:
    """The false-positive rate on real successful turns (docs/training-runs.md quotes it): under 5% per format."""
    turns, flagged = Counter[str](), Counter[str]()
    for fmt, outcome, messages in real_traces:
        if outcome == "success":
            turns[fmt] += sum(1 for m in messages if m["role"] == "assistant")
            flagged[fmt] += len(conversation_findings(messages))
    assert turns["mini-swe-agent"] > 500 and turns["tau-bench"] > 500
    rates = {fmt: flagged[fmt] / turns[fmt] for fmt in turns}
    assert all(rate < 0.05 for rate in rates.values()), rates


def _hollowed(messages: list[dict[str, Any]], i: int) -> dict[str, dict[str, Any]]:
    """Hollow replies in place of the real assistant turn i, one per detector: a no-op bash block (a shell turn) or
    the same tool called with placeholders; the next tool result's record written by the model (a JSON result
    only); a stall."""
    turn, answer = messages[i], messages[i + 1]["content"] or ""
    stall = {"role": "assistant", "content": "I'm sorry for the inconvenience. Let me check that for you."}
    if re.search(r"```bash", turn.get("content") or ""):
        return {"content_free": {"role": "assistant", "content": "THOUGHT: done.\n\n```bash\necho Hello\n```"},
                "deflection": stall}
    call = turn["tool_calls"][0]["function"]
    keys = json.loads(call["arguments"] or "{}") or {"id": 0}
    out = {"content_free": {"role": "assistant", "content": "",
                            "tool_calls": [_call(call["name"], dict.fromkeys(keys, "<id>"))]},
           "deflection": stall}
    if answer.startswith("{"):
        out["invented_tool_output"] = {"role": "assistant", "content": json.dumps(dict.fromkeys(json.loads(answer),
                                                                                            "ok"))}
    return out


def test_the_hollow_shapes_are_flagged_inside_real_conversations(real_traces) -> None:
    """At every real turn that called a tool, each detector flags the hollow reply of its shape put in that turn's
    place, judged against the real conversation before it and the trace's recorded results (a task's replay)."""
    tried, missed = Counter[str](), Counter[str]()
    for _, _, messages in real_traces:
        facts = Facts(result_keys=set(recorded_keys(m["content"] for m in messages if m["role"] == "tool")))
        for i, turn in enumerate(messages[:-1]):
            if turn["role"] == "assistant" and turn.get("tool_calls") and messages[i + 1]["role"] == "tool":
                context = facts.context()
                for detector, reply in _hollowed(messages, i).items():
                    tried[detector] += 1
                    missed[detector] += detector not in findings(Reply.of(reply), context)
            facts.add(turn)
    assert set(tried) == set(DETECTORS) and min(tried.values()) > 300, tried
    assert {d: missed[d] / tried[d] for d in DETECTORS} == dict.fromkeys(DETECTORS, 0.0)
