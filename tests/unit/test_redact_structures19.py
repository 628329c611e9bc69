"""Values split over a transcript's word list, wrapped in a slot's generic `value`, or beside a sandbox card."""

import json

import pytest

from tracegym.redact.detect import Detector


@pytest.fixture(scope="module")
def detector() -> Detector:
    return Detector()


def _left(detector: Detector, text: str) -> str:
    for f in sorted(detector.find(text), key=lambda f: -f.start):
        text = text[:f.start] + "<R>" + text[f.end:]
    return text


def _deepgram(transcript: str) -> str:
    words = [{"word": w.lower(), "start": 1.0 + i, "end": 1.5 + i, "confidence": 0.9, "punctuated_word": w}
             for i, w in enumerate(transcript.split())]
    return json.dumps({"results": {"channels": [{"alternatives": [
        {"transcript": transcript, "confidence": 0.91, "words": words}]}]}})


@pytest.mark.parametrize(("transcript", "pieces"), [
    ("meine Handynummer ist 0176 48568940", ["0176", "48568940"]),
    ("you can call me back at (786) 411-4769", ["(786)", "411-4769"]),
    ("my password is correct-Horse7 battery", ["correct-Horse7"]),
])
def test_a_value_found_in_a_transcript_is_redacted_in_its_word_list_too(detector, transcript, pieces):
    left = _left(detector, _deepgram(transcript))
    for piece in pieces:
        assert f'"{piece}"' not in left, piece
    assert '"word": "you"' in left or '"word": "meine"' in left or '"word": "my"' in left  # other words stay


@pytest.mark.parametrize(("text", "value"), [
    ('{"sessionState": {"intent": {"name": "VerifyCaller", "slots": {"SSN": {"value": {"originalValue": '
     '"223670205", "interpretedValue": "223670205", "resolvedValues": ["223670205"]}}}}}}', "223670205"),
    ('{"slots": {"NewPassword": {"shape": "Scalar", "value": {"originalValue": "emTutFIwCoIJo4_", '
     '"interpretedValue": "emTutFIwCoIJo4_"}}}}', "emTutFIwCoIJo4_"),
    ('{"CustomerEndpoint": {"Address": "0711049039", "Type": "TELEPHONE_NUMBER"}, "id": 233740801}', "0711049039"),
])
def test_a_wrapped_value_is_named_by_the_key_around_its_wrapper(detector, text, value):
    assert value not in _left(detector, text)


def test_no_rule_takes_a_piece_of_a_sandbox_card(detector):
    assert detector.find('"Call","Amex test card 3782 822463 10005 declined"') == []
