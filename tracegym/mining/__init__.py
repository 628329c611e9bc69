"""Failure mining: detectors over the store, signatures, clusters and their ranking.

    from tracegym.mining import mine_failures
    summary = mine_failures(store)          # fills the failures and clusters tables
    summary.clusters[0].signature           # the top-ranked failure
"""

from tracegym.mining.clusters import Cluster
from tracegym.mining.detectors import DETECTORS, Detector
from tracegym.mining.mine import MineConfig, MineSummary, mine_failures
from tracegym.mining.signature import signature

__all__ = ["DETECTORS", "Cluster", "Detector", "MineConfig", "MineSummary", "mine_failures", "signature"]
