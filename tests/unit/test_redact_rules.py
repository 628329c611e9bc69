"""Redaction rules, pseudonyms and JSON-safe replacement, on small texts (tracegym/redact)."""

from __future__ import annotations

import json

import pytest

from tracegym.errors import ConfigError
from tracegym.redact.config import RedactConfig, load_redact_config
from tracegym.redact.detect import Detector
from tracegym.redact.pseudonyms import Pseudonyms
from tracegym.redact.text import apply, mask, redact_json_text
from tracegym.redact.validators import card_number, iban, luhn

DETECTOR = Detector()


def rules(text: str) -> list[tuple[str, str]]:
    return [(f.rule.name, f.value) for f in DETECTOR.find(text)]


def test_checksums_decide_cards_and_ibans():
    assert luhn("4111111111111111") and not luhn("4111111111111112")
    assert card_number("4111 1111 1111 1111") and not card_number("4111 1111 1111 1112")
    assert not card_number("9111111111111111")  # Luhn-valid, but no issuer uses 9
    assert iban("GB82 WEST 1234 5698 7654 32") and not iban("GB82 WEST 1234 5698 7654 33")


@pytest.mark.parametrize("text", [
    "Your reservation 4WQ150 on flight HAT136 is confirmed.",
    '{"payment_id": "credit_card_4421486", "amount": 250, "reservation_id": "NO6JO3"}',
    "commit 5b8e0c1d6f0e4a3c9b2d7e8f1a0b3c4d5e6f7a8b and timestamp 1700000000123",
    "pip 23.0.1 on python 3.11.7; PyERFA: 2.0.0.3; listen on 127.0.0.1:8000 and 192.168.1.4",
    "password = self.cleaned_data.get('password2'); token = tokenizer.encode(text)",
    "x = y[1::2]; time 12:30:45; price 1234.5678901234567",
])
def test_real_trace_content_is_left_alone(text):
    assert rules(text) == []


@pytest.mark.parametrize(("text", "rule", "value"), [
    ("key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "openai_key", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"),
    ("AWS AKIAQ3EGT7XKZRW2PLMN", "aws_access_key", "AKIAQ3EGT7XKZRW2PLMN"),
    ("postgres://admin:s3cr3t!pw@db.internal:5432/app", "url_password", "s3cr3t!pw"),
    ("card 4526-0181-5908-3012 exp", "card", "4526-0181-5908-3012"),
    ("mail jane.doe42@gmail.com now", "email", "jane.doe42@gmail.com"),
    ("call +44 20 7946 0958 today", "phone", "+44 20 7946 0958"),
    ("IBAN DE89 3704 0044 0532 0130 00 please", "iban", "DE89 3704 0044 0532 0130 00"),
    ("I was born on March 5, 1987.", "date_of_birth", "March 5, 1987"),
    ('{"note": "DOB:\\n1987-03-05"}', "date_of_birth", "1987-03-05"),
    ("from 52.44.182.178 port 80", "ipv4", "52.44.182.178"),
    ('client_secret = "q8ZkP2vN7xR4mT1bW6yC3sD9fG5hJ0aL"', "secret_assignment", "q8ZkP2vN7xR4mT1bW6yC3sD9fG5hJ0aL"),
])
def test_each_kind_is_found(text, rule, value):
    assert (rule, value) in rules(text)


def test_a_value_split_over_lines_is_found_whole():
    assert rules("card\n4526 0181\n5908 3012") == [("card", "4526 0181\n5908 3012")]
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc+/=\n-----END RSA PRIVATE KEY-----"
    assert rules(f"file:\n{key}\nok") == [("private_key", key)]


def test_the_same_value_gets_the_same_placeholder_and_json_stays_valid():
    names = Pseudonyms()
    args = json.dumps({"email": "a.b@example.org", "note": "cc a.b@example.org,\nand c@d.io\\n"})
    out = redact_json_text(args, DETECTOR.find(args), names, DETECTOR)
    assert json.loads(out) == {"email": "<EMAIL_1>", "note": "cc <EMAIL_1>,\nand <EMAIL_2>\\n"}
    message = "Send it to a.b@example.org"
    assert apply(message, DETECTOR.find(message), names) == "Send it to <EMAIL_1>"
    assert DETECTOR.find(out) == []  # placeholders are never findings: redacting twice changes nothing


def test_a_finding_never_starts_inside_a_json_escape():
    text = json.dumps({"to": "line\nbob@corp.io"})
    found = DETECTOR.find(text)
    assert [f.value for f in found] == ["bob@corp.io"]
    assert json.loads(apply(text, found, Pseudonyms())) == {"to": "line\n<EMAIL_1>"}


def test_keyed_mode_is_stable_across_numberings_and_keys_differ():
    a, b = Pseudonyms(key=b"k1"), Pseudonyms(key=b"k1")
    assert a.placeholder("EMAIL", "x@y.io") == b.placeholder("EMAIL", "x@y.io") != \
        Pseudonyms(key=b"k2").placeholder("EMAIL", "x@y.io")
    assert a.placeholder("EMAIL", "x@y.io").startswith("<EMAIL_") and not a.added


def test_user_rules_and_allow_list_come_from_yaml(tmp_path):
    path = tmp_path / "redact.yaml"
    path.write_text("version: 1\nrules:\n  - name: employee_id\n    label: EMPLOYEE\n    pattern: 'EMP-\\d{6}'\n"
                    "disable: [ipv4]\nallow:\n  values: [support@acme.io]\n")
    detector = Detector(load_redact_config(path))
    found = [(f.rule.name, f.value) for f in detector.find("EMP-123456 wrote support@acme.io and x@acme.io "
                                                          "from 52.44.182.178")]
    assert found == [("employee_id", "EMP-123456"), ("email", "x@acme.io")]


@pytest.mark.parametrize(("yaml_text", "message"), [
    ("rules:\n  - {name: x, label: X, pattern: '(?<=a)b'}\n", "RE2"),
    ("disable: [ip4]\n", "Did you mean 'ipv4'"),
    ("pseudonyms: {hmac_key_env: TRACEGYM_TEST_UNSET_KEY}\n", None),
])
def test_bad_settings_are_named(tmp_path, yaml_text, message):
    path = tmp_path / "redact.yaml"
    path.write_text(yaml_text)
    if message is None:
        with pytest.raises(ConfigError, match="TRACEGYM_TEST_UNSET_KEY"):
            load_redact_config(path).hmac_key()
        return
    with pytest.raises(ConfigError, match=message):
        load_redact_config(path)


def test_masked_examples_do_not_give_the_value_away():
    assert mask("jane.doe42@gmail.com") == "ja****************om"
    assert mask("hunter2") == "*******"
    assert RedactConfig().fingerprint() == RedactConfig().fingerprint()


def test_a_piece_cut_inside_characters_keeps_its_edge_bytes():
    from tracegym.redact.in_place import utf8_core

    data = "é mail ada@example.com 日本".encode()
    assert utf8_core(data[1:-2]) == (b"\xa9", " mail ada@example.com 日", "日本".encode()[3:4])
    assert utf8_core(b"plain") == (b"", "plain", b"")
    assert utf8_core(b"\xff ok") == (b"", "\ufffd ok", b"")
