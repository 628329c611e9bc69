"""The replay harness: recorded calls answer equivalent calls once each; unseen calls get an honest answer."""

from __future__ import annotations

import asyncio
import json
import textwrap

import pytest

from tracegym.errors import ConfigError
from tracegym.harnesses.base import Reply
from tracegym.harnesses.replay import (
    ErrorStyle,
    RecordedPool,
    ReplayConfig,
    ReplayHarness,
    arguments_key,
    load_fallback,
)
from tracegym.harnesses.summary import summarize
from tracegym.harnesses.tools import ToolRaised
from tracegym.tasks.spec import RecordedCall, TaskSpec

USER = {"name": {"first_name": "Mia", "last_name": "Li"}, "payment_methods": {"certificate_7504069": {"amount": 250}}}


def tau_task(replay: list[dict] | None = None, cut: int = 4) -> TaskSpec:
    """A τ-bench-shaped task: the agent must act at message 4; calls were recorded before and after."""
    calls = replay if replay is not None else [
        {"message_idx": 2, "name": "get_user_details", "arguments": {"user_id": "mia_li_3668"},
         "result": json.dumps(USER)},
        {"message_idx": 4, "name": "get_reservation_details", "arguments": {"reservation_id": "NO6JO3"},
         "result": "Error: reservation not found", "is_error": True},
        {"message_idx": 6, "name": "book_reservation",
         "arguments": {"user_id": "mia_li_3668", "payment_methods": [{"payment_id": "certificate_7504069",
                                                                      "amount": 250}], "total_baggages": 3},
         "result": "Error: payment amount does not add up, total price is 305, but paid 250", "is_error": True},
        {"message_idx": 8, "name": "book_reservation",
         "arguments": {"user_id": "mia_li_3668", "payment_methods": [{"payment_id": "certificate_7504069",
                                                                      "amount": 250}], "total_baggages": 3},
         "result": '{"reservation_id": "HATHAT"}'},
    ]
    tools = [{"name": n, "parameters": {"type": "object"}, "source": "inferred"}
             for n in ("get_user_details", "get_reservation_details", "book_reservation")]
    return TaskSpec.model_validate({
        "task_id": "t-tau", "split": "train", "harness": "replay", "tools": tools, "replay": calls,
        "prompt": {"system": "# Airline Agent Policy", "messages": [{"role": "user", "content": "Book it."}]},
        "scorer": {"evals": [{"name": "gold_actions"}]},
        "provenance": {"trace_id": "tau-0", "format": "tau-bench", "source_task": "tau:0", "cut_message_idx": cut},
    })


def hermes(name: str, arguments: str) -> str:
    return f'<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>'


def step(harness: ReplayHarness, text: str, turn: int = 0):
    return asyncio.run(harness.step(Reply(text, "stop", turn)))


def started(config: ReplayConfig | None = None, task: TaskSpec | None = None, fallback=None) -> ReplayHarness:
    harness = ReplayHarness(config or ReplayConfig(), fallback)
    asyncio.run(harness.reset(task or tau_task()))
    return harness


def test_arguments_compare_as_json_values_not_as_text():
    same = ['{"a": 1, "b": [1.0, {"y": 2, "x": "s t"}]}', '{"b":[1,{"x":"s t","y":2.0}],"a":1e0}',
            {"b": [1, {"x": "s t", "y": 2}], "a": 1.0}]
    assert len({arguments_key(a) for a in same}) == 1
    # Only formatting is ignored: types and text inside strings still tell calls apart.
    different = [{"a": 1}, {"a": "1"}, {"a": True}, {"a": 1.5}, {"a": "1 "}, {"A": 1}, {"a": [1]}, "{a: 1}"]
    assert len({arguments_key(a) for a in different}) == len(different)
    assert arguments_key("not json") == "raw:not json"


def test_exact_and_equivalent_calls_replay_the_recorded_result():
    harness = started()
    exact = step(harness, hermes("get_reservation_details", '{"reservation_id": "NO6JO3"}'))
    assert exact.observations[0]["content"] == "Error: reservation not found"
    reordered = hermes("book_reservation", '{"total_baggages": 3.0,   "payment_methods": [{"amount": 250.0, '
                                           '"payment_id": "certificate_7504069"}], "user_id": "mia_li_3668"}')
    first = step(harness, reordered, 1)
    assert first.observations[0]["content"].startswith("Error: payment amount does not add up")
    assert first.assistant["tool_calls"][0]["function"]["name"] == "book_reservation"
    assert first.assistant["content"] is None and not first.done
    assert (harness.counts.replay_hits, harness.counts.replay_misses, harness.counts.tool_calls) == (2, 0, 2)


