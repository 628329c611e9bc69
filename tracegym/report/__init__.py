"""Showing a run to people: PNG charts, one self-contained HTML page, TensorBoard event files."""
