"""What an exported package runs: the task's own harness and scorer, loaded from the export's data folder.

An attempt is scored as tracegym scores an episode: its replies are played through the task's harness (the replay
answers tool calls from the recording, the shell runs commands in its sandbox) and the task's scorer reads the
resulting trajectory, exactly as the reward gates do (`tracegym.harnesses.gates`). Loading checks what cannot run
in this process (another tracegym version, a proxy task, a label eval that reads the store) and raises
`ExportError` with the fix, so a reward never silently differs from tracegym's.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import tracegym
from tracegym.environments.bundle import HARNESS, TASK_SET, ExportManifest, read_manifest, read_rows
from tracegym.environments.row import ExportRow
from tracegym.episodes.record import Message
from tracegym.errors import ExportError, NotFoundError, TracegymError
from tracegym.evals.scorers.base import Scorer
from tracegym.evals.scorers.trajectory import ScoreResult
from tracegym.harnesses.base import ExternalHarness, Harness, Reply, Reset, Step
from tracegym.harnesses.config import HarnessFactory, load_harness_config
from tracegym.harnesses.gates import ScriptedPolicy
from tracegym.harnesses.runner import EpisodeJob, EpisodeLimits, run_episode
from tracegym.harnesses.taskrun import TaskScorers
from tracegym.models.sampling import SamplingParams
from tracegym.tasks.probes import ProbeReply
from tracegym.tasks.spec import TaskSpec
from tracegym.tasks.taskset import load_task_set

TIME_BUDGET_S = 120.0
"""Wall-clock seconds per scored attempt, as the gates allow a probe."""


class ExportedTasks:
    """The tasks of an export's data folder, each with its harness and scorer."""

    def __init__(self, data: Path | str) -> None:
        self.data = Path(data)
        self.manifest: ExportManifest = read_manifest(self.data)
        require_version(self.manifest)
        self.rows: dict[str, ExportRow] = {r.task_id: r for r in read_rows(self.data)}
        self.task_set = load_task_set(self.data / TASK_SET)
        self.specs: dict[str, TaskSpec] = {t.task_id: t for t in self.task_set.tasks}
        config, _ = load_harness_config(self.data / HARNESS)
        self.harnesses = HarnessFactory(config, self.data)
        self.scorers = TaskScorers(self.task_set, None)
        self._lock = threading.Lock()
        for row in self.rows.values():
            self.scorer(row.task_id)
            if row.harness == "proxy":
                raise ExportError(f"Task {row.task_id} runs in the proxy harness: the team's own agent program does "
                                  "the task, which cannot run inside another trainer. Fix: export with a harness "
                                  "config that runs such tasks elsewhere (run_as: {proxy: chat}), or train them with "
                                  "`tracegym train`.")

    def spec(self, task_id: str) -> TaskSpec:
        if task_id not in self.specs or task_id not in self.rows:
            raise NotFoundError(f"The export of {self.manifest.task_set} has no task {task_id!r}. Fix: pass the "
                                "task_id column of its rows.")
        return self.specs[task_id]

    def scorer(self, task_id: str) -> Scorer:
        """The task's scorer; `ExportError` with the fix when it cannot be built in this process."""
        try:
            with self._lock:
                return self.scorers(self.spec(task_id))
        except TracegymError as e:
            raise ExportError(f"Task {task_id}'s scorer cannot run here: {e} An export has no store: a label eval "
                              "(a recorded production score) cannot score new attempts. Fix: bind the tasks to "
                              "evals that judge the attempt itself, regenerate the task set, and export again.") from e

    def make_harness(self, task_id: str, episode_id: str) -> Harness | ExternalHarness:
        with self._lock:  # the factory makes its workspaces and sandboxes once, on first use
            return self.harnesses.make(self.spec(task_id), episode_id)

    async def score_replies(self, task_id: str, replies: Sequence[dict[str, Any]]) -> ScoreResult:
        """The reward of an attempt made of `replies` (assistant messages, one per model turn): an episode played
        through the task's harness and scored by its scorer. A harness failure is an error result."""
        played = [ProbeReply(str(r.get("content") or ""), tuple(dict(c) for c in r.get("tool_calls") or ()))
                  for r in replies] or [ProbeReply("")]
        harness = self.make_harness(task_id, f"export-{task_id}-{uuid.uuid4().hex[:12]}")
        limits = EpisodeLimits(max_turns=len(played), time_budget_s=TIME_BUDGET_S)
        episode = await run_episode(ScriptedPolicy(played), harness, EpisodeJob(self.spec(task_id)),
                                    SamplingParams(), limits, self.scorer(task_id), "export")
        if episode.harness_error is not None:
            return ScoreResult.failed(f"harness: {episode.harness_error}")
        if episode.reward is None:
            return ScoreResult.failed(episode.scorer_error or "not scored")
        return ScoreResult(episode.reward, dict(episode.scorer_details), components=dict(episode.components),
                           weights=dict(episode.component_weights))

    def score_many(self, task_ids: Sequence[str], attempts: Sequence[Sequence[dict[str, Any]]],
                   threads: int = 8) -> list[ScoreResult]:
        """`score_replies` for each (task, attempt), on a thread pool (sandboxed commands and scorers wait on
        processes, not the CPU); results in input order."""
        if len(task_ids) != len(attempts):
            raise ValueError(f"{len(task_ids)} task ids for {len(attempts)} attempts")

        def one(pair: tuple[str, Sequence[dict[str, Any]]]) -> ScoreResult:
            return asyncio.run(self.score_replies(*pair))

        with ThreadPoolExecutor(max(1, min(threads, len(task_ids)))) as pool:
            return list(pool.map(one, zip(task_ids, attempts, strict=True)))

    def session(self, task_id: str) -> Session:
        return Session(self, task_id)

    def close(self) -> None:
        self.harnesses.close()


