"""The GRPO phase's learning-rate schedule: a pure function of the step, so a resumed run needs no state.

`optim.lr_scheduler` picks the shape after `optim.lr_warmup_steps` steps of linear warm-up (the first step at
lr/W, step W at the full lr, as Megatron and verl ramp; transformers' ramp starts its first step at 0):

- constant: `optim.lr` (the default, and the Modal/Miles recipe's setting);
- linear: from `optim.lr` down towards `min_lr_ratio * lr` (transformers' `get_linear_schedule_with_warmup`);
- cosine: half a cosine from `optim.lr` down towards `min_lr_ratio * lr` (verl's `warmup_style: cosine`).

A decay reaches its floor only at step `total`, one past the last, as in transformers, so the last step still
learns. Steps count rollout batches: with `grpo.optimizer_steps` > 1, one batch's optimizer steps share its rate.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from tracegym.training.config import OptimSection


def learning_rate(step: int, total: int, optim: OptimSection) -> float:
    """The learning rate of 0-based step `step` of a phase of `total` steps."""
    warmup = optim.lr_warmup_steps
    if step < warmup:
        return optim.lr * (step + 1) / warmup
    if optim.lr_scheduler == "constant":
        return optim.lr
    progress = min((step - warmup) / max(total - warmup, 1), 1.0)
    if optim.lr_scheduler == "linear":
        shape = 1.0 - progress
    else:
        shape = 0.5 * (1.0 + math.cos(math.pi * progress))
    return optim.lr * (optim.min_lr_ratio + (1.0 - optim.min_lr_ratio) * shape)


def set_learning_rate(optimizer: torch.optim.Optimizer, lr: float) -> None:
    """Give every parameter group of `optimizer` the rate `lr` for its next step."""
    for group in optimizer.param_groups:
        group["lr"] = lr
