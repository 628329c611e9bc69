"""A `model.lora` run's adapter as a weight version (`tracegym.samplers.weights.lora_adapters`): written beside the
merged weights
under the same STABLE marker, read back over the folder or HTTP as the peft folder the trainer would save, and what
a vllm pool asks of vLLM for it."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tracegym.errors import ModelError
from tracegym.models.tiny import tiny_llama
from tracegym.models.vllm_engine import engine_args, vllm_lora_rank
from tracegym.samplers.weights.folder import STABLE, FilesystemBroadcast, FolderVersions, WeightWatcher
from tracegym.samplers.weights.http import HttpVersions, WeightServer, new_token
from tracegym.samplers.weights.lora_adapters import ADAPTER_SUFFIX, AdapterWatcher
from tracegym.training import lora
from tracegym.training.config import LoraSection


@pytest.fixture
def adapted(tmp_path: Path):
    base = tiny_llama(128, seed=1)
    base.save_pretrained(tmp_path / "base")
    model = lora.with_adapter(base, LoraSection(r=2, alpha=4, target_modules=["q_proj", "up_proj"]),
                              str(tmp_path / "base"))
    with torch.no_grad():
        for name, param in model.named_parameters():
            if ".lora_B." in name:
                param.normal_()
    return model


def test_a_version_holds_merged_weights_and_the_adapter_and_a_watcher_reads_either(tmp_path: Path, adapted) -> None:
    root = tmp_path / "w"
    broadcast = FilesystemBroadcast(root, ["fp32"], adapter_precisions=["bf16"])
    stats = broadcast.publish(lora.merged_state_dict(adapted.get_base_model()), 1, lora.adapter_weights(adapted))
    assert {p.name for p in (root / "step_1").iterdir()} == {"fp32.safetensors", f"bf16{ADAPTER_SUFFIX}", STABLE}
    adapter_file = (root / "step_1" / f"bf16{ADAPTER_SUFFIX}").stat().st_size
    assert stats["sync/bytes"] == (root / "step_1" / "fp32.safetensors").stat().st_size + adapter_file

    _, merged = WeightWatcher(root, "fp32").poll()
    assert ".lora_" not in "".join(merged)
    token = new_token()
    with WeightServer(root, token) as server:  # the endpoint serves adapter files as any other version file
        source = HttpVersions(server.url, token)
        watcher = AdapterWatcher(source, "bf16")
        version, adapter = watcher.poll()
        assert version == 1 and watcher.bytes_read == adapter_file and watcher.poll() is None
        source.close()
    folder = adapter.save(tmp_path / "served")
    from peft import PeftModel

    served = PeftModel.from_pretrained(tiny_llama(128, seed=1), folder)  # the peft folder the trainer would save
    want = {k: v.to(torch.bfloat16) for k, v in adapted.state_dict().items() if ".lora_" in k}
    assert {k: v for k, v in served.state_dict().items() if ".lora_" in k}.keys() == want.keys()
    assert all(torch.equal(served.state_dict()[k].to(torch.bfloat16), v) for k, v in want.items())


def test_adapter_versions_alone_keep_the_newest_and_refuse_a_publish_without_one(tmp_path: Path, adapted) -> None:
    root = tmp_path / "w"
    broadcast = FilesystemBroadcast(root, [], keep=2, adapter_precisions=["fp32"])
    for version in range(1, 5):
        broadcast.publish({}, version, lora.adapter_weights(adapted))
    assert sorted(p.name for p in root.iterdir()) == ["step_3", "step_4"]
    with pytest.raises(ValueError, match="publish was given none"):
        broadcast.publish({}, 5)
    (root / "step_4" / f"fp32{ADAPTER_SUFFIX}").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}")
    with pytest.raises(ModelError, match="is not a tracegym adapter file"):
        AdapterWatcher(FolderVersions(root), "fp32").poll()


def test_a_vllm_pool_of_a_lora_run_asks_for_one_adapter_of_a_rank_vllm_accepts() -> None:
    args = engine_args("/models/tiny", "bf16", lora_rank=4)
    assert (args["enable_lora"], args["max_loras"], args["max_lora_rank"]) == (True, 1, 8)
    assert "enable_lora" not in engine_args("/models/tiny", "bf16")
    assert [vllm_lora_rank(r) for r in (1, 16, 17, 512)] == [1, 16, 32, 512]
    with pytest.raises(ModelError, match="rank 512 at most, not 600. Fix: lower model.lora.r"):
        vllm_lora_rank(600)
