"""Issue 24: the agent program behind the proxy runs in the episode's sandbox, never on the host.

The proxy harness started the team's agent as a plain child process on the host: same uid, the host's whole
environment, full network. The agent executes what the model writes, so that was model output running on
the host. Each test here runs a real agent program (the `openai` client, copied into the workspace by the
template, as a team would ship it) through the real harness, and checks that it cannot reach the host while
its calls to the proxy still work and its episode is scored. The model is the one thing faked (scripted).
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import textwrap
import threading
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from tracegym.episodes.record import Episode
from tracegym.errors import ConfigError
from tracegym.evals.scorers import ScorerContext, build_scorer
from tracegym.evals.scorers.config import MatchEval
from tracegym.harnesses.config import HarnessConfig, HarnessFactory
from tracegym.harnesses.policy import Completion, PolicyClient, PolicyRequest
from tracegym.harnesses.runner import EpisodeJob, EpisodeLimits
from tracegym.harnesses.sandbox import SandboxIsolationWarning, bwrap_problem, factory
from tracegym.models.sampling import SamplingParams
from tracegym.tasks.spec import TaskSpec

pytest.importorskip("openai", reason="the agent under test uses the openai client (the dev extra)")

SECRET = "hunter2-host-secret"
REPLY = "Snow in Oslo."

# The team's agent: whatever the task id asks of it, then one call to the proxy; it reports what happened on
# stdout (for the scorer) and in report.txt in its workspace (for the test).
AGENT = '''
import json, os, pathlib, socket, subprocess, time

def say(line):
    print(line, flush=True)
    with open("report.txt", "a") as report:
        report.write(line + "\\n")

def attempt(name, action):
    try:
        say(f"{name}=" + str(action()))
    except OSError as e:
        say(f"{name}=refused ({type(e).__name__}: {e})")

def write_marker():
    marker = pathlib.Path(os.environ["TEST_MARKER"])
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text("the agent wrote on the host")
    return "written"

def connect():
    with socket.create_connection(("127.0.0.1", int(os.environ["TEST_PORT"])), timeout=5) as sock:
        return sock.recv(100).decode()

task = os.environ["TRACEGYM_TASK_ID"]
if task == "write":
    attempt("WRITE", write_marker)
elif task == "secret":
    say("SECRET=" + os.environ.get("TEST_HOST_SECRET", "none"))
    say("HOME=" + os.environ.get("HOME", "unset"))
elif task == "connect":
    attempt("CONNECT", connect)
elif task == "linger":  # a process in a session of its own, out of reach of a kill of the agent's group
    subprocess.Popen(["setsid", "sh", "-c", ": " + os.environ["TEST_TOKEN"] + "; sleep 120"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
say("MODE=" + os.environ.get("AGENT_MODE", "unset"))
messages = json.load(open(os.environ["TRACEGYM_MESSAGES_FILE"]))
REQUEST
say("REPLY=" + reply)
if task == "linger":
    time.sleep(120)
'''

OPENAI_REQUEST = '''
from openai import OpenAI
reply = OpenAI().chat.completions.create(model="m", messages=messages).choices[0].message.content
'''

# Without the openai package, under the system's python3, from stdin: the unisolated fallback runs the agent as a
# uid of its own when tracegym runs as root, and that uid may reach neither the Python tracegym runs on (under
# /root, say) nor its workspace by its absolute path (python3 opens a script that way), only through its cwd.
URLLIB_REQUEST = '''
import urllib.request
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
                                 json.dumps({"model": "m", "messages": messages}).encode(),
                                 {"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"],
                                  "Content-Type": "application/json"})
reply = json.load(urllib.request.urlopen(request, timeout=30))["choices"][0]["message"]["content"]
'''


def need_bwrap() -> None:
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"bubblewrap cannot run here: {problem}")


class Scripted(PolicyClient):
    """The model, scripted: every call gets the same reply."""

    async def generate(self, requests: Sequence[PolicyRequest]) -> list[Completion]:
        return [Completion(REPLY, "stop", "scripted") for _ in requests]

    async def aclose(self) -> None:
        pass


class HostService:
    """A TCP server on the host's 127.0.0.1 that greets whoever connects, and counts them."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            with client:
                client.sendall(b"host service")


@pytest.fixture
def host_service() -> Iterator[HostService]:
    service = HostService()
    yield service
    service.listener.close()


