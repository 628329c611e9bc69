"""LoRA adapters (model.lora, through peft) on the GRPO trainer: only the adapter trains; at the start the adapted
policy is the base, so the loss and its corrections (top-p replay, MIS, score centering) read exactly what they
read with full weights; the merged weights and the saved adapter folder give the trained policy back."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import torch

from tests.unit.test_trainer_step import TEMPERATURE, VOCAB, _groups
from tracegym.models.load import load_model
from tracegym.models.tiny import tiny_llama
from tracegym.training import lora
from tracegym.training.config import GRPOSection, LoraSection, LossSection, OptimSection
from tracegym.training.grpo.trainer import Trainer

SECTION = LoraSection(r=4, alpha=8, target_modules=["q_proj", "v_proj", "down_proj"])


@pytest.fixture
def base(tmp_path: Path):
    model = tiny_llama(VOCAB, seed=3, eos_token_id=2)
    model.save_pretrained(tmp_path / "base")
    return model, tmp_path / "base"


def _adapted(base_model, folder: Path):
    peft_model = lora.with_adapter(copy.deepcopy(base_model), SECTION, str(folder))
    return peft_model, peft_model.get_base_model()


def _trainer(model) -> Trainer:
    return Trainer(model, OptimSection(lr=1e-2, micro_batch_tokens=64), GRPOSection(), LossSection(),
                   temperature=TEMPERATURE)


def test_only_the_adapter_trains_and_the_corrections_read_what_full_weights_give(base) -> None:
    model, folder = base
    groups = _groups(model)
    peft_model, inner = _adapted(model, folder)
    before = {k: v.clone() for k, v in inner.state_dict().items()}
    full = _trainer(copy.deepcopy(model)).step(groups)
    adapted = _trainer(inner).step(groups)
    assert adapted["train/optimizer_steps"] >= 1
    for key in ("train/loss", "is_ratio/mean", "mismatch/k3_kl", "mis/masked_frac",
                "sc/train_head_mass", "train/tokens"):
        assert adapted[key] == pytest.approx(full[key], rel=1e-5, abs=1e-7), key
    after = inner.state_dict()
    changed = {k for k in after if not torch.equal(after[k], before[k])}
    assert changed and all(".lora_" in k for k in changed), "only adapter tensors move"
    assert any(".lora_B." in k for k in changed), "B starts at zero and moves"


def test_merged_weights_and_the_saved_adapter_give_the_trained_policy(base, tmp_path: Path) -> None:
    model, folder = base
    peft_model, inner = _adapted(model, folder)
    _trainer(inner).step(_groups(model))
    merged = lora.merged_state_dict(inner)
    assert merged.keys() == model.state_dict().keys()
    # Tied weights stay one storage, which the weight broadcast writes once.
    assert merged["lm_head.weight"].data_ptr() == merged["model.embed_tokens.weight"].data_ptr()
    reference = lora.merged_model(peft_model).state_dict()
    for name, tensor in reference.items():
        torch.testing.assert_close(merged[name], tensor, rtol=0, atol=1e-6, msg=name)
    assert not torch.equal(merged["model.layers.0.self_attn.q_proj.weight"],
                           model.state_dict()["model.layers.0.self_attn.q_proj.weight"])

    peft_model.save_pretrained(tmp_path / "adapter")
    saved = json.loads((tmp_path / "adapter" / "adapter_config.json").read_text())
    assert Path(saved["base_model_name_or_path"]) == folder.resolve()
    loaded = load_model(tmp_path / "adapter")  # what `tracegym eval` loads: the base with the adapter merged in
    assert loaded.state_dict().keys() == model.state_dict().keys()
    ids = torch.tensor([[5, 17, 99, 3]])
    with torch.no_grad():
        # merged (W + BA) and unmerged (Wx + B(Ax)) sum in another order; these logits are several units large
        torch.testing.assert_close(loaded(ids).logits, inner.eval()(ids).logits, rtol=1e-4, atol=1e-4)


def test_adapter_bytes_count_the_adapter_in_the_sync_precision(base) -> None:
    model, folder = base
    _, inner = _adapted(model, folder)
    # q_proj 64->64, v_proj 64->32, down_proj 128->64, per layer: A is r x in, B is out x r; 2 layers
    per_layer = 4 * (64 + 64) + 4 * (64 + 32) + 4 * (128 + 64)
    assert lora.adapter_bytes(inner, "bf16") == 2 * 2 * per_layer
    assert lora.adapter_bytes(inner, "fp32") == 4 * 2 * per_layer
