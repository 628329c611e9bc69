"""Values the providers publish for their sandboxes are no one's: left, beside real ones that are found."""

import pytest

from tracegym.redact.detect import Detector


@pytest.fixture(scope="module")
def detector() -> Detector:
    return Detector()


@pytest.mark.parametrize("text", [
    "For the sandbox use Stripe's test card 4242 4242 4242 4242, any future date.",
    "stripe.PaymentMethod.create(card={'number': '4000056655665556', 'exp_month': 12})",
    "Braintree test Visa 4111-1111-1111-1111, Amex 378282246310005",
    '{"card_number": "5555555555554444", "cvc": "123"}',
])
def test_a_providers_published_test_card_is_left(detector, text):
    assert not [f for f in detector.find(text) if f.rule.label == "CARD"], text


def test_a_real_card_beside_a_test_card_is_still_found(detector):
    found = [f.value for f in detector.find("test with 4242 4242 4242 4242, then charged 4526 0181 5908 3012")]
    assert found == ["4526 0181 5908 3012"]
