"""JSON error responses of real backends as tool errors: the Python test (ingest) and the SQL macro (mining) agree."""

from __future__ import annotations

import json

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracegym.mining.json_errors import MAX_BRACKETS, MAX_CHARS, json_error
from tracegym.mining.signature import install_macros


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect(":memory:")
    install_macros(connection)
    return connection


def _sql(con: duckdb.DuckDBPyConnection, text: str | None) -> str | None:
    row = con.execute("SELECT tg_json_error(?)", [text]).fetchone()
    assert row is not None
    return row[0]


# What backends answer when a call fails, and the message each names ('' when none; None: not an error).
SHAPES = [
    ({"error": {"code": 504, "message": "upstream timeout"}}, "upstream timeout"),  # Google, OpenAI
    ({"error": {"message": "Invalid API key", "type": "invalid_request_error", "code": None}}, "Invalid API key"),
    ({"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "Method not found"}}, "Method not found"),
    ({"error": {"type": "rate_limit_error"}}, "rate_limit_error"),
    ({"error": {"code": 429}}, "HTTP 429"),
    ({"error": "order not found"}, "order not found"),
    ({"ok": False, "error": "channel_not_found"}, "channel_not_found"),  # Slack
    ({"ok": False}, ""),
    ({"status": "error", "message": "invalid postal code for country DE"}, "invalid postal code for country DE"),
    ({"status": "fail", "data": {"title": "A title is required"}}, ""),  # JSend
    ({"success": False, "msg": "card declined"}, "card declined"),
    ({"status_code": 502}, "HTTP 502"),
    ({"statusCode": "503", "body": "Service Unavailable"}, "HTTP 503"),  # AWS Lambda proxy
    ({"status": 404, "title": "Not Found", "detail": "no order A-7"}, "no order A-7"),  # RFC 7807
    ({"code": 401, "message": "unauthorised"}, "unauthorised"),
    ({"data": None, "errors": [{"message": "Field 'x' missing", "path": ["a"]}]}, "Field 'x' missing"),  # GraphQL
    ({"errors": {"email": ["is invalid"]}}, ""),  # Rails
    ({"error": True, "reason": "quota"}, "quota"),
    # Not errors: successes, empty error fields, records that hold such a field deeper down or a status of their own.
    ({"order_id": "A-1", "status": "shipped", "eta": "2026-11-12"}, None),
    ({"reservation_id": "K1NW8N", "status": "cancelled"}, None),
    ({"ok": True, "ticket": "T-3"}, None),
    ({"success": True, "error": None}, None),
    ({"error": ""}, None),
    ({"error": {}}, None),
    ({"errors": []}, None),
    ({"status": 200, "code": -32601}, None),
    ({"status": 404.0}, None),
    ({"code": "E404"}, None),
    ({"data": {"error": "nested"}}, None),
    ({"Error": "capitalised keys are not the convention"}, None),
    ([{"error": "a list"}], None),
]


@pytest.mark.parametrize(("value", "message"), SHAPES, ids=[json.dumps(v)[:40] for v, _ in SHAPES])
def test_backend_error_shapes_and_their_messages(con, value, message):
    text = json.dumps(value)
    assert json_error(text) == message
    assert _sql(con, text) == message
    assert json_error(json.dumps(value, indent=2)) == message  # spacing does not matter


@pytest.mark.parametrize("text", [
    None, "", "Error: not JSON", "{'error': 'python repr'}", '{"error": "x"} trailing', '"error"',
    '{"error": "x",}',  # a trailing comma: DuckDB's parser takes it, Python's does not; both say no
    '{"error": "\\ud800"}',  # a lone surrogate: Python's parser takes it, DuckDB's does not; both say no
    '\u00a0{"error": "not JSON white space first"}',
    '{"error": "x", "pad": "' + "a" * MAX_CHARS + '"}',
    '{"error": "x", "deep": ' + "[" * MAX_BRACKETS + "]" * MAX_BRACKETS + "}",
    '{"error": "x", "deep": ' + "[" * 100_000 + "]" * 100_000 + "}",
])
def test_what_is_not_json_or_out_of_bounds_is_no_json_error(con, text):
    assert json_error(text) is None
    assert _sql(con, text) is None


def test_edge_readings_agree(con):
    for text, message in [('{"error": null, "error": "x"}', None), ('{"error": "x", "error": null}', "x"),
                          ('{"a": NaN, "error": "x"}', "x"), ('{"error": "\\ud83d\\ude00 emoji"}', "😀 emoji"),
                          ('{"error": "x\\u0000y"}', "x\x00y"), (' \n\t{"error": "x"}\n', "x")]:
        assert (json_error(text), _sql(con, text)) == (message, message), text


_KEYS = ["error", "errors", "status", "ok", "success", "code", "status_code", "statusCode", "message", "msg",
         "detail", "title", "reason", "data"]
_LEAVES = st.sampled_from([None, True, False, 0, -1, 200, 404, 502, 600, 404.0, "404", "502", "error", "fail",
                           "Error", "", " \n", "text", "upstream timeout"])
_VALUES = st.recursive(_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(_KEYS), inner, max_size=3)), max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(_KEYS), _VALUES, max_size=5))
def test_python_and_sql_agree_on_any_object_of_these_keys(con, value):
    text = json.dumps(value)
    assert json_error(text) == _sql(con, text)
