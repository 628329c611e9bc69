"""The shell harness: bash actions run sandboxed in a per-episode workspace, observed as mini-swe-agent shows them."""

from __future__ import annotations

import asyncio

import pytest

from tracegym.harnesses.base import Reply
from tracegym.harnesses.config import HarnessConfig, HarnessFactory
from tracegym.harnesses.policy import HFPolicy
from tracegym.harnesses.runner import EpisodeJob, EpisodeLimits, run_episode
from tracegym.harnesses.shell import ShellHarness
from tracegym.models.sampling import SamplingEngine, SamplingParams
from tracegym.models.tiny import tiny_policy
from tracegym.tasks.spec import TaskSpec

SYSTEM = "Your response must contain exactly ONE bash code block with ONE command."


def shell_task() -> TaskSpec:
    return TaskSpec.model_validate({
        "task_id": "t-shell", "split": "train", "harness": "shell",
        "prompt": {"system": SYSTEM, "messages": [{"role": "user", "content": "Create notes.txt saying hi."}]},
        "scorer": {"evals": [{"name": "tests_pass"}]},
        "provenance": {"trace_id": "sympy-1", "format": "mini-swe-agent", "source_task": "s", "cut_message_idx": 2},
    })


@pytest.fixture
def factory(tmp_path):
    template = tmp_path / "repo"
    template.mkdir()
    (template / "README").write_text("a small repo\n")
    config = HarnessConfig(shell={"template": "repo", "workspaces": "ws", "limits": {"wall_seconds": 10},
                                  "max_output_chars": 200})
    made = HarnessFactory(config, tmp_path)
    yield made
    made.close()


def bash(command: str, prose: str = "THOUGHT: do it.") -> str:
    return f"{prose}\n\n```bash\n{command}\n```"


def act(harness: ShellHarness, text: str, turn: int = 0):
    return asyncio.run(harness.step(Reply(text, "stop", turn)))


def test_commands_run_in_the_episodes_own_workspace(factory, tmp_path):
    one, two = factory.make(shell_task(), "ep-1"), factory.make(shell_task(), "ep-2")
    asyncio.run(one.reset(shell_task()))
    asyncio.run(two.reset(shell_task()))
    assert one.workspace != two.workspace and (one.workspace / "README").read_text() == "a small repo\n"
    wrote = act(one, bash("echo hi > notes.txt && cat README"))
    assert wrote.observations == [{"role": "user", "content": "<returncode>0</returncode>\n<output>\na small repo\n"
                                                              "</output>"}]
    assert wrote.assistant == {"role": "assistant", "content": bash("echo hi > notes.txt && cat README")}
    assert (one.workspace / "notes.txt").read_text() == "hi\n" and not (two.workspace / "notes.txt").exists()
    failed = act(one, bash("ls missing-file"), 1)
    assert failed.observations[0]["content"].startswith("<returncode>2</returncode>\n<output>\nls:")
    assert one.counts.tool_calls == 2 and not failed.done
    asyncio.run(one.close())
    assert not one.workspace.exists() and two.workspace.exists()
    asyncio.run(two.close())


def test_format_errors_long_outputs_timeouts_and_submission(factory):
    harness = factory.make(shell_task(), "ep-3")
    asyncio.run(harness.reset(shell_task()))
    none = act(harness, "I think the answer is 42.")
    assert none.observations[0]["content"] == ("Please reply with exactly one ```bash block with the command; "
                                               "found none.")
    two = act(harness, bash("ls") + "\n" + bash("pwd"), 1)
    assert "found 2" in two.observations[0]["content"] and harness.counts.malformed_tool_calls == 2
    long = act(harness, bash("seq 1 500"), 2)
    text = long.observations[0]["content"]
    assert "<warning>\nThe output of your last command was too long." in text
    assert "<output_head>\n1\n2\n" in text and "</output_tail>" in text and "1692 characters elided" in text
    slow = factory.make(shell_task(), "ep-4")
    slow.config = slow.config.model_copy(update={"limits": slow.config.limits.model_copy(update={"wall_seconds": 0.5})})
    asyncio.run(slow.reset(shell_task()))
    timed_out = act(slow, bash("echo started; sleep 5"))
    assert timed_out.observations[0]["content"].startswith("The last command <command>echo started; sleep 5</command>"
                                                           " timed out and has been killed.")
    submit = act(harness, bash("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"), 3)
    assert submit.done and submit.reason == "env_done"
    for h in (harness, slow):
        asyncio.run(h.close())


def test_one_episode_with_a_tiny_model(factory):
    model, tokenizer = tiny_policy(seed=0)
    policy = HFPolicy(SamplingEngine(model, eos_token_ids=[tokenizer.eos_token_id]), tokenizer)
    harness = factory.make(shell_task(), "ep-5")

    async def go():
        try:
            return await run_episode(policy, harness, EpisodeJob(shell_task(), seed=1),
                                     SamplingParams(top_p=0.9, max_new_tokens=8), EpisodeLimits(max_turns=2))
        finally:
            await policy.aclose()

    episode = asyncio.run(go())
    assert episode.harness == "shell" and episode.harness_error is None and episode.stop_reason == "max_turns"
    # The random model writes no bash block: each reply gets the format error, as a masked user turn.
    assert [m["role"] for m in episode.continuation] == ["assistant", "user", "assistant", "user"]
    assert episode.counts.malformed_tool_calls == 2 and episode.metrics["sandbox"] in ("bwrap", "subprocess")
    assert not harness.workspace.exists()


def test_run_as_scores_a_shell_tasks_reply_without_running_it(tmp_path):
    """harness.run_as {shell: chat}: the reply is the episode, no workspace is made and nothing runs (no sandbox)."""
    from tracegym.harnesses.chat import ChatHarness

    factory = HarnessFactory(HarnessConfig(run_as={"shell": "chat"}, shell={"workspaces": "ws"}), tmp_path)
    harness = factory.make(shell_task(), "ep-1")
    assert isinstance(harness, ChatHarness) and factory.name_for(shell_task()) == "chat"
    asyncio.run(harness.reset(shell_task()))
    step = asyncio.run(harness.step(Reply(bash("touch ran.txt"), "stop", 0)))
    assert step.done and step.assistant == {"role": "assistant", "content": bash("touch ran.txt")}
    assert not (tmp_path / "ws").exists() and not list(tmp_path.rglob("ran.txt"))
    factory.close()
