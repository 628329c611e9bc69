"""The proxy harness end to end: an agent program using the `openai` client, the tiny random Llama behind it.

Each episode starts a real Python process (the agent below, written into its own folder under tmp_path) in
the episode's bubblewrap sandbox, where it talks to the proxy over HTTP; the stored episode must carry the
exact token record of the stitched conversation, re-scored here with the same weights, and a reward from a
scorer reading the program's output.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path

import pytest
import torch

from tracegym.episodes.record import Episode
from tracegym.episodes.rollout_table import read_rollouts, write_rollouts
from tracegym.evals.scorers import ScorerContext, build_scorer
from tracegym.evals.scorers.config import MatchEval
from tracegym.harnesses.config import HarnessConfig, HarnessFactory
from tracegym.harnesses.policy import HFPolicy
from tracegym.harnesses.runner import EpisodeLimits, RunOptions, run_many
from tracegym.harnesses.sandbox import bwrap_problem
from tracegym.models.logprobs import batch_logprobs_of
from tracegym.models.sampling import SamplingEngine, SamplingParams
from tracegym.models.tiny import tiny_policy
from tracegym.tasks.spec import TaskSpec

pytest.importorskip("openai", reason="the agent under test uses the openai client (the dev extra)")
if (_problem := bwrap_problem()) is not None:
    pytest.skip(f"the agent runs in bubblewrap, which cannot run here: {_problem}", allow_module_level=True)

SAMPLING = SamplingParams(top_p=0.9, max_new_tokens=10)

# The agent: what a team's own program does. Its behaviour per task comes from the task id.
AGENT = '''
import json, os, socket, sys, time, urllib.parse
from openai import OpenAI

task = os.environ["TRACEGYM_TASK_ID"]
client = OpenAI()
tools = [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
messages = json.load(open(os.environ["TRACEGYM_MESSAGES_FILE"]))
# History from an earlier session: a call the agent made and its result (rendered in the prompt).
messages += [{"role": "assistant", "content": None, "tool_calls": [{"id": "c0", "type": "function",
              "function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}}]},
             {"role": "tool", "tool_call_id": "c0", "content": "-3C, snow"},
             {"role": "user", "content": "And in Bergen?"}]

if task == "disconnect":  # send a request, hang up before the answer, then linger
    url = urllib.parse.urlparse(os.environ["OPENAI_BASE_URL"])
    body = json.dumps({"model": "m", "messages": messages}).encode()
    sock = socket.create_connection((url.hostname, url.port))
    auth = b"Authorization: Bearer %s\\r\\n" % os.environ["OPENAI_API_KEY"].encode()
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\n" + auth +
                 b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
    sock.close()
    time.sleep(120)

assert client.models.list().data[0].id == "tracegym-policy"
finishes = []
for i in range(3):
    if task == "rewrite" and i == 2:  # compact the history: keep the system prompt and one user turn
        messages = [messages[0], {"role": "user", "content": "Summary so far: no answer yet. Try once more."}]
    if i == 2:  # the last call streams
        stream = client.chat.completions.create(model="m", messages=messages, tools=tools, max_tokens=8,
                                                stream=True, stream_options={"include_usage": True})
        content, finish = "", None
        for chunk in stream:
            if chunk.choices:
                content += chunk.choices[0].delta.content or ""
                finish = chunk.choices[0].finish_reason or finish
        messages.append({"role": "assistant", "content": content})
    else:
        reply = client.chat.completions.create(model="m", messages=messages, tools=tools, temperature=0.3)
        messages.append(reply.choices[0].message)  # echoed back as the client serialises it
        finish = reply.choices[0].finish_reason
    finishes.append(finish)
    messages.append({"role": "user", "content": f"Not quite ({i}); again."})
    if task == "crash":
        raise RuntimeError("the agent hit a bug")
open("answer.txt", "w").write("ok")
print(json.dumps({"finishes": finishes}))
print("DONE")
'''


COMMAND = 'python "$TRACEGYM_AGENT_DIR/agent.py"'


def write_agent(folder: Path) -> None:
    (folder / "agent").mkdir()
    (folder / "agent" / "agent.py").write_text(AGENT)


@pytest.fixture(scope="module")
def tiny():
    return tiny_policy(seed=0)


def spec(task_id: str) -> TaskSpec:
    return TaskSpec.model_validate({
        "task_id": task_id, "split": "train", "harness": "chat",
        "prompt": {"system": "You answer weather questions.", "messages": [{"role": "user", "content": "Oslo?"}]},
        "scorer": {"evals": [{"name": "done"}]},
        "provenance": {"trace_id": f"tr-{task_id}", "format": "openai-chat", "source_task": "s",
                       "cut_message_idx": 1},
    })


def run(tiny, tmp_path: Path, task_ids: list[str], concurrency: int, limits: EpisodeLimits | None = None,
        batch_window_s: float = 0.005, **proxy) -> list[Episode]:
    model, tokenizer = tiny
    write_agent(tmp_path)
    config = HarnessConfig(harness="proxy", proxy={"command": COMMAND, "agent_dir": "agent", **proxy})
    factory = HarnessFactory(config, tmp_path)
    policy = HFPolicy(SamplingEngine(model, eos_token_ids=[tokenizer.eos_token_id]), tokenizer, batch_window_s)
    scorer = build_scorer(MatchEval(kind="match", name="done", mode="contains", expected="DONE",
                                    target="metadata.agent_process.stdout"), ScorerContext(tmp_path))
    options = RunOptions(concurrency=concurrency, sampling=SAMPLING, limits=limits or EpisodeLimits())

    async def go() -> list[Episode]:
        try:
            return await run_many(policy, [spec(t) for t in task_ids], factory.make, options, lambda t: scorer,
                                  "proxy-set", "tiny")
        finally:
            await policy.aclose()
            factory.close()

    return asyncio.run(go())


def assert_exact_record(episode: Episode, model) -> None:
    """Trainable tokens are exactly the turns' spans, and re-scoring them reproduces the sampler log-probs."""
    record = episode.tokens
    record.validate()
    trainable = torch.zeros_like(record.loss_mask)
    for turn in episode.turns:
        trainable[turn.start:turn.end] = True
    assert torch.equal(trainable, record.loss_mask)
    assert torch.isnan(record.sampler_logprobs[~record.loss_mask]).all()
    inputs = record.turn_inputs(episode.turns)
    with torch.no_grad():
        rescored = batch_logprobs_of(model, [p for p, _, _ in inputs], [c for _, c, _ in inputs],
                                     SAMPLING.temperature, [s for _, _, s in inputs])
    torch.testing.assert_close(torch.cat(rescored), record.sampler_logprobs[record.loss_mask], atol=2e-4, rtol=0)


