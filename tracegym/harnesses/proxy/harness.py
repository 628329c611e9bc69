"""The proxy harness: a team's unchanged agent is the harness, with the policy behind an OpenAI endpoint.

```yaml
harness: proxy
proxy:
  agent_dir: agent                  # the program's folder, read-only in the sandbox
  command: python "$TRACEGYM_AGENT_DIR/my_agent.py"   # run in the episode's workspace, in its sandbox
  wall_seconds: 300
  env: {AGENT_MODE: eval}
```
Per episode: a fresh workspace (a copy of `template`, if any), a proxy on a Unix socket of the episode's own
(`tracegym.harnesses.proxy.http_server`) answering with the policy (`tracegym.harnesses.proxy.calls`), and the
command, started in the episode's sandbox with OPENAI_BASE_URL pointing at the proxy (through a forwarder on
the sandbox's loopback: `tracegym.harnesses.proxy.channel`), OPENAI_API_KEY set to the episode's own key
(the proxy answers no call without it) and the task in TRACEGYM_TASK_FILE (the TaskSpec as JSON) and
TRACEGYM_MESSAGES_FILE (its prompt as OpenAI chat messages).
The episode ends when the program exits. Its token record holds every conversation (segment) the calls
made, one after the other, each trained as a sample of its own with the episode's reward, and
`metrics["proxy/split"]` says how the episode was split (`tracegym.harnesses.proxy.calls`). Its stored
messages are the conversation the last call extended (the others are in `metrics["proxy/other_segments"]`);
the scorer sees those messages, the workspace, and the program's exit code and output in
`metadata.agent_process` (`stdout`, `stderr`, `exit_code`, `timed_out`).

Stop reasons: `env_done` when the program exits on its own; `time_budget` when it ran out of wall time
(killed, then scored; also when it was killed while waiting for a reply); a limit the proxy enforced
(`max_turns`, `max_tokens`, `context_exceeded`: the call is refused, the program gets `grace_seconds` to
finish, then is scored); `harness_error` when the program exits non-zero or breaks a sandbox limit (unless
`on_nonzero_exit: score`), cannot start, or its client disconnects mid-request within its wall time (the
program is killed); `policy_error` when the policy fails. Errors are not
scored; the run goes on.

The program executes what the model writes, so it is untrusted and never runs on the host: it runs in the
sandbox `sandbox` chooses (as the shell harness's: bubblewrap by default, docker on request; the subprocess
sandbox, which isolates nothing, only with `allow_unisolated: true`), under `limits`, with the sandbox's own
environment (nothing of the host's but what `env` names), no network but its way to its own proxy, and no
files of the host but its workspace and, read-only, `agent_dir`, its task and the system. Ending it ends
everything it started. Command evals that score its workspace run in the same sandbox, under `scoring_limits`.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from tracegym.episodes.record import Episode, StopReason
from tracegym.errors import ConfigError
from tracegym.evals.scorers.base import Scorer
from tracegym.evals.scorers.trajectory import Trajectory
from tracegym.harnesses.base import ExternalHarness
from tracegym.harnesses.policy import PolicyClient
from tracegym.harnesses.proxy.calls import ProxySession
from tracegym.harnesses.proxy.channel import Channel
from tracegym.harnesses.proxy.http_server import ProxyServer, ProxyServerConfig
from tracegym.harnesses.runner import EpisodeJob, EpisodeLimits, sampling_record, score_trajectory
from tracegym.harnesses.sandbox import CommandResult, KillReason, Limits, SandboxChoice, SandboxProvider, Workspaces
from tracegym.harnesses.sandbox.eval_runner import SandboxRunner
from tracegym.harnesses.sandbox.running import RunningCommand
from tracegym.models.sampling import SamplingParams
from tracegym.tasks.spec import TaskSpec

_BYTES_PER_CHAR = 4  # UTF-8's most


class ProxyConfig(SandboxChoice):
    command: str | None = None
    """The agent's shell command (needed for `harness: proxy`), run by bash in the episode's workspace inside its
    sandbox, e.g. `python "$TRACEGYM_AGENT_DIR/agent.py"`. Its `python` is the one tracegym runs on (visible
    read-only there, with its installed packages such as `openai`), unless `env` sets PATH."""
    agent_dir: str | None = None
    """The folder holding the agent program and what it needs (relative to the harness config file): the sandbox
    shows it read-only at its own absolute path, which TRACEGYM_AGENT_DIR names. All of it is visible to the
    agent, so give it a folder of its own, not one holding the workspaces or data. When tracegym runs as root the
    program runs as a uid of its own, so its files must be readable by all. Files the agent may change go in
    `template` instead."""
    wall_seconds: float = Field(600.0, gt=0)
    """Wall-clock seconds the program may run (the run's --time-budget, when shorter, wins)."""
    grace_seconds: float = Field(10.0, ge=0)
    """How long the program may go on after the proxy refused a call for a limit, before it is killed."""
    env: dict[str, str] = {}
    """Environment variables for the program, on top of the sandbox's own minimal ones: nothing of the host's
    environment reaches it otherwise."""
    on_nonzero_exit: Literal["harness_error", "score"] = "harness_error"
    """harness_error: a program that exits non-zero failed (not scored); score: score it like any other."""
    model_name: str = "tracegym-policy"
    """The model id GET /v1/models lists and replies carry (requests may name any model)."""
    template: str | None = None
    """A folder (relative to the harness config file) copied into every workspace, for the program to change."""
    workspaces: str | None = None
    """Where the run's workspaces live; a temporary folder by default."""
    keep_workspaces: bool = False
    """Keep each workspace after its episode is scored (for debugging)."""
    max_output_chars: int = Field(100_000, ge=1000)
    """The end of the program's stdout and stderr kept for scorers, each; older output is dropped, never a reason
    to stop the program."""
    limits: Limits = Limits(cpu_seconds=600, memory_mb=4096, max_processes=256)
    """What the program may use in its sandbox (`network: true` gives it the host's network too). Its wall time is
    `wall_seconds`, and its output is kept as `max_output_chars` say."""
    server: ProxyServerConfig = ProxyServerConfig()
    """What the proxy's HTTP server allows the program: request and reply deadlines, connections, body size."""
    scoring_limits: Limits = Limits()
    """Limits of the command evals run in the workspace (in `sandbox`); their wall time is each eval's timeout_s."""


@dataclass
class ProgramOutcome:
    """How the agent program ended."""

    exit_code: int | None
    """None when it never started; 128+N when signal N ended it."""
    stdout: str
    stderr: str
    timed_out: bool = False
    killed: bool = False
    """Killed: out of time, after a failure, past its grace period, or at a sandbox limit."""
    limit: KillReason | None = None
    """The sandbox limit (cpu_time, memory, ...) that ended the program, if one did."""

    @classmethod
    def of(cls, result: CommandResult, keep_chars: int, stopping: bool) -> ProgramOutcome:
        """The outcome of the sandboxed run; its wall time counts as a time-out only when no proxy limit was hit
        first (the program was then in its grace period)."""
        limit = None if result.killed in (None, "stopped", "wall_time") else result.killed
        return cls(result.exit_code, result.stdout[-keep_chars:], result.stderr[-keep_chars:],
                   result.timed_out and not stopping, result.killed is not None, limit)

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
        self.agent_dir = agent_folder(config, base_dir, workspaces)
        self._deadline = float("inf")
        """time.monotonic() at which the program's wall time runs out, once it started."""

    async def run_episode(self, policy: PolicyClient, job: EpisodeJob, params: SamplingParams,
                          limits: EpisodeLimits, scorer: Scorer | None, model: str | None,
                          rollout_id: str) -> Episode:
        started = time.perf_counter()
        session = ProxySession(policy, params, limits, job.seed, self.config.model_name)
        workspace: Path | None = None
        try:
            workspace = self._workspace()
            outcome = await self._run_program(job.task, workspace, session, limits)
        except Exception as e:  # noqa: BLE001 - a workspace, server or sandbox that cannot start fails this episode
            session.fail("harness_error", f"{type(e).__name__}: {e}")
            outcome = ProgramOutcome(None, "", "")
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

    async def _run_program(self, task: TaskSpec, workspace: Path, session: ProxySession,
                           limits: EpisodeLimits) -> ProgramOutcome:
        wall = min(self.config.wall_seconds, limits.time_budget_s or self.config.wall_seconds)
        # Taken before the sandbox starts its own clock, so a program it kills at its wall time is past this.
        self._deadline = time.monotonic() + wall
        sandbox = self.sandboxes.get()
        server = ProxyServer(session, self.config.server)
        with Channel.open(task) as channel:
            await server.start(channel.socket)
            try:
                channel.hand_over(workspace)
                ro_paths = [channel.folder] + ([self.agent_dir] if self.agent_dir else [])
                running = sandbox.start(channel.command(self.command), workspace, self._limits(wall),
                                        self._environment(task, channel, server), ro_paths=ro_paths)
                result = await self._supervise(running, session)
            finally:
                await server.close()
        return ProgramOutcome.of(result, self.config.max_output_chars, session.stop is not None)

    def _limits(self, wall: float) -> Limits:
        keep = self.config.max_output_chars * _BYTES_PER_CHAR
        return Limits.model_validate({**self.config.limits.model_dump(), "wall_seconds": wall, "output_bytes": keep})

    async def _supervise(self, running: RunningCommand, session: ProxySession) -> CommandResult:
        """Wait for the program to end (the sandbox ends it at its wall time); stop it at once on a failure, or
        past its grace period after the proxy refused a call for a limit."""
        deadline = self._deadline
        ended = asyncio.ensure_future(running.wait())
        try:
            stopping = asyncio.ensure_future(session.stopping.wait())
            await asyncio.wait({ended, stopping}, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if not ended.done() and not session.ended.is_set():
                grace = min(self.config.grace_seconds, max(0.0, deadline - time.monotonic()))
                failed = asyncio.ensure_future(session.ended.wait())
                await asyncio.wait({ended, failed}, timeout=grace, return_when=asyncio.FIRST_COMPLETED)
                failed.cancel()
        finally:
            running.stop()  # a no-op once it ended; otherwise it and all it started are killed
        return await ended

    def _environment(self, task: TaskSpec, channel: Channel, server: ProxyServer) -> dict[str, str]:
        env = {
            **self.config.env,
            "OPENAI_API_KEY": server.api_key,
            "TRACEGYM_MODEL": self.config.model_name, "TRACEGYM_TASK_ID": task.task_id,
            "TRACEGYM_TASK_FILE": str(channel.task_file), "TRACEGYM_MESSAGES_FILE": str(channel.messages_file),
        }
        if self.agent_dir is not None:
            env["TRACEGYM_AGENT_DIR"] = str(self.agent_dir)
        return env

    def _episode(self, session: ProxySession, outcome: ProgramOutcome, job: EpisodeJob, params: SamplingParams,
                 model: str | None, rollout_id: str) -> Episode:
        stop, error = self._stop(session, outcome)
        outcome.timed_out = stop == "time_budget"
        kept = session.last
        record, turns = session.record()
        metrics = {**session.metrics(), "proxy/exit_code": outcome.exit_code, "proxy/timed_out": outcome.timed_out,
                   "proxy/killed": outcome.killed}
        if error is not None and outcome.stderr:
            metrics["proxy/stderr_tail"] = outcome.stderr[-2000:]
        return Episode(
            rollout_id=rollout_id, task_id=job.task.task_id, task_set_id=job.task_set_id, split=job.task.split,
            harness=self.name, sample_idx=job.sample_idx, seed=job.seed, model=model, sampling=sampling_record(params),
            messages=list(kept.messages) if kept else [], n_prompt_messages=kept.n_prompt if kept else 0,
            tokens=record, turns=turns,
            stop_reason=stop, counts=session.counts, harness_error=error, metrics=metrics,
        )

    def _stop(self, session: ProxySession, outcome: ProgramOutcome) -> tuple[StopReason, str | None]:
        """Why the episode ended, and the error when it failed."""
        if self._timed_out(session, outcome):
            return "time_budget", None
        if session.failure is not None:
            reason, text = session.failure
            return reason, text
        if session.stop is not None:
            return session.stop, None
        if outcome.exit_code != 0 and self.config.on_nonzero_exit == "harness_error":
            tail = outcome.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
            if outcome.limit is not None:
                return "harness_error", (f"the agent program broke its sandbox's {outcome.limit} limit (raise it in "
                                         f"proxy.limits if the program needs more): {tail[0][:500]}")
            return "harness_error", f"the agent program exited with code {outcome.exit_code}: {tail[0][:500]}"
        return "env_done", None

    def _timed_out(self, session: ProxySession, outcome: ProgramOutcome) -> bool:
        """Whether the program ran out of wall time, before any limit or failure of its own: a program killed
        while it waited for a reply disconnects then too, which is the time-out, not a harness error."""
        if session.stop is not None:
            return False
        if session.failure is None:
            return outcome.timed_out
        at = session.disconnected_at
        return at is not None and session.failure[0] == "harness_error" and at >= self._deadline

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


def agent_folder(config: ProxyConfig, base_dir: Path, workspaces: Workspaces) -> Path | None:
    """The agent's folder, checked: a folder that holds no workspace (the agent would see the others')."""
    if config.agent_dir is None:
        return None
    folder = (base_dir / config.agent_dir).resolve()
    if not folder.is_dir():
        raise ConfigError(f"proxy.agent_dir {folder} is not a folder. Fix: point agent_dir (relative to the harness "
                          "config file) at the folder that holds the agent program.")
    if workspaces.root.is_relative_to(folder):
        raise ConfigError(f"proxy.agent_dir {folder} holds the workspaces ({workspaces.root}), which every agent "
                          "would then see. Fix: give the agent program a folder of its own, or move proxy.workspaces.")
    return folder


def proxy_workspaces(config: ProxyConfig, base_dir: Path) -> tuple[Workspaces, bool]:
    """The run's workspaces, and whether their root is a temporary folder of the run's own."""
    if config.workspaces is None:
        return Workspaces(Path(tempfile.mkdtemp(prefix="tracegym-proxy-ws-"))), True
    root = Path(config.workspaces)
    return Workspaces(root if root.is_absolute() else base_dir / root), False
