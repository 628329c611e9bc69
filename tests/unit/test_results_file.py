"""Results files of other trainers read back (`tracegym.evals.checkpoints.results_file`): a verifiers results.jsonl
written by verifiers' own `save_outputs` (its message types, flat tool calls), and TRL-style lines."""

from __future__ import annotations

import json
from pathlib import Path

from tracegym.evals.checkpoints.results_file import read_results


def test_a_verifiers_results_file_reads_back_in_openai_form(tmp_path: Path) -> None:
    from verifiers.legacy.types import AssistantMessage, RolloutOutput, ToolCall, ToolMessage, UserMessage
    from verifiers.legacy.utils.save_utils import save_outputs

    call = ToolCall(id="call_1", name="get_user_details", arguments='{"user_id": "u1"}')
    completion = [AssistantMessage(content=None, tool_calls=[call]),
                  ToolMessage(tool_call_id="call_1", content='{"name": "Ann"}'),
                  AssistantMessage(content="Ann's refund is on its way.")]
    common = {"prompt": [UserMessage(content="Refund me.")], "timing": {"generation_ms": 1.0}, "is_completed": True,
              "metrics": {}, "answer": ""}
    outputs = [
        RolloutOutput(example_id=0, completion=completion, reward=1.0, info={"task_id": "t-1", "cluster_id": "c"},
                      is_truncated=False, error=None, **common),
        RolloutOutput(example_id=1, completion=[], reward=0.0, info=json.dumps({"task_id": "t-2"}),
                      is_truncated=True, error={"error": "ModelError", "message": "context too long"}, **common),
        RolloutOutput(example_id=2, completion=[], reward=0.0, info={}, is_truncated=False, error=None, **common),
    ]
    save_outputs(outputs, tmp_path)
    read = read_results(tmp_path / "results.jsonl", "verifiers")
    assert [r.task_id for r in read.rows] == ["t-1", "t-2"]
    first, second = read.rows
    assert first.reward == 1.0 and first.prompt == [{"role": "user", "content": "Refund me."}]
    assert first.completion[0]["tool_calls"] == [{"id": "call_1", "type": "function", "function": {
        "name": "get_user_details", "arguments": '{"user_id": "u1"}'}}]
    assert first.completion[1] == {"role": "tool", "tool_call_id": "call_1", "content": '{"name": "Ann"}'}
    assert second.reward is None and second.error == "context too long" and second.truncated
    assert read.bad == ["line 3: no task id (info.task_id): was the sample from an environment `tracegym tasks "
                        "export` wrote?"]


def test_trl_lines_take_text_or_messages_and_name_what_they_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / "trl.jsonl"
    lines = [{"prompt": "Refund me.", "completion": "Done.", "reward": 0.5, "task_id": "t-1"},
             {"prompt": [{"role": "user", "content": "Hi"}], "completion": [{"role": "assistant", "content": "Hey"}],
              "reward": 1, "task_id": "t-2"},
             {"prompt": "x", "completion": "y", "reward": True, "task_id": "t-3"},
             {"prompt": "x", "completion": 7, "reward": 1.0, "task_id": "t-4"},
             [1, 2]]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n{broken\n")
    read = read_results(path, "trl")
    assert [(r.task_id, r.reward) for r in read.rows] == [("t-1", 0.5), ("t-2", 1.0)]
    assert read.rows[0].prompt == [{"role": "user", "content": "Refund me."}]
    assert read.rows[0].completion == [{"role": "assistant", "content": "Done."}]
    assert [b.split(":")[0] for b in read.bad] == ["line 3", "line 4", "line 5", "line 7"]
    assert "not a finite number" in read.bad[0] and "neither text nor a list" in read.bad[1]
