"""Numbers and secrets as Sub-Saharan agriculture and health programmes write them (the fifty-seventh corpus's
causes): MSISDNs with the country code and no `+`, wallets named alone before their owner's number, the phone
words of Luganda and Xhosa. Values written for these tests."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


# ---- an MSISDN of Ghana, Uganda, Tanzania, Rwanda, Ethiopia, Zambia, Senegal, Côte d'Ivoire and Cameroon ----

@pytest.mark.parametrize("number", [
    "233245813307", "256772914630", "255754308216", "250788402917", "251911638402", "260977512846",
    "221771845203", "2250708413296", "237677214583",
])
def test_a_number_with_its_country_code_and_no_plus(number: str) -> None:
    assert _values(f"2025-03-04T10:11:12Z INFO [payout] phone={number} status=200") == [number]
    assert _values(json.dumps({"phone_number": number})) == [number]


@pytest.mark.parametrize("number", ["2332458133071", "25677291463", "2376772145831", "22507084132961"])
def test_no_number_whose_length_is_not_its_plan(number: str) -> None:
    assert _values(f"phone: {number}") == []
