"""tracegym: production agent traces -> RL environments -> a better model."""

__version__ = "0.1.0"
