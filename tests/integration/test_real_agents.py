"""Unchanged third-party agents behind the proxy: the openai-agents SDK (Responses API, its default) and
mini-swe-agent (chat completions through litellm), each run in the episode's bubblewrap sandbox.

The model is the true boundary here: a random model never writes a tool call, so a scripted token-level
policy answers each call with the reply a trained model would write (Hermes `<tool_call>` text, encoded with
the real SmolLM2 tokenizer, its end token included). Everything else is real: the agent library, its HTTP
client, the proxy, the sandbox, the stitching and the stored token record. Each test checks, field by field,
what the agent did (its messages, tool calls with their arguments, results and errors, its printed outcome)
against the stored episode, and that each segment's trainable tokens are exactly the replies of its calls.
Install the agents with `pip install -e '.[agents]'`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from tracegym.episodes.record import Episode
from tracegym.episodes.rollout_table import read_rollouts, write_rollouts
from tracegym.evals.scorers import ScorerContext, build_scorer
from tracegym.evals.scorers.config import MatchEval
from tracegym.harnesses.config import HarnessConfig, HarnessFactory
from tracegym.harnesses.policy import Completion, PolicyClient, PolicyRequest
from tracegym.harnesses.runner import EpisodeLimits, RunOptions, run_many
from tracegym.harnesses.sandbox import bwrap_problem
from tracegym.models.sampling import SamplingParams, text_of
from tracegym.models.stop_text import stop_cut
from tracegym.models.tiny import smollm2_tokenizer
from tracegym.tasks.spec import TaskSpec

pytestmark = pytest.mark.slow  # unchanged third-party agents run in the sandbox

if (_problem := bwrap_problem()) is not None:
    pytest.skip(f"the agents run in bubblewrap, which cannot run here: {_problem}", allow_module_level=True)


class ScriptedPolicy(PolicyClient):
    """Token-level replies from a script, in call order: ids as encoded, log-probs recorded per token."""

    token_level = True

    def __init__(self, tokenizer, replies: Sequence[str]) -> None:
        self.tokenizer, self.replies = tokenizer, list(replies)
        self.engine = SimpleNamespace(eos_token_ids=(tokenizer.eos_token_id,), context_length=8192)
        self.prompts: list[list[int]] = []

    async def generate(self, requests: Sequence[PolicyRequest]) -> list[Completion]:
        out = []
        for request in requests:
            self.prompts.append(list(request.prompt_ids))
            text = self.replies.pop(0)
            ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
            cut = stop_cut(ids, text_of(self.tokenizer), request.params.stop)
            if cut is not None:
                ids, text = ids[: cut[0]], text[: cut[1]]
            out.append(Completion(text=text, finish_reason="stop", sampler_id="scripted", prompt_ids=self.prompts[-1],
                                  completion_ids=ids, logprobs=torch.full((len(ids),), -0.25), policy_version=0,
                                  seed=request.seed, latency_s=0.01, cut_at_stop=cut is not None))
        return out

    async def aclose(self) -> None:
        pass


def call(name: str, **arguments: object) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def task(task_id: str, question: str) -> TaskSpec:
    return TaskSpec.model_validate({
        "task_id": task_id, "split": "train", "harness": "proxy",
        "prompt": {"messages": [{"role": "user", "content": question}]},
        "scorer": {"evals": [{"name": "done"}]},
        "provenance": {"trace_id": f"tr-{task_id}", "format": "openai-chat", "source_task": "s", "cut_message_idx": 1},
    })


def run_agent(tmp_path: Path, program: str, spec: TaskSpec, replies: list[str], expected: str,
              env: dict[str, str]) -> tuple[Episode, ScriptedPolicy]:
    """One episode of `program` (an agent written against the real library) on `spec`, stored and read back."""
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "agent.py").write_text(program)
    config = HarnessConfig(proxy={"command": 'python "$TRACEGYM_AGENT_DIR/agent.py"', "agent_dir": "agent",
                                  "wall_seconds": 120, "env": env})
    factory = HarnessFactory(config, tmp_path)
    policy = ScriptedPolicy(smollm2_tokenizer(), replies)
    scorer = build_scorer(MatchEval(kind="match", name="done", mode="contains", expected=expected,
                                    target="metadata.agent_process.stdout"), ScorerContext(tmp_path))
    options = RunOptions(concurrency=1, sampling=SamplingParams(max_new_tokens=256), limits=EpisodeLimits())

    async def go() -> list[Episode]:
        try:
            return await run_many(policy, [spec], factory.make, options, lambda t: scorer, "agents", "scripted")
        finally:
            factory.close()

    [episode] = asyncio.run(go())
    from tracegym.store import open_store

    with open_store(tmp_path / "store.duckdb") as store:
        write_rollouts(store, [episode], "run-agents")
        [stored] = read_rollouts(store, run_id="run-agents")
    return stored, policy


def assert_segments_train_exactly_their_replies(episode: Episode, policy: ScriptedPolicy, replies: list[str]) -> None:
    """Each segment's trainable tokens are the scripted replies of its calls, in order, end token included."""
    record = episode.tokens
    record.validate()
    assert [s["tokens"] for s in episode.metrics["proxy/split"]] == [list(b) for b in record.segments()]
    for split, (start, end) in zip(episode.metrics["proxy/split"], record.segments(), strict=True):
        trained = record.input_ids[start:end][record.loss_mask[start:end]].tolist()
        tokenizer = policy.tokenizer
        expected = [t for c in split["calls"] for t in tokenizer.encode(replies[c], add_special_tokens=False)
                    + [tokenizer.eos_token_id]]
        assert trained == expected
    assert torch.all(record.sampler_logprobs[record.loss_mask] == -0.25)
    for turn in episode.turns:  # each turn's prompt is its own segment's, as the policy was sent it
        assert record.input_ids[turn.segment_start:turn.start].tolist() in policy.prompts


