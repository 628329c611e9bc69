"""Scenario of tests/security/test_listeners.py, run inside a network namespace of its own where the host name
resolves to a routable address (10.9.9.9 on a veth link) besides loopback: rank 0 spawns rank 1 as `tracegym train`
does, both join the group, and while they are joined this writes to OUT (JSON) every listening TCP socket of the
namespace, the rendezvous folder's and file's modes, and what a process of another user got when it tried to join
the rendezvous or write into it. Then rank 0 releases rank 1 as a run with no GRPO step left does. Last, two ranks
meet as Ray's ranks do (rank 0 serves the TCP store on a socket it bound to 127.0.0.1) and the listeners are
written again.

    python tests/security/ranks_listen_run.py OUT RUN_DIR
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import torch.distributed as dist
import torch.multiprocessing as mp

from tracegym.training.config import TrainConfig
from tracegym.training.parallel.ranks import SpawnedRanks
from tracegym.training.parallel.sharded import Rendezvous, join, leave, listen

_STATES = {"0A": "LISTEN"}
_INTRUDER = """
import os, sys
store = sys.argv[1]
for what, act in (("read the store", lambda: os.open(store, os.O_RDONLY)),
                  ("write the store", lambda: os.open(store, os.O_WRONLY | os.O_APPEND)),
                  ("add a file beside it", lambda: os.open(store + ".planted", os.O_WRONLY | os.O_CREAT, 0o600))):
    try:
        act()
        print(f"could {what}")
    except OSError as e:
        print(f"refused to {what}: {e.strerror}")
"""


def listening() -> list[str]:
    """host:port of every TCP socket listening in this network namespace (/proc/net/tcp and tcp6)."""
    out = []
    for name, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        for line in Path(f"/proc/net/{name}").read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            if _STATES.get(state) != "LISTEN":
                continue
            address, port = local.split(":")
            raw = bytes.fromhex(address)
            # /proc writes each 32-bit word of the address in host (little-endian) order
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            out.append(f"{socket.inet_ntop(family, raw)}:{int(port, 16)}")
    return out


def _served_rank(rendezvous: Rendezvous) -> None:
    join(rendezvous, 1)
    try:
        dist.broadcast_object_list([None], src=0)
    finally:
        leave()


def served(facts: dict[str, object]) -> None:
    """Rank 0 and a spawned rank 1 meeting at rank 0's TCP store, served on a socket bound to 127.0.0.1."""
    listener = listen("127.0.0.1")
    rendezvous = Rendezvous(2, address="127.0.0.1", port=int(listener.getsockname()[1]), served=True)
    rank = mp.get_context("spawn").Process(target=_served_rank, args=(rendezvous,))
    rank.start()
    try:
        join(rendezvous, 0, listener)
        facts["served_listening"], facts["served_port"] = listening(), rendezvous.port
        dist.broadcast_object_list([None], src=0)
    finally:
        leave()
        rank.join(60)
    facts["served_exit_code"] = rank.exitcode


def main(out: Path, run_dir: Path) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    config = TrainConfig.model_validate({"run_dir": str(run_dir), "tasks": {"task_set": "unused"},
                                         "parallel": {"kind": "fsdp", "world_size": 2}})
    ranks = SpawnedRanks(config)
    facts: dict[str, object] = {"hostname": socket.gethostname(),
                                "resolves_to": socket.gethostbyname(socket.gethostname())}
    try:
        join(ranks.launch.rendezvous, 0, ranks.launch.listener)
        store = Path(ranks.launch.rendezvous.store_file or "")
        facts.update(listening=listening(), store_file=str(store), folder_mode=store.parent.stat().st_mode & 0o777,
                     rendezvous_in_run=store.parent.parent == run_dir)
        intruder = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable,
                                   "-c", _INTRUDER, str(store)], capture_output=True, text=True, timeout=60)
        facts["intruder"] = intruder.stdout.splitlines() or [intruder.stderr.strip()[-500:]]
        dist.broadcast_object_list([None], src=0)  # no GRPO step left: rank 1 returns
    finally:
        leave()
        ranks.release(finished=True)
    facts["exit_codes"] = [p.exitcode for p in ranks.processes]
    facts["folder_left"] = ranks.folder.exists()
    served(facts)
    out.write_text(json.dumps(facts))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
