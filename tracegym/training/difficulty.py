"""The difficulty filter: keep the training tasks whose reward varies under the policy GRPO starts from.

Each selected task is sampled `tasks.difficulty.samples` times with the weights of the first GRPO step
(after the warm start), in-process and with the run's sampler settings; a task is kept when its mean reward
lies strictly inside (min_mean, max_mean), and a seeded share (`keep_solved`) of the tasks it already solves
is kept as replay. The per-task means and the kept ids are written to
`RUN_DIR/difficulty.json` before the first GRPO step, and a resumed run reads them back instead of
sampling again with weights that have since changed, so its task order is the uninterrupted run's.
"""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from tracegym.errors import NotFoundError
from tracegym.training.runfolder import DIFFICULTY_FILE

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from tracegym.tasks.spec import TaskSpec
    from tracegym.tasks.taskset import TaskSet
    from tracegym.training.config import DifficultySection, TrainConfig

RECORD = DIFFICULTY_FILE


def filter_tasks(
    config: TrainConfig, tasks: Sequence[TaskSpec], measure: Callable[[], dict[str, Any]]
) -> tuple[list[TaskSpec], dict[str, Any]]:
    """The kept tasks (in their given order) and the record {samples, means, kept, counts}: the run folder's,
    or else `measure()`'s (see `measure`), which is then written there."""
    path = config.run_dir / RECORD
    record = json.loads(path.read_text()) if path.is_file() else None
    if record is None:
        record = measure()
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1))
        tmp.replace(path)
    kept_ids = set(record["kept"])
    kept = [t for t in tasks if t.task_id in kept_ids]
    if not kept:
        raise NotFoundError(
            f"The difficulty filter kept none of {len(tasks)} training tasks ({record['counts']}; see {path}). "
            "Fix: widen the band (tasks.difficulty min_mean, max_mean), warm start longer, or remove "
            "tasks.difficulty."
        )
    return kept, record


def measure(
    config: TrainConfig,
    task_set: TaskSet,
    tasks: Sequence[TaskSpec],
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    eos_token_ids: Sequence[int],
    policy_version: int,
) -> dict[str, Any]:
    """Sample every task `tasks.difficulty.samples` times with `model` (in the sampler precision) and keep the
    tasks whose mean reward lies inside the band."""
    from tracegym.samplers.inprocess import SyncRollouts

    band = config.tasks.difficulty
    assert band is not None
    source = SyncRollouts.with_copy_of(model, config.rollout_plan(), task_set, tasks, tokenizer, eos_token_ids,
                                       policy_version)
    try:
        source.start()
        episodes = source.sample_tasks(tasks, band.samples, label="difficulty")
    finally:
        source.close()
    means = {t.task_id: statistics.fmean(e.reward or 0.0 for e in eps) for t, eps in zip(tasks, episodes,
                                                                                          strict=True)}
    kept = choose(means, band, config.seed)
    counts = {"tasks": len(means), "kept": len(kept),
              "at_or_below_min": sum(m <= band.min_mean for m in means.values()),
              "at_or_above_max": sum(m >= band.max_mean for m in means.values()),
              "kept_solved": sum(means[t] >= band.max_mean for t in kept),
              "episodes": sum(len(eps) for eps in episodes)}
    return {"samples": band.samples, "policy_version": policy_version, "means": means, "kept": kept,
            "counts": counts}


def choose(means: dict[str, float], band: DifficultySection, seed: int) -> list[str]:
    """The task ids inside the band, plus `band.keep_solved` of those at or above its top (a seeded draw),
    in the order of `means`."""
    solved = [task_id for task_id, m in means.items() if m >= band.max_mean]
    replay = set(random.Random(seed).sample(solved, round(band.keep_solved * len(solved))))
    return [task_id for task_id, m in means.items() if band.min_mean < m < band.max_mean or task_id in replay]
