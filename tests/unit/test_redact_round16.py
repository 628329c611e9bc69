"""Values in what agents' tools print: box-drawn tables, spreadsheet exports, DataFrames with elided columns, JSON
result sets, Redis replies, browser snapshots and automation scripts; phone numbers stored compact with their
country code."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()
PHONE = "07700 954 321"


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


SQLITE_BOX = f"""sqlite> .mode box
┌──────┬───────────┬───────────────┐
│  id  │   name    │    mobile     │
├──────┼───────────┼───────────────┤
│ 4417 │ Ann Brook │ {PHONE} │
└──────┴───────────┴───────────────┘"""
DUCKDB = f"""┌───────┬───────────┬───────────────┐
│  id   │   name    │   telefono    │
│ int64 │  varchar  │    varchar    │
├───────┼───────────┼───────────────┤
│  4417 │ Ann Brook │ {PHONE} │
└───────┴───────────┴───────────────┘"""
POLARS = f"""shape: (1, 3)
┌──────┬───────────┬───────────────┐
│ id   ┆ name      ┆ phone         │
│ ---  ┆ ---       ┆ ---           │
│ i64  ┆ str       ┆ str           │
╞══════╪═══════════╪═══════════════╡
│ 4417 ┆ Ann Brook ┆ {PHONE} │
└──────┴───────────┴───────────────┘"""
SHEET = f"Sheet1\n\tContact\t\t\tAudit\nid\tname\ttel.\tchanged\n4417\tAnn Brook\t{PHONE}\t2026-01-02\n"
PANDAS = f"     id       name  ...          phone\n0  4417  Ann Brook  ...  {PHONE}\n\n[1 rows x 9 columns]\n"


@pytest.mark.parametrize("text", [SQLITE_BOX, DUCKDB, POLARS, SHEET, PANDAS])
def test_a_column_header_labels_its_cells_in_printed_tables(text: str) -> None:
    assert PHONE in _values(text), text


@pytest.mark.parametrize("text", [
    "mobile: 918765432109", "telepon: 6281298765432", '{"phone": "447700954321"}', "  phone = 33612345678",
])
def test_a_phone_number_stored_compact_with_its_country_code(text: str) -> None:
    assert [v for v in _values(text) if v.isdigit()], text


@pytest.mark.parametrize("text", [
    "order: 918765432109", "phone: 12345678901234",  # no phone word; longer than E.164 allows
    "id: 4417\n" + SQLITE_BOX.replace("mobile", "points"),
])
def test_digit_runs_that_are_no_phone_number_stay(text: str) -> None:
    assert not [v for v in _values(text) if PHONE in v or v.isdigit()], text
