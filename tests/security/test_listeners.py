"""Every listener tracegym opens is its owner's: spawned trainer ranks listen on loopback alone and meet through a
FileStore no other user can open; ranks meeting as Ray's do serve their store on the socket rank 0 bound; a Ray
instance tracegym starts listens on 127.0.0.1 alone.

The scenarios run in a network namespace of their own holding, besides loopback, a routable address (10.9.9.9 on a
veth link) that the host name resolves to, as on a machine on a network: a listener on the wildcard address or on
the host name's address shows up as one that is not 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_NETWORK = ("ip link set lo up && ip link add tg0 type veth peer name tg1 && ip addr add 10.9.9.9/24 dev tg0 "
            "&& ip link set tg0 up && ip link set tg1 up && hostname tg-rank-host "
            "&& printf '127.0.0.1 localhost\\n10.9.9.9 tg-rank-host\\n' > {hosts} && mount --bind {hosts} /etc/hosts")


@pytest.fixture
def networked(tmp_path: Path) -> Iterator[list[str]]:
    """The command prefix that runs a command in such a namespace (skips where namespaces are not permitted)."""
    hosts = tmp_path / "hosts"
    prefix = ["unshare", "--net", "--uts", "--mount", "sh", "-c", _NETWORK.format(hosts=hosts) + ' && exec "$@"',
              "sh"]
    if shutil.which("unshare") is None or shutil.which("setpriv") is None:
        pytest.skip("unshare and setpriv (util-linux) are needed to run the ranks in a network namespace")
    probe = subprocess.run([*prefix, "true"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"a network namespace with a veth link is not permitted here: {probe.stderr.strip()}")
    yield prefix


def _is_loopback(listener: str) -> bool:
    return listener.rpartition(":")[0] in ("127.0.0.1", "::1", "::ffff:127.0.0.1")


@pytest.mark.slow
def test_spawned_ranks_listen_on_loopback_alone_and_no_other_user_joins_their_rendezvous(
        networked: list[str], tmp_path: Path) -> None:
    out, run_dir = tmp_path / "facts.json", tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    env.pop("GLOO_SOCKET_IFNAME", None)
    os.chmod(tmp_path, 0o755)  # the other user's process reaches the run folder: the rendezvous folder stops it
    run = subprocess.run([*networked, sys.executable, "tests/security/ranks_listen_run.py", str(out), str(run_dir)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]
    facts = json.loads(out.read_text())

    assert facts["resolves_to"] == "10.9.9.9"  # the host name leads off loopback, as on a networked machine
    assert facts["listening"], "gloo's ranks listen for each other"
    assert all(_is_loopback(listener) for listener in facts["listening"]), facts["listening"]
    assert facts["rendezvous_in_run"] and facts["folder_mode"] == 0o700
    assert facts["intruder"] == ["refused to read the store: Permission denied",
                                 "refused to write the store: Permission denied",
                                 "refused to add a file beside it: Permission denied"], facts["intruder"]
    assert facts["exit_codes"] == [0] and not facts["folder_left"]
    # Ray's ranks: rank 0's store serves on the very socket it bound to 127.0.0.1, and nothing else listens wider.
    assert facts["served_exit_code"] == 0 and f"127.0.0.1:{facts['served_port']}" in facts["served_listening"]
    assert all(_is_loopback(listener) for listener in facts["served_listening"]), facts["served_listening"]


@pytest.mark.slow
def test_a_local_ray_instance_listens_on_loopback_alone(networked: list[str], tmp_path: Path) -> None:
    pytest.importorskip("ray")
    script = ("import json, sys; sys.path.insert(0, 'tests/security'); from ranks_listen_run import listening; "
              "from tracegym.samplers.backends import ray_cluster; import ray; ray_cluster.connect('local', 120); "
              "ok = ray.get(ray.remote(lambda: 1).remote()); found = listening(); ray_cluster.release(); "
              "print(json.dumps({'ok': ok, 'listening': found}))")
    folder = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # Ray's sockets live in it: a short path
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "RAY_TMPDIR": folder}
    env.pop("RAY_AUTH_MODE", None)  # Ray's own default for a local instance: token authentication
    try:
        run = subprocess.run([*networked, sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=300)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert run.returncode == 0, run.stderr[-4000:]
    facts = json.loads(run.stdout.strip().splitlines()[-1])
    assert facts["ok"] == 1 and len(facts["listening"]) >= 3  # the GCS, the raylet, the driver and workers
    assert all(_is_loopback(listener) for listener in facts["listening"]), facts["listening"]