OPENAI_AGENT = '''
import json, os
from agents import Agent, Runner, function_tool, set_tracing_disabled

set_tracing_disabled(True)


@function_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@function_tool
def divide(a: int, b: int) -> float:
    """Divide a by b."""
    return a / b


agent = Agent(name="calc", instructions="You compute with tools.", tools=[add, divide],
              model=os.environ["TRACEGYM_MODEL"])
question = json.load(open(os.environ["TRACEGYM_MESSAGES_FILE"]))[-1]["content"]
result = Runner.run_sync(agent, question)
print("FINAL:", result.final_output)
'''


def test_the_openai_agents_sdk_runs_unchanged_over_the_responses_api(tmp_path):
    pytest.importorskip("agents", reason="needs the openai-agents SDK: pip install -e '.[agents]'")
    replies = [call("add", a=2, b=3), call("divide", a=1, b=0), "The sum is 5."]
    episode, policy = run_agent(tmp_path, OPENAI_AGENT, task("calc", "What is 2+3?"), list(replies),
                                "FINAL: The sum is 5.", {"OPENAI_AGENTS_DISABLE_TRACING": "1"})
    assert (episode.stop_reason, episode.harness_error, episode.reward) == ("env_done", None, 1.0)
    assert episode.metrics["proxy/calls"] == 3 and episode.metrics["proxy/segments"] == 1
    messages = episode.messages
    assert messages[:2] == [{"role": "system", "content": "You compute with tools."},
                            {"role": "user", "content": "What is 2+3?"}]
    assert [m["role"] for m in messages[2:]] == ["assistant", "tool", "assistant", "tool", "assistant"]
    first, second = messages[2]["tool_calls"][0], messages[4]["tool_calls"][0]
    assert (first["function"]["name"], json.loads(first["function"]["arguments"])) == ("add", {"a": 2, "b": 3})
    assert (second["function"]["name"], json.loads(second["function"]["arguments"])) == ("divide", {"a": 1, "b": 0})
    assert messages[3] == {"role": "tool", "tool_call_id": first["id"], "content": "5"}  # the tool's result
    # The tool raised: the SDK hands the model its failure message instead of a result.
    assert messages[5] == {"role": "tool", "tool_call_id": second["id"],
                           "content": "An error occurred while running the tool. Please try again."}
    assert messages[6]["content"] == "The sum is 5." and episode.counts.tool_calls == 2
    assert episode.metrics["proxy/exit_code"] == 0
    assert len(episode.turns) == 3 and all(t.latency_s == 0.01 for t in episode.turns)
    assert episode.latency_s > sum(t.latency_s for t in episode.turns)
    assert_segments_train_exactly_their_replies(episode, policy, replies)


MINI_SWE_AGENT = '''
import json, os
from minisweagent.agents.default import DefaultAgent
from minisweagent.environments.local import LocalEnvironment
from minisweagent.models.litellm_model import LitellmModel

model = LitellmModel(model_name="openai/" + os.environ["TRACEGYM_MODEL"], cost_tracking="ignore_errors",
                     model_kwargs={"api_base": os.environ["OPENAI_BASE_URL"], "api_key": os.environ["OPENAI_API_KEY"]})
agent = DefaultAgent(model, LocalEnvironment(), system_template="You are a shell agent.",
                     instance_template="{{task}}", step_limit=8)
question = json.load(open(os.environ["TRACEGYM_MESSAGES_FILE"]))[-1]["content"]
print(json.dumps(agent.run(question)))
'''


