"""Sandboxes that run the shell harness's commands, and the proxy's agent program, in a per-episode workspace,
under limits.

    from tracegym.harnesses.sandbox import Limits, Workspaces, make_sandbox

    sandbox = make_sandbox()              # bubblewrap; an error saying why where it cannot run
    with Workspaces(run_dir / "workspaces").episode("ep-1", files={"task.txt": "..."}) as ws:
        result = sandbox.run("cat task.txt", ws, Limits(wall_seconds=10))
"""

from tracegym.harnesses.sandbox.base import CommandResult, KillReason, Limits, Sandbox
from tracegym.harnesses.sandbox.bwrap import BwrapSandbox, bwrap_problem
from tracegym.harnesses.sandbox.factory import SandboxChoice, SandboxKind, SandboxProvider, make_sandbox
from tracegym.harnesses.sandbox.subprocess_rlimit import SandboxIsolationWarning, SubprocessSandbox
from tracegym.harnesses.sandbox.workspace import Workspaces

__all__ = [
    "BwrapSandbox",
    "CommandResult",
    "KillReason",
    "Limits",
    "Sandbox",
    "SandboxChoice",
    "SandboxIsolationWarning",
    "SandboxKind",
    "SandboxProvider",
    "SubprocessSandbox",
    "Workspaces",
    "bwrap_problem",
    "make_sandbox",
]
