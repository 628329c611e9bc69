"""The held-out split, drawn by group so that no held-out task has a near-twin in training.

Tasks that share a source task (τ-bench task id, SWE-bench instance, session)
form one group, and with `split_by: cluster` so do tasks of one failure
cluster; groups that share a task are joined (union-find). Each group lands in
held-out when a seeded hash of its key falls under the held-out fraction, so
the split is stable as tasks are added and needs no random state.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Literal

SplitBy = Literal["task", "cluster"]


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)  # the smaller key names the group: order-independent


def assign_splits(keys: Sequence[Sequence[str]], heldout_fraction: float, seed: int) -> list[str]:
    """'train' or 'heldout' per task; `keys[i]` are the group keys of task i (all tasks sharing one go together)."""
    uf = _UnionFind()
    for task_keys in keys:
        for k in task_keys[1:]:
            uf.union(task_keys[0], k)
    roots = [uf.find(task_keys[0]) for task_keys in keys]
    groups = sorted(set(roots))
    draw = {g: _unit_hash(f"{seed}\x1f{g}") for g in groups}
    held = {g for g in groups if draw[g] < heldout_fraction}
    if heldout_fraction > 0 and len(groups) >= 2:
        ranked = sorted(groups, key=lambda g: (draw[g], g))
        if not held:
            held = {ranked[0]}  # a requested held-out split is never empty...
        if held == set(groups):
            held.discard(ranked[-1])  # ...and never takes everything
    return ["heldout" if r in held else "train" for r in roots]


def _unit_hash(text: str) -> float:
    """A number in [0, 1) fixed by `text`."""
    return int(hashlib.sha256(text.encode()).hexdigest()[:15], 16) / 16**15
