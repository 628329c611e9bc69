"""TrainedWeights, full weights and a LoRA adapter over a tiny Llama: what the samplers are published, what a
checkpoint holds, and what the KL reference of loss.kl_beta is."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
import torch
from torch import Tensor

from tracegym.errors import NotFoundError
from tracegym.models.load import load_model
from tracegym.models.tiny import tiny_policy
from tracegym.samplers.rollouts import PoolFigures, RolloutBatch
from tracegym.samplers.weights.lora_adapters import AdapterWeights
from tracegym.training.checkpoint import CHECKPOINTS, TrainerState, checkpoint_name, load_state
from tracegym.training.config import TrainConfig
from tracegym.training.trained_weights import TrainedWeights

LORA = {"r": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj"]}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tiny") / "base"
    model, tokenizer = tiny_policy(seed=5)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _config(base: Path, run_dir: Path, lora: bool = False, kl_beta: float = 0.0, warmup: int = 0) -> TrainConfig:
    return TrainConfig.model_validate({
        "run_dir": str(run_dir), "model": {"ref": str(base), **({"lora": LORA} if lora else {})},
        "tasks": {"task_set": str(run_dir / "tasks")}, "loss": {"kl_beta": kl_beta},
        "warmup": {"steps": warmup}, "async": {"max_staleness": 0}})


def _moved(policy: TrainedWeights) -> None:
    """A training step's worth of change to every trainable tensor (B too, which starts at zero)."""
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for param in policy.model.parameters():
            if param.requires_grad:
                param.add_(0.05 * torch.randn(param.shape, generator=generator))


class _Recording:
    """A rollout source that keeps what it was published (the loop's other side, for these tests only)."""

    def __init__(self) -> None:
        self.published: list[tuple[Mapping[str, Tensor], int, AdapterWeights | None]] = []

    def start(self) -> None: ...

    def next_batch(self, n_groups: int, trainer_version: int) -> RolloutBatch:
        return RolloutBatch([])

    def publish(self, state_dict: Mapping[str, Tensor], version: int,
                adapter: AdapterWeights | None = None) -> dict[str, float]:
        self.published.append((state_dict, version, adapter))
        return {"sync/bytes": 1.0}

    def quarantine(self, pool: str, reason: str) -> None: ...

    def totals(self) -> dict[str, float]:
        return {}

    def pool_figures(self) -> dict[str, PoolFigures]:
        return {}

    def close(self) -> None: ...


def test_full_weights_are_published_and_checkpointed_whole(base: Path, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    config = _config(base, tmp_path / "run")
    policy = TrainedWeights.load(config)
    assert policy.adapter is None and policy.sampler_model() is policy.model
    assert policy.set_trainable() == sum(p.numel() for p in policy.model.parameters())
    _moved(policy)
    published = policy.published()
    assert published.adapter is None and published.state_dict.keys() == policy.model.state_dict().keys()
    source = _Recording()
    assert policy.publish(source, 3) == {"sync/bytes": 1.0}, "no adapter figure without an adapter"
    assert source.published[0][1] == 3 and source.published[0][2] is None

    folder = policy.save(AutoTokenizer.from_pretrained(base), TrainerState(step=3, optimizer_phase="grpo",
                                                                           optimizer={}))
    assert folder == config.run_dir / CHECKPOINTS / checkpoint_name(3) and (folder / "model.safetensors").is_file()
    assert not (folder / "adapter_config.json").exists() and load_state(folder).step == 3
    saved = load_model(folder).state_dict()
    assert all(torch.equal(saved[k], v) for k, v in published.state_dict.items())
    resumed = TrainedWeights.load(config, folder)
    assert all(torch.equal(resumed.model.state_dict()[k], v) for k, v in published.state_dict.items())


def test_a_lora_policy_publishes_merged_weights_and_its_adapter_and_checkpoints_the_adapter(base: Path,
                                                                                          tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    config = _config(base, tmp_path / "run", lora=True)
    policy = TrainedWeights.load(config)
    assert policy.adapter is not None
    base_weights = load_model(base).state_dict()
    trainable = policy.set_trainable()
    assert 0 < trainable < sum(p.numel() for p in policy.model.parameters())
    # B starts at zero: the merged weights are the base's, under its names.
    start = policy.published()
    assert start.state_dict.keys() == base_weights.keys()
    assert all(torch.equal(start.state_dict[k], v) for k, v in base_weights.items())

    _moved(policy)
    published = policy.published()
    assert published.state_dict.keys() == base_weights.keys()
    changed = {k for k, v in base_weights.items() if not torch.equal(published.state_dict[k], v)}
    assert changed and all(k.endswith(("q_proj.weight", "v_proj.weight")) for k in changed)
    assert published.adapter is not None and published.adapter.tensors
    assert all(k.startswith("base_model.model.") and ".lora_" in k for k in published.adapter.tensors)
    sampler = policy.sampler_model()
    assert sampler is not policy.model
    assert all(torch.equal(sampler.state_dict()[k], v) for k, v in published.state_dict.items())

    source = _Recording()
    metrics = policy.publish(source, 4)
    adapter_elements = sum(t.numel() for t in published.adapter.tensors.values())
    assert metrics["sync/adapter_bytes"] == 4 * adapter_elements, "fp32 in-process samplers"
    assert source.published[0][2] is not None

    folder = policy.save(AutoTokenizer.from_pretrained(base), TrainerState(step=4, optimizer_phase="grpo",
                                                                           optimizer={}))
    assert (folder / "adapter_config.json").is_file() and (folder / "adapter_model.safetensors").is_file()
    assert not (folder / "model.safetensors").exists()
    merged = load_model(folder).state_dict()  # what `tracegym eval` loads: the adapter merged over the base
    assert all(torch.allclose(merged[k], v, atol=1e-6) for k, v in published.state_dict.items())
    resumed = TrainedWeights.load(config, folder)
    again = resumed.published()
    assert all(torch.allclose(again.state_dict[k], v, atol=1e-6) for k, v in published.state_dict.items())


@pytest.mark.parametrize("lora", [False, True])
def test_the_kl_reference_is_where_grpo_starts(base: Path, tmp_path: Path, lora: bool) -> None:
    assert TrainedWeights(_config(base, tmp_path / "a", lora=lora), load_model(base)).reference_ref() is None

    no_warm_start = _config(base, tmp_path / "b", lora=lora, kl_beta=0.1)
    policy = TrainedWeights(no_warm_start, load_model(base))
    assert policy.reference_ref() == str(base), "the base model, adapter or not"
    reference = policy.reference()
    assert reference is not None
    assert all(torch.equal(reference.state_dict()[k], v) for k, v in load_model(base).state_dict().items())
    assert policy.grpo_start(None) is None

    warm = _config(base, tmp_path / "c", lora=lora, kl_beta=0.1, warmup=2)
    policy = TrainedWeights(warm, load_model(base))
    with pytest.raises(NotFoundError, match="loss.kl_beta needs the warm-start checkpoint"):
        policy.reference_ref()
    kept = warm.run_dir / CHECKPOINTS / checkpoint_name(2)
    kept.mkdir(parents=True)
    assert policy.reference_ref() == kept == policy.warm_start_folder() == policy.grpo_start(None)
    resumed = warm.run_dir / CHECKPOINTS / checkpoint_name(6)
    assert policy.grpo_start(resumed) == resumed and policy.reference_ref() == kept, "resume keeps the reference"
