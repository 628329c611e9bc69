"""The shell harness: each reply holds one ```bash block, run sandboxed in the episode's own workspace.

Observations are written as mini-swe-agent writes them (its `action_observation_template` and
`timeout_template`), so models tuned on such traces see what they saw in production:

    <returncode>0</returncode>
    <output>
    ...
    </output>

A reply without exactly one bash block gets the format error and the episode goes on. A command whose
output starts with the submit marker (mini-swe-agent's COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT) ends the
episode. A sandbox that cannot start raises `SandboxError`, which ends the episode with the error recorded.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from pydantic import Field

from tracegym.errors import SandboxError
from tracegym.harnesses.base import Harness, Reply, Reset, Step
from tracegym.harnesses.sandbox import CommandResult, Limits, Sandbox, SandboxChoice, SandboxProvider, Workspaces
from tracegym.harnesses.sandbox.eval_runner import SandboxRunner
from tracegym.harnesses.toolcalls import parse_bash_action
from tracegym.tasks.spec import TaskSpec


class ShellConfig(SandboxChoice):
    limits: Limits = Limits(wall_seconds=60, cpu_seconds=60)
    """Per-command limits; command evals scoring the workspace run under them too, for their own timeout_s."""
    template: str | None = None
    """A folder (relative to the harness config file) copied into every workspace."""
    workspaces: str | None = None
    """Where the run's workspaces live; a temporary folder by default."""
    keep_workspaces: bool = False
    """Keep each workspace after its episode is scored (for debugging)."""
    submit_marker: str = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
    """A command whose output's first line is this ends the episode."""
    max_output_chars: int = Field(10000, ge=100)
    """Longer outputs show only their head and tail, with a warning, as mini-swe-agent does."""


def workspaces_for(config: ShellConfig, base_dir: Path) -> tuple[Workspaces, bool]:
    """The run's workspaces, and whether their root is a temporary folder of the run's own."""
    if config.workspaces is None:
        return Workspaces(Path(tempfile.mkdtemp(prefix="tracegym-ws-"))), True
    root = Path(config.workspaces)
    return Workspaces(root if root.is_absolute() else base_dir / root), False


class ShellHarness(Harness):
    name = "shell"

    def __init__(
        self, config: ShellConfig, sandboxes: SandboxProvider, workspaces: Workspaces, episode_id: str, base_dir: Path
    ) -> None:
        super().__init__()
        self.config = config
        self.sandboxes = sandboxes
        self.workspaces = workspaces
        self.episode_id = episode_id
        self.base_dir = base_dir
        self.sandbox: Sandbox | None = None

    async def reset(self, task: TaskSpec) -> Reset:
        self.sandbox = self.sandboxes.get()
        template = self.base_dir / self.config.template if self.config.template else None
        self.workspace = self.workspaces.create(self.episode_id, template)
        self.metrics["sandbox"] = self.sandbox.kind
        return Reset(task.messages())

    def command_runner(self) -> SandboxRunner | None:
        if self.workspace is None:
            return None
        return SandboxRunner(self.sandboxes.get, self.workspace, self.config.limits, self.config.allow_unisolated)

    async def step(self, reply: Reply) -> Step:
        assistant = {"role": "assistant", "content": reply.text}
        parsed = parse_bash_action(reply.text)
        if parsed.errors:
            self.counts.malformed_tool_calls += 1
            return Step(assistant, [{"role": "user", "content": parsed.errors[0].message}])
        if self.sandbox is None or self.workspace is None:
            raise SandboxError("the shell harness was stepped before reset")
        command = parsed.calls[0].arguments["command"]
        self.counts.tool_calls += 1
        result = await self.sandbox.arun(command, self.workspace, self.config.limits)
        observation = {"role": "user", "content": self.observation(command, result)}
        lines = result.stdout.lstrip().splitlines()
        if lines and lines[0].strip() == self.config.submit_marker:
            return Step(assistant, [observation], done=True, reason="env_done")
        return Step(assistant, [observation])

    def observation(self, command: str, result: CommandResult) -> str:
        """mini-swe-agent's observation for one command (stdout and stderr together, as its shell gives them)."""
        output = result.stdout + result.stderr
        if result.timed_out:
            return (f"The last command <command>{command}</command> timed out and has been killed.\n"
                    f"The output of the command was:\n <output>\n{output}\n</output>\n"
                    "Please try another command and make sure to avoid those requiring interactive input.")
        head = f"<returncode>{result.exit_code}</returncode>\n"
        if len(output) < self.config.max_output_chars:
            return head + f"<output>\n{output}</output>"
        keep = self.config.max_output_chars // 2  # mini-swe-agent: 10000 allowed, 5000 shown from each end
        elided = len(output) - 2 * keep
        return head + (
            "<warning>\nThe output of your last command was too long.\n"
            "Please try a different command that produces less output.\n"
            "If you're looking at a file you can try use head, tail or sed to view a smaller number of lines "
            "selectively.\nIf you're using grep or find and it produced too much output, you can use a more "
            "selective search pattern.\nIf you really need to see something from the full command's output, you "
            "can redirect output to a file and then search in that file.\n</warning>"
            f"<output_head>\n{output[:keep]}\n</output_head>\n<elided_chars>\n{elided} characters elided\n"
            f"</elided_chars>\n<output_tail>\n{output[-keep:]}\n</output_tail>"
        )

    async def close(self) -> None:
        if self.workspace is not None and not self.config.keep_workspaces:
            self.workspaces.remove(self.workspace)
