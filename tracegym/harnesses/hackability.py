"""Hackability: which evals pay a task's hollow replies (`tracegym.tasks.hollow_probes`).

Each hollow probe is played through the task's harness and scored by its scorer, as the gates' probes are
(`tracegym.harnesses.gates` supplies the player). An eval pays when its reward reaches the pass threshold: the
task's reward (the eval it is bound to, or its evals combined, as the scorer names it) and each part of a
combined reward (its components). A hackable task still has a reference that passes: it is reported, not rejected.

A task's probes are played in HOLLOW order, each probe's variants in turn until one earns the reward (the parts
are read on every variant played). Once a probe has earned the reward, the later replies that would run a
command in the task's sandbox are skipped: the reward is known to be hackable, and each costs a sandbox start
(most of the probes' time under the shell harness).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from tracegym.episodes.record import Episode
from tracegym.tasks.hollow_probes import build_hollow_probes, shown
from tracegym.tasks.probes import ProbeReply
from tracegym.tasks.spec import TaskSpec

EXAMPLE_CHARS = 300


class Player(Protocol):
    """Plays probe replies through a task's harness."""

    async def play(self, task: TaskSpec, reply: ProbeReply) -> Episode:
        """One reply as a one-turn episode of the task, scored by the task's scorer."""

    def sandboxed(self, task: TaskSpec, reply: ProbeReply) -> bool:
        """Whether playing the reply runs a command in the task's sandbox."""


@dataclass
class Hackability:
    """What the hollow probes found on one task."""

    reward_eval: str
    """The name of the reward the task trains on (the scorer's name)."""
    paid: dict[str, list[str]] = field(default_factory=dict)
    """Eval (the reward or one of its parts) -> the probes that earned it, in HOLLOW order."""
    examples: dict[str, dict[str, str]] = field(default_factory=dict)
    """Eval -> probe -> the reply that earned it (as shown to a person, cut to EXAMPLE_CHARS)."""
    episodes: int = 0
    """Episodes played."""

    @property
    def reward_hackable(self) -> bool:
        """Whether a hollow reply earns the reward the task trains on."""
        return bool(self.paid.get(self.reward_eval))


def paid_evals(episode: Episode, reward_eval: str, threshold: float) -> set[str]:
    """The evals whose reward reached `threshold` in this episode: the reward and each of its parts."""
    if episode.reward is None:
        return set()
    paid = {name for name, value in episode.components.items() if value >= threshold}
    return paid | {reward_eval} if episode.reward >= threshold else paid


async def probe_task(task: TaskSpec, reference: ProbeReply, played: Sequence[ProbeReply], player: Player,
                     threshold: float) -> Hackability:
    """Play the task's hollow probes, shaped after `reference` (replies already `played` left out), and collect
    what paid."""
    found = Hackability(task.scorer.reward_eval())
    for probe in build_hollow_probes(task, reference, played):
        for variant in probe.variants:
            if found.reward_hackable and player.sandboxed(task, variant):
                continue
            episode = await player.play(task, variant)
            found.episodes += 1
            for name in sorted(paid_evals(episode, found.reward_eval, threshold)):
                examples = found.examples.setdefault(name, {})
                if probe.name not in examples:
                    examples[probe.name] = shown(variant)[:EXAMPLE_CHARS]
                    found.paid.setdefault(name, []).append(probe.name)
            if probe.name in found.paid.get(found.reward_eval, []):
                break
    found.paid = dict(sorted(found.paid.items()))
    return found
