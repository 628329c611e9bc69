"""How a command eval reaches a model-written workspace: through the sandbox the episode itself ran in.

Scorers sit below the harnesses and cannot import their sandboxes, so a harness
hands every trajectory that has a workspace a `CommandRunner` built from its
sandbox (`Trajectory.runner`). The command scorer runs there, or nowhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class CommandOutput:
    """What a confined command did."""

    exit_code: int
    """Its exit status; 128+N when signal N ended it."""
    stdout: str
    stderr: str
    timed_out: bool
    """True when it ran past the eval's timeout and was killed."""
    killed: str | None = None
    """The sandbox limit that stopped it (wall_time, memory, output, ...), or None."""


class CommandRunner(Protocol):
    """Runs a scorer's command in an episode's workspace, confined as the episode's own commands were."""

    @property
    def kind(self) -> str:
        """The sandbox backend: bwrap, docker or subprocess."""

    @property
    def isolated(self) -> bool:
        """Whether the command is kept from the host's files and network, not merely limited."""

    @property
    def unisolated_allowed(self) -> bool:
        """Whether the config explicitly accepted running model-written code without isolation."""

    def workspace_path(self) -> str:
        """Where the command sees the workspace."""

    def run(self, command: str, env: Mapping[str, str], timeout_s: float) -> CommandOutput:
        """Run `command` in the workspace with `env` added to the sandbox's own minimal environment."""
