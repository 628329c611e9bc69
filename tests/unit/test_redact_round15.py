"""Precision by cause on the fourteenth corpus's near misses, on values written here: masks in brackets after a
password label, and SIP's Call-ID."""

from tracegym.redact.detect import Detector


def _found(text: str) -> list[str]:
    return [text[f.start:f.end] for f in Detector().find(text)]


def test_a_mask_in_brackets_after_a_password_label_is_no_password():
    for text in ('{"userPassword": "[REDACTED]"}', '{"password": "[MASKED]"}', "db_password = '(hidden)'",
                 'PASSWORD="[redacted by vault]"'):
        assert _found(text) == [], text
    assert _found('{"password": "[Xk29sLmq77]"}') == ["[Xk29sLmq77]"]


def test_a_sip_call_id_is_no_mailbox_but_its_addresses_are():
    invite = ("INVITE sip:bob@biloxi.example.com SIP/2.0\r\nFrom: Alice <sip:alice.w@atlanta.example.com>;tag=88\r\n"
              "Call-ID: 7c2e91ab04f3d5@pc33.atlanta.example.com\r\nCSeq: 314159 INVITE\r\n")
    found = _found(invite)
    assert "7c2e91ab04f3d5@pc33.atlanta.example.com" not in found
    assert "alice.w@atlanta.example.com" in found
