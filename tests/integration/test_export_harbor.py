"""`tracegym tasks export --to harbor`: shell tasks as Harbor task directories.

The `harbor` package needs Python 3.12 (tracegym runs on 3.11), so each directory is checked against Harbor's task
format as its source defines it (harbor-framework/harbor, src/harbor/models/task/config.py `TaskConfig`, schema 1.1,
and models/task/task.py: instruction.md, task.toml, environment/, tests/test.sh writing /logs/verifier/reward.txt,
solution/solve.sh), and its tests/test.sh is run here, without Docker, on the reference (solution/solve.sh, as
Harbor's oracle agent runs it) and on an agent that did nothing: each reward must be the one tracegym's shell
harness and scorer give the same reply.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from tests.integration.task_sets import SHELL_REPLY, shell_spec, write_shell_task_set
from tracegym.harnesses.config import HarnessFactory
from tracegym.harnesses.gates import ScriptedPolicy
from tracegym.harnesses.runner import EpisodeJob, EpisodeLimits, run_episode
from tracegym.models.sampling import SamplingParams
from tracegym.store import open_store
from tracegym.tasks import load_task_set
from tracegym.tasks.probes import ProbeReply
from tracegym.tasks.spec import TaskSpec

ROOT = Path(__file__).resolve().parents[2]
NAME = r"^[a-zA-Z0-9][a-zA-Z0-9._-]*/[a-zA-Z0-9][a-zA-Z0-9._-]*$"  # Harbor's org/name


class _Forbid(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Package(_Forbid):
    name: str = Field(pattern=NAME)
    description: str = ""
    keywords: list[str] = []


class _Timeout(_Forbid):
    timeout_sec: float


class _Environment(_Forbid):
    build_timeout_sec: float
    cpus: int
    memory_mb: int
    storage_mb: int
    allow_internet: bool


class HarborTaskConfig(_Forbid):
    """The TaskConfig fields the export writes, with Harbor's types; an unknown key or a wrong type fails."""

    schema_version: str
    task: _Package
    metadata: dict[str, Any]
    verifier: _Timeout
    agent: _Timeout
    environment: _Environment


@pytest.fixture
def exported(cli, tmp_path) -> tuple[Path, Path, dict[str, Any]]:
    folder = write_shell_task_set(tmp_path / "set", [
        shell_spec("cmd", "shell", ["made"]), shell_spec("mix", "shell", ["both"]),
        shell_spec("text", "shell", ["says"]), shell_spec("talk", "chat", ["says"])])
    store = tmp_path / "store.duckdb"
    open_store(store).close()
    (tmp_path / "template").mkdir()
    (tmp_path / "template" / "README.txt").write_text("the workspace every episode starts from\n")
    (tmp_path / "harness.yaml").write_text("shell:\n  template: template\n")
    result = cli("tasks", "export", folder, "--to", "harbor", "--out", tmp_path / "harbor", "--split", "all",
                 "--harness-config", tmp_path / "harness.yaml", "--store", store, "--json")
    assert result.exit_code == 0, result.output
    return folder, tmp_path / "harbor", json.loads(result.stdout)


def _tracegym_reward(task: TaskSpec, folder: Path, reply: str) -> float | None:
    factory = HarnessFactory()
    try:
        episode = asyncio.run(run_episode(ScriptedPolicy([ProbeReply(reply)]), factory.make(task, "ep-harbor"),
                                          EpisodeJob(task), SamplingParams(), EpisodeLimits(max_turns=1),
                                          load_task_set(folder).scorer(task), "check"))
    finally:
        factory.close()
    assert episode.harness_error is None and episode.scorer_error is None
    return episode.reward


def _verify(task_dir: Path, app: Path, logs: Path) -> subprocess.CompletedProcess[str]:
    """tests/test.sh as Harbor's verifier runs it, the container's /app and /logs/verifier being local folders."""
    env = {**os.environ, "TRACEGYM_WORKSPACE": str(app), "TRACEGYM_VERIFIER_DIR": str(logs),
           "PYTHONPATH": str(ROOT)}
    return subprocess.run(["bash", str(task_dir / "tests" / "test.sh")], env=env, capture_output=True, text=True,
                          timeout=120)


