"""How a sandboxed agent program reaches its episode's proxy, and nothing else: one folder per episode.

The folder (0700, owned by the uid the sandbox runs the program as) holds the proxy's Unix socket, the task
(`task.json`, `messages.json`) and the forwarder (`tracegym.harnesses.sandbox.forwarder`). The sandbox shows
it read-only at its own path. The program's command is wrapped so that the forwarder starts first, on a free
port of the sandbox's own loopback, and OPENAI_BASE_URL points there; the sandbox has no other network.
"""

from __future__ import annotations

import json
import shlex
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tracegym.harnesses.sandbox import forwarder, identity
from tracegym.tasks.spec import TaskSpec

_FORWARDER = Path(forwarder.__file__)
_FORWARDER_FAILED = 125  # the shell's "command cannot run"; nothing of the agent ran


class Channel:
    """One episode's folder: the proxy's socket, the task files, the forwarder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.socket = folder / "proxy.sock"
        self.task_file = folder / "task.json"
        self.messages_file = folder / "messages.json"
        self.forwarder = folder / "forwarder.py"

    @classmethod
    @contextmanager
    def open(cls, task: TaskSpec) -> Iterator[Channel]:
        """A fresh folder holding the task and the forwarder, removed (socket and all) when the block ends."""
        with tempfile.TemporaryDirectory(prefix="tracegym-proxy-") as folder:
            channel = cls(Path(folder).resolve())
            channel.task_file.write_text(task.model_dump_json(exclude_none=True), encoding="utf-8")
            channel.messages_file.write_text(json.dumps(task.messages(), ensure_ascii=False), encoding="utf-8")
            shutil.copyfile(_FORWARDER, channel.forwarder)
            yield channel

    def hand_over(self, workspace: Path) -> None:
        """Give the folder to the uid the sandbox runs `workspace`'s commands as, where that is not ours (root's).

        Only that uid (and root) may then enter it: its socket connects to the proxy, its files name the task.
        """
        uid = identity.workspace_uid(workspace)
        if uid is not None:
            identity.chown_tree(self.folder, uid)

    def command(self, program: str) -> str:
        """`program` as a shell script that first opens the way to the proxy and points the OpenAI variables at it."""
        start = f"python3 -I -S {shlex.quote(str(self.forwarder))} {shlex.quote(str(self.socket))}"
        failed = "tracegym: the forwarder to the proxy could not start in the sandbox (it needs python3 there)"
        return (
            f"TRACEGYM_PROXY_PORT=$({start}) || {{ echo {shlex.quote(failed)} >&2; exit {_FORWARDER_FAILED}; }}\n"
            'export OPENAI_BASE_URL="http://127.0.0.1:$TRACEGYM_PROXY_PORT/v1"\n'
            'export OPENAI_API_BASE="$OPENAI_BASE_URL"\n'
            "unset TRACEGYM_PROXY_PORT\n"
            f"{program}\n"
        )