@pytest.mark.slow
def test_an_agent_program_becomes_a_stored_episode_with_an_exact_token_record_and_a_reward(tiny, tmp_path, store):
    episodes = run(tiny, tmp_path, ["plain", "rewrite"], concurrency=2)
    write_rollouts(store, episodes, "run-proxy")
    stored = {e.task_id: e for e in read_rollouts(store, run_id="run-proxy")}
    plain, rewrite = stored["plain"], stored["rewrite"]

    assert (plain.harness, plain.stop_reason, plain.harness_error) == ("proxy", "env_done", None)
    assert plain.reward == 1.0 and plain.scorer_error is None  # the scorer read the program's stdout
    assert len(plain.turns) == 3 and plain.metrics["proxy/calls"] == 3
    assert plain.metrics["proxy/segments"] == 1 and plain.tokens.segment_starts == (0,)
    [whole] = plain.metrics["proxy/split"]
    assert (whole["calls"], whole["why"]) == ([0, 1, 2], "first_call")
    assert whole["tokens"] == [0, len(plain.tokens.input_ids)]
    assert plain.metrics["proxy/ignored_params"] == ["temperature"] and plain.metrics["proxy/exit_code"] == 0
    assert_exact_record(plain, tiny[0])
    # Each call extended the one before: every turn's prompt holds all earlier turns' ids as sampled.
    inputs = plain.tokens.turn_inputs(plain.turns)
    for (prompt, completion, _), (next_prompt, _, _) in zip(inputs, inputs[1:], strict=False):
        assert next_prompt[: len(prompt) + len(completion)] == prompt + completion
    # The conversation as the agent sent it: its prompt (task messages + its own history), then the replies.
    assert plain.messages[:2] == spec("plain").messages() and plain.n_prompt_messages == 5
    assert [m["role"] for m in plain.continuation] == ["assistant", "user", "assistant", "user", "assistant"]
    assert plain.messages[2]["tool_calls"][0]["function"]["name"] == "get_weather"

    # The compacted history started a second segment: both are in the token record, one after the other, each
    # trainable; the stored messages are the conversation the last call extended.
    assert rewrite.stop_reason == "env_done" and rewrite.reward == 1.0
    assert rewrite.metrics["proxy/segments"] == 2 and len(rewrite.turns) == 3
    first, second = rewrite.metrics["proxy/split"]
    assert (first["calls"], first["why"], second["calls"]) == ([0, 1], "first_call", [2])
    assert (second["why"], second["from_segment"], second["kept_messages"]) == ("history_rewritten", 0, 1)
    assert rewrite.tokens.segment_starts == (0, second["tokens"][0]) and first["tokens"][1] == second["tokens"][0]
    assert [t.segment_start for t in rewrite.turns] == [0, 0, second["tokens"][0]]
    assert rewrite.n_prompt_messages == 2 and rewrite.messages[1]["content"].startswith("Summary so far")
    [earlier] = rewrite.metrics["proxy/other_segments"]
    assert earlier["messages"][:5] == rewrite.messages[:1] + plain.messages[1:5]
    assert_exact_record(rewrite, tiny[0])  # every turn re-scored from its own segment's prompt


