"""What a set of episodes says: per task and overall rewards, errors, stop reasons, replay and tool-call rates."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from tracegym.episodes.record import Episode


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def task_row(task_id: str, episodes: Sequence[Episode]) -> dict[str, Any]:
    """One task's line: mean reward over its scored samples, errors, how episodes stopped."""
    rewards = [e.reward for e in episodes if e.reward is not None]
    stops = Counter(e.stop_reason for e in episodes)
    return {
        "task_id": task_id,
        "harness": episodes[0].harness,
        "samples": len(episodes),
        "scored": len(rewards),
        "mean_reward": _mean(rewards),
        "harness_errors": sum(e.harness_error is not None for e in episodes),
        "scorer_errors": sum(e.scorer_error is not None for e in episodes),
        "off_path": sum(e.left_recorded_path for e in episodes),
        "stops": ", ".join(f"{reason}:{n}" for reason, n in stops.most_common()),
    }


def summarize(episodes: Sequence[Episode]) -> dict[str, Any]:
    """Per-task rows and overall figures; rates are None when nothing was there to count."""
    by_task: dict[str, list[Episode]] = {}
    for e in episodes:
        by_task.setdefault(e.task_id, []).append(e)
    rewards = [e.reward for e in episodes if e.reward is not None]
    replay = [e for e in episodes if e.harness == "replay" and e.harness_error is None]
    calls = sum(e.counts.tool_calls for e in episodes)
    malformed = sum(e.counts.malformed_tool_calls for e in episodes)
    turns = [len(e.turns) for e in episodes]
    overall = {
        "episodes": len(episodes),
        "tasks": len(by_task),
        "scored": len(rewards),
        "mean_reward": _mean(rewards),
        "harness_errors": sum(e.harness_error is not None for e in episodes),
        "scorer_errors": sum(e.scorer_error is not None for e in episodes),
        "replay_episodes": len(replay),
        "replay_off_path_rate": _rate(sum(e.left_recorded_path for e in replay), len(replay)),
        "replay_hits": sum(e.counts.replay_hits for e in replay),
        "replay_misses": sum(e.counts.replay_misses for e in replay),
        "tool_calls": calls,
        "malformed_tool_calls": malformed,
        "malformed_tool_call_rate": _rate(malformed, calls + malformed),
        "mean_turns": _mean([float(t) for t in turns]),
        "tokens_out": sum(e.tokens_out or 0 for e in episodes),
        "stop_reasons": dict(Counter(e.stop_reason for e in episodes).most_common()),
    }
    return {"overall": overall, "tasks": [task_row(t, eps) for t, eps in by_task.items()]}
