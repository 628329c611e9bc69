"""The real SmolLM2-135M-Instruct: GGUF conversion, chat-templated sampling, exact re-scoring of the record."""

from __future__ import annotations

import pytest
import torch

from tracegym.harnesses.chat_template import ChatRenderer, TokenConversation
from tracegym.models.load import load_model, load_tokenizer, resolve_model_ref, stop_token_ids
from tracegym.models.logprobs import batch_logprobs_of
from tracegym.models.sampling import SamplingEngine, SamplingParams


@pytest.mark.slow
def test_smollm2_samples_a_record_that_rescoring_reproduces():
    folder = resolve_model_ref("smollm2-135m")  # converts the shipped GGUF on first use (~30 s), then cached
    assert (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file()
    model, tokenizer = load_model(folder, "fp32"), load_tokenizer(folder)
    stops = stop_token_ids(model, tokenizer)
    renderer = ChatRenderer(tokenizer)
    questions = ["What is the capital of France?", "Name a prime number larger than ten."]
    prompts = [renderer.ids([{"role": "user", "content": q}]) for q in questions]
    params = SamplingParams(temperature=0.7, top_p=0.9, max_new_tokens=16)
    seqs = SamplingEngine(model, eos_token_ids=stops).generate(prompts, params, seeds=[1, 2])

    with torch.no_grad():
        rescored = batch_logprobs_of(
            model, prompts, [s.completion_ids for s in seqs], params.temperature, [s.support for s in seqs]
        )
    for seq, logprobs in zip(seqs, rescored, strict=True):
        seq.support.validate(seq.completion_ids)
        torch.testing.assert_close(logprobs, seq.logprobs, atol=1e-4, rtol=0)
    assert "Paris" in tokenizer.decode(seqs[0].completion_ids)  # a trained model, not random weights

    # The completion continues a token-exact conversation.
    conv = TokenConversation.start(renderer, [{"role": "user", "content": questions[0]}], stops)
    conv.add_completion(seqs[0].completion_ids)
    conv.add_environment([{"role": "user", "content": "And of Italy?"}])
    assert conv.ids[len(prompts[0]) : len(prompts[0]) + len(seqs[0].completion_ids)] == seqs[0].completion_ids


@pytest.mark.slow
def test_smollm2_samples_in_bf16_close_to_fp32():
    model32 = load_model("smollm2-135m", "fp32")
    model16 = load_model("smollm2-135m", "bf16")
    tokenizer = load_tokenizer("smollm2-135m")
    prompt = ChatRenderer(tokenizer).ids([{"role": "user", "content": "Say hello."}])
    params = SamplingParams(top_p=0.95, max_new_tokens=12)
    [seq] = SamplingEngine(model16, eos_token_ids=stop_token_ids(model16, tokenizer)).generate([prompt], params, [0])
    seq.support.validate(seq.completion_ids)
    with torch.no_grad():
        [fp32] = batch_logprobs_of(model32, [prompt], [seq.completion_ids], supports=[seq.support])
    gap = (fp32 - seq.logprobs).abs()
    assert float(gap.max()) > 0 and float(gap.mean()) < 0.2
