"""The episode runner with a tiny random Llama through HFPolicy: the token record, stop conditions, failures."""

from __future__ import annotations

import asyncio
import copy
import json
import math
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import torch

from tracegym.episodes.record import Episode
from tracegym.episodes.rollout_table import read_rollouts, write_rollouts
from tracegym.evals.scorers import ScorerContext, build_scorer
from tracegym.evals.scorers.config import MatchEval, PythonEval
from tracegym.harnesses.base import Harness, Reply, Reset, Step
from tracegym.harnesses.config import HarnessConfig, HarnessFactory
from tracegym.harnesses.policy import (
    HFPolicy,
    OpenAIPolicy,
    OpenAIPolicyConfig,
    PolicyClient,
)
from tracegym.harnesses.runner import (
    EpisodeJob,
    EpisodeLimits,
    RunOptions,
    run_episode,
    run_many,
)
from tracegym.models.logprobs import batch_logprobs_of
from tracegym.models.sampling import SamplingEngine, SamplingParams
from tracegym.models.tiny import tiny_policy
from tracegym.tasks.spec import TaskSpec

TOP_P = SamplingParams(top_p=0.9, max_new_tokens=10)


@pytest.fixture(scope="module")
def tiny():
    return tiny_policy(seed=0)


def hf(model, tokenizer, **kwargs) -> HFPolicy:
    return HFPolicy(SamplingEngine(model, eos_token_ids=[tokenizer.eos_token_id], **kwargs), tokenizer)


def ending_model(model, eos: int, bias: float = 20.0):
    """The tiny model with its EOS logit raised to the level of its top logits (~20; EOS is its padding id,
    whose embedding is zero), so that replies end on their own as a trained model's do."""
    ending = copy.deepcopy(model)
    head = torch.nn.Linear(ending.config.hidden_size, ending.config.vocab_size, bias=True)
    head.weight = ending.lm_head.weight
    with torch.no_grad():
        head.bias.zero_()
        head.bias[eos] = bias
    ending.lm_head = head
    return ending.eval()


def task(harness: str, task_id: str = "t-1", user: str = "List the files, then stop.", **extra) -> TaskSpec:
    return TaskSpec.model_validate({
        "task_id": task_id, "split": "train", "harness": harness,
        "prompt": {"system": "You are a careful agent.", "messages": [{"role": "user", "content": user}]},
        "scorer": {"evals": [{"name": "any"}]},
        "provenance": {"trace_id": "tr-1", "format": "mini-swe-agent", "source_task": "s", "cut_message_idx": 1},
        **extra,
    })


def run(policy: PolicyClient, tasks, options: RunOptions, make=None, scorer=None) -> list[Episode]:
    factory = HarnessFactory()

    async def go() -> list[Episode]:
        try:
            return await run_many(policy, tasks, make or factory.make, options, (lambda t: scorer), "set", "tiny")
        finally:
            await policy.aclose()
            factory.close()

    return asyncio.run(go())


def test_the_token_record_is_exact_and_rescores_to_the_sampler_logprobs(tiny, store):
    model, tokenizer = tiny
    options = RunOptions(samples=3, sampling=TOP_P, limits=EpisodeLimits(max_turns=3))
    episodes = run(hf(model, tokenizer), [task("shell")], options)
    write_rollouts(store, episodes, "run-1")
    stored = read_rollouts(store, run_id="run-1")
    assert sorted(e.rollout_id for e in stored) == sorted(e.rollout_id for e in episodes)
    round_trip_differs = False
    for episode in stored:
        record = episode.tokens
        record.validate()
        assert episode.stop_reason == "max_turns" and len(episode.turns) == 3 and episode.harness_error is None
        spans = [(t.start, t.end) for t in episode.turns]
        trainable = torch.zeros_like(record.loss_mask)
        for start, end in spans:
            trainable[start:end] = True
        assert torch.equal(trainable, record.loss_mask)  # exactly the model's tokens are trainable
        for (_, end), (next_start, _) in zip(spans, spans[1:], strict=False):
            assert next_start > end  # environment tokens (format error, template) sit between turns, masked
        assert torch.isnan(record.sampler_logprobs[~record.loss_mask]).all()
        assert bool((record.sampler_logprobs[record.loss_mask] <= 0).all())
        sizes = record.support.sizes
        assert record.support.kind == "exact" and len(sizes) == record.n_trainable and 1 <= int(sizes.min())
        assert int(sizes.max()) <= TOP_P.max_support
        assert episode.tokens_out == sum(e - s for s, e in spans) == record.n_trainable
        inputs = record.turn_inputs(episode.turns)
        with torch.no_grad():
            rescored = batch_logprobs_of(model, [p for p, _, _ in inputs], [c for _, c, _ in inputs],
                                         TOP_P.temperature, [s for _, _, s in inputs])
        torch.testing.assert_close(torch.cat(rescored), record.sampler_logprobs[record.loss_mask], atol=2e-4, rtol=0)
        for _, completion, _ in inputs:
            text = tokenizer.decode(completion, skip_special_tokens=False)
            round_trip_differs |= tokenizer.encode(text, add_special_tokens=False) != completion
    # Decoding and re-encoding would have changed some completions; the record kept the sampled ids.
    assert round_trip_differs


