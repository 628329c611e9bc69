"""Where the trainer's rollouts come from: the `RolloutSource` protocol and its sampler-process implementation.

A rollout source hands the trainer batches of scored groups and takes the trainer's new weights after
every optimizer step. `SyncRollouts` (`tracegym.training.sync_rollouts`) samples in-process with the
current weights (`async.max_staleness: 0`); `AsyncRollouts` runs sampler processes that produce groups
continuously while the trainer trains.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from torch import Tensor

    from tracegym.training.rollouts import RolloutBatch


class RolloutSource(Protocol):
    """What the training loop needs from whatever samples its rollouts."""

    def start(self) -> None:
        """Get ready to sample (build scorers, start processes); errors in the setup surface here."""

    def next_batch(self, n_groups: int, trainer_version: int) -> RolloutBatch:
        """`n_groups` groups sampled by weights at most `max_staleness` versions older than `trainer_version`;
        older ones are dropped and counted in the batch's stats."""

    def publish(self, state_dict: Mapping[str, Tensor], version: int) -> None:
        """The trainer's weights after its step number `version`: later groups are sampled with them."""

    def stats(self) -> dict[str, Any]:
        """Running totals: staleness histogram, drops, sampler throughput, waiting vs working time, deaths."""

    def close(self) -> None:
        """Stop sampling and release every process, thread and file handle."""
