"""Hollow probes built from a task: the reference's shape without its substance (tracegym/tasks/hollow_probes.py),
and how the train config reads what they found (tracegym/training/hackable.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tracegym.episodes.record import Episode
from tracegym.errors import HackableRewardError
from tracegym.harnesses.hackability import probe_task
from tracegym.tasks.hollow_probes import DEFLECTIONS, NOOPS, build_hollow_probes, entities_in, swapped
from tracegym.tasks.probes import ProbeReply
from tracegym.tasks.spec import (
    ChatMessage,
    EvalRef,
    Prompt,
    Provenance,
    RecordedCall,
    ScorerBinding,
    TaskSpec,
    ToolSchema,
)
from tracegym.tasks.taskset import GateSettings, Manifest, TaskEntry, TaskSet
from tracegym.training.config import parse_train_config
from tracegym.training.hackable import hackable_tasks, refuse_hackable

FORMAT_ERROR = "Please always provide EXACTLY ONE action in triple backticks.\n```bash\n<action>\n```"
ORDER = {"order_id": "#W4817420", "status": "delivered", "total": 305, "items": ["mug"]}


def _message(role: str, content: str | None, calls: list[dict] | None = None) -> ChatMessage:
    return ChatMessage.model_validate({"role": role, "content": content, "tool_calls": calls})


def _call(name: str, arguments: dict, call_id: str = "c1") -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def _shell_task() -> TaskSpec:
    return TaskSpec(
        task_id="t-shell", split="train", harness="shell",
        prompt=Prompt(system="Reply with one bash block.", messages=[
            _message("assistant", "Two actions:\n```bash\ncat src/app/models.py\n```\n```bash\nls\n```"),
            _message("user", FORMAT_ERROR)]),
        tools=[ToolSchema(name="bash", source="inferred")],
        scorer=ScorerBinding(evals=[EvalRef(name="one_bash_action")]),
        provenance=Provenance(trace_id="mini-1", format="mini-swe-agent", source_task="mini:1", cut_message_idx=3))


def _replay_task(task_id: str = "t-replay", evals: tuple[str, ...] = ("handles_tool_error",),
                 split: str = "train") -> TaskSpec:
    return TaskSpec(
        task_id=task_id, split=split, harness="replay",
        prompt=Prompt(system="Airline agent.", messages=[
            _message("user", "Refund order #W4817420, it cost 305."),
            _message("assistant", None, [_call("refund", {"order_id": "#W4817420", "amount": 350})]),
            _message("tool", "Error: amount 350 is more than the order's 305")]),
        tools=[ToolSchema(name="get_order", source="declared"),
               ToolSchema(name="transfer_to_human_agents", source="declared", parameters={
                   "type": "object", "properties": {"summary": {"type": "string"}, "urgent": {"type": "boolean"}},
                   "required": ["summary"]})],
        replay=[RecordedCall(message_idx=1, call_id="c0", name="get_order", arguments={"order_id": "#W4817420"},
                             result=json.dumps(ORDER)),
                RecordedCall(message_idx=9, call_id="c9", name="get_order", arguments={}, result='{"later": 1}')],
        scorer=ScorerBinding(evals=[EvalRef(name=e) for e in evals]),
        provenance=Provenance(trace_id="tau-1", format="tau-bench", source_task="tau:1", cut_message_idx=4,
                              cluster_id="c-tool"))


def _probes(task: TaskSpec, reference: ProbeReply, played: tuple[ProbeReply, ...] = ()) -> dict[str, list[ProbeReply]]:
    return {p.name: list(p.variants) for p in build_hollow_probes(task, reference, played)}


def test_a_shell_reference_gets_no_op_blocks_its_prompt_echoed_and_its_entities_swapped():
    reference = ProbeReply("THOUGHT: read the model first.\n\n```bash\ncat src/app/models.py\n```")
    probes = _probes(_shell_task(), reference)
    assert [v.text.split("```bash\n")[1].removesuffix("\n```") for v in probes["noop_content"]] == list(NOOPS)
    assert "THOUGHT" in probes["noop_content"][0].text and "models" not in probes["noop_content"][0].text
    assert probes["echo"] == [ProbeReply(FORMAT_ERROR)]
    assert probes["swapped_entities"] == [ProbeReply(reference.text.replace("models.py", "models_other.py"))]
    # No one to hand off to in a shell, no tool call to hollow out, no prose-only reference to imitate.
    assert not {"handoff", "placeholder_args", "hollow_prose"} & probes.keys()
    assert [v.text for v in probes["deflection"]] == list(DEFLECTIONS)


def test_a_swap_that_leaves_the_command_as_it_was_is_no_probe():
    """Entities only in the reasoning before the command: the swapped reply does the same thing, so it is the same
    step, not a hollow one."""
    reference = ProbeReply("THOUGHT: src/app/models.py needs a look.\n\n```bash\nls\n```")
    assert "swapped_entities" not in _probes(_shell_task(), reference)


def test_a_tool_call_reference_keeps_names_and_keys_and_the_tools_hand_off():
    reference = ProbeReply("", (_call("refund", {"order_id": "#W4817420", "amount": 305, "notify": True}),))
    probes = _probes(_replay_task(), reference)
    (hollow,) = probes["placeholder_args"]
    assert hollow.text == "" and hollow.tool_calls[0]["function"]["name"] == "refund"
    assert json.loads(hollow.tool_calls[0]["function"]["arguments"]) == {"order_id": "placeholder", "amount": 0,
                                                                         "notify": False}
    (handoff,) = probes["handoff"]
    assert handoff.tool_calls[0]["function"]["name"] == "transfer_to_human_agents"
    assert json.loads(handoff.tool_calls[0]["function"]["arguments"]) == {"summary": "placeholder"}
    (swap,) = probes["swapped_entities"]
    assert json.loads(swap.tool_calls[0]["function"]["arguments"]) == {"order_id": "#W5928531", "amount": 416,
                                                                       "notify": True}
    assert probes["echo"] == [ProbeReply("Error: amount 350 is more than the order's 305")]
    assert "hollow_prose" not in probes and "noop_content" not in probes


def test_invented_tool_output_imitates_a_recorded_result_before_the_cut():
    (tagged, bare) = _probes(_replay_task(), ProbeReply("Done."))["invented_tool_output"]
    fake = {"order_id": "placeholder", "status": "placeholder", "total": 0, "items": []}
    assert tagged.text == f"<tool_response>\n{json.dumps(fake)}\n</tool_response>"
    assert json.loads(bare.text) == fake  # the result recorded after the cut ({"later": 1}) is not the conversation


def test_hollow_prose_is_as_long_as_the_reference_and_names_nothing_from_the_conversation():
    task = _replay_task()
    reference = ProbeReply("Order #W4817420 cost 305, so I can refund at most 305; shall I refund 305 to your card?")
    (prose,) = _probes(task, reference)["hollow_prose"]
    assert len(reference.text) <= len(prose.text) < len(reference.text) + 60
    conversation = " ".join(m.content or "" for m in task.prompt.messages)
    assert not {e for e in entities_in(prose.text) if e in conversation} and not any(c.isdigit() for c in prose.text)


def test_replies_already_played_are_not_played_again():
    played = (ProbeReply(DEFLECTIONS[0]), ProbeReply("Error: amount 350 is more than the order's 305"))
    probes = _probes(_replay_task(), ProbeReply("Done."), played)
    assert [v.text for v in probes["deflection"]] == [DEFLECTIONS[1]] and "echo" not in probes
    same = _probes(_replay_task(), ProbeReply(DEFLECTIONS[1]), played)
    assert "deflection" not in same  # both variants played already (the reference is the second)


@pytest.mark.parametrize(("entity", "other"), [
    ("HAT290", "HAT301"), ("305", "416"), ("2024-05-19", "3135-16-20"), ("src/app.py", "src/app_other.py"),
    ("a/b/Makefile", "a/b/Makefile_other")])
def test_swapped_entities_keep_their_form(entity, other):
    assert swapped(entity) == other and entity in entities_in(f"see {entity}.")


class _Player:
    """Scores each reply as a format check and a content check would: the format pays one bash block, the content
    the reference's command; a bash block runs in the sandbox."""

    def __init__(self) -> None:
        self.played: list[str] = []

    async def play(self, task: TaskSpec, reply: ProbeReply) -> Episode:
        self.played.append(reply.text)
        fmt = float(reply.text.count("```bash") == 1)
        content = float("cat src/app/models.py" in reply.text)
        return Episode(rollout_id="r", task_id=task.task_id, task_set_id=None, split=None, harness="shell",
                       sample_idx=0, seed=0, model=None, sampling={}, messages=[], n_prompt_messages=0, tokens=None,
                       turns=[], stop_reason="max_turns", reward=(fmt + content) / 2,
                       components={"fmt": fmt, "content": content})

    def sandboxed(self, task: TaskSpec, reply: ProbeReply) -> bool:
        return "```bash" in reply.text


