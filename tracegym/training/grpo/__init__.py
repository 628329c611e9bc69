"""GRPO: the loss with its three corrections, group advantages, micro-batching and the trainer step."""
