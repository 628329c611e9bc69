"""Retail, e-commerce and point-of-sale credentials by their public formats (issue 42): Login with Amazon access
tokens, Mollie API keys, eBay OAuth tokens, session cookies of shop platforms, an SSN behind the IRS form that asks
for it, an authenticator's setup key of letters alone; and no phone number in a North American toll-free line.
Values written for these tests."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()

_LWA_BODY = "IwEBIk2Lp9Qr-Xv7_Tz4Mn8Bc5Df1Gh6Jk3Lm0Np9Qr8St7Uv6Wx5Yz4Ab3Cd2Ef1Gh0Ij9Kl8Mn7"
_EBAY = ("v^1.1#i^1#f^0#p^3#r^1#I^3#t^H4sIAAAAAAAAKx9mQ2wE7rT4yU1iO8pA5sD3fG6hJ0kL2zX4cV7bN9mQ1wE3rT5yU7iO9pA2sD4"
         "fG6hJ8kL0zX2cV4bN6m==")


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize("text", [
    f"x-amz-access-token: Atza|{_LWA_BODY}",
    f"grant_type=refresh_token&refresh_token=Atza|{_LWA_BODY}&client_id=amzn1.application-oa2-client.x",
    json.dumps({"access_token": f"Atza|{_LWA_BODY}", "token_type": "bearer"})])
def test_a_login_with_amazon_access_token(text: str) -> None:
    assert f"Atza|{_LWA_BODY}" in _values(text)


@pytest.mark.parametrize(("text", "value"), [
    ('"memo": "test_Zq8Lm2PxR4vN7kTb1YcW9sHd3FgJ5e"', "test_Zq8Lm2PxR4vN7kTb1YcW9sHd3FgJ5e"),
    ("C1042,gold,310,live_Hy4kP9wQ2mX7vB3nT8cR5zL1dF6gJ0,", "live_Hy4kP9wQ2mX7vB3nT8cR5zL1dF6gJ0")])
def test_a_mollie_key_anywhere(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "def test_handlesRefundForOrderWithCoupon(): pass",
    "pytest -k test_createOrderWithDiscountCode2",
    "fixture live_streamingcheckoutwidgetenabled1 = True",
    "test_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"])
def test_no_mollie_key_in_a_test_name(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("text", [
    f"Authorization: Bearer {_EBAY}",
    f"curl -H 'Authorization: Bearer {_EBAY}' https://api.ebay.com/sell/fulfillment/v1/order",
    json.dumps({"ebay_user_token": _EBAY})])
def test_an_ebay_oauth_token(text: str) -> None:
    assert _EBAY in _values(text)


@pytest.mark.parametrize("text", ["released v^1.1#notes today", "regex v^1.1#i^1# in the parser"])
def test_no_ebay_token_without_its_body(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("session cookie admin=k3j9q0wz8x7c6v5b4n3m2l1p0o9i8u7y", "k3j9q0wz8x7c6v5b4n3m2l1p0o9i8u7y"),
    ("Session-Cookie: frontend=a8Kq2mZp7xT4wL9nB3vR", "a8Kq2mZp7xT4wL9nB3vR"),
    ("Cookie: _secure_admin_session_id=0f3a9c2e7b14d6885a0c3e9f1b27d4c6; cart=1", "0f3a9c2e7b14d6885a0c3e9f1b27d4c6"),
    (f"Set-Cookie: wp_woocommerce_session_{'4e' * 16}=2211%7C%7C1715000000%7C%7C9e8d7c6b5a4f3e2d1c0b; path=/",
     "2211%7C%7C1715000000%7C%7C9e8d7c6b5a4f3e2d1c0b")])
def test_a_shop_session_cookie(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "the session cookie expired=yesterday_afternoon_late",
    "session cookie lifetime=3600 seconds"])
def test_no_session_cookie_in_words_after_the_name(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("vendor onboarding: SSN/TIN (W-9) = 512739046", "512739046"),
    ("SSN for the 1099-K: 512-73-9046", "512-73-9046"),
    ("payroll SSN (W-4) 512 73 9046", "512 73 9046"),
    ("Us ssn (w-9): 512739046", "512739046"),  # the form's name as people type it
    ("ssn (w9) 512739046", "512739046"),
    ("ssn for the 1099-misc: 512739046", "512739046")])
def test_an_ssn_behind_the_form_that_asks_for_it(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", ["SSN section of the W-9 revised 2024, page 3",
                                  "ssn section of the w9 revised 2024, page 3"])
def test_no_ssn_in_a_form_name_and_a_year(text: str) -> None:
    assert _values(text) == []


def test_a_setup_key_of_letters_alone() -> None:
    text = "Can't scan the code? Enter this setup key: qpmr tsxz kfdn bwca"
    assert _values(text) == ["qpmr tsxz kfdn bwca"]


@pytest.mark.parametrize("text", [
    "Enter this setup key: then open your code",
    "setup key: abcd efgh ijkl mnop"])
def test_no_setup_key_in_words(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("value", ["live_IIJ5X4GzsTPghueQCIecCez0qtrOHD", "test_pZugGwqNZKQxzoHTQGSvoW5REFtfge"])
def test_a_mollie_key_whose_letters_run_long(value: str) -> None:
    assert _values(f"note: {value}") == [value]


@pytest.mark.parametrize("text", [
    "Call our help desk line (877) 412-9930, 9-5",
    "orders: phone (844) 230-7781 weekdays",
    json.dumps({"SupportPhone": "(866) 904-3127"}),
    "Phone: 1-833-412-9930"])
def test_no_phone_in_a_north_american_toll_free_line(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("Call me at (646) 412-9930", "(646) 412-9930"),
    ("mobile 88841 29930", "88841 29930"),
    ("phone 415-412-9930", "415-412-9930")])
def test_a_person_s_number_stays(text: str, value: str) -> None:
    assert _values(text) == [value]
