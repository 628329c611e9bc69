"""The sampling engine's token record: exact re-scoring, support invariants, truncation, seeds, padding."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from pydantic import ValidationError

from tracegym.errors import ModelError
from tracegym.models.logprobs import batch_logprobs_of, logprobs_of, token_logprobs
from tracegym.models.sampling import (
    SamplingEngine,
    SamplingParams,
    canonical_top,
    share_prompts,
    truncated_distribution,
)
from tracegym.models.tiny import tiny_llama, tiny_policy

QUESTIONS = ["What is 2+2?", "Name three colours, then explain why the sky looks blue on a clear afternoon.", "Hi"]


@pytest.fixture(scope="module")
def policy():
    return tiny_policy(seed=0)


@pytest.fixture(scope="module")
def prompts(policy):
    _, tokenizer = policy
    return [
        tokenizer.apply_chat_template([{"role": "user", "content": q}], add_generation_prompt=True)["input_ids"]
        for q in QUESTIONS
    ]


def engine(policy, **kwargs) -> SamplingEngine:
    model, tokenizer = policy
    return SamplingEngine(model, eos_token_ids=[tokenizer.eos_token_id], **kwargs)


PARAMS = [
    SamplingParams(top_p=0.9, temperature=0.7, max_new_tokens=24),
    SamplingParams(top_k=5, max_new_tokens=24),
    SamplingParams(top_k=20, top_p=0.8, temperature=1.3, max_new_tokens=24),
    SamplingParams(max_new_tokens=24, head_logprobs=8),
]


@pytest.mark.parametrize("params", PARAMS, ids=["top_p", "top_k", "top_k+top_p", "untruncated"])
def test_rescoring_reproduces_the_sampler_logprobs(policy, prompts, params):
    model, _ = policy
    seqs = engine(policy).generate(prompts, params, seeds=[1, 2, 3])
    supports = [s.support if params.truncated else None for s in seqs]
    with torch.no_grad():
        rescored = batch_logprobs_of(
            model, [s.prompt_ids for s in seqs], [s.completion_ids for s in seqs], params.temperature, supports
        )
    for seq, lp in zip(seqs, rescored, strict=True):
        assert len(seq.completion_ids) == len(seq.logprobs) > 0
        torch.testing.assert_close(lp, seq.logprobs, atol=2e-4, rtol=0)


@pytest.mark.parametrize("params", PARAMS[:3], ids=["top_p", "top_k", "top_k+top_p"])
def test_support_invariants(policy, prompts, params):
    for seq in engine(policy).generate(prompts, params, seeds=[4, 5, 6]):
        support = seq.support
        assert support is not None and support.kind == "exact" and len(support) == len(seq.completion_ids)
        support.validate(seq.completion_ids)  # token in S, unique ids, monotone offsets, logsumexp 0
        assert bool((support.sizes >= 1).all()) and int(support.sizes.max()) <= params.effective_top_k
        for t, token in enumerate(seq.completion_ids):
            ids, logprobs = support.row(t)
            assert abs(float(torch.logsumexp(logprobs.double(), 0))) < 1e-5
            assert float(logprobs[ids == token]) == pytest.approx(float(seq.logprobs[t]))


def test_top_p_picks_up_more_than_one_token_somewhere(policy, prompts):
    """Guards the tests above against a degenerate model whose supports are all of size one."""
    seqs = engine(policy).generate(prompts, PARAMS[0], seeds=[7, 8, 9])
    sizes = torch.cat([s.support.sizes for s in seqs])
    assert int(sizes.max()) > 3 and int(sizes.min()) >= 1


def reference_support(logits: np.ndarray, temperature: float, top_k: int, top_p: float) -> tuple[list, list]:
    """Independent float64 reference: order by (-z, id), keep top_k, then the smallest prefix reaching top_p."""
    z = logits.astype(np.float64) / temperature
    order = np.lexsort((np.arange(z.size), -z))  # primary key -z, ties by ascending id
    if top_k:
        order = order[:top_k]
    p = np.exp(z[order] - z[order].max())
    p /= p.sum()
    n = 1
    while n < len(order) and p[:n].sum() < top_p:
        n += 1
    kept = order[:n]
    logq = z[kept] - np.log(np.exp(z[kept] - z[kept].max()).sum()) - z[kept].max()
    return kept.tolist(), logq.tolist()


@pytest.mark.parametrize("top_k,top_p,temperature", [(0, 0.9, 1.0), (10, 1.0, 0.8), (16, 0.7, 1.5), (3, 0.5, 1.0)])
def test_truncation_matches_an_independent_reference(top_k, top_p, temperature):
    gen = torch.Generator().manual_seed(top_k * 100 + int(top_p * 10))
    logits = torch.randn(6, 500, generator=gen) * 3
    logits[0, :40] = logits[0].max()  # a tie wider than any cap: ties must break by lower id
    logits[1, 7] = logits[1, 9] = logits[1].max() + 0.5  # a tied top pair
    params = SamplingParams(top_k=top_k, top_p=top_p, temperature=temperature, max_support=32)
    dist = truncated_distribution(logits, params)
    for row in range(logits.shape[0]):
        ids, logq = reference_support(logits[row].numpy(), temperature, params.effective_top_k, top_p)
        size = int(dist.sizes[row])
        assert dist.ids[row, :size].tolist() == ids
        np.testing.assert_allclose(dist.logprobs[row, :size].numpy(), logq, atol=1e-5)
        assert torch.isinf(dist.logprobs[row, size:]).all()


def test_canonical_top_breaks_ties_by_lower_id():
    scores = torch.tensor([[1.0, 3.0, 3.0, 2.0, 3.0, 3.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]])
    values, ids = canonical_top(scores, 3)
    assert ids.tolist() == [[1, 2, 4], [0, 1, 2]]
    assert values.tolist() == [[3.0, 3.0, 3.0], [0.0, 0.0, 0.0]]


def test_fixed_seed_is_reproducible_and_seeds_matter(policy, prompts):
    params = SamplingParams(top_p=0.95, max_new_tokens=20)
    first = engine(policy).generate(prompts, params, seeds=[11, 12, 13])
    again = engine(policy).generate(prompts, params, seeds=[11, 12, 13])
    other = engine(policy).generate(prompts, params, seeds=[21, 22, 23])
    assert [s.completion_ids for s in first] == [s.completion_ids for s in again]
    assert all(torch.equal(a.logprobs, b.logprobs) for a, b in zip(first, again, strict=True))
    assert [s.completion_ids for s in first] != [s.completion_ids for s in other]
    assert [s.seed for s in first] == [11, 12, 13]


def test_engine_seed_makes_unseeded_requests_reproducible(policy, prompts):
    params = SamplingParams(top_k=10, max_new_tokens=8)
    a = engine(policy, seed=5).generate(prompts, params)
    b = engine(policy, seed=5).generate(prompts, params)
    assert [s.seed for s in a] == [s.seed for s in b]
    assert [s.completion_ids for s in a] == [s.completion_ids for s in b]


def test_batched_generation_equals_generating_each_alone(policy, prompts):
    params = SamplingParams(top_p=0.9, max_new_tokens=20)
    assert len({len(p) for p in prompts}) == len(prompts)  # different lengths, so padding is exercised
    batched = engine(policy).generate(prompts, params, seeds=[31, 32, 33])
    for prompt, seed, seq in zip(prompts, [31, 32, 33], batched, strict=True):
        alone = engine(policy).generate([prompt], params, seeds=[seed])[0]
        assert alone.completion_ids == seq.completion_ids
        torch.testing.assert_close(alone.logprobs, seq.logprobs, atol=2e-4, rtol=0)
        assert alone.support.ids.tolist() == seq.support.ids.tolist()


def test_a_repeated_prompt_is_prefilled_once_and_samples_as_if_alone(policy, prompts):
    """A GRPO group: the same prompt several times in one batch, beside other prompts."""
    params = SamplingParams(top_p=0.9, max_new_tokens=16)
    batch = [prompts[1], prompts[0], prompts[1], prompts[1], prompts[2]]
    seeds = [5, 6, 7, 8, 9]
    distinct, row_of = share_prompts(batch)  # what the engine prefills: three prompts, not five
    assert distinct == [prompts[1], prompts[0], prompts[2]] and row_of.tolist() == [0, 1, 0, 0, 2]
    shared = engine(policy).generate(batch, params, seeds=seeds)
    assert len({tuple(s.completion_ids) for s in (shared[0], shared[2], shared[3])}) > 1  # the seeds matter
    for prompt, seed, seq in zip(batch, seeds, shared, strict=True):
        alone = engine(policy).generate([prompt], params, seeds=[seed])[0]
        assert seq.prompt_ids == alone.prompt_ids
        assert alone.completion_ids == seq.completion_ids
        torch.testing.assert_close(alone.logprobs, seq.logprobs, atol=2e-4, rtol=0)


def test_small_max_batch_size_gives_the_same_sequences(policy, prompts):
    params = SamplingParams(top_k=8, max_new_tokens=12)
    whole = engine(policy).generate(prompts, params, seeds=[1, 2, 3])
    chunked = engine(policy, max_batch_size=2).generate(prompts, params, seeds=[1, 2, 3])
    assert [s.completion_ids for s in whole] == [s.completion_ids for s in chunked]
    assert chunked[0].timing.batch_size == 2 and chunked[2].timing.batch_size == 1


def test_stop_token_ends_the_completion_and_is_kept(policy, prompts):
    free = engine(policy).generate(prompts[:1], SamplingParams(top_k=1, max_new_tokens=12), seeds=[0])[0]
    stop = free.completion_ids[4]
    first = free.completion_ids.index(stop)
    params = SamplingParams(top_k=1, max_new_tokens=12, stop_token_ids=(stop,))
    seq = engine(policy).generate(prompts[:1], params, seeds=[0])[0]
    assert seq.completion_ids == free.completion_ids[: first + 1]
    assert seq.finish_reason == "stop" and free.finish_reason == "length"
    assert len(free.completion_ids) == 12


def test_rows_that_stop_early_leave_the_others_unchanged(policy, prompts):
    greedy = SamplingParams(top_k=1, max_new_tokens=10)
    free = engine(policy).generate(prompts, greedy)
    stop = free[0].completion_ids[2]
    params = SamplingParams(top_k=1, max_new_tokens=10, stop_token_ids=(stop,))
    seqs = engine(policy).generate(prompts, params)
    assert seqs[0].finish_reason == "stop" and len(seqs[0].completion_ids) <= 3
    for f, s in zip(free[1:], seqs[1:], strict=True):
        if stop not in f.completion_ids:
            assert s.completion_ids == f.completion_ids


def test_without_replay_the_log_ratio_is_log_mass_of_the_support(policy, prompts):
    """Oracle 10: full-vocab log-prob minus support log-prob = log pi(S) <= 0, and 0 with replay."""
    model, _ = policy
    params = SamplingParams(top_p=0.8, max_new_tokens=16)
    seq = engine(policy).generate(prompts[:1], params, seeds=[3])[0]
    with torch.no_grad():
        full = logprobs_of(model, seq.prompt_ids, seq.completion_ids)
        replay = logprobs_of(model, seq.prompt_ids, seq.completion_ids, support=seq.support)
    ratio = full - seq.logprobs
    assert bool((ratio <= 1e-5).all()) and float(ratio.min()) < -1e-3
    torch.testing.assert_close(replay, seq.logprobs, atol=2e-4, rtol=0)


def test_a_token_outside_its_support_is_an_error(policy, prompts):
    seq = engine(policy).generate(prompts[:1], SamplingParams(top_k=2, max_new_tokens=4), seeds=[1])[0]
    logits = torch.randn(4, len(policy[1]))
    outside = [i for i in range(100) if i not in seq.support.row(0)[0].tolist()][0]
    tokens = torch.tensor([outside] + seq.completion_ids[1:])
    with pytest.raises(ModelError, match="outside its recorded support"):
        token_logprobs(logits, tokens, support=seq.support)


def test_top_p_without_top_k_is_capped_by_max_support(policy, prompts):
    params = SamplingParams(top_p=0.9999, max_support=4, max_new_tokens=10)
    seqs = engine(policy).generate(prompts, params, seeds=[1, 2, 3])
    assert max(int(s.support.sizes.max()) for s in seqs) == 4


def test_sampling_params_reject_contradictions():
    with pytest.raises(ValidationError, match="exceeds max_support"):
        SamplingParams(top_k=100, max_support=64)
    with pytest.raises(ValidationError, match="untruncated"):
        SamplingParams(top_p=0.9, head_logprobs=4)
    with pytest.raises(ValidationError):
        SamplingParams(temperature=0)
    assert SamplingParams().support_kind is None and SamplingParams(top_k=1).support_kind == "exact"


def test_bad_prompts_are_clear_errors(policy):
    eng = engine(policy)
    with pytest.raises(ModelError, match="empty"):
        eng.generate([[]], SamplingParams())
    with pytest.raises(ModelError, match="outside the vocabulary"):
        eng.generate([[1, 10**7]], SamplingParams())


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
def test_low_precision_sampler_records_its_own_distribution(policy, prompts, dtype):
    model, tokenizer = policy
    low = tiny_llama(len(tokenizer), seed=0).to(dtype)
    params = SamplingParams(top_p=0.9, max_new_tokens=16)
    seqs = SamplingEngine(low, eos_token_ids=[tokenizer.eos_token_id]).generate(prompts, params, seeds=[1, 2, 3])
    with torch.no_grad():
        fp32 = batch_logprobs_of(
            model, [s.prompt_ids for s in seqs], [s.completion_ids for s in seqs], supports=[s.support for s in seqs]
        )
    for seq, lp in zip(seqs, fp32, strict=True):
        seq.support.validate(seq.completion_ids)
        gap = (lp - seq.logprobs).abs()
        assert float(gap.max()) > 0  # the low precision and fp32 really differ
        assert float(gap.mean()) < 0.5  # ...but they are the same policy


def test_load_weights_bumps_the_version_and_changes_samples(policy, prompts):
    model, tokenizer = policy
    eng = SamplingEngine(
        tiny_llama(len(tokenizer), seed=0), eos_token_ids=[tokenizer.eos_token_id], sampler_id="pool-a/0"
    )
    params = SamplingParams(top_k=1, max_new_tokens=8)
    before = eng.generate(prompts[:1], params)[0]
    eng.load_weights(tiny_llama(len(tokenizer), seed=1).state_dict(), policy_version=7)
    after = eng.generate(prompts[:1], params)[0]
    assert (before.policy_version, after.policy_version) == (0, 7)
    assert after.sampler_id == "pool-a/0" and after.completion_ids != before.completion_ids


def test_a_stop_string_ends_the_completion_and_cuts_its_record_where_the_text_ends(policy, prompts):
    from tracegym.models.sampling import text_of
    from tracegym.models.stop_text import stop_cut

    _, tokenizer = policy
    decode = text_of(tokenizer)
    params = SamplingParams(top_p=0.9, max_new_tokens=24)
    [free] = engine(policy, decode=decode).generate(prompts[:1], params, seeds=[7])
    text = decode(free.completion_ids)
    # A stop string that starts inside the 6th token and ends in a later one: the 6th token stays, the rest go.
    first5, first6 = len(decode(free.completion_ids[:5])), len(decode(free.completion_ids[:6]))
    assert first6 - first5 >= 2, "pick a seed whose 6th token has two characters or more"
    stop = text[first6 - 1: first6 + 3]
    assert text.find(stop) == first6 - 1 and len(stop) == 4
    [cut] = engine(policy, decode=decode).generate(prompts[:1], params.model_copy(update={"stop": (stop,)}),
                                                   seeds=[7])
    assert cut.finish_reason == "stop" and cut.completion_ids == free.completion_ids[:6]
    assert cut.text_end == first6 - 1 and decode(cut.completion_ids)[: cut.text_end] == text[: first6 - 1]
    torch.testing.assert_close(cut.logprobs, free.logprobs[:6])
    assert len(cut.support) == 6 and torch.equal(cut.support.ids, free.support.slice(0, 6).ids)
    assert stop_cut(free.completion_ids, decode, ["no such text"]) is None
    # A stop string that starts on a token boundary drops every token it covers.
    assert stop_cut(free.completion_ids, decode, [text[first5:]]) == (5, first5)
    with pytest.raises(ModelError, match="decode"):
        engine(policy).generate(prompts[:1], params.model_copy(update={"stop": (stop,)}), seeds=[7])
