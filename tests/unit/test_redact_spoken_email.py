"""E-mail addresses written out: to dodge scrapers, or as a transcript writes them spoken."""

import pytest

from tracegym.redact.detect import Detector


@pytest.fixture(scope="module")
def detector() -> Detector:
    return Detector()


@pytest.mark.parametrize(("text", "address"), [
    ("Kontakt: max.mustermann(at)firma.de", "max.mustermann(at)firma.de"),
    ("write to jane [at] example [dot] org please", "jane [at] example [dot] org"),
    ("reply to ops{at}acme{dot}io", "ops{at}acme{dot}io"),
    ("the contact email from the tool result: olena dot koval @ web dot de.", "olena dot koval @ web dot de"),
    ('{"transcript": "my e-mail address is camille dot lefevre at naver dot com", "confidence": 0.92}',
     "camille dot lefevre at naver dot com"),
    ("CALLER: sure, my contact email is o l e n a koval at qq dot com\n", "o l e n a koval at qq dot com"),
    ("- **Email:** l a r s   plus billing at web dot de\n", "l a r s   plus billing at web dot de"),
    ("mi correo es maria punto lopez arroba gmail punto com", "maria punto lopez arroba gmail punto com"),
])
def test_an_address_written_out_is_found(detector, text, address):
    assert address in [f.value for f in detector.find(text)]


@pytest.mark.parametrize("text", [
    "look at google dot com for the docs",          # no word for e-mail: a site, spoken
    "we met at noon dot com launch party",
    "the meeting is at 10 dot 30",
    "a [at] b",                                    # no domain
])
def test_at_and_dot_in_prose_are_no_address(detector, text):
    assert not [f for f in detector.find(text) if f.rule.label == "EMAIL"], text
