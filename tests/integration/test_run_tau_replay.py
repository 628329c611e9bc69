"""`tracegym run` end to end on the real τ-bench traces: ingest, mine failures, generate tasks, run through replay.

With τ-bench's airline policy and its 14 JSON tool schemas a prompt is ~1,700 tokens (system prompt cut to 600
characters); the real SmolLM2 run lists the tools as one signature line each (`--tool-schemas compact`) and is
kept to 4 tasks x 2 samples of at most 2 short turns, so that it takes a couple of minutes on a 2-core CPU.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import torch

from tests.conftest import on_a_terminal, terminal_session
from tracegym.episodes.rollout_table import read_rollouts
from tracegym.models.load import load_model
from tracegym.models.logprobs import completion_logits, token_logprobs
from tracegym.models.tiny import smollm2_tokenizer, tiny_llama
from tracegym.store import open_store

pytestmark = pytest.mark.slow  # `tracegym run` end to end, the real SmolLM2 in one

EVALS = Path(__file__).resolve().parents[2] / "examples" / "evals.yaml"


@pytest.fixture
def tau_tasks(cli, traces_dir, store_path, tmp_path) -> Path:
    """The τ-bench runs ingested and mined; a task set from the top-ranked tool-error cluster."""
    assert cli("ingest", traces_dir / "tau-bench", "--store", store_path).exit_code == 0
    assert cli("mine", "failures", "--store", store_path, "--json").exit_code == 0
    with open_store(store_path, read_only=True) as st:
        cluster = st.scalar("SELECT cluster_id FROM clusters WHERE detector = 'tool_error' ORDER BY rank LIMIT 1")
    out = tmp_path / "tasks" / "tau-errors"
    # Ungated: under replay few failure cuts can earn tau_reward (docs/reward-gates.md); the runs are the point here.
    result = cli("tasks", "generate", "--allow-unredacted", "--evals", EVALS, "--out", out, "--store", store_path,
                 "--cluster", cluster, "--context", "last-user", "--system-max-chars", "600", "--json", "--no-gates")
    assert result.exit_code == 0, result.output
    return out


def run_json(cli, *args) -> dict:
    result = cli("run", *[str(a) for a in args], "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def assert_stored_record(store_path: Path, run_id: str, episodes: int) -> list:
    with open_store(store_path, read_only=True) as st:
        stored = read_rollouts(st, run_id=run_id)
        tasks = {r["task_id"] for r in st.query("SELECT task_id FROM tasks WHERE task_set_id = 'tau-errors'")}
    assert len(stored) == episodes
    for episode in stored:
        assert episode.task_id in tasks and episode.harness == "replay" and episode.harness_error is None
        assert episode.reward is not None and episode.scorer_error is None  # tau_reward: gold actions + outputs
        assert episode.tokens is not None and len(episode.turns) >= 1
        episode.tokens.validate()
        assert episode.messages[: episode.n_prompt_messages][0]["role"] == "system"
    return stored


def test_run_with_a_model_folder_stores_scored_rollouts(cli, tau_tasks, store_path, tmp_path):
    tokenizer = smollm2_tokenizer()
    # SmolLM2's context (8k) rather than tiny_policy's 2k: some τ-bench prompts are longer than 2k tokens.
    model = tiny_llama(len(tokenizer), seed=1, eos_token_id=tokenizer.eos_token_id, max_positions=8192)
    folder = tmp_path / "tiny-model"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    summary = run_json(cli, tau_tasks, "--model", folder, "--limit", 2, "-k", 2, "--max-turns", 2,
                       "--max-new-tokens", 8, "--top-p", 0.9, "--seed", 3, "--precision", "auto",
                       "--store", store_path)
    overall = summary["overall"]
    assert (overall["episodes"], overall["tasks"], overall["scored"], overall["harness_errors"]) == (4, 2, 4, 0)
    assert overall["replay_episodes"] == 4 and overall["replay_off_path_rate"] is not None
    assert sum(overall["stop_reasons"].values()) == 4
    assert [row["samples"] for row in summary["tasks"]] == [2, 2]
    stored = assert_stored_record(store_path, summary["run_id"], 4)
    assert {e.model for e in stored} == {str(folder)} and {e.sample_idx for e in stored} == {0, 1}

    missing = cli("run", tmp_path / "nowhere", "--model", folder, "--store", store_path)
    assert missing.exit_code == 2 and "No task set" in missing.stderr
    bad_split = cli("run", tau_tasks, "--split", "heldot", "--store", store_path)
    assert bad_split.exit_code == 2 and "Did you mean 'heldout'" in bad_split.stderr
    bad_precision = cli("run", tau_tasks, "--model", folder, "--precision", "bf17", "--store", store_path)
    assert bad_precision.exit_code == 2 and "auto" in bad_precision.stderr


def test_run_defaults_to_the_settings_of_training_and_eval(cli, tau_tasks, store_path, tmp_path):
    """Without flags, `run` samples as the trainer and `tracegym eval` do (one turn of at most 128 tokens, top-p
    0.95, the prompt from the last user message, full tool schemas: it ran 10 turns of 256 tokens); with
    --config, as that config says; a flag still overrides."""
    from tracegym.training.config import TrainConfig

    tokenizer = smollm2_tokenizer()
    model = tiny_llama(len(tokenizer), seed=1, eos_token_id=tokenizer.eos_token_id, max_positions=8192)
    model.save_pretrained(tmp_path / "tiny-model")
    tokenizer.save_pretrained(tmp_path / "tiny-model")
    defaults = TrainConfig(run_dir=tmp_path, tasks={"task_set": tau_tasks})
    plain = run_json(cli, tau_tasks, "--model", tmp_path / "tiny-model", "--limit", 1, "--store", store_path)
    config = tmp_path / "train.yaml"
    config.write_text(f"run_dir: {tmp_path / 'r'}\nmodel: {{ref: {tmp_path / 'tiny-model'}}}\n"
                      f"tasks: {{task_set: {tau_tasks}}}\nprompt: {{tool_schemas: compact}}\n"
                      "harness: {limits: {max_turns: 2}}\nsampler: {top_p: 0.8, max_new_tokens: 6}\n")
    configured = run_json(cli, tau_tasks, "--config", config, "--limit", 1, "--top-p", 0.7, "--store", store_path)
    with open_store(store_path, read_only=True) as st:
        [first] = read_rollouts(st, run_id=plain["run_id"])
        [second] = read_rollouts(st, run_id=configured["run_id"])
    assert len(first.turns) == defaults.harness.limits.max_turns == 1
    assert first.sampling["top_p"] == defaults.sampler.top_p and first.tokens_out <= defaults.sampler.max_new_tokens
    assert first.sampling["max_new_tokens"] == defaults.sampler.max_new_tokens
    assert second.sampling["top_p"] == 0.7 and second.sampling["max_new_tokens"] == 6
    assert second.model == str(tmp_path / "tiny-model") and len(second.turns) <= 2
    # the config's one-line tool signatures make a far shorter prompt than the default JSON schemas
    assert second.turns[0].start < first.turns[0].start / 2


def test_run_on_a_terminal_shows_its_progress_and_finishes(tau_tasks, store_path, tmp_path):
    """With a progress bar (a terminal), finished episodes advance it: `run` crashed there on its first episode."""
    tokenizer = smollm2_tokenizer()
    model = tiny_llama(len(tokenizer), seed=1, eos_token_id=tokenizer.eos_token_id, max_positions=8192)
    model.save_pretrained(tmp_path / "tiny-model")
    tokenizer.save_pretrained(tmp_path / "tiny-model")
    shown = on_a_terminal("run", tau_tasks, "--model", tmp_path / "tiny-model", "--limit", 2, "-k", 2,
                          "--max-turns", 1, "--max-new-tokens", 4, "--store", store_path, timeout=120)
    assert "episodes" in shown and "Traceback" not in shown
    assert "it/s]" not in shown and "Loading weights" not in shown  # transformers' tqdm bars beside rich's
    with open_store(store_path, read_only=True) as st:
        assert st.scalar("SELECT count(*) FROM rollouts") == 4


@dataclass
class HeldPolicy:
    """What the held endpoint saw: its URL, the requests it received, and the event that releases them."""

    url: str = ""
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    release: threading.Event = field(default_factory=threading.Event)


@contextmanager
def held_policy(answered: int) -> Iterator[HeldPolicy]:
    """An OpenAI-compatible endpoint on 127.0.0.1 that answers its first `answered` requests at once and holds every
    later one unanswered until the block ends: a run on it is still working however slow the machine is."""
    held = HeldPolicy()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers["Content-Length"]))
            with held.lock:
                held.requests += 1
                hold = held.requests > answered
            if hold:  # never answered: released when the test ends, after the run has
                held.release.wait(timeout=300)
                return
            body = json.dumps({"id": "held", "object": "chat.completion", "created": 0, "model": "held",
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": "Let me check that."}}]})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    held.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield held
    finally:
        held.release.set()
        server.shutdown()
        server.server_close()


def test_one_ctrl_c_stops_run_cleanly(tau_tasks, store_path):
    """One Ctrl-C once episodes are finishing ends the run (it hung: the interrupt killed the event loop's thread),
    with the shell's code for it and no thread exception, pending task or traceback; the finished episode is stored.
    The policy answers the first request and holds the rest, so the interrupt always lands mid-run (with a model
    in the process, a loaded machine finished every episode before the Ctrl-C arrived)."""
    with held_policy(answered=1) as policy:
        code, shown = terminal_session("run", tau_tasks, "--model", "held", "--base-url", policy.url, "-k", 4,
                                       "--limit", 1, "--concurrency", 2, "--max-turns", 1, "--store", store_path,
                                       timeout=120, interrupt_on=r"(?<![0-9])1/4")
        assert policy.requests >= 2, "no request was held when the run ended"
    assert code == 130, shown
    for noise in ("Traceback", "Exception in thread", "Task was destroyed", "never retrieved"):
        assert noise not in shown, shown
    with open_store(store_path, read_only=True) as st:
        assert st.scalar("SELECT count(*) FROM rollouts") == 1


def test_smollm2_runs_tau_tasks_through_replay_with_an_exact_token_record(cli, tau_tasks, store_path):
    summary = run_json(cli, tau_tasks, "--limit", 4, "-k", 2, "--max-turns", 2, "--max-new-tokens", 24,
                       "--temperature", 0.8, "--top-p", 0.95, "--tool-schemas", "compact", "--store", store_path)
    overall = summary["overall"]
    assert (overall["episodes"], overall["tasks"], overall["harness_errors"], overall["scorer_errors"]) == (8, 4, 0, 0)
    stored = assert_stored_record(store_path, summary["run_id"], 8)

    # The trainer's view: one forward pass over each episode's flat record, log-probs at its trainable tokens.
    model = load_model("smollm2-135m", "fp32")
    for episode in stored:
        record, first, last = episode.tokens, episode.turns[0].start, episode.turns[-1].end
        assert episode.sampling["temperature"] == 0.8 and record.support.kind == "exact"
        ids = record.input_ids.tolist()
        with torch.no_grad():
            [logits] = completion_logits(model, [ids[:first]], [ids[first:last]])
        trainable = record.loss_mask[first:last]
        rescored = token_logprobs(logits[trainable], record.input_ids[first:last][trainable], 0.8, record.support)
        torch.testing.assert_close(rescored, record.sampler_logprobs[record.loss_mask], atol=1e-4, rtol=0)
