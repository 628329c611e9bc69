"""The Ray backend on a 3-node Ray cluster on this machine (`ray.cluster_utils.Cluster`, pools pinned to nodes by
custom resources): a run with an fp32 and a bf16 pool trains, its token records have the process backend's shape,
a delta damaged in transit is caught and the sampler resyncs from whole weights, a node removed mid-run (while
another sampler's actor process is killed) loses no group and is reported, and `tracegym train`, connected to the
same cluster through the Ray client (ray://), quarantines a pool whose bf16 weights mismatch the trainer's and goes
on with the other.

Ray binds to the machine's address, so the scenario (tests/integration/ray_cluster_run.py) runs in a network
namespace of its own, with only loopback up; one cluster serves every check (it takes ~10-30 s to start here).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ray")

from tests.integration.ray_cluster import START_ENV  # noqa: E402 - needs Ray, skipped above without it

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def ray_env() -> Iterator[dict[str, str]]:
    """The scenario's environment: this checkout importable, Ray's token authentication on (as the product keeps
    it) with a token of the scenario's own (not the user's ~/.ray/auth_token), and a Ray temp folder of its own (a
    short path: Ray's sockets live in it), and Ray's start-up settings for a loaded machine (`START_ENV`). Ray finds a
    cluster's address through files in its temp folder, so two scenarios running at once in the default /tmp/ray
    would reach each other's cluster."""
    folder = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
    token = Path(folder) / "auth_token"
    token.write_text(secrets.token_hex(32))
    token.chmod(0o600)
    yield {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token), "OMP_NUM_THREADS": "1",
           "RAY_TMPDIR": folder, **START_ENV}
    shutil.rmtree(folder, ignore_errors=True)


def _in_own_network(command: str) -> list[str]:
    return ["unshare", "--net", "sh", "-c", f"ip link set lo up && exec {command}"]


@pytest.fixture(scope="module")
def namespaced() -> None:
    try:
        probe = subprocess.run(_in_own_network("true"), capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        pytest.skip("unshare is not installed: a Ray cluster needs a network namespace of its own here")
    if probe.returncode != 0:
        pytest.skip(f"unshare --net is not permitted here ({probe.stderr.strip()}): Ray would bind to the "
                    "machine's address")


def run_scenario(script: str, out: Path, env: dict[str, str], timeout: int) -> tuple[dict, str]:
    """Run tests/integration/SCRIPT in a network namespace of its own: the facts it wrote to `out`, and its stderr."""
    try:
        run = subprocess.run(_in_own_network(f"{sys.executable} tests/integration/{script} {out}"),
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        said = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr or ""
        raise AssertionError(f"{script} still ran after {timeout} s (a hang guard); its stderr:\n"
                             f"{said[-6000:]}") from None
    assert run.returncode == 0, run.stderr[-6000:]
    return json.loads(out.read_text()), run.stderr


@pytest.mark.slow
def test_a_ray_cluster_trains_resyncs_a_damaged_delta_and_survives_a_lost_node(namespaced: None, ray_env: dict,
                                                                                 tmp_path: Path) -> None:
    facts, stderr = run_scenario("ray_cluster_run.py", tmp_path / "facts.json", ray_env, timeout=1200)
    stats, samplers = facts["stats"], facts["samplers"]

    # Both pools' groups were trained, and the training moved the weights the samplers then read.
    assert facts["trained_by"] == ["bf16/0", "fp32/0"]
    assert sum(facts["trained_sequences"]) > 0 and any(changed > 0 for changed in facts["changed"])
    assert samplers["fp32/0"]["version"] >= 1
    # The same token records as the process backend's: fields, dtypes and dimensions.
    assert facts["ray_records"] and all(r == facts["process_record"] for r in facts["ray_records"])

    # The damaged delta: caught, rebuilt once from whole weights, and the sampler went on at newer versions.
    before = facts["bf16_before_loss"]
    assert before["weight_rebuilds"] == 1 and before["version"] >= 1 and before["process_groups"] >= 1
    assert samplers["fp32/0"]["weight_rebuilds"] == 0

    # The lost node: counted, reported on stderr, its sampler replaced on the node that joined, and every group
    # handed out before the loss consumed exactly once (trained, or dropped and counted).
    # The fp32 actor killed at the same moment: a death on a live node, not a node lost; replaced on its node.
    assert stats["source/nodes_lost"] == 1
    assert stats["source/sampler_deaths"] == 2 and stats["source/sampler_restarts"] == 2
    stderr = " ".join(stderr.split())
    assert "sampler bf16/0 lost its node" in stderr and "sampler fp32/0 ended: its Ray actor died" in stderr
    assert facts["bf16_in_flight_at_loss"] >= 1
    for sampler_id, old in (("bf16/0", before), ("fp32/0", facts["fp32_before_loss"])):
        assert samplers[sampler_id]["deaths"] == samplers[sampler_id]["restarts"] == 1
        assert samplers[sampler_id]["process_groups"] >= 1 and samplers[sampler_id]["pid"] != old["pid"]
    consumed = facts["consumed"]
    assert len(consumed) == len(set(consumed)) == stats["source/groups_consumed"]
    assert set(range(facts["handed_at_loss"])) <= set(consumed)

    # Quarantine on the cluster: the bf16 pool passed its mismatch limit, the exact pool did not, and after the
    # groups the bf16 pool had already delivered (a buffer's worth, taken by the next step) every step trained on
    # exact alone, to the run's last step.
    quarantine = facts["quarantine"]
    [row] = quarantine["rows"]
    assert (row["pool"], row["cause"], row["limit_value"]) == ("coarse", "mismatch", 1e-3) and row["value"] > 1e-3
    assert quarantine["status"] == "completed" and quarantine["last_step"] == 8
    later = [s["pools"] for s in quarantine["steps"] if s["train_step"] > row["step"] + 1]
    assert row["step"] <= 6 and later and all(pools == ["exact"] for pools in later)
    assert "sampler pool coarse quarantined: k3 KL against the trainer" in " ".join(quarantine["stderr"].split())
