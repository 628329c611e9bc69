"""The signature normaliser (one SQL macro, also called from Python) and the error-line picker."""

from __future__ import annotations

import pytest

from tracegym.mining.signature import MAX_CHARS, error_line, install_macros, signature


@pytest.mark.parametrize(("texts", "expected"), [
    (["Error: payment amount does not add up, total price is 1002, but paid 1047",
      "Error: payment amount does not add up, total price is 4875, but paid 1625"],
     "Error: payment amount does not add up, total price is <n>, but paid <n>"),
    (["Error: flight HAT030 not available on date 2024-05-13", "Error: flight HAT223 not available on date 2024-05-14"],
     "Error: flight <id> not available on date <date>"),
    (["Error: not enough balance in payment method gift_card_5094406",
      "Error: not enough balance in payment method certificate_7504069"],
     "Error: not enough balance in payment method <id>"),
    (["Please always provide EXACTLY ONE action in triple backticks, found 3 actions.",
      "Please always provide EXACTLY ONE action in triple backticks, found 12 actions."],
     "Please always provide EXACTLY ONE action in triple backticks, found <n> actions."),
])
def test_the_same_failure_in_different_traces_gets_one_signature(texts, expected):
    assert {signature(t) for t in texts} == {expected}


@pytest.mark.parametrize(("text", "expected"), [
    ("KeyError: 'reservation_id'", "KeyError: <str>"),
    ('No module named "numpy"', "No module named <str>"),
    ("cannot access `foo.txt`", "cannot access <str>"),
    ("open /testbed/django/db/models/base.py failed", "open <path> failed"),
    ("see src/app/main.py line 3", "see <path> line <n>"),
    ("edit setup.py", "edit <path>"),
    ("refund of $1,250.50 denied", "refund of <amount> denied"),
    ("charged 300 USD twice", "charged <amount> twice"),
    ("request 0b8c9a4e-1f2d-4c3b-9a8e-7f6d5c4b3a21 failed", "request <id> failed"),
    ("at 14:05:09 the job stopped", "at <time> the job stopped"),
    ("GET https://api.example.com/v1/users?id=3 returned 500", "GET <url> returned <n>"),
    ("mail jane.doe+x@example.co.uk bounced", "mail <email> bounced"),
    ("pointer 0xDEADBEEF freed twice", "pointer <id> freed twice"),
    ("expected [1, 2, 3], got [4, 5]", "expected [<n>], got [<n>]"),
    ("  several\n\n  spaces\tand lines  ", "several spaces and lines"),
])
def test_numbers_ids_paths_quoted_values_and_amounts_are_stripped(text, expected):
    assert signature(text) == expected


def test_apostrophes_in_words_are_not_quotes():
    assert signature("I don't have the user's id") == "I don't have the user's id"


def test_signature_is_idempotent_and_capped():
    for text in ["Error: flight HAT030 not available on date 2024-05-13", "KeyError: 'x' at /a/b.py:12",
                 "refund $30 for order #A12 on 2024-01-02T10:00:00Z"]:
        once = signature(text)
        assert signature(once) == once
    assert len(signature("word " * 500)) == MAX_CHARS
    assert signature(None) is None


def test_python_and_store_sql_agree(store):
    install_macros(store.con)
    text = "Error: flight HAT030 not available on date 2024-05-13 at '/a/b.py'"
    assert store.scalar("SELECT tg_signature(?)", [text]) == signature(text)


@pytest.mark.parametrize(("text", "expected"), [
    ('Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n    f()\n'
     "django.core.exceptions.ImproperlyConfigured: settings are not configured\n",
     "django.core.exceptions.ImproperlyConfigured: settings are not configured"),
    # mini-swe-agent's wrapper is skipped, and with no exception line the first line of output is the error.
    ("<returncode>2</returncode>\n<output>\nls: cannot access 'x': No such file or directory\n</output>",
     "ls: cannot access 'x': No such file or directory"),
    ("<returncode>1</returncode>\n<output>\n</output>", ""),
    ("collected 3 items\n\n=================== 1 failed, 2 passed in 0.31s ===================\n",
     "pytest: 1 failed, 2 passed in 0.31s"),
    ("Error processing line 1 of /x.pth:\nsome detail\nValueError: bad value\n", "ValueError: bad value"),
    ("Error: gift card balance is not enough", "Error: gift card balance is not enough"),
    ("\n\n  first real line\nsecond", "first real line"),
])
def test_error_line_names_the_error(text, expected):
    assert error_line(text) == expected


@pytest.mark.parametrize(("texts", "expected"), [
    ([f"invalid postal code for country {c}" for c in ("US", "GB", "DE", "FR", "IN")],
     "invalid postal code for country <country>"),
    (["Invalid country code: IT", "Invalid country code: NO"], "Invalid country code: <country>"),
    (["market=CN closed", "market=IN closed"], "market=<country> closed"),
    (["shipping to FR is not available", "shipping to US is not available", "shipping to UK is not available"],
     "shipping to <country> is not available"),
    (["unsupported currency TRY", "unsupported currency JPY"], "unsupported currency <currency>"),
    (["refund of 20 JPY denied", "refund of 7.5 EUR denied", "refund of $3 denied"], "refund of <amount> denied"),
    (["prices in CHF only", "prices in SEK only"], "prices in <currency> only"),
])
def test_country_and_currency_codes_are_one_signature(texts, expected):
    assert {signature(t) for t in texts} == {expected}


@pytest.mark.parametrize("text", [
    "HTTP error from SQL server: invalid JSON", "ERR_TIMEOUT: ENOENT on read", "IS NOT NULL constraint failed",
    "disk has 2 GB left", "CN mismatch in certificate", "log IN first", "IT department", "answer NO or YES",
    "ALL tests passed", "TRY again", "USDC wallet", "de_DE locale",
])
def test_other_capitals_and_codes_that_are_also_words_stay(text):
    assert signature(text) == text.replace("2 GB", "<n> GB")
