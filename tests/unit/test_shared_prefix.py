"""Cascade attention over one copy of each prompt equals attention over every row's own full cache."""

from __future__ import annotations

import math

import pytest
import torch

from tracegym.models.sampling import SamplingEngine, SamplingParams
from tracegym.models.shared_prefix import SharedPrefix, cascade_attention, supports_shared_prefix
from tracegym.models.tiny import smollm2_tokenizer, tiny_llama


def reference_attention(query, prefix_keys, prefix_values, prefix_mask, row_of, keys, values, scale):
    """Row by row and head by head: softmax over the row's prompt (real tokens only) then its own tokens."""
    batch, heads, _, _ = query.shape
    kv_heads = keys.shape[1]
    out = torch.empty_like(query)
    for b in range(batch):
        u = int(row_of[b])
        real = prefix_mask[u].nonzero().squeeze(-1)
        for h in range(heads):
            g = h // (heads // kv_heads)
            k = torch.cat([prefix_keys[u, g, real], keys[b, g]]).double()
            v = torch.cat([prefix_values[u, g, real], values[b, g]]).double()
            weights = torch.softmax(k @ query[b, h, 0].double() * scale, dim=0)
            out[b, h, 0] = (weights @ v).to(query.dtype)
    return out


def random_case(seed: int, row_of: list[int], lengths: list[int], suffix: int, heads: int = 6, kv_heads: int = 2):
    gen = torch.Generator().manual_seed(seed)
    prompts, width, dim = len(lengths), max(lengths), 8
    mask = torch.zeros(prompts, width, dtype=torch.bool)
    for u, n in enumerate(lengths):
        mask[u, width - n:] = True  # left-padded, as the engine prefills
    rows = torch.tensor(row_of)

    def randn(*shape):
        return torch.randn(*shape, generator=gen) * 2

    return dict(
        query=randn(len(row_of), heads, 1, dim),
        prefix_keys=randn(prompts, kv_heads, width, dim), prefix_values=randn(prompts, kv_heads, width, dim),
        prefix_mask=mask, row_of=rows,
        keys=randn(len(row_of), kv_heads, suffix, dim), values=randn(len(row_of), kv_heads, suffix, dim),
        scale=1 / math.sqrt(dim),
    )


def run_cascade(case, prefix: SharedPrefix | None = None):
    if prefix is None:
        prefix = SharedPrefix([case["prefix_keys"]], [case["prefix_values"]], case["prefix_mask"][:, None, None, :],
                              case["row_of"].clone())
    return cascade_attention(case["query"], prefix, case["prefix_keys"], case["prefix_values"], case["keys"],
                             case["values"], case["scale"])


@pytest.mark.parametrize(
    ("row_of", "lengths", "suffix"),
    [
        ([0, 0, 0, 1, 1, 1], [5, 3], 1),  # two groups of three, first decode step
        ([1, 0, 2, 1, 1, 0, 2], [4, 7, 2], 6),  # rows of a prompt not adjacent, groups of unequal size
        ([0, 1, 2], [3, 3, 3], 4),  # every prompt distinct
        ([2, 2], [6, 1, 4], 3),  # prompts whose rows have all finished
    ],
)
def test_cascade_attention_equals_attention_over_each_rows_whole_cache(row_of, lengths, suffix):
    case = random_case(0, row_of, lengths, suffix)
    torch.testing.assert_close(run_cascade(case), reference_attention(**case), rtol=0, atol=1e-5)


def test_selecting_live_rows_keeps_each_row_on_its_prompt():
    case = random_case(1, [0, 0, 1, 1, 1, 0], [4, 6], 3)
    prefix = SharedPrefix([case["prefix_keys"]], [case["prefix_values"]], case["prefix_mask"][:, None, None, :],
                          case["row_of"].clone())
    live = torch.tensor([1, 3, 5])  # rows 0, 2 and 4 stopped
    prefix.select(live)
    for name in ("query", "keys", "values", "row_of"):
        case[name] = case[name][live]
    assert prefix.row_of.tolist() == [0, 1, 0]
    torch.testing.assert_close(run_cascade(case, prefix), reference_attention(**case), rtol=0, atol=1e-5)


def test_bf16_cascade_stays_within_bf16_rounding_of_the_reference():
    case = random_case(2, [0, 0, 1, 1], [5, 2], 4)
    low = {k: v.bfloat16() if v.is_floating_point() else v for k, v in case.items() if isinstance(v, torch.Tensor)}
    low["scale"] = case["scale"]
    got = run_cascade(low).float()
    torch.testing.assert_close(got, reference_attention(**case), rtol=0, atol=0.06)


@pytest.fixture(scope="module")
def tokenizer():
    return smollm2_tokenizer()


def test_a_group_decodes_the_same_over_one_shared_prompt_as_over_copies(tokenizer):
    """The engine's rows of one prompt, some of them stopping early, sample what they sample with copied caches."""
    prompts = [tokenizer.encode(text) for text in ("Book a flight to Paris for me.", "Cancel my reservation now.")]
    batch = [prompts[0]] * 4 + [prompts[1]] * 3
    seeds = list(range(40, 47))
    base = SamplingParams(top_p=0.9, max_new_tokens=24)
    probe = SamplingEngine(tiny_llama(len(tokenizer), seed=3), eos_token_ids=[tokenizer.eos_token_id],
                           shared_prefix=False).generate(batch, base, seeds=seeds)
    stop = probe[1].completion_ids[5]  # a token some rows draw early: they leave the batch mid-decode
    params = SamplingParams(top_p=0.9, max_new_tokens=24, stop_token_ids=(stop,))
    runs = {}
    for shared in (True, False):
        eng = SamplingEngine(tiny_llama(len(tokenizer), seed=3), eos_token_ids=[tokenizer.eos_token_id],
                             shared_prefix=shared)
        assert eng.shared_prefix is shared
        runs[shared] = eng.generate(batch, params, seeds=seeds)
    assert any(s.finish_reason == "stop" for s in runs[True]) and any(s.finish_reason == "length" for s in runs[True])
    for a, b in zip(runs[True], runs[False], strict=True):
        assert a.completion_ids == b.completion_ids
        torch.testing.assert_close(a.logprobs, b.logprobs, rtol=0, atol=2e-4)  # as batched vs alone


def test_the_model_outside_decoding_is_unchanged_and_unsupported_models_keep_copies(tokenizer):
    model = tiny_llama(len(tokenizer), seed=4).eval()
    ids = torch.tensor([tokenizer.encode("Where is my bag?")])
    with torch.inference_mode():
        before = model(input_ids=ids).logits
        SamplingEngine(model, eos_token_ids=[tokenizer.eos_token_id])
        torch.testing.assert_close(model(input_ids=ids).logits, before, rtol=0, atol=0)
    windowed = tiny_llama(len(tokenizer), seed=4)
    windowed.config.model_type = "mistral"
    windowed.config.sliding_window = 4  # attention a sliding window limits: the split would not reproduce it
    assert supports_shared_prefix(model) and not supports_shared_prefix(windowed)
    assert not SamplingEngine(windowed, eos_token_ids=[tokenizer.eos_token_id]).shared_prefix