@pytest.mark.slow
def test_a_crash_and_a_disconnect_are_recorded_harness_errors_and_the_run_goes_on(tiny, tmp_path):
    # The batcher waits half a second before each generation, so the client that hangs up right after sending
    # its request is gone before the reply could be written, however the machine schedules it.
    episodes = run(tiny, tmp_path, ["crash", "disconnect", "plain"], concurrency=1, batch_window_s=0.5,
                   wall_seconds=30)
    crash, disconnect, plain = episodes
    assert crash.stop_reason == "harness_error" and crash.reward is None
    assert "exited with code 1: RuntimeError: the agent hit a bug" in crash.harness_error
    assert len(crash.turns) == 1 and crash.tokens is not None  # what it did before crashing is kept
    assert disconnect.stop_reason == "harness_error" and disconnect.reward is None
    assert "disconnected while its reply was being generated" in disconnect.harness_error
    # Killed, not waited out: SIGKILL, reported as the shell reports it (128 + 9), like every sandboxed command.
    assert disconnect.metrics["proxy/killed"] and disconnect.metrics["proxy/exit_code"] == 137
    assert disconnect.turns == []
    assert plain.stop_reason == "env_done" and plain.harness_error is None and plain.reward == 1.0


def test_a_program_killed_at_its_wall_time_while_it_waits_for_a_reply_is_a_scored_time_out(tiny, tmp_path):
    # The batcher waits 20 s before generating, so the program is still waiting on its first call when the
    # sandbox kills it at 2 s; its client then disconnects, which must not make the time-out a harness error.
    [episode] = run(tiny, tmp_path, ["plain"], concurrency=1, batch_window_s=20, wall_seconds=2)
    assert (episode.stop_reason, episode.harness_error) == ("time_budget", None)
    assert episode.reward == 0.0  # scored: the program never printed DONE
    assert episode.metrics["proxy/timed_out"] and episode.metrics["proxy/killed"] and episode.turns == []


def test_a_limit_refuses_the_call_and_the_episode_is_scored(tiny, tmp_path):
    [episode] = run(tiny, tmp_path, ["plain"], concurrency=1, limits=EpisodeLimits(max_turns=2))
    assert (episode.stop_reason, len(episode.turns), episode.harness_error) == ("max_turns", 2, None)
    assert episode.reward == 0.0  # the agent died on the refused call and never printed DONE
    assert episode.metrics["proxy/exit_code"] == 1


def write_task_set(folder: Path) -> None:
    """A one-task task set, as `tracegym tasks generate` would write it, bound to a command eval."""
    from tracegym.tasks.spec import dump_spec

    (folder / "tasks").mkdir(parents=True)
    (folder / "tasks" / "plain.yaml").write_text(dump_spec(spec("plain")))
    (folder / "evals.yaml").write_text(textwrap.dedent("""
        version: 1
        evals:
          - name: done
            kind: command
            command: test "$(cat answer.txt)" = ok
    """))
    manifest = {
        "name": "proxy-set", "seed": 0, "evals_sha256": "0" * 64, "options": {}, "counts": {"tasks": 1},
        "clusters": [], "tasks": [{"task_id": "plain", "file": "tasks/plain.yaml", "split": "train",
                                   "harness": "chat", "trace_id": "tr-plain"}],
    }
    (folder / "manifest.yaml").write_text(json.dumps(manifest))


def test_tracegym_run_drives_the_agent_through_the_proxy(cli, tiny, tmp_path, store_path):
    model, tokenizer = tiny
    model.save_pretrained(tmp_path / "tiny-model")
    tokenizer.save_pretrained(tmp_path / "tiny-model")
    write_task_set(tmp_path / "set")
    write_agent(tmp_path)
    (tmp_path / "harness.yaml").write_text(f"harness: proxy\nproxy:\n  command: {json.dumps(COMMAND)}\n"
                                           "  agent_dir: agent\n  workspaces: ws\n")
    result = cli("run", tmp_path / "set", "--model", tmp_path / "tiny-model", "--harness-config",
                 tmp_path / "harness.yaml", "--max-new-tokens", "8", "--max-turns", "10", "--store", store_path,
                 "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["overall"]["episodes"] == 1 and summary["overall"]["harness_errors"] == 0
    from tracegym.store import open_store

    with open_store(store_path, read_only=True) as st:
        [episode] = read_rollouts(st, run_id=summary["run_id"])
    assert episode.harness == "proxy" and episode.stop_reason == "env_done"
    assert episode.reward == 1.0 and episode.scorer_details["exit_code"] == 0  # the command eval, in the workspace
    assert len(episode.turns) == 3 and episode.tokens.n_trainable == episode.tokens_out > 0
    assert not any((tmp_path / "ws").iterdir())  # the workspace is removed once scored