def test_equal_calls_are_answered_in_recorded_order_once_each():
    harness = started()
    call = hermes("book_reservation", '{"user_id": "mia_li_3668", "payment_methods": [{"payment_id": '
                                      '"certificate_7504069", "amount": 250}], "total_baggages": 3}')
    answers = [step(harness, call, t).observations[0]["content"] for t in range(3)]
    assert answers[0].startswith("Error: payment amount")
    assert answers[1] == '{"reservation_id": "HATHAT"}'
    assert answers[2] == "Error: no result for these arguments"
    assert (harness.counts.replay_hits, harness.counts.replay_misses) == (2, 1)


def test_calls_answered_before_the_cut_are_not_in_the_pool():
    pool = RecordedPool(tau_task().replay, cut_message_idx=4)
    assert len(pool) == 3
    harness = started()
    again = step(harness, hermes("get_user_details", '{"user_id": "mia_li_3668"}'))
    assert again.observations[0]["content"] == "Error: no result for these arguments"
    assert harness.counts.replay_misses == 1
    assert harness.metrics["replay/missed_calls"] == ['get_user_details({"user_id": "mia_li_3668"})']


def test_unseen_calls_get_an_error_in_the_tools_own_style():
    harness = started()
    missed = step(harness, hermes("get_reservation_details", '{"reservation_id": "ZZZ999"}'))
    assert missed.observations[0]["content"] == "Error: no result for these arguments"
    assert harness.metrics["replay/missed_calls"] == ['get_reservation_details({"reservation_id": "ZZZ999"})']
    json_errors = [{"message_idx": 5, "name": "lookup", "arguments": {"q": 1}, "result": '{"error": "bad q"}',
                    "is_error": True}]
    assert ErrorStyle.learn([RecordedCall(**c) for c in json_errors], "lookup").format("x") == '{"error": "x"}'
    assert ErrorStyle.learn([], "lookup") is None
    mixed = [RecordedCall(message_idx=1, name="t", result=r, is_error=True)
             for r in ("ToolError: a", "ToolError: b", "something odd")]
    assert ErrorStyle.learn(mixed, "t").prefix == "ToolError: "
    assert ErrorStyle.learn(mixed[2:], "t") is None  # no label to learn


def _errors(name: str, *results: dict) -> list[RecordedCall]:
    """Calls of `name` that answered these JSON objects, not marked as errors (as a chat log records them)."""
    return [RecordedCall(message_idx=i, name=name, result=json.dumps(r), is_error=False) for i, r in enumerate(results)]


@pytest.mark.parametrize(("results", "expected"), [
    # HTTP status codes: 404 in the code field, the message in the message field.
    ([{"error": {"code": 504, "message": "upstream timeout"}}] * 2,
     {"error": {"code": 404, "message": "M"}}),
    # Fields with one value in every error are kept (status, type); those that varied (an order id) are dropped.
    ([{"status": "error", "message": "invalid postal code for US", "order": "A-1"},
      {"status": "error", "message": "invalid postal code for DE", "order": "A-2"}],
     {"status": "error", "message": "M"}),
    ([{"error": {"type": "invalid_request", "code": "RATE_LIMITED", "message": "slow down"}},
      {"error": {"type": "invalid_request", "code": "BAD_ID", "message": "no such id"}}],
     {"error": {"type": "invalid_request", "code": "NOT_FOUND", "message": "M"}}),
    ([{"error": {"code": "timeout", "detail": "x"}}], {"error": {"code": "not_found", "detail": "M"}}),
    ([{"jsonrpc": "2.0", "error": {"code": -32602, "message": "Invalid params"}}],
     {"jsonrpc": "2.0", "error": {"code": -32602, "message": "M"}}),
])
def test_json_error_objects_are_learned_with_their_code_and_message_fields(results, expected):
    assert json.loads(ErrorStyle.learn(_errors("t", *results), "t").format("M")) == expected


