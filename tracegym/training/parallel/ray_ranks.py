"""Ranks 1..N-1 of `parallel: {kind: fsdp, launcher: ray}` as Ray actors (tracegym/training/parallel/ranks.py).

Rank 0, the `tracegym train` process, joins the cluster of `async.ray.address` (the connection the Ray sampler
backend shares: tracegym.samplers.backends.ray_cluster) and starts one actor per rank, each asking for `parallel.ray`.
Once
Ray has placed them all, it serves the group's TCP store at its own node's address as Ray sees it
(`ray.util.get_node_ip_address()`: 127.0.0.1 for a Ray instance tracegym started, `address: local`), on a socket
bound to that address alone and handed to the store (no port is probed, closed and bound again), so that ranks on
other nodes reach it; each actor runs `follow` there, as a spawned rank does. The store and the ranks' gloo traffic
are unauthenticated, like Ray's own object transfers between nodes: a cluster's nodes must sit on a network only they
and their operators reach (SECURITY.md).

Stopping: the actors are waited for once rank 0 says stop, then killed (which frees their resources), as spawned
ranks are joined, then killed. When an actor dies mid-run, rank 0's next collective fails, and the run fails with a
`RankError` naming the rank. Ray ends the actors a driver owns when it exits, so a rank 0 that is killed takes its
ranks with it.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import ray
import torch
from ray.exceptions import GetTimeoutError, RayError

from tracegym.errors import RankError
from tracegym.output import err, literal
from tracegym.samplers.backends import ray_cluster
from tracegym.training.parallel.ranks import Launch, follow
from tracegym.training.parallel.sharded import Rendezvous, listen

if TYPE_CHECKING:
    from tracegym.training.config import TrainConfig

_PLACE_S = 600.0
"""How long rank 0 waits for Ray to place the rank actors (an autoscaler may have to add a node for them)."""
_STOP_S = 60.0
_DEATH_NOTICE_S = 5.0
"""How long a failed collective waits for Ray to report a rank's actor dead: its sockets close at once, and Ray
learns of the death from its node within a few seconds."""


class RankActor:
    """One trainer rank >= 1 in a Ray actor of its own."""

    def node(self) -> str:
        """The address of the actor's node (answered once Ray has started it)."""
        return ray.util.get_node_ip_address()

    def follow(self, config: TrainConfig, launch: Launch, threads: int) -> None:
        torch.set_num_threads(threads)
        follow(config, launch)


_ACTOR = ray.remote(RankActor)


class RayRanks:
    """Rank 0's handle on ranks 1..N-1 as Ray actors, from their start until `release`."""

    def __init__(self, config: TrainConfig) -> None:
        parallel = config.parallel
        # Every rank needs a GPU of its own for nccl when rank 0 uses one (tracegym.training.parallel.sharded.join).
        options = parallel.ray.actor_options(cpus=1.0, gpus=float(torch.cuda.is_available()))
        run = uuid.uuid4().hex[:8]
        ray_cluster.connect(config.async_.ray.address, config.async_.ray.connect_timeout_s)
        self.actors: list[Any] = []
        try:
            # Named, so that `ray list actors` shows which rank each actor is. max_restarts 0: a restarted rank
            # could not rejoin a process group that is already formed.
            self.actors = [_ACTOR.options(name=f"tracegym-rank-{rank}-{run}", max_restarts=0, **options).remote()
                           for rank in range(1, parallel.world_size)]
            self.nodes = self._placed(options)
            placed = ", ".join(f"rank {rank} on {node}" for rank, node in enumerate(self.nodes, 1))
            err.print(f"trainer ranks as Ray actors: {literal(placed)}", highlight=False)
            address = ray.util.get_node_ip_address()
            listener = listen(address)
            rendezvous = Rendezvous(parallel.world_size, address=address, port=int(listener.getsockname()[1]),
                                    served=True)
            self.launch = Launch(rendezvous, 0, listener)
            threads = max(1, int(options["num_cpus"]))
            self.runs = {actor.follow.remote(config, Launch(self.launch.rendezvous, rank), threads): rank
                         for rank, actor in enumerate(self.actors, 1)}
        except BaseException:
            self._end()
            raise

    def release(self, finished: bool) -> None:
        """After rank 0 said stop (`finished`), wait for the ranks to leave the group; then end the actors."""
        if finished:
            ray.wait(list(self.runs), num_returns=len(self.runs), timeout=_STOP_S)
        self._end()

    def check(self, error: RuntimeError) -> None:
        """Raise a RankError from `error` (rank 0's failure) when a rank's actor has died or its `follow` failed."""
        ready, _ = ray.wait(list(self.runs), num_returns=1, timeout=_DEATH_NOTICE_S)
        for run in ready:
            try:
                ray.get(run)
            except RayError as e:
                rank, why = self.runs[run], ray_cluster.cause(e).rstrip(".")
                raise RankError(f"trainer rank {rank} (a Ray actor on {self.nodes[rank - 1]}) ended: {why}. "
                                f"Rank 0 failed with it: {str(error).splitlines()[0]}. Continue the run from its "
                                "latest checkpoint with --resume once the cluster can place the rank again.") from error

    def _placed(self, options: dict[str, Any]) -> list[str]:
        """The node address of each actor, once Ray has started them all."""
        try:
            return ray.get([actor.node.remote() for actor in self.actors], timeout=_PLACE_S)
        except GetTimeoutError:
            raise RankError(f"Ray placed not all {len(self.actors)} trainer rank actors within {_PLACE_S:.0f} s: no "
                            f"node of the cluster has what each asks for ({_asked(options)}). Fix: add such nodes, "
                            "or change parallel.ray.") from None
        except RayError as e:
            raise RankError(f"a trainer rank could not start as a Ray actor: {ray_cluster.cause(e)}") from e

    def _end(self) -> None:
        for actor in self.actors:
            try:
                ray.kill(actor, no_restart=True)
            except (RayError, ValueError):
                pass  # already gone
        ray_cluster.release()


def _asked(options: dict[str, Any]) -> str:
    return ", ".join(f"{key} {value}" for key, value in options.items() if value not in ({}, None))
