"""A tiny random-initialised Llama with the real SmolLM2 tokenizer, for fast tests.

The model has the same vocabulary, chat template and special tokens as SmolLM2-135M-Instruct but only a
few small layers (~3.3 M parameters, mostly the embedding), so a forward pass takes a millisecond or two.
Its weights are random, seeded, and scaled up so its next-token distributions are peaked enough for
top-k/top-p truncation to matter; what it says is nonsense.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import torch

from tracegym.models.load import smollm2_tokenizer_dir

if TYPE_CHECKING:
    from transformers import LlamaForCausalLM, PreTrainedTokenizerBase


def smollm2_tokenizer(cache: Path | None = None) -> PreTrainedTokenizerBase:
    """The real SmolLM2 tokenizer (chat template included), converted from the shipped GGUF once and cached."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(smollm2_tokenizer_dir(cache), local_files_only=True)


def tiny_llama(
    vocab_size: int,
    *,
    seed: int = 0,
    layers: int = 2,
    hidden: int = 64,
    heads: int = 4,
    kv_heads: int = 2,
    init_std: float = 0.6,
    eos_token_id: int | list[int] = 2,
    max_positions: int = 2048,
) -> LlamaForCausalLM:
    """A randomly initialised Llama causal LM in fp32 and eval mode; the same seed gives the same weights.

    `init_std` is far larger than a trained model's initializer range (0.02): logits then spread over
    several units and top-p 0.9 keeps from one to about a hundred tokens, as with a trained model,
    rather than most of the vocabulary.
    """
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=max_positions,
        initializer_range=init_std,
        tie_word_embeddings=True,
        bos_token_id=1,
        eos_token_id=eos_token_id,
        pad_token_id=eos_token_id if isinstance(eos_token_id, int) else eos_token_id[0],
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    return model.eval()


def tiny_policy(seed: int = 0, cache: Path | None = None) -> tuple[LlamaForCausalLM, PreTrainedTokenizerBase]:
    """A tiny random Llama sized to the real SmolLM2 tokenizer, and that tokenizer."""
    tokenizer = smollm2_tokenizer(cache)
    model = tiny_llama(len(tokenizer), seed=seed, eos_token_id=int(tokenizer.eos_token_id))
    return model, tokenizer
