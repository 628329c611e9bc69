"""Outcome labels kept outside the traces (CSAT, resolution, human review), imported onto stored traces.

    from tracegym.labels import LabelSpec, import_labels, read_labels
    report = import_labels(store, path, LabelSpec(key="conversation_id", outcome="resolution"))
"""

from tracegym.labels.apply import ImportReport, import_labels
from tracegym.labels.rows import LabelSpec, check_score_range, parse_map, read_labels

__all__ = ["ImportReport", "LabelSpec", "check_score_range", "import_labels", "parse_map", "read_labels"]