def processes_running(token: str) -> list[int]:
    """Live processes whose command line holds `token`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (FileNotFoundError, NotADirectoryError, ProcessLookupError):
            continue
        if token.encode() in cmdline and state not in (b"Z", b"X"):
            found.append(int(entry.name))
    return found


def task(task_id: str) -> TaskSpec:
    return TaskSpec.model_validate({
        "task_id": task_id, "split": "train", "harness": "chat",
        "prompt": {"messages": [{"role": "user", "content": "Weather in Oslo?"}]},
        "scorer": {"evals": [{"name": "replied"}]},
        "provenance": {"trace_id": f"tr-{task_id}", "format": "openai-chat", "source_task": "s",
                       "cut_message_idx": 1},
    })


def episode(tmp_path: Path, task_id: str, request: str = OPENAI_REQUEST, **proxy: object) -> Episode:
    """One proxy episode of the agent above, scored on whether the scripted reply reached it."""
    (tmp_path / "agent").mkdir(parents=True)
    (tmp_path / "agent" / "agent.py").write_text(textwrap.dedent(AGENT).replace("REQUEST", request.strip()))
    env = {"TEST_MARKER": str(tmp_path / "host" / "marker"), "AGENT_MODE": "eval", **proxy.pop("env", {})}
    command = "python agent.py" if request is OPENAI_REQUEST else "python3 - < agent.py"
    config = HarnessConfig(harness="proxy", proxy={"command": command, "template": "agent",
                                                   "workspaces": "ws", "keep_workspaces": True, "wall_seconds": 60,
                                                   "env": env, **proxy})
    made = HarnessFactory(config, tmp_path)
    scorer = build_scorer(MatchEval(kind="match", name="replied", mode="contains", expected=f"REPLY={REPLY}",
                                    target="metadata.agent_process.stdout"), ScorerContext(tmp_path))
    harness = made.make(task(task_id), f"ep-{task_id}")

    async def go() -> Episode:
        return await harness.run_episode(Scripted(), EpisodeJob(task(task_id)), SamplingParams(),
                                         EpisodeLimits(), scorer, None, f"r-{task_id}")

    try:
        return asyncio.run(go())
    finally:
        made.close()


def report(tmp_path: Path, task_id: str) -> str:
    """What the agent said it did, from its (kept) workspace."""
    return (tmp_path / "ws" / f"ep-{task_id}" / "report.txt").read_text()


def assert_scored(done: Episode) -> None:
    """The agent's call reached the proxy and came back, and the episode was scored on it."""
    assert done.harness_error is None, (done.harness_error, done.metrics.get("proxy/stderr_tail"))
    assert done.stop_reason == "env_done" and done.metrics["proxy/calls"] == 1
    assert done.reward == 1.0 and done.scorer_error is None
    assert done.messages[-1] == {"role": "assistant", "content": REPLY}


def test_the_agent_cannot_write_outside_its_workspace_on_the_host(tmp_path):
    need_bwrap()
    done = episode(tmp_path, "write")
    assert not (tmp_path / "host" / "marker").exists(), "the agent program wrote a file on the host"
    assert_scored(done)


def test_the_agent_sees_no_host_environment_but_what_the_config_gives_it(tmp_path, monkeypatch):
    need_bwrap()
    monkeypatch.setenv("TEST_HOST_SECRET", SECRET)
    done = episode(tmp_path, "secret")
    said = report(tmp_path, "secret")
    assert SECRET not in said and "SECRET=none" in said, "the agent program read the host's environment"
    assert f"HOME={Path.home()}" not in said
    assert "MODE=eval" in said  # what proxy.env names still reaches it
    assert_scored(done)


def test_the_agent_reaches_no_host_port_but_its_proxy(tmp_path, host_service):
    need_bwrap()
    done = episode(tmp_path, "connect", env={"TEST_PORT": str(host_service.port)})
    assert host_service.accepted == 0, "the agent program connected to a port on the host's loopback"
    assert "CONNECT=refused" in report(tmp_path, "connect")
    assert_scored(done)


def test_nothing_the_agent_started_outlives_its_episode(tmp_path):
    need_bwrap()
    token = f"tracegym-test-{uuid.uuid4().hex}"
    try:
        done = episode(tmp_path, "linger", env={"TEST_TOKEN": token}, wall_seconds=5)
        assert processes_running(token) == [], "a process the agent program started outlived its episode"
        assert done.stop_reason == "time_budget" and done.metrics["proxy/killed"] and done.reward == 1.0
    finally:
        for pid in processes_running(token):
            os.kill(pid, signal.SIGKILL)


def test_an_agent_folder_holding_the_workspaces_is_refused(tmp_path):
    (tmp_path / "agent.py").write_text("print('hi')\n")
    config = HarnessConfig(harness="proxy", proxy={"command": "python $TRACEGYM_AGENT_DIR/agent.py",
                                                   "agent_dir": ".", "workspaces": "ws"})
    with pytest.raises(ConfigError, match="holds the workspaces"):
        HarnessFactory(config, tmp_path).make(task("plain"), "ep-0")


def test_without_bubblewrap_the_agent_runs_only_where_running_it_unisolated_is_accepted(tmp_path, monkeypatch,
                                                                                       host_service):
    reason = "bwrap: setting up uid map: Permission denied"
    monkeypatch.setattr(factory, "bwrap_problem", lambda: reason)
    refused = episode(tmp_path / "refused", "connect", request=URLLIB_REQUEST,
                      env={"TEST_PORT": str(host_service.port)})
    assert refused.stop_reason == "harness_error" and reason in refused.harness_error
    assert "allow_unisolated: true" in refused.harness_error
    assert host_service.accepted == 0 and refused.reward is None  # the agent never ran
    with pytest.warns(SandboxIsolationWarning, match="uid map"):
        accepted = episode(tmp_path / "accepted", "plain", request=URLLIB_REQUEST, allow_unisolated=True)
    assert_scored(accepted)
