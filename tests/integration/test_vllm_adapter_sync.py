"""A `model.lora` run's vLLM sampler takes the adapter alone: the trainer publishes it per version
(`tracegym.samplers.weights.lora_adapters`), the sampler's watcher reads it and the vLLM engine samples with it over
the base
weights it loaded itself. Its recorded log-probs are the trainer's (the peft model's), and a newer version replaces
the older. Skipped where vLLM is not installed, as tests/integration/test_vllm_engine.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

pytest.importorskip("vllm", reason="vLLM is an optional extra (pip install -e '.[vllm]'), not installed here")

from tests.integration.test_vllm_engine import PROMPTS, VOCAB, _process_left_as_found  # noqa: E402, F401 - autouse
from tracegym.models.logprobs import batch_logprobs_of  # noqa: E402
from tracegym.models.sampling import SamplingParams  # noqa: E402
from tracegym.models.tiny import tiny_llama  # noqa: E402
from tracegym.models.vllm_engine import VllmEngine  # noqa: E402
from tracegym.samplers.weights.folder import FilesystemBroadcast, FolderVersions  # noqa: E402
from tracegym.samplers.weights.lora_adapters import ADAPTER_SUFFIX, AdapterWatcher  # noqa: E402
from tracegym.training import lora  # noqa: E402
from tracegym.training.config import LoraSection  # noqa: E402

LORA = LoraSection(r=4, alpha=8, target_modules=["q_proj", "v_proj", "down_proj"])
PARAMS = SamplingParams(temperature=1.0, top_p=1.0, max_new_tokens=8)
TOLERANCE = 2e-4
"""Nats per token between vLLM (fp32, its LoRA kernels) and the peft model; seen: 2.7e-5 at most."""


def _move_b(peft_model: torch.nn.Module, seed: int) -> None:
    """Stand in for training: B away from its zero start, so that the adapter changes the policy."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, param in peft_model.named_parameters():
            if ".lora_B." in name:
                param.copy_(0.5 * torch.randn(param.shape, generator=gen))


def _logprobs(model: torch.nn.Module, seqs: list) -> list[torch.Tensor]:
    with torch.no_grad():
        return batch_logprobs_of(model, [s.prompt_ids for s in seqs], [s.completion_ids for s in seqs], 1.0)


@pytest.mark.slow
def test_a_vllm_sampler_samples_with_each_published_adapter_version(tmp_path: Path) -> None:
    base = tiny_llama(VOCAB, seed=3, eos_token_id=2, hidden=128, heads=2, kv_heads=1)  # vLLM CPU: head_dim 64
    base.save_pretrained(tmp_path / "base")
    torch.manual_seed(0)
    peft_model = lora.with_adapter(base, LORA, str(tmp_path / "base"))
    trainer_model = peft_model.get_base_model()  # what the trainer computes its log-probs with
    broadcast = FilesystemBroadcast(tmp_path / "weights", [], adapter_precisions=["fp32"])
    watcher = AdapterWatcher(FolderVersions(tmp_path / "weights"), "fp32")
    engine = VllmEngine(tmp_path / "base", "fp32", eos_token_ids=[2], max_model_len=256, threads=1, lora_rank=LORA.r)

    seqs, sent = {}, 0
    for version in (1, 2):
        _move_b(peft_model, seed=version)
        sync = broadcast.publish({}, version, lora.adapter_weights(peft_model))
        found = watcher.poll()
        assert found is not None and found[0] == version and watcher.poll() is None
        engine.load_adapter(found[1], version)
        seqs[version] = engine.generate(PROMPTS, PARAMS, seeds=[1, 2, 3])
        assert {s.policy_version for s in seqs[version]} == {version}
        for s, want in zip(seqs[version], _logprobs(trainer_model, seqs[version]), strict=True):
            torch.testing.assert_close(s.logprobs, want, rtol=0, atol=TOLERANCE)
        with peft_model.disable_adapter():  # the base alone scores the same tokens otherwise
            plain = _logprobs(trainer_model, seqs[version])
        assert max(float((s.logprobs - p).abs().max()) for s, p in zip(seqs[version], plain, strict=True)) > 0.1
        # what travelled is the adapter alone: 3328 parameters a layer, fp32, plus the file's header
        adapter_size = 4 * sum(p.numel() for n, p in peft_model.named_parameters() if ".lora_" in n)
        assert adapter_size == 4 * 2 * 3328 and adapter_size < sync["sync/bytes"] < adapter_size + 8192
        sent += sync["sync/bytes"]  # the two files' headers can differ by their padding (the publish time's digits)
        assert watcher.bytes_read == sent
    assert engine.llm.llm_engine.list_loras() == {3}, "version 2 (id 3) replaced version 1 in vLLM"
    assert [s.completion_ids for s in seqs[1]] != [s.completion_ids for s in seqs[2]], "same seeds, other adapter"


