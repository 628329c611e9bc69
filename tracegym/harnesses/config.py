"""Which harness runs a task, and how each is configured: one small YAML file for a whole run.

```yaml
harness: null            # run every task in this harness instead of the one its spec names
replay:
  unseen: error          # or: fallback, with fallback: my_env:answer
  terminal_tools: [transfer_to_human_agents]
tools:
  functions: [{function: airline_tools:get_user_details}]
shell:
  sandbox: auto          # bubblewrap; where it cannot run, an error unless allow_unisolated: true
  limits: {wall_seconds: 30}
proxy:
  command: python my_agent.py   # with harness: proxy, the team's own agent runs each episode
```
Every section is optional; relative paths are resolved from the file's folder.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from tracegym.harnesses.base import ExternalHarness, Harness
from tracegym.harnesses.chat import ChatHarness
from tracegym.harnesses.proxy.harness import ProxyConfig, ProxyHarness, proxy_workspaces
from tracegym.harnesses.replay import ReplayConfig, ReplayHarness, load_fallback
from tracegym.harnesses.sandbox import SandboxProvider, Workspaces
from tracegym.harnesses.shell import ShellConfig, ShellHarness, workspaces_for
from tracegym.harnesses.tools import ToolsConfig, ToolsHarness, bind_tools
from tracegym.tasks.spec import TaskSpec

HarnessName = Literal["chat", "tools", "replay", "shell", "proxy"]


class HarnessConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    harness: HarnessName | None = None
    """Run every task in this harness; None uses the harness each task names."""
    run_as: dict[HarnessName, HarnessName] = {}
    """Run the tasks that name one harness in another, e.g. {shell: chat}: a shell task's reply is scored as it
    stands and its command never runs (a reward that judges the reply alone needs no sandbox)."""
    replay: ReplayConfig = ReplayConfig()
    """The replay harness: how unseen calls are answered."""
    tools: ToolsConfig = ToolsConfig()
    """The tools harness: the Python functions."""
    shell: ShellConfig = ShellConfig()
    """The shell harness: sandbox, limits, workspaces."""
    proxy: ProxyConfig = ProxyConfig()
    """The proxy harness: the agent program's command, limits, workspaces, and the sandbox its workspace is scored
    in."""

    @model_validator(mode="after")
    def _proxy_has_a_command(self) -> HarnessConfig:
        if self.harness == "proxy" and not self.proxy.command:
            raise ValueError("harness: proxy runs the agent in proxy.command, which is not set "
                             "(e.g. proxy: {command: python my_agent.py})")
        return self


def load_harness_config(path: Path | None) -> tuple[HarnessConfig, Path]:
    """The config in `path` (defaults when None) and the folder its relative paths start from."""
    if path is None:
        return HarnessConfig(), Path.cwd()
    from tracegym.yamlfile import load_model

    config, _ = load_model(Path(path), HarnessConfig)
    return config, Path(path).resolve().parent


class HarnessFactory:
    """Makes a fresh harness per episode; what is expensive (imports, the sandbox) is made once per run."""

    def __init__(self, config: HarnessConfig | None = None, base_dir: Path | None = None) -> None:
        self.config = config or HarnessConfig()
        self.base_dir = base_dir or Path.cwd()
        self._fallback = load_fallback(self.config.replay, self.base_dir)
        self._tools = bind_tools(self.config.tools, self.base_dir) if self.config.tools.functions else []
        self._sandboxes = SandboxProvider(self.config.shell)
        self._proxy_sandboxes = SandboxProvider(self.config.proxy)
        self._workspaces: Workspaces | None = None
        self._temporary_root = False
        self._proxy_workspaces: Workspaces | None = None
        self._proxy_temporary_root = False

    def name_for(self, task: TaskSpec) -> str:
        return self.config.harness or self.config.run_as.get(task.harness, task.harness)

    def make(self, task: TaskSpec, episode_id: str) -> Harness | ExternalHarness:
        """The harness for one episode of `task`; `episode_id` names its workspace."""
        name = self.name_for(task)
        if name == "chat":
            return ChatHarness()
        if name == "replay":
            return ReplayHarness(self.config.replay, self._fallback)
        if name == "tools":
            return ToolsHarness(self.config.tools, self._tools)
        if name == "proxy":
            if self._proxy_workspaces is None:
                self._proxy_workspaces, self._proxy_temporary_root = proxy_workspaces(self.config.proxy,
                                                                                      self.base_dir)
            return ProxyHarness(self.config.proxy, self._proxy_workspaces, episode_id, self.base_dir,
                                self._proxy_sandboxes)
        if self._workspaces is None:
            self._workspaces, self._temporary_root = workspaces_for(self.config.shell, self.base_dir)
        return ShellHarness(self.config.shell, self._sandboxes, self._workspaces, episode_id, self.base_dir)

    def close(self) -> None:
        """Release the sandboxes; remove the run's temporary workspace roots unless workspaces are kept."""
        self._sandboxes.close()
        self._proxy_sandboxes.close()
        if self._workspaces is not None and self._temporary_root and not self.config.shell.keep_workspaces:
            shutil.rmtree(self._workspaces.root, ignore_errors=True)
        if self._proxy_workspaces is not None and self._proxy_temporary_root and not self.config.proxy.keep_workspaces:
            shutil.rmtree(self._proxy_workspaces.root, ignore_errors=True)
