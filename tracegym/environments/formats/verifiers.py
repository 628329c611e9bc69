"""verifiers: an environment module folder, `pip install DIR` then `verifiers.load_environment(NAME)`.

    DIR/pyproject.toml              the package NAME (setuptools), needing verifiers and tracegym VERSION
    DIR/README.md
    DIR/NAME/__init__.py, NAME.py   load_environment(**kwargs)
    DIR/NAME/tracegym_data/         the tasks, evals and harness config (`tracegym.environments.bundle`)

The dataset's rows are the task set's: prompt messages, and an `info` holding the task id, cluster id, harness,
split, the scorer binding, the gates' verdicts and the tools (`tool_defs`). A set of chat tasks only is a
SingleTurnEnv; otherwise every rollout runs in a multi-turn env whose tool answers come from the task's tracegym
harness (a replay task's recording, a shell task's sandbox), so a rollout sees what it would see in tracegym. The
Rubric's one reward function is the task's tracegym scorer.
"""

from __future__ import annotations

import re
from pathlib import Path

from tracegym.environments.registry import ExportJob

FORMAT = "verifiers"
SUMMARY = "a verifiers environment module (pip install DIR; verifiers.load_environment(NAME))"
DATA = "tracegym_data"
VERIFIERS = "0.3.1"
"""The verifiers release the environment is written for and tested with (the `trainers` extra's pin)."""

PYPROJECT = """[project]
name = "{dist}"
description = "tracegym task set {task_set} as a verifiers environment (rewards: tracegym's scorers)"
version = "0.1.0"
requires-python = ">=3.11"
keywords = ["tracegym", "train", "eval"]
dependencies = ["verifiers=={verifiers}", "tracegym=={version}"]

[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[tool.setuptools]
packages = ["{name}"]

[tool.setuptools.package-data]
{name} = ["{data}/*", "{data}/**/*"]
"""

