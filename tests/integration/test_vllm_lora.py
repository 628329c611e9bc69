"""vLLM (CPU) serves a LoRA checkpoint of `model.lora` as an adapter: the peft adapter folder the trainer writes, hot
loaded over the base with `enable_lora`, samples with the log-probs of the base with the adapter merged in (what
`tracegym eval` loads). Skipped where vLLM is not installed, as tests/integration/test_vllm_engine.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

pytest.importorskip("vllm", reason="vLLM is an optional extra (pip install -e '.[vllm]'), not installed here")

from tests.integration.test_vllm_engine import VOCAB, _process_left_as_found  # noqa: E402, F401 - autouse fixture
from tracegym.models.load import load_model  # noqa: E402
from tracegym.models.logprobs import batch_logprobs_of  # noqa: E402
from tracegym.models.tiny import tiny_llama  # noqa: E402
from tracegym.training import lora  # noqa: E402
from tracegym.training.config import LoraSection  # noqa: E402

pytestmark = pytest.mark.slow  # starts vLLM

PROMPTS = [[1, 17, 42, 99, 7], [1, 5, 6]]


def test_vllm_serves_the_trainers_adapter_folder_as_the_merged_policy(tmp_path: Path) -> None:
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt
    from vllm.lora.request import LoRARequest

    base = tiny_llama(VOCAB, seed=3, eos_token_id=2, hidden=128, heads=2, kv_heads=1)  # vLLM CPU: head_dim 64
    base.save_pretrained(tmp_path / "base")
    torch.manual_seed(0)
    adapted = lora.with_adapter(base, LoraSection(r=4, alpha=8, target_modules=["q_proj", "v_proj", "down_proj"]),
                                str(tmp_path / "base"))
    with torch.no_grad():  # a trained adapter: B away from its zero start, so that it changes the policy
        for name, param in adapted.named_parameters():
            if ".lora_B." in name:
                param.normal_(0, 0.5)
    adapted.save_pretrained(tmp_path / "adapter")  # what a LoRA checkpoint holds beside the tokenizer and state
    merged = load_model(tmp_path / "adapter")

    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
    llm = LLM(model=str(tmp_path / "base"), dtype="float32", enforce_eager=True, max_model_len=256,
              skip_tokenizer_init=True, enable_lora=True, max_lora_rank=8, max_loras=1, seed=0,
              logprobs_mode="processed_logprobs", max_logprobs=1)
    params = SamplingParams(temperature=1.0, max_tokens=8, logprobs=0, seed=5, ignore_eos=True, detokenize=False)
    prompts = [TokensPrompt(prompt_token_ids=p) for p in PROMPTS]
    served = llm.generate(prompts, params, lora_request=LoRARequest("run", 1, str(tmp_path / "adapter")),
                          use_tqdm=False)
    plain = llm.generate(prompts, params, use_tqdm=False)

    for outputs, model in ((served, merged), (plain, load_model(tmp_path / "base"))):
        completions = [[int(t) for t in o.outputs[0].token_ids] for o in outputs]
        expected = batch_logprobs_of(model, PROMPTS, completions, 1.0)
        for output, ids, want in zip(outputs, completions, expected, strict=True):
            got = torch.tensor([step[t].logprob for t, step in zip(ids, output.outputs[0].logprobs, strict=True)])
            torch.testing.assert_close(got, want, rtol=0, atol=1e-3)
    assert [o.outputs[0].token_ids for o in served] != [o.outputs[0].token_ids for o in plain], "the adapter counts"
