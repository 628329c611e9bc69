"""The server side of an OpenEnv export: an OpenEnv `Environment` whose episodes run in the task's tracegym harness.

`reset(task_id=...)` (or `seed`: the seed-th task, in row order) starts an episode of a task and returns its
prompt and tools; each `step(TracegymAction)` is one model reply, answered by the harness (a replay task's tool
calls from the recording, a tools task's from its functions); when the harness ends the episode (the model
answered, a terminal tool) or after `max_turns` replies, the task's tracegym scorer scores what was said and the
observation carries the reward. A harness failure ends the episode without a reward and with the error, as it does
in tracegym. Episodes run on the shared `ExportedTasks` of the export's data folder (`tracegym.environments.runtime`),
each session with its own harness, driven on an event loop of its own.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from fastapi import FastAPI
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import State

from tracegym.environments.openenv_types import TracegymAction, TracegymObservation
from tracegym.environments.runtime import ExportedTasks, Session
from tracegym.errors import NotFoundError
from tracegym.harnesses.runner import EpisodeLimits

MAX_TURNS = EpisodeLimits().max_turns
"""Model replies per episode, as tracegym's runner allows by default."""
_T = TypeVar("_T")


class TracegymEnvironment(Environment[TracegymAction, TracegymObservation, State]):
    """One session's episodes of the exported tasks."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session has its own harness (workspace, sandbox)

    def __init__(self, tasks: ExportedTasks, max_turns: int = MAX_TURNS) -> None:
        super().__init__()
        self.tasks, self.max_turns = tasks, max_turns
        self.order = sorted(tasks.rows)
        self.session: Session | None = None
        self._state = State(episode_id=None, step_count=0)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="tracegym-openenv", daemon=True)
        self._thread.start()

    def _run(self, work: Coroutine[Any, Any, _T]) -> _T:
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    def reset(self, seed: int | None = None, episode_id: str | None = None, task_id: str | None = None,
              **kwargs: Any) -> TracegymObservation:
        """Start an episode of `task_id` (else the task `seed` picks, else the first); its prompt and tools."""
        self._end()
        if task_id is None:
            task_id = self.order[(seed or 0) % len(self.order)]
        if task_id not in self.tasks.rows:
            raise NotFoundError(f"No task {task_id!r} in this export of {self.tasks.manifest.task_set}. Fix: reset "
                                "with a task_id of its rows (tracegym_data/rows.jsonl).")
        self.session = self.tasks.session(task_id)
        start = self._run(self.session.start())
        self._state = State(episode_id=episode_id or f"{task_id}-{id(self.session)}", step_count=0, task_id=task_id)
        return self._observation(messages=[dict(m) for m in start.messages], tools=list(start.tools or []))

    def step(self, action: TracegymAction, timeout_s: float | None = None, **kwargs: Any) -> TracegymObservation:
        """The harness's answer to one reply; with the reward once the episode is over."""
        session = self.session
        if session is None or session.done:
            raise RuntimeError("No episode is running: reset first (an episode ends when its observation is done).")
        self._state.step_count += 1
        try:
            step = self._run(session.step(action.content, action.tool_calls))
        except Exception as e:  # noqa: BLE001 - the environment failed: the episode ends unscored, as in tracegym
            session.done = True
            self._end()
            return self._observation(done=True, error=f"harness: {type(e).__name__}: {e}")
        messages = [dict(m) for m in step.observations]
        if not step.done and session.turn < self.max_turns:
            return self._observation(messages=messages)
        session.done = True
        result = self._run(session.score())
        self._end()
        return self._observation(messages=messages, done=True, reward=result.reward,
                                 scorer_details=dict(result.details), error=result.error)

    def _observation(self, **fields: Any) -> TracegymObservation:
        task_id = str(self._state.task_id) if getattr(self._state, "task_id", None) else ""
        row = self.tasks.rows.get(task_id)
        return TracegymObservation(task_id=task_id, cluster_id=row.cluster_id if row else None, **fields)

    def _end(self) -> None:
        if self.session is not None:
            self._run(self.session.close())
        self.session = None

    @property
    def state(self) -> State:
        return self._state

    def close(self) -> None:
        self._end()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)


def make_app(data: Path | str, max_turns: int = MAX_TURNS, max_sessions: int = 8) -> FastAPI:
    """The OpenEnv server app over an export's data folder (the tasks and scorers are loaded, and checked, now)."""
    tasks = ExportedTasks(data)
    return create_app(lambda: TracegymEnvironment(tasks, max_turns), TracegymAction, TracegymObservation,
                      env_name=f"tracegym-{tasks.manifest.task_set}", max_concurrent_envs=max_sessions)
