"""`tracegym tasks export --to openenv`: the exported server, started as OpenEnv environments start (uvicorn on
127.0.0.1), and its own client run replay episodes; each gets the reward tracegym's harness and scorer give the same
replies, and sees the same tool answers."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.integration.task_sets import mentions_task_set
from tests.integration.train_workspace import Workspace, copy_workspace
from tracegym.harnesses.config import HarnessFactory
from tracegym.harnesses.gates import ScriptedPolicy
from tracegym.harnesses.runner import EpisodeJob, run_episode
from tracegym.models.sampling import SamplingParams
from tracegym.tasks import load_task_set
from tracegym.tasks.probes import ProbeReply
from tracegym.tasks.spec import TaskSpec

pytestmark = pytest.mark.slow  # a server process and the τ-bench pipeline

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def exported(tmp_path_factory, tau_workspace_template: Workspace) -> tuple[Path, Path, dict[str, Any]]:
    """The shared τ-bench workspace's store; a few tasks bound to a `mentions` eval, exported to OpenEnv."""
    from typer.testing import CliRunner

    from tracegym.cli import app

    tmp = tmp_path_factory.mktemp("openenv")
    ws = copy_workspace(tau_workspace_template, tmp / "ws")
    task_set = mentions_task_set(ws.store, tmp, top=2, per_cluster=2)
    result = CliRunner().invoke(app, [str(a) for a in ("tasks", "export", task_set, "--to", "openenv", "--out",
                                                       tmp / "env", "--split", "all", "--json", "--store", ws.store)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return task_set, tmp / "env", json.loads(result.stdout)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(exported) -> Iterator[str]:
    """`uvicorn server.app:app` in the export's folder, as its README says."""
    env_dir = exported[1]
    port = _free_port()
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(env_dir), str(ROOT)])}
    process = subprocess.Popen([sys.executable, "-m", "uvicorn", "server.app:app", "--host", "127.0.0.1", "--port",
                                str(port), "--log-level", "warning"], cwd=env_dir, env=environ,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    out = process.stdout.read().decode(errors="replace") if process.stdout else ""
                    pytest.fail(f"the exported server did not start: {out[-3000:]}")
                time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


def _client_package(env_dir: Path) -> ModuleType:
    """The export's folder imported as a package, as `pip install DIR` installs it."""
    spec = importlib.util.spec_from_file_location("exported_env", env_dir / "__init__.py",
                                                  submodule_search_locations=[str(env_dir)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["exported_env"] = module
    spec.loader.exec_module(module)
    return module


def _tracegym_episode(task: TaskSpec, task_set: Path, replies: list[ProbeReply]) -> tuple[float | None, list[Any]]:
    """The episode tracegym's own runner, harness and scorer make of the same replies."""
    scorer = load_task_set(task_set).scorer(task)
    factory = HarnessFactory()
    try:
        episode = asyncio.run(run_episode(ScriptedPolicy(replies), factory.make(task, "ep-check"), EpisodeJob(task),
                                          SamplingParams(), None, scorer, "check"))
    finally:
        factory.close()
    assert episode.harness_error is None and episode.scorer_error is None
    return episode.reward, episode.continuation


def _attempts(task: TaskSpec) -> list[list[ProbeReply]]:
    """A recorded call then an answer that earns the eval; an unseen call then one that does not."""
    call = next(c for c in task.replay if c.message_idx >= task.provenance.cut_message_idx and c.result
                and isinstance(c.arguments, dict) and c.arguments)
    recorded = {"id": "call_1", "type": "function", "function": {"name": call.name,
                                                                 "arguments": json.dumps(call.arguments)}}
    other = {k: f"{v}-unseen" if isinstance(v, str) else v for k, v in call.arguments.items()}
    unseen = {"id": "call_1", "type": "function", "function": {"name": call.name, "arguments": json.dumps(other)}}
    return [[ProbeReply("", (recorded,)), ProbeReply("Done: a full refund is on its way.")],
            [ProbeReply("", (unseen,)), ProbeReply("I could not find that.")]]


def test_an_openenv_client_gets_tracegym_s_reward_for_the_same_actions(exported, server):
    set_dir, env_dir, summary = exported
    assert summary["format"] == "openenv"
    package = _client_package(env_dir)
    task = next(t for t in load_task_set(set_dir).tasks if t.harness == "replay" and any(
        c.message_idx >= t.provenance.cut_message_idx and c.result and isinstance(c.arguments, dict) and c.arguments
        for c in t.replay))
    rewards, answers = [], []
    for replies in _attempts(task):
        want_reward, want_messages = _tracegym_episode(task, set_dir, replies)
        with package.TracegymEnv(base_url=server) as env:
            result = env.reset(task_id=task.task_id)
            assert result.observation.messages == [dict(m) for m in task.messages()][:len(result.observation.messages)]
            assert result.observation.task_id == task.task_id and not result.done
            assert result.observation.cluster_id == task.provenance.cluster_id
            seen = []
            for reply in replies:
                result = env.step(package.TracegymAction(content=reply.text, tool_calls=list(reply.tool_calls)))
                seen.append(result.observation.messages)
            assert result.done and result.observation.error is None
        assert result.reward == want_reward
        tool_answers = [m for m in want_messages if m["role"] == "tool"]
        assert [m for ms in seen for m in ms if m["role"] == "tool"] == tool_answers and len(tool_answers) == 1
        rewards.append(result.reward)
        answers.append(tool_answers[0]["content"])
    assert rewards == [1.0, 0.0]
    assert answers[0] != answers[1]  # the recorded answer, then the tool's error for arguments it never saw


def test_the_export_is_an_openenv_environment_folder(exported):
    env_dir = exported[1]
    spec = (env_dir / "openenv.yaml").read_text()
    assert "runtime: fastapi" in spec and "app: server.app:app" in spec
    dockerfile = (env_dir / "server" / "Dockerfile").read_text()
    assert 'CMD ["uvicorn", "server.app:app"' in dockerfile and "COPY server/requirements.txt" in dockerfile
    import tracegym

    requirements = (env_dir / "server" / "requirements.txt").read_text().split()
    assert f"tracegym=={tracegym.__version__}" in requirements
    assert json.loads((env_dir / "tracegym_data" / "export.json").read_text())["format"] == "openenv"
