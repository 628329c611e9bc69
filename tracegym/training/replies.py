"""What the policy wrote, per failure cluster and GRPO step: hollow replies, reply length and diversity.

Over the episodes `cluster/<id>/reward` averages (tracegym/training/cluster_reward.py: the scored episodes of every
group a step took fresh), each GRPO step stores per cluster

    cluster/<id>/hollow               share of episodes any hollow-reply detector flagged
    cluster/<id>/hollow_<detector>    share each detector flagged (content_free, invented_tool_output, deflection)
    cluster/<id>/reply_tokens         mean model tokens per episode (every turn's completion tokens)
    cluster/<id>/distinct             distinct replies per group (distinct episode texts / the group's episodes),
                                      averaged over the cluster's groups

and the same over every cluster as `replies/hollow`, `replies/hollow_<detector>`, `replies/tokens` and
`replies/distinct`. An episode is flagged by a detector when any of its replies is, judged against the messages
before that reply (tracegym/evals/scorers/hollow.py). Two episodes are the same reply when the model wrote the same
text and tool calls in every turn. A group whose replies are all alike has no GRPO signal; a cluster whose distinct
share falls toward 1 / group size has collapsed onto one reply.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tracegym.evals.scorers.hollow import DETECTORS, episode_findings, recorded_keys
from tracegym.training.cluster_reward import PREFIX

if TYPE_CHECKING:
    from tracegym.episodes.record import Episode
    from tracegym.samplers.rollouts import RolloutBatch, RolloutGroup
    from tracegym.tasks.spec import TaskSpec

KnownKeys = Mapping[str, frozenset[str]]
"""Task id -> the keys of the JSON results its source trace recorded (`task_keys`)."""

ANY = "hollow"
"""The field of the share flagged by any detector; each detector's share is `hollow_<detector>`."""
FIELDS: tuple[str, ...] = (ANY, *(f"hollow_{d}" for d in DETECTORS), "reply_tokens", "distinct")


@dataclass
class ClusterReplies:
    """One cluster's episodes in one step, as the monitor counts them."""

    episodes: int = 0
    flagged: dict[str, int] = field(default_factory=dict)
    """Episodes flagged, by detector, and under `hollow` by any."""
    tokens: list[int] = field(default_factory=list)
    distinct: list[float] = field(default_factory=list)
    """Per group: distinct replies / episodes."""
    example: str | None = None
    """The flagged episode with the highest reward (the first such), by rollout id."""
    example_reward: float = -math.inf

    def share(self, name: str = ANY) -> float:
        return self.flagged.get(name, 0) / self.episodes if self.episodes else 0.0


def task_keys(task: TaskSpec) -> frozenset[str]:
    """The keys of the JSON results the task's source trace recorded, before and after its cut: what a reply that
    invents a tool's answer writes."""
    return recorded_keys(call.result for call in task.replay)


def hollow_findings(messages: Sequence[Mapping[str, Any]], n_prompt: int,
                    recorded_results: Iterable[str | None] = ()) -> dict[str, str]:
    """The detectors that flag any reply of one stored episode, each with its first such reply's reason
    (`recorded_results`: its task's replay results, as stored in the task's spec)."""
    return episode_findings(messages, n_prompt, recorded_keys(recorded_results))


def reply_text(episode: Episode) -> str:
    """What the model wrote in an episode: every assistant message's text and tool calls, as one string."""
    return json.dumps([[m.get("content"), m.get("tool_calls")] for m in episode.continuation
                       if m.get("role") == "assistant"], sort_keys=True, default=str)


def _add_group(figures: ClusterReplies, episodes: list[Episode], known_keys: frozenset[str]) -> None:
    figures.distinct.append(len({reply_text(e) for e in episodes}) / len(episodes))
    for episode in episodes:
        figures.episodes += 1
        if episode.tokens_out is not None:
            figures.tokens.append(episode.tokens_out)
        found = episode_findings(episode.messages, episode.n_prompt_messages, known_keys)
        for name in (*found, ANY) if found else ():
            figures.flagged[name] = figures.flagged.get(name, 0) + 1
        reward = float(episode.reward or 0.0)
        if found and reward > figures.example_reward:
            figures.example, figures.example_reward = episode.rollout_id, reward


def cluster_replies(groups: Iterable[RolloutGroup], cluster_of: Mapping[str, str],
                    known_keys: KnownKeys) -> dict[str, ClusterReplies]:
    """Per cluster with a scored episode among `groups`: the figures of its scored episodes."""
    out: dict[str, ClusterReplies] = {}
    for group in groups:
        scored = [e for e in group.episodes if e.reward is not None]
        if scored:
            figures = out.setdefault(cluster_of[group.task_id], ClusterReplies())
            _add_group(figures, scored, known_keys.get(group.task_id, frozenset()))
    return dict(sorted(out.items()))


def batch_cluster_replies(batch: RolloutBatch, cluster_of: Mapping[str, str],
                          known_keys: KnownKeys) -> dict[str, ClusterReplies]:
    """`cluster_replies` over the groups a step took fresh, as `batch_cluster_rewards` counts them."""
    return cluster_replies([*batch.groups, *batch.set_aside], cluster_of, known_keys)


def _figures(replies: ClusterReplies) -> dict[str, float]:
    out = {ANY: replies.share()}
    out.update({f"hollow_{d}": replies.share(d) for d in DETECTORS})
    if replies.tokens:
        out["reply_tokens"] = math.fsum(replies.tokens) / len(replies.tokens)
    out["distinct"] = math.fsum(replies.distinct) / len(replies.distinct)
    return out


def replies_metrics(figures: Mapping[str, ClusterReplies]) -> dict[str, float]:
    """The metrics of one step's `cluster_replies`: per cluster, and over all of them (`replies/...`)."""
    out: dict[str, float] = {}
    for cluster, replies in figures.items():
        out.update({f"{PREFIX}{cluster}/{name}": value for name, value in _figures(replies).items()})
    if figures:
        total = ClusterReplies()
        for replies in figures.values():
            total.episodes += replies.episodes
            total.tokens += replies.tokens
            total.distinct += replies.distinct
            for name, n in replies.flagged.items():
                total.flagged[name] = total.flagged.get(name, 0) + n
        overall = _figures(total)
        out.update({f"replies/{name.removeprefix('reply_')}": value for name, value in overall.items()})
    return out
