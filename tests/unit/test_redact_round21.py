"""A personal assistant's tools: vCards, password managers' fields, and words of more languages."""

import pytest

from tracegym.redact.detect import Detector


@pytest.fixture(scope="module")
def detector() -> Detector:
    return Detector()


@pytest.mark.parametrize(("text", "value"), [
    ('BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Maricel Rossi\r\nTEL;TYPE="cell,voice";PREF=1:07974 402667\r\nEND:VCARD',
     "07974 402667"),
    ('{"result": "BEGIN:VCARD\\r\\nVERSION:4.0\\r\\nTEL;TYPE=\\"cell,voice\\";PREF=1:011-2796 9654\\r\\nEND:VCARD"}',
     "011-2796 9654"),
    ("BEGIN:VCARD\nVERSION:3.0\nTEL;CELL:0634698488\nEND:VCARD", "0634698488"),
    ("item1.TEL;type=pref:65868-21243", "65868-21243"),
    ('{"details": {"sections": [{"fields": [{"title": "social security number", "value": {"string": "269364292"}}]}]}}',
     "269364292"),
    ('{"fields": [{"title": "PIN", "value": {"concealed": "x7Gq2mPw"}}]}', "x7Gq2mPw"),
    ("- [ ] Appelle-moi au Nika 0542998970", "0542998970"),
    ("ಈ ಸಂಖ್ಯೆಗೆ ಕರೆ ಮಾಡಿ 09181182607", "09181182607"),
    ('From: "Lukas Hansen" <nguyễn.thảo21@ví-dụ.vn>', "nguyễn.thảo21@ví-dụ.vn"),
    ("ATTENDEE;CN=Ana Ruiz:mailto:ana.ruiz@example.org\nUID:8c0c@google.com", "ana.ruiz@example.org"),
])
def test_found(detector, text, value):
    assert value in [f.value for f in detector.find(text)]


@pytest.mark.parametrize("text", [
    "BEGIN:VEVENT\nDTSTART:20261207T100000\nTEL;TYPE=work:123\nEND:VEVENT",  # an extension, not a number
    '{"title": "Meeting", "value": {"string": "hello there"}}',
    "connection: postgresql://user:<password>@host/db",       # a placeholder, then the host
    '{"iCalUID": "e79b52af9ba0264a@google.com", "id": "e79b52af9ba0264a_20261207T090000Z"}',  # an event's id
    "BEGIN:VEVENT\nUID:8c0c0ad97031abd9@google.com\nEND:VEVENT",
    "calendarId: de.german#holiday@group.v.calendar.google.com",  # a calendar's id
])
def test_left(detector, text):
    assert detector.find(text) == [], text
