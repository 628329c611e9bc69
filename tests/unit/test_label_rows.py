"""A labels CSV with a cell longer than Python's csv field limit: that row is bad, the rows around it are read."""

from __future__ import annotations

import csv
from pathlib import Path

from tracegym.labels.rows import CELL_LIMIT, LabelSpec, read_labels


def test_an_over_long_csv_cell_is_a_bad_row_and_the_rows_after_it_are_read(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    with path.open("w", newline="") as f:
        csv.writer(f).writerows([["session_id", "resolution"], ["s1", "resolved"],
                                 ["s2", "x" * (CELL_LIMIT + 1)],
                                 ["s3", "line one\n" + "y" * (2 * CELL_LIMIT)],  # quoted, spanning lines
                                 ["s4", "escalated"]])
    limit = csv.field_size_limit()

    labels = read_labels(path, LabelSpec(key="session_id", outcome="resolution",
                                         mapping={"resolved": "success", "escalated": "failure"}))

    assert [(r.key, r.outcome) for r in labels.rows] == [("s1", "success"), ("s4", "failure")]
    assert [b.locator for b in labels.bad] == ["row 3", "row 4"]
    assert all(f"more than {CELL_LIMIT:,} characters" in b.reason for b in labels.bad)
    assert labels.total == 4
    assert csv.field_size_limit() == limit  # the process-wide limit is given back
