"""Eval definitions (evals.yaml) turned into reward scorers, and checks of scorers against production labels.

Scorers take a `Trajectory` and return a `ScoreResult`; they know nothing of
harnesses, which build trajectories from episodes.
"""

from tracegym.evals.scorers.trajectory import CallView, ScoreResult, Trajectory

__all__ = ["CallView", "ScoreResult", "Trajectory"]
