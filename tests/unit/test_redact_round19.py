"""Caller-id fields, service numbers, spoken SSNs, passwords of random letters, and words in more languages."""

import pytest

from tracegym.redact.detect import Detector


@pytest.fixture(scope="module")
def detector() -> Detector:
    return Detector()


def _values(detector: Detector, text: str) -> list[str]:
    return [f.value for f in detector.find(text)]


@pytest.mark.parametrize(("text", "value"), [
    ('{"participants": {"ani": "01904257555", "purpose": "customer"}}', "01904257555"),
    ('{"participants": {"ani": "(040) 9602883", "purpose": "customer"}}', "(040) 9602883"),
    ('{"participants": {"ani": "8061596370", "purpose": "customer"}}', "8061596370"),
    ("caller_id=0640369438 queue=billing", "0640369438"),
    ('{"CallerNumber": "80625 38961"}', "80625 38961"),
    ('SpeechResult="vous pouvez me rappeler au 0033 6 86 45 17 34" Confidence=0.23', "0033 6 86 45 17 34"),
    ("CUSTOMER: social is 727374110", "727374110"),
    ('{"text": "my social #: 081-85-8150"}', "081-85-8150"),
    ("Server=tcp:db,1433;User ID=qa;Password=QGQyLm_RKsNAHxM;Encrypt=True;", "QGQyLm_RKsNAHxM"),
    ("- şifrem orchid-tiburon-lavanda00 ama giriş yapamıyorum", "orchid-tiburon-lavanda00"),
    ("[SMS in] kata sandi saya jablko-mustikka-baobab24", "jablko-mustikka-baobab24"),
    ("Ihr neues Kennwort lautet wiewior-sakura-bahar79, bitte ändern", "wiewior-sakura-bahar79"),
    ("నా ఫోన్ నంబర్ 08936839935", "08936839935"),
    ("എന്റെ ഫോൺ നമ്പർ 9876543210", "9876543210"),
    ("mijn rekeningnummer is il051004873637478502305", "il051004873637478502305"),
])
def test_found(detector, text, value):
    assert value in _values(detector, text)


@pytest.mark.parametrize("text", [
    "call us at 1-800-395-4799",                      # toll-free: a business's
    "ring our team on 1800 209 1237",                 # India's toll-free
    '"subject": "Phone Call", "description": "SSN 666-09-3396 rejected by the verifier"',
    '"Call","RMA-2025-00977 approved, refund of 40.00"',
    '"Call","Chrome/124.0.7463.779"',
    "password=getUserPassword",                       # a camelCase name: code
    "social media 123456789 followers",
    '{"dnis": "8005551234", "queue": "0412"}',         # the dialled number is the business's line
])
def test_left(detector, text):
    assert _values(detector, text) == [], text
