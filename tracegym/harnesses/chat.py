"""The chat harness: conversation only. The model gives one reply to the task's conversation; it is scored.

There is no user simulator, so nothing answers the reply: the reply is the episode.
"""

from __future__ import annotations

from tracegym.harnesses.base import Harness, Reply, Reset, Step
from tracegym.tasks.spec import TaskSpec


class ChatHarness(Harness):
    name = "chat"

    async def reset(self, task: TaskSpec) -> Reset:
        return Reset(task.messages())

    async def step(self, reply: Reply) -> Step:
        return Step({"role": "assistant", "content": reply.text}, done=True, reason="model_done")