MODULE = '''"""tracegym task set {task_set} as a verifiers environment (written by `tracegym tasks export`).

Rewards are the tasks' own tracegym scorers (tracegym {version}); tool answers come from each task's tracegym
harness. `verifiers.load_environment("{name}")` or `load_environment(split="heldout")`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import verifiers as vf
from datasets import Dataset

from tracegym.environments.runtime import ExportedTasks, Session

DATA = Path(__file__).resolve().parent / "{data}"


def load_environment(split: str = "all", max_turns: int = 10, **kwargs: Any) -> vf.Environment:
    """The environment over the tasks of `split` (train, heldout or all); loading checks that every task's
    scorer can run in this process and raises with the fix where one cannot."""
    tasks = ExportedTasks(DATA)
    rows = [r for r in tasks.rows.values() if split in ("all", r.split)]
    if not rows:
        raise ValueError(f"no {{split}} tasks in this export (split is train, heldout or all)")
    dataset = Dataset.from_list([_example(r) for r in rows])
    rubric = vf.Rubric(funcs=[TracegymReward(tasks)], weights=[1.0])
    if all(r.harness == "chat" for r in rows):
        return vf.SingleTurnEnv(dataset=dataset, rubric=rubric, **kwargs)
    return TracegymHarnessEnv(tasks, dataset=dataset, rubric=rubric, max_turns=max_turns, **kwargs)


def _example(row: Any) -> dict[str, Any]:
    prompt = [{{k: v for k, v in m.items() if v is not None}} for m in row.prompt]
    info = {{"task_id": row.task_id, "cluster_id": row.cluster_id, "task_set": row.task_set, "harness": row.harness,
            "split": row.split, "scorer": row.scorer.model_dump(), "gates": row.gates.model_dump(),
            "reference_source": row.reference_source,
            "tool_defs": [t["function"] for t in row.tools] if row.harness != "chat" else []}}
    return {{"prompt": prompt, "info": json.dumps(info)}}


class TracegymReward:
    """The task's tracegym scorer: on what the rollout's harness session recorded, or (without one) on the
    completion's assistant messages played through the task's harness. A scorer error raises (verifiers logs
    it and counts 0), where tracegym leaves such an episode out."""

    __name__ = "tracegym_reward"

    def __init__(self, tasks: ExportedTasks) -> None:
        self.tasks = tasks

    async def __call__(self, completion: Any, info: dict[str, Any], state: Any, **kwargs: Any) -> float:
        result = state.get("tracegym_result")
        if result is None:
            replies = [_openai(m) for m in completion or [] if _get(m, "role") == "assistant"]
            result = await self.tasks.score_replies(info["task_id"], replies)
        if result.reward is None:
            raise RuntimeError(f"task {{info['task_id']}}: {{result.error}}")
        return result.reward


class TracegymHarnessEnv(vf.MultiTurnEnv):
    """Each reply goes to the task's tracegym harness, whose answer (tool results, feedback) is the next turn;
    the episode ends when the harness says so (a reply without tool calls, a terminal tool)."""

    def __init__(self, tasks: ExportedTasks, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tasks = tasks

    async def setup_state(self, state: Any) -> Any:
        session = self.tasks.session(state["info"]["task_id"])
        await session.start()
        state["tracegym_session"] = session
        state["tracegym_answer"] = []
        return state

    async def add_model_response(self, state: Any, prompt_messages: Any, response: Any) -> None:
        await super().add_model_response(state, prompt_messages, response)
        session: Session = state["tracegym_session"]
        reply = _openai(state["trajectory"][-1]["completion"][-1])
        step = await session.step(reply.get("content") or "", reply.get("tool_calls") or ())
        state["tracegym_answer"] = step.observations
        state["tracegym_done"] = step.done

    @vf.stop
    async def harness_done(self, state: Any) -> bool:
        return bool(state.get("tracegym_done"))

    async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> Any:
        return [_vf_message(m) for m in state["tracegym_answer"]]

    @vf.cleanup
    async def score_and_close(self, state: Any) -> None:
        """Score while the harness still holds the episode (a shell task's workspace), then release it."""
        session = state.get("tracegym_session")
        if session is None:
            return
        try:
            state["tracegym_result"] = await session.score()
        finally:
            await session.close()


def _get(message: Any, key: str) -> Any:
    return message.get(key) if isinstance(message, dict) else getattr(message, key, None)


def _openai(message: Any) -> dict[str, Any]:
    """A verifiers assistant message in OpenAI chat form."""
    content = _get(message, "content")
    if isinstance(content, list):
        content = "".join(str(_get(p, "text") or "") for p in content)
    calls = []
    for call in _get(message, "tool_calls") or []:
        function = _get(call, "function")
        name = _get(function, "name") if function is not None else _get(call, "name")
        arguments = _get(function, "arguments") if function is not None else _get(call, "arguments")
        function = {{"name": name, "arguments": arguments}}
        calls.append({{"id": _get(call, "id"), "type": "function", "function": function}})
    return {{"role": "assistant", "content": content, "tool_calls": calls}}


def _vf_message(message: dict[str, Any]) -> Any:
    if message.get("role") == "tool":
        return vf.ToolMessage(tool_call_id=str(message.get("tool_call_id")), content=str(message.get("content")))
    return vf.UserMessage(content=str(message.get("content") or ""))
'''

README = """# {name}: tracegym task set `{task_set}` for verifiers

{rows} tasks ({split} split) exported by `tracegym tasks export --to verifiers`. Rewards are the tasks' own tracegym
scorers and tool answers come from each task's tracegym harness, so tracegym {version} must be installed.

```bash
pip install {name}/            # the folder this README is in
python -c "import verifiers as vf; env = vf.load_environment('{name}'); print(env)"
```

`load_environment(split="train" | "heldout" | "all", max_turns=10)`. Each row's `info` holds task_id, cluster_id,
harness, scorer and the gates' verdicts: keep them with your results so `tracegym` can read them back.
"""


def env_name(task_set: str) -> str:
    """A Python module name for the environment: tracegym_ and the task set's name."""
    return "tracegym_" + (re.sub(r"[^a-z0-9]+", "_", task_set.lower()).strip("_") or "tasks")


def export(job: ExportJob, out: Path) -> dict[str, str]:
    name = env_name(job.task_set.manifest.name)
    package = out / name
    manifest = job.write_data(package / DATA)
    values = {"name": name, "dist": name.replace("_", "-"), "task_set": manifest.task_set, "data": DATA,
              "version": manifest.tracegym_version, "verifiers": VERIFIERS, "rows": str(len(job.rows)),
              "split": job.split}
    (out / "pyproject.toml").write_text(PYPROJECT.format(**values), encoding="utf-8")
    (out / "README.md").write_text(README.format(**values), encoding="utf-8")
    (package / "__init__.py").write_text(f"from .{name} import load_environment\n\n__all__ = ['load_environment']\n",
                                         encoding="utf-8")
    (package / f"{name}.py").write_text(MODULE.format(**values), encoding="utf-8")
    return {"name": name, "install": f"pip install {job.name}/",
            "load": f"verifiers.load_environment({name!r})"}