def test_once_the_reward_pays_the_sandboxed_replies_are_skipped_and_the_parts_still_reported():
    task = _shell_task().model_copy(update={"scorer": ScorerBinding(evals=[EvalRef(name="fmt"),
                                                                          EvalRef(name="content")])})
    reference = ProbeReply("THOUGHT: read the model first.\n\n```bash\ncat src/app/models.py\n```")
    player = _Player()
    found = asyncio.run(probe_task(task, reference, (), player, threshold=1.0))
    # The reward (fmt and content, weighted) is paid by nothing hollow; the format part by every bash block.
    assert found.reward_eval == "fmt+content" and not found.reward_hackable
    assert found.paid == {"fmt": ["noop_content", "echo", "swapped_entities"]}
    assert found.examples["fmt"]["noop_content"].endswith("```bash\ntrue\n```")
    # Every variant is played, the reward never paying: noops, deflections, echo, invented output, swapped.
    assert found.episodes == len(player.played) == 5 + 2 + 1 + 2 + 1
    # A reward the format alone pays: after `true`, no other bash block is run, the rest still is.
    lenient = _Player()
    lenient_task = task.model_copy(update={"scorer": ScorerBinding(evals=[EvalRef(name="fmt")])})
    paid = asyncio.run(probe_task(lenient_task, reference, (), _Lenient(lenient), threshold=1.0))
    assert paid.reward_hackable and paid.paid == {"fmt": ["noop_content"]}
    assert sum("```bash" in text for text in lenient.played) == 1 and DEFLECTIONS[0] in lenient.played


