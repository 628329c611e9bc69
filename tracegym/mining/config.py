"""The thresholds of mining, shared by `mine failures` and the detection that ingest runs."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class MineConfig(BaseModel):
    """The thresholds the detectors read (as `$name` parameters in their SQL)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    score_threshold: float = 0.5
    """Eval and human-feedback scores below this are failures (low_score, negative_feedback); scores in [0, 1]."""
    min_repeats: int = Field(3, ge=2)
    """An identical tool call with an identical result made this many times in one trace is a loop."""
    max_turns: int | None = Field(None, ge=1)
    """More assistant turns than this is a runaway; None: three times the median of the trace's format."""
