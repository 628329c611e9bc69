"""The tools harness: tools are Python functions (`module:function`) called with JSON-schema arguments.

```yaml
tools:
  python_path: ["."]
  functions:
    - function: airline_tools:get_user_details
      parameters: {type: object, properties: {user_id: {type: string}}, required: [user_id]}
    - function: airline_tools:transfer_to_human_agents
  terminal_tools: [transfer_to_human_agents]
```
A tool without `parameters` takes the task's schema of the same name, else accepts any object. Arguments
are checked against the schema before the call (a breach is the model's mistake and it is told); the
function gets them as keyword arguments and its return value (a string, or anything JSON can write) is
the tool's answer. Async functions are awaited; plain ones run on a worker thread.

A function that raises is a harness failure and ends the episode with the error recorded
(`on_exception: end_episode`), unless `on_exception: observe`, which sends the model the error in
`error_format` instead, as τ-bench's environment does.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tracegym.errors import ConfigError
from tracegym.harnesses.base import Reset, ToolCallingHarness
from tracegym.harnesses.toolcalls import ToolCall
from tracegym.tasks.spec import TaskSpec


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class PythonTool(_Strict):
    function: str = Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
    """The tool's implementation as `package.module:function`."""
    name: str | None = None
    """The name the model calls it by; the function's name by default."""
    description: str | None = None
    """What the tool does; the function's docstring by default."""
    parameters: dict[str, Any] | None = None
    """JSON schema of the arguments; the task's schema of the same name by default."""


class ToolsConfig(_Strict):
    functions: list[PythonTool] = []
    """The tools."""
    python_path: list[str] = []
    """Folders (relative to the harness config file) put on sys.path before importing the tools."""
    terminal_tools: list[str] = []
    """Tools whose call ends the episode once answered."""
    on_exception: Literal["end_episode", "observe"] = "end_episode"
    """end_episode: a tool that raises ends the episode with a recorded harness error; observe: the model is
    sent `error_format` and the episode goes on."""
    error_format: str = "Error: {error}"
    """What the model sees when a tool raises under on_exception: observe ({error} is the exception text)."""


@dataclass(frozen=True)
class BoundTool:
    """A configured tool with its function imported."""

    spec: PythonTool
    fn: Callable[..., Any]

    @property
    def name(self) -> str:
        return self.spec.name or self.fn.__name__

    def schema(self, task: TaskSpec) -> dict[str, Any]:
        declared = {t.name: t for t in task.tools}
        parameters = self.spec.parameters
        if parameters is None:
            parameters = declared[self.name].parameters if self.name in declared else {"type": "object"}
        description = self.spec.description
        if description is None:
            description = (inspect.getdoc(self.fn) or "").split("\n\n")[0]
        return {"type": "function", "function": {"name": self.name, "description": description,
                                                 "parameters": parameters}}


def bind_tools(config: ToolsConfig, base_dir: Path) -> list[BoundTool]:
    """Import every configured function, once per run; `ConfigError` names what is missing."""
    from tracegym.evals.scorers.python import import_function

    for folder in config.python_path:
        resolved = str((base_dir / folder).resolve())
        if resolved not in sys.path:
            sys.path.insert(0, resolved)
    tools = [BoundTool(t, import_function(t.function, f"tools: {t.function}")) for t in config.functions]
    names = [t.name for t in tools]
    if len(set(names)) != len(names):
        raise ConfigError(f"tools: two functions share a name ({', '.join(names)}). Fix: give one a `name:`.")
    return tools


class ToolsHarness(ToolCallingHarness):
    name = "tools"

    def __init__(self, config: ToolsConfig, tools: list[BoundTool]) -> None:
        super().__init__(frozenset(config.terminal_tools))
        self.config = config
        self.bound = {t.name: t for t in tools}

    async def reset(self, task: TaskSpec) -> Reset:
        if not self.bound:
            raise ConfigError("the tools harness has no functions. Fix: list them under tools.functions in the "
                              "harness config (--harness-config).")
        self.tools = [t.schema(task) for t in self.bound.values()]
        return Reset(task.messages(), self.tools)

    async def call_tool(self, call: ToolCall) -> str:
        fn = self.bound[call.name].fn
        try:
            if inspect.iscoroutinefunction(fn):
                result = await fn(**call.arguments)
            else:
                result = await asyncio.to_thread(fn, **call.arguments)
        except Exception as e:  # noqa: BLE001 - either shown to the model or re-raised as the harness's failure
            if self.config.on_exception == "observe":
                return self.config.error_format.format(error=e)
            raise ToolRaised(f"tool {call.name!r} raised {type(e).__name__}: {e}") from e
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)


class ToolRaised(RuntimeError):
    """A tool function raised: the environment failed, not the model."""
