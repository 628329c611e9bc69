"""A `ray.cluster_utils.Cluster` for the Ray scenarios (tests/integration/ray_*_run.py), started with only the parts
they use and with start-up waits meant for a loaded machine.

Ray 2.60's raylet, as it starts, waits a fixed ~15 s for each port its node's agents pick and write to a file
(`WaitForDashboardAgentPorts`), and aborts ("Timed out waiting for file .../metrics_agent_port_...") when the
dashboard agent, a Python process, takes longer to start, as it does on a loaded machine. It waits for no file whose
port it was given: each node here is given free loopback ports for its agents (free until Ray binds them: the
scenario runs in a network namespace of its own), and, since Ray's Python side passes the raylet every such port
but the dashboard agent's HTTP one (`--dashboard_agent_listen_port`, a flag the raylet has), `passing_listen_port`
adds it to the raylet's command line, the same port the agent is told to listen on.

`START_ENV` goes into the scenario's environment (the Ray processes it starts read it): metrics collection off, no
usage-stats reporting, gRPC's fork handlers off, and Ray's registration and connection timeouts (`RAY_<name>` sets
Ray's config entry `name`) raised from seconds to minutes. The head starts without the dashboard's web modules
(`include_dashboard: False`) and without the autoscaler's monitor (`no_monitor`): the scenarios add and remove nodes
themselves. A node joins without `Cluster.add_node`'s fixed 30 s wait; the scenario waits up to `START_WAIT_S` for
it to be alive instead.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

from ray._private import ray_constants, services
from ray.cluster_utils import Cluster

START_WAIT_S = 300
"""How long a node may take to join on a loaded machine: a hang guard, not a measure."""
START_ENV = {
    "RAY_enable_metrics_collection": "0",
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_agent_register_timeout_ms": str(START_WAIT_S * 1000),
    "RAY_worker_register_timeout_seconds": str(START_WAIT_S),
    "RAY_gcs_rpc_server_connect_timeout_s": str(START_WAIT_S),
    "RAY_raylet_start_wait_time_s": str(START_WAIT_S),
    "RAY_DASHBOARD_STARTUP_TIMEOUT_S": str(START_WAIT_S),
    # How long the Ray client proxy waits for a client's own server (30 s by default: too short under load).
    "RAY_CLIENT_SERVER_CHECK_CHANNEL_TIMEOUT_S": str(START_WAIT_S),
    # gRPC's fork handlers off: the Ray client proxy forks (and execs) a server per client while its gRPC threads
    # run, and with them on the child sometimes dies before exec (ray-project/ray#63202; here 2 of 45 connections
    # on a loaded machine, after which the client waits forever). docs/ray.md tells users the same for their head.
    "GRPC_ENABLE_FORK_SUPPORT": "false",
}
HEAD_ARGS: dict[str, Any] = {"num_cpus": 0, "include_dashboard": False, "no_monitor": True}


def start_cluster(connect: bool, **head_args: Any) -> Cluster:
    """A cluster of one head node (HEAD_ARGS, updated by `head_args`), alive; this process connected to it if
    `connect`."""
    if not getattr(services.start_ray_process, "passes_listen_port", False):
        services.start_ray_process = passing_listen_port(services.start_ray_process)
    cluster = Cluster(initialize_head=False)
    add_node(cluster, **{**HEAD_ARGS, **head_args})
    if connect:
        cluster.connect()
    return cluster


def add_node(cluster: Cluster, **node_args: Any) -> Any:
    """A node added to `cluster` with `node_args`, once every node the cluster should have is alive."""
    node = cluster.add_node(wait=False, **agent_ports(), **node_args)
    cluster.wait_for_nodes(timeout=START_WAIT_S)
    return node



def agent_ports() -> dict[str, int]:
    """Free loopback ports for a node's dashboard agent (gRPC, HTTP, metrics export) and runtime-env agent."""
    names = ("metrics_agent_port", "dashboard_agent_listen_port", "metrics_export_port", "runtime_env_agent_port")
    sockets = [socket.socket() for _ in names]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return {name: sock.getsockname()[1] for name, sock in zip(names, sockets, strict=True)}
    finally:
        for sock in sockets:
            sock.close()


def passing_listen_port(start: Callable[..., Any]) -> Callable[..., Any]:
    """Ray's `start_ray_process`, with a raylet's command given `--dashboard_agent_listen_port`: the `--listen-port`
    of the dashboard agent command it carries, when that port is set."""

    def start_ray_process(command: list[str], process_type: str, *args: Any, **kwargs: Any) -> Any:
        if process_type == ray_constants.PROCESS_TYPE_RAYLET:
            agent = next((a for a in command if a.startswith("--dashboard_agent_command=")), "")
            port = next((w.split("=", 1)[1] for w in agent.split() if w.startswith("--listen-port=")), "0")
            if port != "0" and not any(a.startswith("--dashboard_agent_listen_port=") for a in command):
                command = [*command, f"--dashboard_agent_listen_port={port}"]
        return start(command, process_type, *args, **kwargs)

    start_ray_process.passes_listen_port = True  # type: ignore[attr-defined]
    return start_ray_process
