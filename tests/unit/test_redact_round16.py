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


@pytest.mark.parametrize(("text", "number"), [
    ("mobile: 918765432109", "918765432109"), ("telepon: 6281298765432", "6281298765432"),
    ('{"phone": "447700954321"}', "447700954321"), ("  phone = 33612345678", "33612345678"),
])
def test_a_phone_number_stored_compact_with_its_country_code(text: str, number: str) -> None:
    assert number in _values(text), text


@pytest.mark.parametrize("text", [
    "order: 918765432109", "phone: 12345678901234",  # no phone word; longer than E.164 allows
    "id: 4417\n" + SQLITE_BOX.replace("mobile", "points").replace(PHONE, "954 321 7700"),  # no plan's grouping
])
def test_digit_runs_that_are_no_phone_number_stay(text: str) -> None:
    assert not [v for v in _values(text) if PHONE in v or v.isdigit()], text


SECRET = "mellow7orchid"  # no shape of its own (one case, no symbol): only a label makes it a password
PRINTED = [
    f'{{"columns": ["id", "login", "password"], "rows": [["7", "ann", "{SECRET}"], ["8", "bob", "zz"]]}}',
    f'{{"rowType": [{{"name": "ID"}}, {{"name": "PASSWORD"}}], "data": [["7", "{SECRET}"]]}}',
    f'127.0.0.1:6379> HGETALL user:7\n1) "name"\n2) "Ann"\n3) "password"\n4) "{SECRET}"\n',
    f'- heading "Sign in" [level=1] [ref=e1]\n- textbox "Password" [ref=e3]: {SECRET}\n- button "Go" [ref=e4]\n',
    f"await page.getByLabel('Password').fill('{SECRET}');",
    f"pw:api waiting for locator('#password')\npw:api   fill(\"{SECRET}\")\n",
    f'el = driver.find_element(By.NAME, "password")\nel.clear()\nel.send_keys("{SECRET}")\n',
    f'{{"action": "type", "element": "password", "ref": "e9", "text": "{SECRET}"}}',
    f"- **Password:** {SECRET}\n",
]


@pytest.mark.parametrize("text", PRINTED)
def test_a_label_that_stands_away_in_a_tools_print_labels_its_value(text: str) -> None:
    assert SECRET in _values(text), text


@pytest.mark.parametrize("text", [
    '{"columns": ["id", "note"], "rows": [["7", "Xq7#pL2m"]]}'.replace("Xq7#pL2m", "hello there"),
    '1) "password"\n2) "hunter"\n',                      # a word, not a password's shape
    "await page.getByLabel('Search').fill('Xq7pL2mw');",
])
def test_values_under_other_labels_stay(text: str) -> None:
    assert _values(text) == [], text