def test_episodes_have_deterministic_seeds_and_record_the_sampler(tiny):
    model, tokenizer = tiny
    options = RunOptions(samples=2, seed=7, sampling=TOP_P, limits=EpisodeLimits(max_turns=1))
    first = run(hf(model, tokenizer, sampler_id="hf-test", policy_version=5), [task("chat")], options)
    again = run(hf(model, tokenizer, sampler_id="hf-test", policy_version=5), [task("chat")], options)
    assert [e.seed for e in first] == [e.seed for e in again] and first[0].seed != first[1].seed
    assert [e.tokens.input_ids.tolist() for e in first] == [e.tokens.input_ids.tolist() for e in again]
    assert all(e.sampler_id == "hf-test" and e.policy_version == 5 and not e.version_changed for e in first)
    assert [e.sample_idx for e in first] == [0, 1] and first[0].sampling["top_p"] == 0.9


class Countdown(Harness):
    """An environment that answers each reply with how many steps are left and ends after `steps`."""

    name = "countdown"

    def __init__(self, steps: int = 2, fail_at: int | None = None) -> None:
        super().__init__()
        self.left, self.fail_at = steps, fail_at

    async def reset(self, task: TaskSpec) -> Reset:
        return Reset(task.messages())

    async def step(self, reply: Reply) -> Step:
        if reply.turn == self.fail_at:
            raise RuntimeError("the environment's backend went away")
        self.left -= 1
        done = self.left == 0
        return Step({"role": "assistant", "content": reply.text}, [{"role": "user", "content": f"{self.left} left"}],
                    done=done, reason="env_done" if done else None)


def one(policy: PolicyClient, harness: Harness, spec: TaskSpec, params: SamplingParams, limits: EpisodeLimits,
        scorer=None) -> Episode:
    async def go() -> Episode:
        try:
            return await run_episode(policy, harness, EpisodeJob(spec, seed=3), params, limits, scorer)
        finally:
            await policy.aclose()

    return asyncio.run(go())


def shell(tmp_path):
    return HarnessFactory(HarnessConfig(shell={"workspaces": str(tmp_path / "ws")})).make(task("shell"), "ep-1")


def test_each_stop_condition(tiny, tmp_path):
    model, tokenizer = tiny
    eos = tokenizer.eos_token_id
    chat = task("chat")

    ep = one(hf(model, tokenizer), shell(tmp_path), task("shell"), TOP_P, EpisodeLimits(max_turns=2))
    assert (ep.stop_reason, len(ep.turns)) == ("max_turns", 2)

    ep = one(hf(model, tokenizer), shell(tmp_path), task("shell"), TOP_P, EpisodeLimits(max_tokens=15))
    assert (ep.stop_reason, ep.tokens_out, len(ep.turns)) == ("max_tokens", 15, 2)

    ep = one(hf(model, tokenizer), Countdown(2), chat, TOP_P, EpisodeLimits(max_turns=5))
    assert (ep.stop_reason, len(ep.turns)) == ("env_done", 2)

    ep = one(hf(model, tokenizer), Countdown(9), chat, TOP_P, EpisodeLimits(time_budget_s=1e-6))
    assert (ep.stop_reason, len(ep.turns)) == ("time_budget", 0)

    first_prompt = one(hf(model, tokenizer), Countdown(9), chat, TOP_P, EpisodeLimits(max_turns=1)).tokens
    limit = EpisodeLimits(max_prompt_tokens=first_prompt.input_ids.numel() + 3)
    ep = one(hf(model, tokenizer), Countdown(9), chat, TOP_P, limit)
    assert (ep.stop_reason, len(ep.turns)) == ("context_exceeded", 1)

    ep = one(hf(model, tokenizer), Countdown(9), task("chat", user="word " * 2100), TOP_P, EpisodeLimits())
    assert (ep.stop_reason, len(ep.turns)) == ("context_exceeded", 0)  # the tiny model's context is 2048

    ep = one(hf(model, tokenizer), HarnessFactory().make(chat, "e"), chat, SamplingParams(max_new_tokens=4),
             EpisodeLimits())
    assert (ep.stop_reason, ep.turns[0].finish_reason) == ("max_new_tokens", "length")

    ending = ending_model(model, eos)
    ep = one(hf(ending, tokenizer), HarnessFactory().make(chat, "e"), chat, SamplingParams(max_new_tokens=64),
             EpisodeLimits())
    assert (ep.stop_reason, ep.turns[0].finish_reason) == ("model_done", "stop")
    assert ep.tokens.input_ids[-1] == eos and bool(ep.tokens.loss_mask[-1])


