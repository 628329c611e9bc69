"""`parallel: {kind: fsdp, world_size: 2, launcher: ray}` on a 2-node Ray cluster on this machine: rank 1 is a Ray
actor pinned by a custom resource to the node that offers it, rank 0 the driver on the head. Its three steps train as
one process (the tolerances of tests/unit/test_sharded_trainer.py), the actor is released at the end, and a rank
actor killed mid-run, or its node removed, fails rank 0's next step with a RankError rather than a hang. `tracegym
train` itself, with the Ray launcher, trains with its rank 1 on that node and releases it.

Ray binds to the machine's address, so the scenario (tests/integration/ray_ranks_run.py) runs in a network namespace
of its own, with only loopback up.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.integration.test_ray_backend import namespaced, ray_env, run_scenario  # noqa: F401 - fixtures
from tests.unit.test_sharded_trainer import _assert_close, _assert_weights, _setup, _single

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
def test_ranks_as_ray_actors_train_as_one_process_and_a_dead_rank_fails_the_run(namespaced: None,  # noqa: F811
                                                                                 ray_env: dict,  # noqa: F811
                                                                                 tmp_path: Path) -> None:
    facts, _ = run_scenario("ray_ranks_run.py", tmp_path / "facts.json", ray_env, timeout=1200)

    expected_metrics, expected_weights, _ = _single()
    result = torch.load(tmp_path / "ray.pt", weights_only=False)
    _assert_close(result["metrics"], expected_metrics)
    _assert_weights(result["weights"], expected_weights, _setup()[0].state_dict())
    # Rank 1 ran on the node offering the resource it asked for, and gave it back when the run ended.
    assert facts["resource_held"] and facts["resource_back"]

    # Its actor killed, or its node removed: the actor's sockets close, rank 0's next collective fails (0.05 s and
    # 1.7 s here, not a duration asserted), and the error names the dead actor, not a step timeout.
    for ended in (facts["killed"], facts["node_lost"]):
        assert ended.get("error") == "RankError", ended
        assert ended["message"].startswith("trainer rank 1 (a Ray actor on ") and "--resume" in ended["message"]
    assert facts["killed"]["resource_back"]

    command = facts["command"]
    assert command["returncode"] == 0, command["stderr"]
    assert command["summary"]["step"] == 2 and command["summary"]["checkpoint"].endswith("step-000002")
    assert "trainer ranks as Ray actors: rank 1 on 127.0.0.1" in command["stderr"]
    assert command["resource_back"]
