"""What every structure reader gives (tracegym/redact/structure.py and the readers it calls): (label, start, end)
of each value whose label stands away from it, for the detector to read as `label: value`."""

from __future__ import annotations

Labelled = list[tuple[str, int, int]]