def test_a_failing_harness_ends_its_episode_and_the_batch_goes_on(tiny, tmp_path):
    model, tokenizer = tiny
    scorer = build_scorer(MatchEval(kind="match", name="said_ok", mode="contains", expected="ok"),
                          ScorerContext(tmp_path))
    tasks = [task("chat", "t-fails"), task("chat", "t-ok"), task("chat", "t-late")]
    harnesses = {"t-fails": lambda: Countdown(3, fail_at=0), "t-ok": lambda: Countdown(2),
                 "t-late": lambda: Countdown(3, fail_at=1)}
    options = RunOptions(samples=2, sampling=TOP_P, limits=EpisodeLimits(max_turns=5))
    episodes = run(hf(model, tokenizer), tasks, options, lambda t, _: harnesses[t.task_id](), scorer)
    by_task = {e.task_id: e for e in episodes}
    assert len(episodes) == 6
    failed = by_task["t-fails"]
    assert failed.stop_reason == "harness_error" and failed.reward is None and failed.scorer_error is None
    assert failed.harness_error == "RuntimeError: the environment's backend went away"
    assert len(failed.turns) == 1 and failed.tokens.n_trainable == failed.turns[0].end - failed.turns[0].start
    late = by_task["t-late"]
    assert late.stop_reason == "harness_error" and len(late.turns) == 2
    ok = by_task["t-ok"]
    assert ok.stop_reason == "env_done" and ok.harness_error is None and ok.reward == 0.0
    assert ok.scorer_details and ok.scorer_error is None


def test_a_sandbox_that_cannot_start_is_recorded(tiny, tmp_path):
    from tracegym.errors import SandboxError
    from tracegym.harnesses.sandbox.docker import connect

    try:
        connect().close()
        pytest.skip("a Docker engine is reachable here, so the docker sandbox starts")
    except SandboxError:
        pass
    model, tokenizer = tiny
    factory = HarnessFactory(HarnessConfig(shell={"sandbox": "docker", "workspaces": str(tmp_path / "ws")}))
    ep = one(hf(model, tokenizer), factory.make(task("shell"), "ep-1"), task("shell"), TOP_P, EpisodeLimits())
    assert ep.stop_reason == "harness_error" and ep.harness_error.startswith("SandboxError: no Docker engine")
    assert ep.turns == [] and ep.reward is None


def test_a_scorer_error_is_recorded_not_raised(tiny, tmp_path):
    model, tokenizer = tiny
    scorer = build_scorer(MatchEval(kind="match", name="expected", mode="exact", expected_from="metadata.answer"),
                          ScorerContext(tmp_path))
    ep = one(hf(model, tokenizer), Countdown(1), task("chat"), TOP_P, EpisodeLimits(), scorer)
    assert ep.stop_reason == "env_done" and ep.harness_error is None
    assert ep.reward is None and "metadata has no key 'answer'" in ep.scorer_error


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_client_that_cannot_reach_its_endpoint_ends_the_episode():
    config = OpenAIPolicyConfig(base_url=f"http://127.0.0.1:{free_port()}/v1", model="m", max_retries=0,
                                api_key_env=None)
    ep = one(OpenAIPolicy(config), Countdown(2), task("chat"), TOP_P, EpisodeLimits())
    assert ep.stop_reason == "policy_error" and "could not reach" in ep.harness_error
    assert ep.tokens is None and ep.turns == []


