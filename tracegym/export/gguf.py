"""An unquantized GGUF file of a Llama-architecture model folder, written with the `gguf` package.

llama.cpp's own converter (`convert_hf_to_gguf.py`) is not on PyPI: the `gguf` package (ggml-org's gguf-py,
which `transformers` already needs to read GGUF) ships only the file format, its tensor-name maps and
vocabulary helpers. This module does for the Llama architecture what that converter does: the hyperparameters
as `llama.*` keys, the BPE vocabulary and merges (`gguf.SpecialVocab` adds merges, special ids and the chat
template), and every tensor under its GGUF name in F32, with the query and key projections permuted from
Hugging Face's rotate-half layout to GGUF's interleaved one (the inverse of what `transformers` undoes on load).

llama.cpp picks a pre-tokenizer by the name in `tokenizer.ggml.pre`, which its converter finds by hashing the
tokenizer's output on a test text. Here it is SmolLM2's ('smollm') when the vocabulary is SmolLM2's, and
'default' (llama.cpp's generic GPT-2 split) for any other vocabulary.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from tracegym.errors import ConfigError

_HUB_PRE = "smollm"  # SmolLM2's pre-tokenizer in llama.cpp, used when the vocabulary is SmolLM2's


def write_gguf(source: Path, folder: Path, name: str) -> Path:
    """Write `folder/NAME.gguf` from the model folder `source`; returns its path."""
    import gguf

    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    tokenizer = _bpe_tokenizer(source, config)
    path = folder / f"{name}.gguf"
    writer = gguf.GGUFWriter(path, gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.LLAMA])
    try:
        _add_hparams(writer, config, name)
        tokens = _add_vocab(writer, tokenizer, int(config["vocab_size"]))
        writer.add_tokenizer_pre(_pre_tokenizer(tokens))
        gguf.SpecialVocab(source, load_merges=True, n_vocab=len(tokens)).add_to_gguf(writer)
        _add_tensors(writer, source, config)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
    finally:
        writer.close()
    return path


def _bpe_tokenizer(source: Path, config: dict[str, Any]) -> dict[str, Any]:
    if config.get("model_type") != "llama":
        raise ConfigError(f"--gguf: {source} is a {config.get('model_type')!r} model; tracegym writes GGUF for "
                          "Llama-architecture models only. Fix: export without --gguf and convert the folder with "
                          "llama.cpp's convert_hf_to_gguf.py (from a llama.cpp checkout; it is not on PyPI).")
    file = source / "tokenizer.json"
    tokenizer = json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}
    if tokenizer.get("model", {}).get("type") != "BPE":
        raise ConfigError(f"--gguf: {source} has no byte-level BPE tokenizer.json, the only kind tracegym writes "
                          "into GGUF. Fix: export without --gguf and use llama.cpp's convert_hf_to_gguf.py.")
    return tokenizer


def _add_hparams(writer: Any, config: dict[str, Any], name: str) -> None:
    import gguf

    heads = int(config["num_attention_heads"])
    writer.add_type(gguf.GGUFType.MODEL)
    writer.add_name(name)
    writer.add_context_length(int(config["max_position_embeddings"]))
    writer.add_embedding_length(int(config["hidden_size"]))
    writer.add_block_count(int(config["num_hidden_layers"]))
    writer.add_feed_forward_length(int(config["intermediate_size"]))
    writer.add_head_count(heads)
    writer.add_head_count_kv(int(config.get("num_key_value_heads") or heads))
    writer.add_rope_freq_base(float(config.get("rope_theta") or (config.get("rope_parameters") or {})
                                    .get("rope_theta", 10000.0)))
    writer.add_layer_norm_rms_eps(float(config["rms_norm_eps"]))
    writer.add_vocab_size(int(config["vocab_size"]))
    writer.add_rope_dimension_count(int(config.get("head_dim") or config["hidden_size"] // heads))
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)


def _add_vocab(writer: Any, tokenizer: dict[str, Any], vocab_size: int) -> list[str]:
    tokens, types = _token_list(tokenizer, vocab_size)
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    return tokens


def _token_list(tokenizer: dict[str, Any], vocab_size: int) -> tuple[list[str], list[Any]]:
    """Every id's token text and GGUF token type; ids the tokenizer does not use become unused padding."""
    import gguf

    tokens = [f"[PAD{i}]" for i in range(vocab_size)]
    types = [gguf.TokenType.UNUSED] * vocab_size
    for text, i in tokenizer["model"]["vocab"].items():
        if i < vocab_size:
            tokens[i], types[i] = text, gguf.TokenType.NORMAL
    for added in tokenizer.get("added_tokens", []):
        if added["id"] < vocab_size:
            tokens[added["id"]] = added["content"]
            types[added["id"]] = gguf.TokenType.CONTROL if added.get("special") else gguf.TokenType.USER_DEFINED
    return tokens, types


def _pre_tokenizer(tokens: list[str]) -> str:
    """SmolLM2's pre-tokenizer name when the vocabulary is SmolLM2's (its tokenizer as converted from the GGUF it
    ships in), else llama.cpp's default."""
    from tracegym.errors import ModelError
    from tracegym.models.load import smollm2_tokenizer_dir

    try:
        folder = smollm2_tokenizer_dir()
    except ModelError:  # the built-in model is not installed: nothing to compare with
        return "default"
    shipped = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    return _HUB_PRE if _token_list(shipped, len(tokens))[0] == tokens else "default"


def _permute(weights: np.ndarray, heads: int) -> np.ndarray:
    """Rows of a query or key projection from rotate-half order to GGUF's interleaved order (per head)."""
    return (weights.reshape(heads, 2, weights.shape[0] // heads // 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))


def _add_tensors(writer: Any, source: Path, config: dict[str, Any]) -> None:
    import gguf
    from safetensors import safe_open

    layers, heads = int(config["num_hidden_layers"]), int(config["num_attention_heads"])
    kv_heads = int(config.get("num_key_value_heads") or heads)
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, layers)
    for file in sorted(source.glob("*.safetensors")):
        with safe_open(file, framework="pt") as f:
            for key in f.keys():  # noqa: SIM118 - safe_open is no mapping
                if key.endswith("rotary_emb.inv_freq") or (key == "lm_head.weight"
                                                           and config.get("tie_word_embeddings")):
                    continue
                name = names.get_name(key, try_suffixes=(".weight", ".bias"))
                if name is None:
                    raise ConfigError(f"--gguf: no GGUF name for tensor {key!r} of {file}; tracegym writes plain "
                                      "Llama models only. Fix: export without --gguf.")
                data = f.get_tensor(key).float().numpy()
                if key.endswith("q_proj.weight"):
                    data = _permute(data, heads)
                elif key.endswith("k_proj.weight"):
                    data = _permute(data, kv_heads)
                writer.add_tensor(name, np.ascontiguousarray(data, dtype=np.float32))
