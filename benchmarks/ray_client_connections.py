"""Ray client connections to a busy head: how many fail as the client proxy starts their server.

Ray 2.60's client proxy forks (and execs) a server for each client while its gRPC threads run; with gRPC's fork
handlers on, that child sometimes dies before exec and the client waits forever (ray-project/ray#63202). This starts
a 2-node `ray.cluster_utils.Cluster` (tests/integration/ray_cluster.py, a network namespace of its own: Ray binds to
the machine's address), two busy loops beside it, and connects N clients through `ray://` one after another, each
running one task; a client that has not finished after --client-timeout seconds counts as failed.

    python benchmarks/ray_client_connections.py --connections 30 --fork-support off

Last line: {"connections", "failed", "fork_support", "seconds"}.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.integration.ray_cluster: the test clusters' start-up for a loaded machine
PORT = 10001
CLIENT = ("import ray; ray.init('ray://127.0.0.1:{port}'); "
          "print(ray.get(ray.remote(lambda: 1).options(num_cpus=0).remote())); ray.shutdown()")


def connect_all(connections: int, client_timeout: int) -> int:
    """Inside the namespace: the cluster, then one client after another; the number that failed."""
    from tests.integration.ray_cluster import add_node, start_cluster

    cluster = start_cluster(connect=True, ray_client_server_port=PORT)
    add_node(cluster, num_cpus=1)
    failed = 0
    for i in range(connections):
        try:
            done = subprocess.run([sys.executable, "-c", CLIENT.format(port=PORT)], capture_output=True,
                                  timeout=client_timeout)
            ok = done.returncode == 0
        except subprocess.TimeoutExpired:
            ok = False
        failed += not ok
        print(f"connection {i}: {'ok' if ok else 'FAILED'}", file=sys.stderr, flush=True)
    return failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=30)
    parser.add_argument("--fork-support", choices=["default", "off"], default="default",
                        help="off: GRPC_ENABLE_FORK_SUPPORT=false in the cluster's environment")
    parser.add_argument("--client-timeout", type=int, default=90)
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside:
        print(connect_all(args.connections, args.client_timeout))
        return
    from tests.integration.ray_cluster import START_ENV

    folder = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
    token = Path(folder) / "auth_token"
    token.write_text(secrets.token_hex(32))
    token.chmod(0o600)
    env = {**os.environ, **START_ENV, "PYTHONPATH": str(ROOT), "RAY_AUTH_MODE": "token",
           "RAY_AUTH_TOKEN_PATH": str(token), "RAY_TMPDIR": folder, "OMP_NUM_THREADS": "1"}
    env.pop("GRPC_ENABLE_FORK_SUPPORT")
    if args.fork_support == "off":
        env["GRPC_ENABLE_FORK_SUPPORT"] = "false"
    inner = (f"ip link set lo up && exec {sys.executable} {Path(__file__).resolve()} --inside "
             f"--connections {args.connections} --client-timeout {args.client_timeout}")
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    started = time.monotonic()
    try:
        done = subprocess.run(["unshare", "--net", "sh", "-c", inner], env=env, stdout=subprocess.PIPE, text=True,
                              check=True)
    finally:
        for loop in busy:
            loop.kill()
        shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps({"connections": args.connections, "failed": int(done.stdout.split()[-1]),
                      "fork_support": args.fork_support, "seconds": round(time.monotonic() - started)}))


if __name__ == "__main__":
    main()
