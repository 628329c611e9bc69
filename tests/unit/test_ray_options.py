"""What a pool's sampler actors ask Ray for (`async.backend: ray`), from the pool's settings."""

from __future__ import annotations

import pytest

from tracegym.samplers.config import SamplerPool

pytest.importorskip("ray")


def test_a_pools_actor_options_default_to_its_threads_and_device() -> None:
    from tracegym.samplers.backends.ray_actors import _actor_options

    assert _actor_options(SamplerPool(threads=2)) == {"num_cpus": 2.0, "num_gpus": 0.0, "resources": {},
                                                      "max_restarts": 0}
    gpu = SamplerPool.model_validate({"device": "cuda:0", "ray": {
        "cpus": 4, "accelerator_type": "B200", "resources": {"pool_b200": 1}, "label_selector": {"zone": "a"}}})
    assert _actor_options(gpu) == {"num_cpus": 4.0, "num_gpus": 1.0, "resources": {"pool_b200": 1.0},
                                   "max_restarts": 0, "accelerator_type": "B200", "label_selector": {"zone": "a"}}
    shared = SamplerPool.model_validate({"device": "cuda", "ray": {"gpus": 0.25}})
    assert _actor_options(shared)["num_gpus"] == 0.25
