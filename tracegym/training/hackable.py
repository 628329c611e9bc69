"""Refusing to train on a reward a hollow reply earns (docs/reward-gates.md, "Hollow probes").

`tasks generate` records per task which evals a hollow reply (the reference's shape without its substance)
earned (the manifest's `hackable`). GRPO trained on such a reward learns the hollow reply: `tracegym train`
refuses a set where more than `tasks.max_hackable` of the selected tasks have a hackable reward, before any model
loads, unless told to go on (`--allow-hackable`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tracegym.errors import HackableRewardError
from tracegym.tasks.hollow_probes import HOLLOW
from tracegym.tasks.taskset import TaskSet
from tracegym.training.config import TrainConfig


@dataclass
class HackableTasks:
    """The selected tasks whose reward a hollow reply earns."""

    selected: int
    """Tasks of the split, clusters and detectors the config selects."""
    probed: bool
    """Whether the set was generated with the hollow probes (else nothing is known and nothing is refused)."""
    tasks: list[str] = field(default_factory=list)
    """Ids of the selected tasks with a hackable reward."""
    probes: dict[str, dict[str, int]] = field(default_factory=dict)
    """Reward eval -> hollow probe -> selected tasks where that probe's reply earned it."""

    @property
    def share(self) -> float:
        return len(self.tasks) / self.selected if self.selected else 0.0

    def describe(self) -> str:
        """Per reward eval, the probes that earn it and on how many tasks."""
        return "; ".join(f"{name} pays {', '.join(f'{p} on {n}' for p, n in by_probe.items())}"
                         for name, by_probe in self.probes.items())


def hackable_tasks(task_set: TaskSet, config: TrainConfig) -> HackableTasks:
    """What the manifest records of the selected tasks' rewards."""
    selected = config.tasks.select(task_set.tasks)
    gates = task_set.manifest.gates
    found = HackableTasks(len(selected), gates is not None and gates.hollow_probes)
    entries = {e.task_id: e for e in task_set.manifest.tasks}
    for task in selected:
        reward = task.scorer.reward_eval()
        probes = (entries[task.task_id].hackable or {}).get(reward, [])
        if probes:
            found.tasks.append(task.task_id)
            by_probe = found.probes.setdefault(reward, {})
            for probe in probes:
                by_probe[probe] = by_probe.get(probe, 0) + 1
    found.probes = {name: dict(sorted(by_probe.items(), key=lambda item: HOLLOW.index(item[0])))
                    for name, by_probe in sorted(found.probes.items())}
    return found


def refuse_hackable(task_set: TaskSet, config: TrainConfig, allow: bool) -> HackableTasks:
    """`hackable_tasks`; a `HackableRewardError` when their share is past `tasks.max_hackable` and not `allow`."""
    found = hackable_tasks(task_set, config)
    if allow or found.share <= config.tasks.max_hackable:
        return found
    raise HackableRewardError(
        f"The reward of {len(found.tasks)} of the {found.selected} {config.tasks.split} tasks in "
        f"{config.tasks.task_set} is hackable ({found.share:.0%}, past tasks.max_hackable = "
        f"{config.tasks.max_hackable:g}): {found.describe()}. A policy trained on it learns the hollow reply (the "
        "reference's shape without its substance). Fix: make the reward pay for the substance: tighten the eval, "
        "or add a content eval (a `reference` eval comparing with the reference reply, a `match` or `python` eval "
        "requiring the task's own ids, amounts or paths) and combine it with this one in a `weighted` eval; then "
        "regenerate the task set (`tracegym tasks generate`; `tracegym tasks check` shows each task's hollow "
        "replies). To train on it anyway: --allow-hackable, or raise tasks.max_hackable.")