def test_the_most_common_shape_of_the_tool_then_of_the_trace():
    calls = [*_errors("lookup", {"error": {"code": 504, "message": "a"}}, {"error": {"code": 502, "message": "b"}}),
             RecordedCall(message_idx=9, name="lookup", result="Error: c", is_error=True),
             *_errors("handoff", {"ok": True, "ticket": "T-1"}),
             *_errors("validate", {"status": "error", "message": "x"}, {"status": "error", "message": "y"},
                      {"status": "error", "message": "z"})]
    assert ErrorStyle.learn(calls, "lookup").format("M") == '{"error": {"code": 404, "message": "M"}}'
    # handoff never failed: the shape most errors of the trace have (validate's three beat lookup's two)
    assert ErrorStyle.learn(calls, "handoff").format("M") == '{"status": "error", "message": "M"}'
    # a success shaped like an error is not one: no error field, no status of error
    assert ErrorStyle.learn(_errors("t", {"ok": True, "message": "done"}), "t") is None


def test_unseen_calls_can_go_to_a_user_fallback(tmp_path):
    (tmp_path / "replay_env.py").write_text(textwrap.dedent("""
        def answer(name, arguments, task):
            return {"tool": name, "arguments": arguments, "task": task.task_id}

        def broken(name, arguments, task):
            raise KeyError(name)
    """))
    config = ReplayConfig(unseen="fallback", fallback="replay_env:answer", python_path=["."])
    harness = started(config, fallback=load_fallback(config, tmp_path))
    missed = step(harness, hermes("get_reservation_details", '{"reservation_id": "ZZZ999"}'))
    assert json.loads(missed.observations[0]["content"]) == {
        "tool": "get_reservation_details", "arguments": {"reservation_id": "ZZZ999"}, "task": "t-tau"}
    hit = step(harness, hermes("get_reservation_details", '{"reservation_id": "NO6JO3"}'), 1)
    assert hit.observations[0]["content"] == "Error: reservation not found"
    assert (harness.counts.replay_hits, harness.counts.replay_misses) == (1, 1)

    broken = ReplayConfig(unseen="fallback", fallback="replay_env:broken", python_path=["."])
    harness = started(broken, fallback=load_fallback(broken, tmp_path))
    with pytest.raises(ToolRaised, match="replay fallback replay_env:broken raised KeyError"):
        step(harness, hermes("get_reservation_details", '{"reservation_id": "ZZZ999"}'))


def test_fallback_mode_needs_a_function(tmp_path):
    with pytest.raises(ValueError, match="needs fallback"):
        ReplayConfig(unseen="fallback")
    with pytest.raises(ConfigError, match="cannot import module"):
        load_fallback(ReplayConfig(unseen="fallback", fallback="no_such_module_xyz:f"), tmp_path)


def test_malformed_calls_and_plain_answers():
    harness = started()
    bad = step(harness, '<tool_call>{"name": "book_reservation", "arguments": {oops}}</tool_call>')
    assert bad.observations == [{"role": "user", "content": bad.observations[0]["content"]}]
    assert "not valid JSON" in bad.observations[0]["content"] and not bad.done
    unknown = step(harness, hermes("delete_everything", "{}"), 1)
    assert "There is no tool named 'delete_everything'" in unknown.observations[0]["content"]
    answer = step(harness, "Your booking is confirmed.", 2)
    assert answer.done and answer.reason == "model_done" and answer.observations == []
    assert answer.assistant == {"role": "assistant", "content": "Your booking is confirmed."}
    assert (harness.counts.malformed_tool_calls, harness.counts.replay_misses) == (2, 0)


def test_a_terminal_tool_is_answered_then_ends_the_episode():
    harness = started(ReplayConfig(terminal_tools=["get_reservation_details"]))
    end = step(harness, "Let me look.\n" + hermes("get_reservation_details", '{"reservation_id": "NO6JO3"}'))
    assert end.done and end.reason == "env_done"
    assert end.assistant["content"] == "Let me look."
    assert end.observations[0]["content"] == "Error: reservation not found"


def test_off_path_episodes_are_reported():
    from tracegym.episodes.record import Episode, EpisodeCounts

    def episode(i: int, misses: int) -> Episode:
        return Episode(rollout_id=str(i), task_id="t-tau", task_set_id="s", split="train", harness="replay",
                       sample_idx=i, seed=i, model=None, sampling={}, messages=[], n_prompt_messages=0, tokens=None,
                       turns=[], stop_reason="model_done", counts=EpisodeCounts(2, 0, 2 - misses, misses))

    summary = summarize([episode(0, 0), episode(1, 1), episode(2, 2), episode(3, 0)])
    assert summary["overall"]["replay_off_path_rate"] == 0.5
    assert (summary["overall"]["replay_hits"], summary["overall"]["replay_misses"]) == (5, 3)
    assert summary["tasks"][0]["off_path"] == 2
