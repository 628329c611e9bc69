"""An episode's sandbox as command evals see it: a `CommandRunner` (tracegym.evals.scorers.command_runner) for its
workspace."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path

from tracegym.evals.scorers.command_runner import CommandOutput
from tracegym.harnesses.sandbox.base import Limits, Sandbox


class SandboxRunner:
    """Runs a scorer's command in one workspace, in the sandbox its episode used (made on first use)."""

    def __init__(self, sandbox: Callable[[], Sandbox], workspace: Path, limits: Limits,
                 unisolated_allowed: bool) -> None:
        self._sandbox = sandbox
        self._workspace = workspace
        self._limits = limits
        self._unisolated_allowed = unisolated_allowed

    @property
    def kind(self) -> str:
        return self._sandbox().kind

    @property
    def isolated(self) -> bool:
        return self._sandbox().isolated

    @property
    def unisolated_allowed(self) -> bool:
        return self._unisolated_allowed

    def workspace_path(self) -> str:
        return self._sandbox().inside_path(self._workspace)

    def run(self, command: str, env: Mapping[str, str], timeout_s: float) -> CommandOutput:
        result = self._sandbox().run(command, self._workspace, scoring_limits(self._limits, timeout_s), env)
        return CommandOutput(result.exit_code, result.stdout, result.stderr, result.timed_out, result.killed)


def scoring_limits(limits: Limits, timeout_s: float) -> Limits:
    """`limits` with the eval's timeout as wall time, and CPU time enough not to cut the command shorter."""
    cpu = max(limits.cpu_seconds, math.ceil(timeout_s))
    return Limits.model_validate({**limits.model_dump(), "wall_seconds": timeout_s, "cpu_seconds": cpu})
