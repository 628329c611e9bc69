"""The record of an episode (conversation and exact token record) and the store's rollouts table.

Neutral ground: samplers and the trainer import it without importing the harnesses."""