def test_harbor_task_directories_follow_harbor_s_task_format(exported):
    folder, out, summary = exported
    assert summary["format"] == "harbor" and summary["left_out"].startswith("talk: chat harness")
    assert sorted(p.name for p in out.iterdir()) == ["cmd", "mix", "text", "tracegym_data"]
    for name in ("cmd", "mix", "text"):
        task_dir = out / name
        config = HarborTaskConfig.model_validate(tomllib.loads((task_dir / "task.toml").read_text()))
        assert config.schema_version == "1.1" and config.metadata["task_id"] == name
        assert config.metadata["cluster_id"] == f"c-{name}"
        assert "Create done.txt, then say done." in (task_dir / "instruction.md").read_text()
        dockerfile = (task_dir / "environment" / "Dockerfile").read_text()
        assert re.search(r"^FROM \S+", dockerfile, re.M) and "WORKDIR /app" in dockerfile
        assert "COPY workspace/ /app/" in dockerfile
        assert (task_dir / "environment" / "workspace" / "README.txt").is_file()
        for script in ("tests/test.sh", "solution/solve.sh"):
            path = task_dir / script
            assert path.read_text().startswith("#!/bin/bash") and os.access(path, os.X_OK)
        assert "/logs/verifier" in (task_dir / "tests" / "test.sh").read_text()


@pytest.mark.slow  # five verifier processes
def test_harbor_verifier_gives_tracegym_s_reward_to_the_reference_and_an_empty_reply(exported, tmp_path):
    """`mix` is rewarded by a command eval on the workspace and a match eval on the reply, weighted."""
    folder, out, _ = exported
    task_dir, task = out / "mix", next(t for t in load_task_set(folder).tasks if t.task_id == "mix")
    rewards = {}
    for attempt, reply in (("reference", SHELL_REPLY), ("empty", "")):
        app, logs = tmp_path / attempt / "app", tmp_path / attempt / "logs"
        app.mkdir(parents=True)
        if attempt == "reference":  # Harbor's oracle agent runs solution/solve.sh in the container
            solved = subprocess.run(["bash", str(task_dir / "solution" / "solve.sh")], capture_output=True,
                                    text=True, env={**os.environ, "TRACEGYM_WORKSPACE": str(app)}, timeout=30)
            assert solved.returncode == 0, solved.stderr
        verified = _verify(task_dir, app, logs)
        assert verified.returncode == 0, verified.stderr
        rewards[attempt] = float((logs / "reward.txt").read_text())
        assert rewards[attempt] == _tracegym_reward(task, folder, reply)
        details = json.loads((logs / "details.json").read_text())
        assert details["reward"] == rewards[attempt]
    assert rewards == {"reference": 1.0, "empty": 0.0}
    half = tmp_path / "half" / "app"  # the file made, no reply left: the command eval alone earns its weight
    half.mkdir(parents=True)
    (half / "done.txt").write_text("")
    assert _verify(task_dir, half, tmp_path / "half" / "logs").returncode == 0
    assert float((tmp_path / "half" / "logs" / "reward.txt").read_text()) == 0.5


def test_a_verifier_that_cannot_score_writes_no_reward(exported, tmp_path):
    folder, out, _ = exported
    task_json = out / "cmd" / "tests" / "task.json"
    task_json.write_text(task_json.read_text().replace('"tracegym_version": "', '"tracegym_version": "0.0.'))
    app, logs = tmp_path / "app", tmp_path / "logs"
    app.mkdir()
    verified = _verify(out / "cmd", app, logs)
    assert verified.returncode == 1 and "pip install tracegym==0.0." in verified.stderr
    assert not (logs / "reward.txt").exists()
