"""LoRA adapters through peft (`model.lora`): what is trained, saved, sent to the samplers and loaded back.

peft injects its LoRA layers into the Hugging Face model in place, so the trainer, the warm start and the loss run
on that model unchanged (the batching code calls its decoder and output layer directly) and only the adapter's
parameters require gradients. Around it:

- checkpoints are peft adapter folders (adapter_config.json naming the base model folder,
  adapter_model.safetensors), which `tracegym.models.load.load_model` merges over the base (what `tracegym eval`
  loads) and peft and vLLM load as adapters;
- sampler pools whose engine serves adapters (`engine: vllm`) get the adapter alone each sync (`adapter_weights`,
  `tracegym.samplers.weights.lora_adapters`); the built-in samplers have no adapter support, so they get the merged
  weights
  (W + alpha/r B A), under the base model's names. `adapter_bytes` is the adapter's size in a precision.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, cast

import torch
from torch import Tensor

from tracegym.models.load import DTYPES, resolve_model_ref
from tracegym.samplers.weights.lora_adapters import AdapterWeights

if TYPE_CHECKING:
    from pathlib import Path

    from peft import PeftModel
    from peft.tuners.lora import Linear as LoraLinear
    from peft.tuners.lora import LoraLayer
    from transformers import PreTrainedModel

    from tracegym.models.precision import Precision
    from tracegym.training.config import LoraSection

ADAPTER = "default"
"""peft's name for a model's one adapter."""


def with_adapter(model: PreTrainedModel, section: LoraSection, base_ref: str) -> PeftModel:
    """A fresh adapter over `model` (B is zero: the policy starts as the base model); only the adapter trains."""
    from peft import LoraConfig, get_peft_model

    # peft annotates lora_alpha as an int; it only divides it by r, and takes a float as well
    config = LoraConfig(r=section.r, lora_alpha=section.alpha,  # type: ignore[arg-type]
                        target_modules=list(section.target_modules), lora_dropout=section.dropout,
                        task_type="CAUSAL_LM")
    adapted = get_peft_model(model, config)
    # peft takes the base's name from where the model was loaded; the adapter folder must name the model folder
    # that `ref` resolves to, which loads it back without a hub.
    adapted.peft_config[ADAPTER].base_model_name_or_path = str(resolve_model_ref(base_ref).resolve())
    return adapted


def load_trainable_adapter(model: PreTrainedModel, folder: Path) -> PeftModel:
    """The adapter saved in `folder` over `model`, trainable again (resume)."""
    from peft import PeftModel

    return PeftModel.from_pretrained(model, folder, is_trainable=True)


def _lora_layers(model: torch.nn.Module) -> dict[str, LoraLayer]:
    from peft.tuners.lora import LoraLayer

    return {name: module for name, module in model.named_modules() if isinstance(module, LoraLayer)}


def merged_state_dict(model: torch.nn.Module, state: Mapping[str, Tensor] | None = None) -> dict[str, Tensor]:
    """The weights with the adapter merged in, under the base model's names, as a model without peft has them (tied
    tensors stay shared); `model` is the Hugging Face model peft injected its layers into, left unchanged. `state`:
    that model's whole weights when the model holds only shards of them (gathered off FSDP2 ranks)."""
    layers = _lora_layers(model)
    state = model.state_dict() if state is None else state
    out: dict[str, Tensor] = {}
    for key, tensor in state.items():
        if ".lora_" not in key:
            out[key.replace(".base_layer.", ".")] = tensor
    with torch.no_grad():
        for name, layer in layers.items():
            # peft's get_delta_weight for a Linear layer: B A scaled by alpha / r
            a, b = state[f"{name}.lora_A.{ADAPTER}.weight"], state[f"{name}.lora_B.{ADAPTER}.weight"]
            delta = (b @ a).T if cast("LoraLinear", layer).fan_in_fan_out else b @ a
            delta = delta * layer.scaling[ADAPTER]
            out[f"{name}.weight"] = state[f"{name}.base_layer.weight"] + delta.to(a.dtype)
    return out


def adapter_weights(peft_model: PeftModel, state: Mapping[str, Tensor] | None = None) -> AdapterWeights:
    """The adapter alone as peft saves it (tensors under its saved names, adapter_config.json), for samplers that
    serve adapters. `state`: the whole weights of the model peft injected its layers into, where that model holds
    only shards of them (gathered off FSDP2 ranks)."""
    state = peft_model.get_base_model().state_dict() if state is None else state
    suffix = f".{ADAPTER}.weight"  # peft's saved names drop the adapter's name and sit under base_model.model
    tensors = {f"base_model.model.{key.removesuffix(suffix)}.weight": tensor for key, tensor in state.items()
               if ".lora_" in key and key.endswith(suffix)}
    config = peft_model.peft_config[ADAPTER].to_dict()
    return AdapterWeights(tensors, {k: sorted(v) if isinstance(v, set) else v for k, v in config.items()})


def adapter_bytes(model: torch.nn.Module, precision: Precision) -> int:
    """The bytes of the adapter's tensors in `precision`: what one sync sends a sampler that serves adapters."""
    size = torch.empty((), dtype=DTYPES[precision]).element_size()
    return sum(p.numel() * size for name, p in model.named_parameters() if ".lora_" in name)


def merged_model(peft_model: PeftModel) -> PreTrainedModel:
    """A plain copy of the model with the adapter merged in (the adapted model itself is left as it is)."""
    import copy

    return copy.deepcopy(peft_model).merge_and_unload()
