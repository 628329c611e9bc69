"""Checkpoint evaluation: the base model and checkpoints on held-out tasks, per failure cluster."""
