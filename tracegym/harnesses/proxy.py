"""The proxy harness: a team's unchanged agent is the harness, with the policy behind an OpenAI endpoint.

```yaml
harness: proxy
proxy:
  command: python my_agent.py       # run in the episode's workspace, through the shell
  wall_seconds: 300
  env: {AGENT_MODE: eval}
```
Per episode: a fresh workspace (a copy of `template`, if any), a proxy on a free port of 127.0.0.1
(`tracegym.harnesses.proxy_http`) answering with the policy (`tracegym.harnesses.proxy_session`), and the
command, started with OPENAI_BASE_URL pointing at the proxy, OPENAI_API_KEY set to the episode's own key
(the proxy answers no call without it) and the task in TRACEGYM_TASK_FILE (the TaskSpec as JSON) and
TRACEGYM_MESSAGES_FILE (its prompt as OpenAI chat messages).
The episode ends when the program exits. Its stored conversation and token record are those of the
segment the last call extended; the scorer sees that conversation, the workspace, and the program's exit
code and output in `metadata.agent_process` (`stdout`, `stderr`, `exit_code`, `timed_out`).

Stop reasons: `env_done` when the program exits on its own; `time_budget` when it ran out of wall time
(killed, then scored); a limit the proxy enforced (`max_turns`, `max_tokens`, `context_exceeded`: the call
is refused, the program gets `grace_seconds` to finish, then is scored); `harness_error` when the program
exits non-zero (unless `on_nonzero_exit: score`), cannot start, or its client disconnects mid-request
(the program is killed); `policy_error` when the policy fails. Errors are not scored; the run goes on.

The program runs as a plain child process in its own process group (killed as a group), not in the
shell harness's sandbox: it must reach the proxy on the host's loopback. Command evals that score its
workspace still run sandboxed, in the sandbox `sandbox` chooses (as the shell harness's), under
`scoring_limits`: what the program wrote there is the model's work, and never runs on the host.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from tracegym.errors import ConfigError
from tracegym.evals.scorers.base import Scorer
from tracegym.evals.trajectory import Trajectory
from tracegym.harnesses.base import ExternalHarness
from tracegym.harnesses.episode import Episode, StopReason
from tracegym.harnesses.policy import PolicyClient
from tracegym.harnesses.proxy_http import ProxyServer, ProxyServerConfig
from tracegym.harnesses.proxy_session import ProxySession
from tracegym.harnesses.runner import EpisodeJob, EpisodeLimits, sampling_record, score_trajectory
from tracegym.harnesses.sandbox import Limits, SandboxChoice, SandboxProvider, Workspaces
from tracegym.harnesses.sandbox.scoring import SandboxRunner
from tracegym.models.sampling import SamplingParams
from tracegym.tasks.spec import TaskSpec

_OUTPUT_CHUNK = 1 << 16
_DRAIN_SECONDS = 5.0


class ProxyConfig(SandboxChoice):
    command: str | None = None
    """The agent's shell command, run in the episode's workspace (needed for `harness: proxy`)."""
    wall_seconds: float = Field(600.0, gt=0)
    """Wall-clock seconds the program may run (the run's --time-budget, when shorter, wins)."""
    grace_seconds: float = Field(10.0, ge=0)
    """How long the program may go on after the proxy refused a call for a limit, before it is killed."""
    env: dict[str, str] = {}
    """Extra environment variables for the program."""
    on_nonzero_exit: Literal["harness_error", "score"] = "harness_error"
    """harness_error: a program that exits non-zero failed (not scored); score: score it like any other."""
    model_name: str = "tracegym-policy"
    """The model id GET /v1/models lists and replies carry (requests may name any model)."""
    template: str | None = None
    """A folder (relative to the harness config file) copied into every workspace."""
    workspaces: str | None = None
    """Where the run's workspaces live; a temporary folder by default."""
    keep_workspaces: bool = False
    """Keep each workspace after its episode is scored (for debugging)."""
    max_output_chars: int = Field(100_000, ge=1000)
    """The end of the program's stdout and stderr kept for scorers, each."""
    server: ProxyServerConfig = ProxyServerConfig()
    """What the proxy's HTTP server allows the program: request and reply deadlines, connections, body size."""
    scoring_limits: Limits = Limits()
    """Limits of the command evals run in the workspace (in `sandbox`); their wall time is each eval's timeout_s."""


@dataclass
class ProgramOutcome:
    """How the agent program ended."""

    exit_code: int | None
    """None when it never started."""
    stdout: str
    stderr: str
    timed_out: bool = False
    killed: bool = False
    """Killed by the harness: out of time, after a failure, or past its grace period."""

    def as_metadata(self) -> dict[str, object]:
        return {"exit_code": self.exit_code, "stdout": self.stdout, "stderr": self.stderr,
                "timed_out": self.timed_out}


class ProxyHarness(ExternalHarness):
    name = "proxy"

    def __init__(self, config: ProxyConfig, workspaces: Workspaces, episode_id: str, base_dir: Path,
                 sandboxes: SandboxProvider) -> None:
        if not config.command:
            raise ConfigError("the proxy harness has no command to run. Fix: set proxy.command in the harness "
                              "config (--harness-config), e.g. `command: python my_agent.py`.")
        self.command: str = config.command
        self.config = config
        self.workspaces = workspaces
        self.episode_id = episode_id
        self.base_dir = base_dir
        self.sandboxes = sandboxes

    async def run_episode(self, policy: PolicyClient, job: EpisodeJob, params: SamplingParams,
                          limits: EpisodeLimits, scorer: Scorer | None, model: str | None,
                          rollout_id: str) -> Episode:
        started = time.perf_counter()
        session = ProxySession(policy, params, limits, job.seed, self.config.model_name)
        server = ProxyServer(session, self.config.server)
        workspace: Path | None = None
        try:
            workspace = self._workspace()
            await server.start()
            outcome = await self._run_program(job.task, workspace, server, session, limits)
        except Exception as e:  # noqa: BLE001 - a workspace or server that cannot start fails this episode only
            session.fail("harness_error", f"{type(e).__name__}: {e}")
            outcome = ProgramOutcome(None, "", "")
        finally:
            await server.close()
        episode = self._episode(session, outcome, job, params, model, rollout_id)
        try:
            if episode.harness_error is None and scorer is not None:
                await score_trajectory(episode, self._trajectory(episode, job.task, workspace, outcome), scorer)
        finally:
            if workspace is not None and not self.config.keep_workspaces:
                self._remove(workspace, episode)
        episode.latency_s = time.perf_counter() - started
        return episode

    def _remove(self, workspace: Path, episode: Episode) -> None:
        try:
            self.workspaces.remove(workspace)
        except Exception as e:  # noqa: BLE001 - the episode is complete; a failed cleanup is noted, not fatal
            episode.metrics["harness/close_error"] = f"{type(e).__name__}: {e}"

    def _workspace(self) -> Path:
        template = self.base_dir / self.config.template if self.config.template else None
        return self.workspaces.create(self.episode_id, template)

    async def _run_program(self, task: TaskSpec, workspace: Path, server: ProxyServer, session: ProxySession,
                           limits: EpisodeLimits) -> ProgramOutcome:
        wall = min(self.config.wall_seconds, limits.time_budget_s or self.config.wall_seconds)
        with tempfile.TemporaryDirectory(prefix="tracegym-proxy-task-") as folder:
            env = self._environment(task, Path(folder), server)
            process = await asyncio.create_subprocess_shell(
                self.command, cwd=workspace, env=env, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
            outputs = [_Tail(stream, self.config.max_output_chars) for stream in (process.stdout, process.stderr)]
            readers = [asyncio.ensure_future(tail.read()) for tail in outputs]
            try:
                timed_out, killed = await self._supervise(process, session, wall)
            finally:
                _kill_group(process)  # whatever it left running in its group goes too
                await process.wait()
                # A process that left the group may hold the pipes open: stop reading after a while.
                _, pending = await asyncio.wait(readers, timeout=_DRAIN_SECONDS)
                for reader in pending:
                    reader.cancel()
        return ProgramOutcome(process.returncode, outputs[0].text(), outputs[1].text(), timed_out, killed)

    async def _supervise(self, process: asyncio.subprocess.Process, session: ProxySession,
                         wall: float) -> tuple[bool, bool]:
        """Wait for the program to exit; kill it on a failure, past its grace period, or out of time.
        Returns (timed_out, killed)."""
        deadline = time.monotonic() + wall
        exited = asyncio.ensure_future(process.wait())
        try:
            stopping = asyncio.ensure_future(session.stopping.wait())
            await asyncio.wait({exited, stopping}, timeout=wall, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if not exited.done() and session.stopping.is_set() and not session.ended.is_set():
                grace = min(self.config.grace_seconds, max(0.0, deadline - time.monotonic()))
                ended = asyncio.ensure_future(session.ended.wait())
                await asyncio.wait({exited, ended}, timeout=grace, return_when=asyncio.FIRST_COMPLETED)
                ended.cancel()
            if exited.done():
                return False, False
            _kill_group(process)
            return not session.stopping.is_set(), True
        finally:
            exited.cancel()

    def _environment(self, task: TaskSpec, folder: Path, server: ProxyServer) -> dict[str, str]:
        task_file, messages_file = folder / "task.json", folder / "messages.json"
        task_file.write_text(task.model_dump_json(exclude_none=True), encoding="utf-8")
        messages_file.write_text(json.dumps(task.messages(), ensure_ascii=False), encoding="utf-8")
        return {
            **os.environ, **self.config.env,
            "OPENAI_BASE_URL": server.base_url, "OPENAI_API_BASE": server.base_url, "OPENAI_API_KEY": server.api_key,
            "TRACEGYM_MODEL": self.config.model_name, "TRACEGYM_TASK_ID": task.task_id,
            "TRACEGYM_TASK_FILE": str(task_file), "TRACEGYM_MESSAGES_FILE": str(messages_file),
        }

    def _episode(self, session: ProxySession, outcome: ProgramOutcome, job: EpisodeJob, params: SamplingParams,
                 model: str | None, rollout_id: str) -> Episode:
        stop, error = self._stop(session, outcome)
        kept = session.last
        metrics = {**session.metrics(), "proxy/exit_code": outcome.exit_code, "proxy/timed_out": outcome.timed_out,
                   "proxy/killed": outcome.killed}
        if error is not None and outcome.stderr:
            metrics["proxy/stderr_tail"] = outcome.stderr[-2000:]
        return Episode(
            rollout_id=rollout_id, task_id=job.task.task_id, task_set_id=job.task_set_id, split=job.task.split,
            harness=self.name, sample_idx=job.sample_idx, seed=job.seed, model=model, sampling=sampling_record(params),
            messages=list(kept.messages) if kept else [], n_prompt_messages=kept.n_prompt if kept else 0,
            tokens=kept.token_record() if kept else None, turns=list(kept.turns) if kept else [],
            stop_reason=stop, counts=session.counts, harness_error=error, metrics=metrics,
        )

    def _stop(self, session: ProxySession, outcome: ProgramOutcome) -> tuple[StopReason, str | None]:
        """Why the episode ended, and the error when it failed."""
        if session.failure is not None:
            reason, text = session.failure
            return reason, text
        if session.stop is not None:
            return session.stop, None
        if outcome.timed_out:
            return "time_budget", None
        if outcome.exit_code != 0 and self.config.on_nonzero_exit == "harness_error":
            tail = outcome.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
            return "harness_error", f"the agent program exited with code {outcome.exit_code}: {tail[0][:500]}"
        return "env_done", None

    def _trajectory(self, episode: Episode, task: TaskSpec, workspace: Path | None,
                    outcome: ProgramOutcome) -> Trajectory:
        answer = next((m["content"] for m in reversed(episode.continuation)
                       if m.get("role") == "assistant" and isinstance(m.get("content"), str) and m["content"].strip()),
                      None)
        metadata = {**task.metadata, "agent_process": outcome.as_metadata()}
        runner = None if workspace is None else SandboxRunner(self.sandboxes.get, workspace, self.config.scoring_limits,
                                                              self.config.allow_unisolated)
        return Trajectory(list(episode.messages), answer, workspace, metadata, task.provenance.trace_id, task.task_id,
                          episode.counts.malformed_tool_calls, episode.n_prompt_messages, task.prior_calls(), runner)


def proxy_workspaces(config: ProxyConfig, base_dir: Path) -> tuple[Workspaces, bool]:
    """The run's workspaces, and whether their root is a temporary folder of the run's own."""
    if config.workspaces is None:
        return Workspaces(Path(tempfile.mkdtemp(prefix="tracegym-proxy-ws-"))), True
    root = Path(config.workspaces)
    return Workspaces(root if root.is_absolute() else base_dir / root), False


def _kill_group(process: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone already


class _Tail:
    """The last characters of an output stream, read until it closes."""

    def __init__(self, stream: asyncio.StreamReader | None, keep: int) -> None:
        self.stream, self.keep = stream, keep
        self.data = bytearray()

    async def read(self) -> None:
        if self.stream is None:
            return
        while chunk := await self.stream.read(_OUTPUT_CHUNK):
            self.data += chunk
            if len(self.data) > 4 * self.keep:  # bytes; UTF-8 takes at most 4 per character
                del self.data[: len(self.data) - 4 * self.keep]

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")[-self.keep:]
