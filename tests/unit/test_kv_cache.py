"""The in-place KV cache gives what transformers' concatenating cache gives, through growth and row selection."""

from __future__ import annotations

import pytest
import torch
from transformers.cache_utils import DynamicLayer

from tracegym.errors import ModelError
from tracegym.models.kv_cache import GrowingLayer, growing_cache, require_cache_api
from tracegym.models.tiny import tiny_llama


def test_growing_layer_matches_dynamic_layer_through_growth_and_selection():
    torch.manual_seed(0)
    ours, theirs = GrowingLayer(), DynamicLayer()
    steps = [7, 1, 1, 80, 1, 1]  # (B, H, n, D) appends; 89 positions outgrow the first buffer (room for 71)
    for i, n in enumerate(steps):
        k, v = torch.randn(4, 2, n, 8), torch.randn(4, 2, n, 8)
        if i == 3:
            rows = torch.tensor([2, 0, 0, 3])  # drop row 1, repeat row 0 (a shared prompt's copies)
            ours.batch_select_indices(rows)
            theirs.batch_select_indices(rows)
        got, want = ours.update(k, v), theirs.update(k, v)
        torch.testing.assert_close(got[0], want[0], rtol=0, atol=0)
        torch.testing.assert_close(got[1], want[1], rtol=0, atol=0)
    assert ours.get_seq_length() == sum(steps)


def test_a_model_decodes_the_same_logits_with_either_cache():
    from transformers import DynamicCache

    model = tiny_llama(50, seed=0).eval()
    ids = torch.randint(0, model.config.vocab_size, (3, 12))
    outputs = []
    with torch.inference_mode():
        for cache in (growing_cache(model.config), DynamicCache(config=model.config)):
            logits = [model(input_ids=ids[:, :8], cache=cache, use_cache=True).logits[:, -1]]
            for t in range(8, 12):
                logits.append(model(input_ids=ids[:, t : t + 1], cache=cache, use_cache=True).logits[:, -1])
            outputs.append(torch.stack(logits))
        whole = model(input_ids=ids).logits[:, 7:12].transpose(0, 1)  # (5, B, V): no cache at all
    assert all(isinstance(layer, GrowingLayer) for layer in growing_cache(model.config).layers)
    torch.testing.assert_close(outputs[0], outputs[1], rtol=0, atol=1e-5)
    torch.testing.assert_close(outputs[0], whole, rtol=0, atol=1e-4)  # other matmul shapes


def test_a_transformers_that_ignores_the_cache_keyword_is_refused(monkeypatch) -> None:
    """transformers < 5.24 takes `cache=` and ignores it (each decode step then runs without its context): the
    sampling engine and the trainer's shared prompts refuse it instead of sampling and training on garbage."""
    import transformers

    require_cache_api.cache_clear()
    monkeypatch.setattr(transformers, "__version__", "5.19.0")
    try:
        with pytest.raises(ModelError, match=r"transformers 5\.19\.0 ignores the KV cache"):
            require_cache_api()
    finally:
        require_cache_api.cache_clear()
    monkeypatch.undo()
    require_cache_api()