class Session:
    """One multi-turn episode of a task driven from outside: the trainer's model replies, the task's harness
    answers (`step`), and the task's scorer scores what was said (`score`)."""

    def __init__(self, tasks: ExportedTasks, task_id: str) -> None:
        harness = tasks.make_harness(task_id, f"export-{task_id}-{uuid.uuid4().hex[:12]}")
        if isinstance(harness, ExternalHarness):
            raise ExportError(f"Task {task_id} runs its own agent program (proxy harness), which a trainer cannot "
                              "step. Fix: run_as: {proxy: chat} in the harness config, and export again.")
        self.tasks, self.task_id, self.harness = tasks, task_id, harness
        self.continuation: list[Message] = []
        self.turn = 0
        self.done = False

    async def start(self) -> Reset:
        return await self.harness.reset(self.tasks.spec(self.task_id))

    async def step(self, text: str, tool_calls: Sequence[dict[str, Any]] = ()) -> Step:
        """The harness's answer to one model reply; the reply (as recorded) and the answer are kept for scoring."""
        step = await self.harness.step(Reply(text, "stop", self.turn, [dict(c) for c in tool_calls]))
        self.continuation += [step.assistant, *step.observations]
        self.turn += 1
        self.done = step.done
        return step

    async def score(self) -> ScoreResult:
        spec = self.tasks.spec(self.task_id)
        trajectory = spec.trajectory(self.continuation, self.harness.workspace,
                                     self.harness.counts.malformed_tool_calls, self.harness.command_runner())
        return await asyncio.to_thread(self.tasks.scorer(self.task_id).score, trajectory)

    async def close(self) -> None:
        await self.harness.close()


def require_version(manifest: ExportManifest) -> None:
    """Refuse to score with another tracegym than the one the export was made with."""
    if manifest.tracegym_version != tracegym.__version__:
        raise ExportError(f"This export of {manifest.task_set} was made with tracegym {manifest.tracegym_version} "
                          f"and is loaded with {tracegym.__version__}: its rewards could differ. Fix: pip install "
                          f"tracegym=={manifest.tracegym_version}, or export the task set again with this tracegym.")