def test_mini_swe_agent_drops_a_reply_and_both_segments_stay_trainable(tmp_path):
    pytest.importorskip("minisweagent", reason="needs mini-swe-agent: pip install -e '.[agents]'")
    replies = ["Let me think about it first.",  # no tool call: mini-swe-agent drops this reply from its history
               call("bash", command="echo hello > out.txt && cat out.txt"),
               call("bash", command="ls no-such-file"),
               call("bash", command="echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat out.txt")]
    env = {"MSWEA_GLOBAL_CONFIG_DIR": "/tmp/mswea", "MSWEA_SILENT_STARTUP": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "HOME": "/tmp"}
    episode, policy = run_agent(tmp_path, MINI_SWE_AGENT, task("shell", "Write hello to out.txt."), list(replies),
                                '"exit_status": "Submitted", "submission": "hello\\n"', env)
    assert (episode.stop_reason, episode.harness_error, episode.reward) == ("env_done", None, 1.0)
    first, second = episode.metrics["proxy/split"]
    assert (first["calls"], second["calls"]) == ([0], [1, 2, 3])
    assert (second["why"], second["from_segment"], second["kept_messages"]) == ("history_rewritten", 0, 2)
    messages = episode.messages  # the last segment's: the dropped reply is not there, its format error is
    assert [m["role"] for m in messages] == ["system", "user", "user", "assistant", "tool", "assistant", "tool",
                                             "assistant"]
    assert "No tool calls found" in messages[2]["content"]
    calls = [json.loads(messages[i]["tool_calls"][0]["function"]["arguments"]) for i in (3, 5, 7)]
    assert calls == [{"command": "echo hello > out.txt && cat out.txt"}, {"command": "ls no-such-file"},
                     {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat out.txt"}]
    assert all(messages[i]["tool_calls"][0]["function"]["name"] == "bash" for i in (3, 5, 7))
    assert "<returncode>0</returncode>" in messages[4]["content"] and "hello" in messages[4]["content"]
    assert "<returncode>2</returncode>" in messages[6]["content"] and "No such file" in messages[6]["content"]
    [dropped] = episode.metrics["proxy/other_segments"]
    assert dropped["messages"][-1] == {"role": "assistant", "content": replies[0]}
    assert len(episode.turns) == 4 and episode.counts.tool_calls == 3
    assert_segments_train_exactly_their_replies(episode, policy, replies)


SMOLAGENTS_AGENT = '''
import json, os
from smolagents import CodeAgent, OpenAIServerModel

model = OpenAIServerModel(model_id=os.environ["TRACEGYM_MODEL"], api_base=os.environ["OPENAI_BASE_URL"],
                          api_key=os.environ["OPENAI_API_KEY"])
agent = CodeAgent(tools=[], model=model, max_steps=4, verbosity_level=0)
question = json.load(open(os.environ["TRACEGYM_MESSAGES_FILE"]))[-1]["content"]
print("FINAL:", agent.run(question))
'''


def test_smolagents_code_agent_runs_unchanged_with_its_stop_sequences(tmp_path):
    """CodeAgent stops the model at '</code>' (and 'Observation:'), then rewrites the reply it got (closing tag,
    'Calling tools:' appended) in the history it sends next: two segments, each training its own cut reply."""
    pytest.importorskip("smolagents", reason="needs smolagents: pip install -e '.[agents]'")
    replies = ["Thought: I add the numbers.\n<code>\nx = 2 + 3\nprint(x)\n</code>\nObservation: 7 (made up)",
               "Thought: I have it.\n<code>\nfinal_answer(f'The sum is {x}.')\n</code>"]
    episode, policy = run_agent(tmp_path, SMOLAGENTS_AGENT, task("code", "What is 2+3?"), list(replies),
                                "FINAL: The sum is 5.", {"HOME": "/tmp"})
    assert (episode.stop_reason, episode.harness_error, episode.reward) == ("env_done", None, 1.0)
    said = [r[:r.index("</code>")] for r in replies]  # what the model was let say: cut before the stop string
    first, second = episode.metrics["proxy/split"]
    assert (first["calls"], second["calls"], second["why"], second["kept_messages"]) == (
        [0], [1], "history_rewritten", 2)
    [dropped] = episode.metrics["proxy/other_segments"]
    assert dropped["messages"][-1] == {"role": "assistant", "content": said[0]}
    messages = episode.messages
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant"]
    rewritten = messages[2]["content"][0]["text"]
    assert rewritten.startswith(said[0] + "</code>") and "Calling tools:" in rewritten
    assert messages[3]["content"][0]["text"].startswith("Observation:\nExecution logs:\n5\n")  # ran in the sandbox
    assert messages[4] == {"role": "assistant", "content": said[1]}
    record, tokenizer = episode.tokens, policy.tokenizer
    record.validate()
    for (start, end), text in zip(record.segments(), said, strict=True):
        trained = record.input_ids[start:end][record.loss_mask[start:end]].tolist()
        assert tokenizer.decode(trained) == text and tokenizer.eos_token_id not in trained
