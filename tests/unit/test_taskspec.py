"""TaskSpec: validation, YAML round trips, and the pieces generation builds it from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracegym.errors import ConfigError
from tracegym.evals.scorers.recorded import RecordedCall, RecordedTrace
from tracegym.evals.scorers.trajectory import Trajectory
from tracegym.tasks.cuts import build_prompt, cut_points, duplicate_key
from tracegym.tasks.schemas import declared_tools, infer_schema, inferred_tools
from tracegym.tasks.spec import (
    ChatMessage,
    EvalRef,
    Prompt,
    Provenance,
    Reference,
    ScorerBinding,
    TaskSpec,
    dump_spec,
    load_spec,
    trim_context,
)
from tracegym.tasks.spec import RecordedCall as RecordedCallSpec
from tracegym.tasks.splits import assign_splits

TRICKY = ["yes", "null", "~", "0x1F", "1e3", "# not a comment", "key: value", "  leading", "trailing  \n",
          "tab\there", "line\n\n  indented\nend", "émoji 🚀", "- dash", "'quoted'", '"double"', ""]


def _spec(content: str = "hi", metadata: dict | None = None, system: str | None = "policy") -> TaskSpec:
    return TaskSpec(
        task_id="t-1", split="train", harness="replay",
        prompt=Prompt(system=system, messages=[
            ChatMessage(role="user", content=content),
            ChatMessage.model_validate({"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "function": {"name": "get", "arguments": json.dumps({"id": content})}}]}),
            ChatMessage(role="tool", content=content, tool_call_id="c1", name="get"),
        ]),
        scorer=ScorerBinding(evals=[EvalRef(name="gold", weight=2.0)]),
        metadata=metadata if metadata is not None else {"task": {"actions": [{"name": "get", "kwargs": {"id": 1}}]}},
        provenance=Provenance(trace_id="trace-1", format="tau-bench", source_task="tau-bench:task_id=1",
                              cut_message_idx=4),
    )


def _round_trip(spec: TaskSpec, tmp_path: Path) -> TaskSpec:
    path = tmp_path / "task.yaml"
    path.write_text(dump_spec(spec), encoding="utf-8")
    return load_spec(path)


@pytest.mark.parametrize("text", TRICKY)
def test_round_trip_keeps_awkward_text_exactly(tmp_path, text):
    spec = _spec(text, {"answer": text, "n": [1, 2.5, None, True]}, system=text)
    loaded = _round_trip(spec, tmp_path)
    assert loaded == spec
    assert dump_spec(loaded) == dump_spec(spec)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(content=st.text(max_size=200), metadata=st.dictionaries(st.text(max_size=10), json_values, max_size=5))
def test_round_trip_property(tmp_path_factory, content, metadata):
    spec = _spec(content, metadata)
    assert _round_trip(spec, tmp_path_factory.mktemp("rt")) == spec


def test_invalid_spec_errors_name_the_line_and_fix(tmp_path):
    text = dump_spec(_spec()).replace("split: train", "split: training").replace("harness: replay", "harnes: replay")
    path = tmp_path / "task.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_spec(path)
    message = str(info.value)
    assert f"{path}:3: split: Input should be 'train' or 'heldout'. Fix: use 'train' or 'heldout'." in message
    assert f"{path}:4: harnes: Extra inputs are not permitted. Fix: remove 'harnes'. Did you mean 'harness'?" in message
    assert "harness: Field required. Fix: add 'harness' (replay: answer tool calls" in message


def test_trajectory_puts_the_prompt_before_the_attempt():
    spec = _spec()
    traj = spec.trajectory([{"role": "assistant", "content": "Done, booked."}])
    assert traj.messages[0] == {"role": "system", "content": "policy"}
    assert traj.messages[2]["tool_calls"][0]["function"]["name"] == "get"
    assert traj.final_answer == "Done, booked." and traj.trace_id == "trace-1" and traj.task_id == "t-1"
    assert traj.metadata["task"]["actions"][0]["kwargs"] == {"id": 1}


def test_trajectory_knows_the_prompt_and_the_calls_made_before_the_cut():
    spec = _spec().model_copy(update={"replay": [
        RecordedCallSpec(message_idx=1, call_id="a", name="get_user", arguments={"id": 7}, result="{}"),
        RecordedCallSpec(message_idx=2, call_id="b", name="book", arguments={}, result="Error: no", is_error=True),
        RecordedCallSpec(message_idx=3, call_id="c1", name="get", arguments={"id": "hi"}, result="hi"),
        RecordedCallSpec(message_idx=4, call_id="d", name="cancel", arguments={"id": 1}, result="done"),
    ]})
    traj = spec.trajectory([{"role": "assistant", "content": None, "tool_calls": [
        {"id": "x", "type": "function", "function": {"name": "cancel", "arguments": '{"id": 1}'}}]}])
    # Before the cut (message 4) and not rejected; whether the trimmed prompt still shows them does not matter.
    assert [(c.name, c.arguments, c.result) for c in traj.prior_calls] == [("get_user", {"id": 7}, "{}"),
                                                                         ("get", {"id": "hi"}, "hi")]
    assert traj.prompt_messages == 4 and [c.name for c in traj.tool_calls()] == ["get", "cancel"]
    assert [c.name for c in traj.agent_calls()] == ["cancel"]
    again = Trajectory.from_dict(json.loads(json.dumps(traj.to_dict())))
    assert again.prior_calls == traj.prior_calls and again.prompt_messages == 4


def test_infer_schema_types_required_and_nesting():
    schema = infer_schema([{"a": 1, "b": [{"x": "s"}], "c": None}, {"a": 2.5, "b": [{"x": "t", "y": True}]}])
    assert schema["required"] == ["a", "b"]
    assert schema["properties"]["a"] == {"type": "number"}
    assert schema["properties"]["b"]["items"] == {
        "type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "boolean"}}, "required": ["x"]}
    assert infer_schema(["x", 3]) == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    tools = inferred_tools([("run", "ls -la"), ("get", {"id": 1}), ("get", {"id": 2})])
    assert [t.name for t in tools] == ["get", "run"] and tools[1].parameters["required"] == ["input"]


def test_declared_tools_accept_openai_and_flat_shapes():
    raw = [{"type": "function", "function": {"name": "b", "description": "B", "parameters": {"type": "object"}}},
           {"name": "a", "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}}]
    tools = declared_tools(raw)
    assert [(t.name, t.source) for t in tools] == [("a", "declared"), ("b", "declared")]
    assert tools[0].parameters["properties"] == {"q": {"type": "string"}} and declared_tools(None) is None


def _trace() -> RecordedTrace:
    rows = [("system", "policy " * 50), ("user", "hello"), ("assistant", "hi, your id?"), ("user", "u1"),
            ("assistant", None), ("tool", "{}"), ("assistant", "done"), ("user", "thanks")]
    messages = [{"idx": i, "role": r, "content": c, "tool_call_id": "c1" if r == "tool" else None,
                 "name": "get" if r == "tool" else None} for i, (r, c) in enumerate(rows)]
    calls = [RecordedCall(4, "c1", "get", {"id": "u1"}, "{}", 5)]
    return RecordedTrace("tr", "tau-bench", "s", "failure", {"task_id": 3, "trial": 0}, None, messages, calls)


def test_cut_points_take_the_agent_turn_that_went_wrong():
    trace = _trace()
    assert cut_points(trace, 5, "failure") == [4]  # an error result: the call before it
    assert cut_points(trace, 7, "failure") == [6]  # a user complaint: the reply before it
    assert cut_points(trace, None, "failure") == [2]  # the whole trace: from the first agent turn
    assert cut_points(trace, 5, "turns") == [2, 4]
    assert cut_points(trace, 1, "failure") == []


def test_recovery_cuts_take_the_agent_turn_that_answers_the_failure():
    trace = _trace()
    assert cut_points(trace, 5, "recovery") == [6]  # an error result: the agent's answer to it
    assert cut_points(trace, 3, "recovery") == [4]
    assert cut_points(trace, 7, "recovery") == []  # a complaint nobody answered
    assert cut_points(trace, None, "recovery") == []  # the whole trace failed: no turn answers it


def test_build_prompt_context_modes_and_system_cut():
    trace = _trace()
    full = build_prompt(trace, 6, "full", None)
    assert [m.role for m in full.messages] == ["user", "assistant", "user", "assistant", "tool"]
    assert full.messages[3].tool_calls[0].function.name == "get" and full.dropped_messages == 0
    short = build_prompt(trace, 6, "last-user", 20)
    assert [m.role for m in short.messages] == ["user", "assistant", "tool"] and short.dropped_messages == 2
    assert short.system.startswith("policy policy policy") and short.system_chars == 350
    assert "[… 330 characters cut …]" in short.system
    exchange = build_prompt(trace, 6, "last-exchange", None)
    assert [m.content for m in exchange.messages[:2]] == ["hi, your id?", "u1"] and exchange.dropped_messages == 1


def test_last_exchange_starts_at_the_agents_last_words_before_the_user():
    said = {"role": "assistant", "content": "Shall I cancel ABC?"}
    call = {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "get", "arguments": "{}"}}]}
    user, tool = {"role": "user", "content": "yes"}, {"role": "tool", "content": "{}"}
    messages = [{"role": "user", "content": "hi"}, said, call, tool, user, call, tool]
    assert trim_context(messages, "last-exchange") == [said, call, tool, user, call, tool]
    assert trim_context(messages, "last-user") == [user, call, tool]
    assert trim_context(messages, "full") == messages
    assert trim_context([user, call], "last-exchange") == [user, call]  # nothing said before the user
    assert trim_context([said, call], "last-exchange") == [said, call]  # no user message: all kept


def test_duplicate_key_ignores_numbers_ids_and_attempts_but_not_task_data():
    a, b = _trace(), _trace()
    b.messages[3]["content"] = "U2"
    b.metadata = {"task_id": 3, "trial": 1}
    key = lambda t: duplicate_key(build_prompt(t, 4, "full", None), "replay", t.metadata)  # noqa: E731
    assert key(a) == key(b)
    b.metadata = {"task_id": 4, "trial": 1}
    assert key(a) != key(b)


def test_splits_keep_groups_together_and_are_deterministic():
    keys = [[f"task:{i % 7}", f"trace:{i}"] for i in range(40)] + [["task:0", "trace:x"], ["task:6", "trace:0"]]
    splits = assign_splits(keys, 0.3, seed=1)
    by_task: dict[str, set[str]] = {}
    for k, s in zip(keys, splits, strict=True):
        by_task.setdefault(k[0], set()).add(s)
    assert all(len(v) == 1 for v in by_task.values())
    assert {"train", "heldout"} == set(splits)
    assert splits == assign_splits(keys, 0.3, seed=1)
    assert any(assign_splits(keys, 0.3, seed=s) != splits for s in range(2, 6))
    assert set(assign_splits([["a"], ["b"]], 0.01, seed=0)) == {"train", "heldout"}
    assert set(assign_splits([["a"], ["b"]], 0.0, seed=0)) == {"train"}


def test_the_evals_copy_keeps_python_path_pointing_at_the_same_folder(tmp_path):
    from tracegym.evals.scorers import ScorerContext, build_scorer
    from tracegym.evals.scorers.config import load_evals
    from tracegym.evals.scorers.trajectory import Trajectory
    from tracegym.tasks.render import copy_evals

    team = tmp_path / "team"
    team.mkdir()
    (team / "graders.py").write_text("def polite(trajectory):\n    return 1.0 if 'please' in "
                                     "(trajectory.final_answer or '') else 0.0\n")
    source = team / "evals.yaml"
    source.write_text("version: 1\nevals:\n  - {name: polite, kind: python, function: 'graders:polite', "
                      "python_path: ['.']}\n")
    task_set = tmp_path / "sets" / "polite"
    task_set.mkdir(parents=True)
    copy_evals(source, task_set / "evals.yaml", task_set)
    [spec] = load_evals(task_set / "evals.yaml").config.evals
    assert spec.python_path == ["../../team"]
    scorer = build_scorer(spec, ScorerContext(task_set))
    assert scorer.score(Trajectory([], final_answer="please wait")).reward == 1.0

    plain = tmp_path / "plain.yaml"
    plain.write_text("# our evals\nversion: 1\nevals:\n  - {name: exact, kind: match, expected: 'ok'}\n")
    copy_evals(plain, task_set / "evals.yaml", task_set)
    assert (task_set / "evals.yaml").read_text() == plain.read_text()  # nothing to move: a byte-for-byte copy


def test_the_evals_copy_keeps_reward_files_pointing_at_the_same_place(tmp_path):
    from tracegym.evals.scorers import ScorerContext, build_scorer
    from tracegym.evals.scorers.config import load_evals
    from tracegym.tasks.render import copy_evals

    team = tmp_path / "team"
    (team / "reward_tests").mkdir(parents=True)
    (team / "reward_tests" / "test_it.py").write_text("def test_ok():\n    pass\n")
    source = team / "evals.yaml"
    source.write_text("version: 1\nevals:\n  - {name: tests, kind: command, command: 'python -m pytest tests', "
                      "files: {tests: reward_tests}}\n")
    task_set = tmp_path / "sets" / "swe"
    task_set.mkdir(parents=True)
    copy_evals(source, task_set / "evals.yaml", task_set)
    [spec] = load_evals(task_set / "evals.yaml").config.evals
    assert spec.files == {"tests": "../../team/reward_tests"}
    assert build_scorer(spec, ScorerContext(task_set)).files == {"tests": team / "reward_tests"}


def test_a_task_can_name_the_proxy_harness_which_then_needs_the_agent_command(tmp_path):
    from tracegym.harnesses.config import HarnessConfig, HarnessFactory

    spec = _round_trip(_spec().model_copy(update={"harness": "proxy"}), tmp_path)
    assert spec.harness == "proxy"
    factory = HarnessFactory(HarnessConfig(), tmp_path)
    try:
        assert factory.name_for(spec) == "proxy"
        with pytest.raises(ConfigError, match="set proxy.command in the harness config"):
            factory.make(spec, "episode-0")
    finally:
        factory.close()


def test_a_teams_reference_is_a_step_for_reference_evals_and_a_model_sample_is_not():
    from tracegym.evals.scorers import ScorerContext, build_scorer
    from tracegym.evals.scorers.config import ReferenceEval

    scorer = build_scorer(ReferenceEval(name="follows", kind="reference"), ScorerContext(Path(".")))
    spec = _spec("order W123")
    reply = {"role": "assistant", "content": "Order W123 is refunded."}

    def supplied(source: str) -> TaskSpec:
        reference = Reference(source=source, replies=[ChatMessage.model_validate(reply)])
        return spec.model_copy(update={"provenance": spec.provenance.model_copy(update={"reference": reference})})

    [step] = supplied("file:refs.jsonl").references()
    assert (step.source, step.text, step.calls) == ("file:refs.jsonl", "Order W123 is refunded.", ())
    assert scorer.score(supplied("file:refs.jsonl").trajectory([reply])).reward == 1.0
    assert supplied("model:smollm2").references() == []
    assert scorer.score(supplied("model:smollm2").trajectory([reply])).error is not None