class _Lenient:
    """The same player, its reward the format part alone."""

    def __init__(self, inner: _Player) -> None:
        self.inner = inner

    async def play(self, task: TaskSpec, reply: ProbeReply) -> Episode:
        episode = await self.inner.play(task, reply)
        episode.reward, episode.components = episode.components["fmt"], {}
        return episode

    def sandboxed(self, task: TaskSpec, reply: ProbeReply) -> bool:
        return self.inner.sandboxed(task, reply)


def _task_set(tmp_path: Path, hackable: dict[str, dict[str, list[str]] | None], probed: bool = True) -> TaskSet:
    tasks = [_replay_task(task_id, ("fmt", "content") if task_id.endswith("c") else ("fmt",))
             for task_id in hackable]
    manifest = Manifest(name="s", seed=0, evals_sha256="0", options={}, counts={}, clusters=[],
                        tasks=[TaskEntry(task_id=t.task_id, file=f"tasks/{t.task_id}.yaml", split=t.split,
                                         harness=t.harness, trace_id="tau-1", hackable=hackable[t.task_id])
                               for t in tasks],
                        gates=GateSettings(threshold=1.0, hollow_probes=probed))
    return TaskSet(tmp_path, manifest, tasks)


def _config(tmp_path: Path, **tasks: object):
    return parse_train_config({"run_dir": str(tmp_path / "run"), "tasks": {"task_set": str(tmp_path), **tasks}},
                              Path("train.yaml"))


def test_train_refuses_past_max_hackable_naming_the_eval_the_probe_and_the_fix(tmp_path):
    task_set = _task_set(tmp_path, {
        "t-1": {"fmt": ["noop_content", "echo"]}, "t-2": {"fmt": ["noop_content"]},
        "t-3c": {"fmt": ["noop_content"]},  # the part pays, the combined reward (fmt+content) does not
        "t-4": {}})
    found = hackable_tasks(task_set, _config(tmp_path))
    assert found.tasks == ["t-1", "t-2"] and found.share == 0.5 and found.probes == {"fmt": {"noop_content": 2,
                                                                                             "echo": 1}}
    with pytest.raises(HackableRewardError) as refused:
        refuse_hackable(task_set, _config(tmp_path), allow=False)
    message = str(refused.value)
    assert "2 of the 4 train tasks" in message and "fmt pays noop_content on 2, echo on 1" in message
    for fix in ("`reference` eval", "`weighted`", "--allow-hackable", "tasks.max_hackable"):
        assert fix in message
    assert refuse_hackable(task_set, _config(tmp_path), allow=True).tasks == ["t-1", "t-2"]
    assert refuse_hackable(task_set, _config(tmp_path, max_hackable=0.5), allow=False).share == 0.5
    with pytest.raises(HackableRewardError):
        refuse_hackable(task_set, _config(tmp_path, max_hackable=0.4), allow=False)
    assert refuse_hackable(task_set, _config(tmp_path, clusters=["elsewhere"]), allow=False).selected == 0


def test_a_set_never_probed_is_not_refused(tmp_path):
    task_set = _task_set(tmp_path, {"t-1": None}, probed=False)
    found = refuse_hackable(task_set, _config(tmp_path), allow=False)
    assert not found.probed and found.tasks == []