@pytest.mark.slow
def test_a_lora_run_trains_while_its_vllm_pool_is_sent_the_adapter_alone(tmp_path: Path) -> None:
    """The orchestrator with `model.lora` and a vllm pool reading over HTTP: the trainer trains the adapter, every
    sync sends the pool one adapter file (not the model), and the pool's token records are the trainer's."""
    from tests.integration.test_async_rollouts import TEMPERATURE, _rescored, _task, _until, write_task_set
    from tracegym.models.load import stop_token_ids
    from tracegym.models.tiny import smollm2_tokenizer
    from tracegym.samplers.orchestrator import AsyncRollouts
    from tracegym.tasks.taskset import load_task_set
    from tracegym.training.config import TrainConfig
    from tracegym.training.grpo.trainer import Trainer
    from tracegym.training.metrics import PoolSync

    tokenizer = smollm2_tokenizer()
    base = tiny_llama(len(tokenizer), seed=0, eos_token_id=int(tokenizer.eos_token_id), hidden=128, heads=2,
                      kv_heads=1)
    base.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    model_bytes = sum(t.numel() * 4 for t in base.state_dict().values()) - base.lm_head.weight.numel() * 4  # tied
    task_set = load_task_set(write_task_set(tmp_path / "tasks", [_task(i) for i in range(4)]))
    config = TrainConfig.model_validate({
        "run_dir": str(tmp_path / "run"), "seed": 3,
        "model": {"ref": str(tmp_path / "tiny"), "lora": LORA.model_dump()}, "optim": {"lr": 1e-2},
        "tasks": {"task_set": str(task_set.path)}, "harness": {"kind": "chat", "limits": {"max_turns": 1}},
        "sampler": {"temperature": TEMPERATURE, "top_p": 0.9, "max_new_tokens": 6, "concurrency": 4,
                    "pools": [{"engine": "vllm", "precision": "fp32", "weights": "http"}]},
        "grpo": {"group_size": 4, "batch_groups": 2}, "async": {"max_staleness": 1, "weights_http": {"port": 0}},
    })
    torch.manual_seed(0)
    peft_model = lora.with_adapter(base, LORA, str(tmp_path / "tiny"))
    _move_b(peft_model, seed=1)  # version 0 already differs from the base: the records tell which one sampled
    model = peft_model.get_base_model()
    trainer = Trainer(model, config.optim, config.grpo, config.loss, TEMPERATURE, int(tokenizer.eos_token_id))
    source = AsyncRollouts(config.rollout_plan(), task_set.tasks, task_set=task_set, tokenizer=tokenizer,
                           eos_token_ids=stop_token_ids(model, tokenizer), state_dict=lora.merged_state_dict(model),
                           policy_version=0, base_dir=tmp_path, startup_timeout_s=300,
                           adapter=lora.adapter_weights(peft_model))
    weights, sync, per_sync, trained = config.run_dir / "weights", PoolSync(), [], 0.0
    try:
        source.start()
        assert {p.name for p in (weights / "step_0").iterdir()} == {f"fp32{ADAPTER_SUFFIX}", "STABLE"}
        for step in range(3):
            batch = source.next_batch(2, trainer_version=step)
            if step == 0:
                for episode in (e for g in batch.groups for e in g.episodes):
                    torch.testing.assert_close(_rescored(model, episode),
                                               episode.tokens.sampler_logprobs[episode.tokens.loss_mask],
                                               rtol=0, atol=2e-3)
            trained += trainer.step(batch.groups)["train/optimizer_steps"]
            published = source.publish(lora.merged_state_dict(model), step + 1, lora.adapter_weights(peft_model))
            _until(lambda v=step + 1: source.stats()["samplers"]["fp32/0"]["version"] == v, "the pool loads it", 60)
            per_sync.append((sync.metrics(source.stats()["pools"])["sync/fp32/bytes"], published["sync/bytes"]))
    finally:
        source.close()
    assert trained > 0, "the adapter trained"
    adapter_bytes = lora.adapter_bytes(model, "fp32")
    for read, written in per_sync[1:]:  # the first also counts version 0, read at the sampler's start
        assert read == written and adapter_bytes < read < adapter_bytes + 8192 and read < model_bytes / 500
