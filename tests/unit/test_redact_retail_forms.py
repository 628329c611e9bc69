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