class ChatServer:
    """An OpenAI-compatible endpoint on 127.0.0.1 replaying canned assistant messages (the remote API boundary)."""

    def __init__(self, replies: list[dict]) -> None:
        self.replies, self.requests = list(replies), []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                server.requests.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                message = server.replies.pop(0)
                body = json.dumps({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def api_call(call_id: str, name: str, arguments: dict) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def test_a_messages_only_client_runs_replay_and_leaves_the_recorded_path(store):
    spec = task("replay", tools=[{"name": "get_user_details", "parameters": {"type": "object"}, "source": "declared"}],
                replay=[{"message_idx": 3, "name": "get_user_details", "arguments": {"user_id": "mia"},
                         "result": '{"name": "Mia"}'}])
    server = ChatServer([api_call("c1", "get_user_details", {"user_id": "mia"}),
                         api_call("c2", "get_user_details", {"user_id": "bob"}),
                         {"role": "assistant", "content": "Done: you are Mia."}])
    try:
        config = OpenAIPolicyConfig(base_url=server.url, model="m", api_key_env=None, logprobs=False)
        ep = one(OpenAIPolicy(config), HarnessFactory().make(spec, "e"), spec, TOP_P, EpisodeLimits())
    finally:
        server.close()
    assert ep.stop_reason == "model_done" and ep.tokens is None and len(ep.turns) == 3
    assert (ep.counts.replay_hits, ep.counts.replay_misses, ep.left_recorded_path) == (1, 1, True)
    tool_messages = [m for m in ep.continuation if m["role"] == "tool"]
    assert tool_messages[0] == {"role": "tool", "tool_call_id": "c1", "name": "get_user_details",
                                "content": '{"name": "Mia"}'}
    # No recorded error to learn a style from: a neutral error, in which the policy cannot tell it is replayed.
    assert tool_messages[1]["content"] == "Error: get_user_details: no result for these arguments"
    # The endpoint saw the conversation grow with its own calls and the replayed results.
    assert [m["role"] for m in server.requests[2]["messages"]] == ["system", "user", "assistant", "tool",
                                                                   "assistant", "tool"]
    write_rollouts(store, [ep], "api-run")
    [back] = read_rollouts(store, run_id="api-run")
    assert back.tokens is None and back.messages == ep.messages and back.left_recorded_path
    row = store.query("SELECT input_ids, support_kind, n_replay_misses FROM rollouts WHERE run_id = 'api-run'")[0]
    assert row == {"input_ids": None, "support_kind": None, "n_replay_misses": 1}


def test_the_stored_row_holds_the_record_as_columns(tiny, store):
    model, tokenizer = tiny
    options = RunOptions(samples=1, sampling=SamplingParams(top_k=5, max_new_tokens=6),
                         limits=EpisodeLimits(max_turns=1))
    [ep] = run(hf(model, tokenizer), [task("chat")], options)
    write_rollouts(store, [ep], "r")
    row = store.query("SELECT * FROM rollouts")[0]
    assert row["input_ids"] == ep.tokens.input_ids.tolist() and row["loss_mask"] == ep.tokens.loss_mask.tolist()
    masked = [lp for lp, m in zip(row["sampler_logprobs"], row["loss_mask"], strict=True) if not m]
    assert masked and all(math.isnan(lp) for lp in masked)
    assert len(row["support_offsets"]) == 7 and row["support_kind"] == "exact"
    assert max(b - a for a, b in zip(row["support_offsets"], row["support_offsets"][1:], strict=False)) <= 5
    assert (row["stop_reason"], row["n_turns"], row["tokens_out"], row["task_set_id"]) == ("max_new_tokens", 1, 6,
                                                                                           "set")
    assert json.loads(row["turns"])[0]["end"] == len(row["input_ids"])


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(("second", "reward", "malformed"), [
    (api_call("c2", "get_user_details", {"user_id": "bob"}), 1.0, 0),
    (api_call("c2", "translate", {"text": "hi"}), 0.0, 1),  # not a declared tool: rejected, not run
    ({"role": "assistant", "content": None, "tool_calls": [{"id": "c2", "type": "function", "function": {
        "name": "get_user_details", "arguments": "{\"user_id\": "}}]}, 0.0, 1),
])
def test_scorers_see_the_malformed_calls(second, reward, malformed):
    """examples/evals-train.yaml's `well_formed` eval reads Trajectory.malformed_tool_calls."""
    spec = task("replay", tools=[{"name": "get_user_details", "parameters": {"type": "object"}, "source": "declared"}],
                replay=[{"message_idx": 3, "name": "get_user_details", "arguments": {"user_id": "mia"},
                         "result": '{"name": "Mia"}'}])
    scorer = build_scorer(PythonEval(kind="python", name="well_formed", function="team_evals:well_formed",
                                     python_path=["."]), ScorerContext(EXAMPLES))
    server = ChatServer([api_call("c1", "get_user_details", {"user_id": "mia"}), second,
                         {"role": "assistant", "content": "Done."}])
    try:
        config = OpenAIPolicyConfig(base_url=server.url, model="m", api_key_env=None, logprobs=False)
        ep = one(OpenAIPolicy(config), HarnessFactory().make(spec, "e"), spec, TOP_P, EpisodeLimits(), scorer)
    finally:
        server.close()
    assert ep.counts.malformed_tool_calls == malformed
    assert (ep.reward, ep.scorer_details) == (reward, {"malformed": malformed})
