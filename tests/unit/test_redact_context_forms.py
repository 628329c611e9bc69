"""Forms a held-out corpus found missed (issue 40): labels in table cells and CSV headers, keys after CLI flags and
beside their ids, provider prefixes, SSNs and phones by their national rules, Maestro ranges, IBANs by their BBAN
structure. Values written for these tests from the public formats."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.cells import labelled_cells
from tracegym.redact.detect import Detector
from tracegym.redact.pseudonyms import Pseudonyms
from tracegym.redact.tables import Redactor

DETECTOR = Detector()
AWS_SECRET = "Kd7/Vq2Lp9Zr4Xm1Tb6Nc3Hw8Jf0Gs5Ye+Ua7Rt2"  # 40 characters of base64
TWILIO_SID = "AC" + "7e3b9c1d5f2a8e4b6c0d3f7a9b1e5c2d"
TWILIO_KEY = "SK" + "2b8e4d6f0a3c7e1b9d5f2a6c8e0b4d7f"
TWILIO_TOKEN = "4f9a2c7e1b8d3f6a0c5e9b2d7f1a4c8e"  # 32 hex
TWILIO_SECRET = "Wm3Qz8Lr1Tk6Vy0Hn5Bj9Xc2Ds7Fa4Ge"  # 32 letters and digits
SLACK_APP = "xapp-1-A04KQ7ZP2MN-4827193650142-" + "3c9e1f7a5b2d8c4e6f0a1b3d5c7e9f2a4b6d8c0e1f3a5b7d9c2e4f6a8b0c1d3e"

# (rule, text, value that must go)
CASES = [
    ("aws_secret_key", f"| key | value |\n|---|---|\n| AWS Secret Key | `{AWS_SECRET}` |", AWS_SECRET),
    ("aws_secret_key", f"vault-sync --profile ops --aws-secret-access-key {AWS_SECRET} --dry-run", AWS_SECRET),
    ("aws_secret_key", f"team,aws_secret_access_key,rotated\nplatform,{AWS_SECRET},2023-11-30", AWS_SECRET),
    ("aws_secret_key", f"the aws secret key is {AWS_SECRET}", AWS_SECRET),
    ("twilio_secret", f"curl -s https://api.twilio.com/2010-04-01/Accounts.json -u {TWILIO_SID}:{TWILIO_TOKEN}",
     TWILIO_TOKEN),
    ("twilio_secret", f'rest = Client("{TWILIO_SID}", "{TWILIO_TOKEN}")', TWILIO_TOKEN),
    ("twilio_secret", f"-u {TWILIO_KEY}:{TWILIO_SECRET}", TWILIO_SECRET),
    ("labelled_key", f"sms-notify --auth-token {TWILIO_TOKEN}", TWILIO_TOKEN),
    ("secret_assignment", f"sms-notify --twilio-api-secret {TWILIO_SECRET}", TWILIO_SECRET),
    ("labelled_key", f"api key secret {TWILIO_SECRET}", TWILIO_SECRET),
    ("gitlab_token", "deploy with gldt-Rw8Nq2Zk5Tm1Xv7Bc4Hy", "gldt-Rw8Nq2Zk5Tm1Xv7Bc4Hy"),
    ("gitlab_token", "runner token glrt-Hq3_Ls8Vd1Kx6Pz9Wn2M", "glrt-Hq3_Ls8Vd1Kx6Pz9Wn2M"),
    ("slack_token", f"socket mode with {SLACK_APP}", SLACK_APP),
    ("ssn", "GET /w9?tin_type=ssn&tax_id=512 38 9047 HTTP/1.1", "512 38 9047"),
    ("ssn", '{"socialSecurityNumber": "512389047"}', "512389047"),
    ("ssn", "TIN 512389047 on the W-9", "512389047"),
    ("ssn", "the form shows 512 38 9047 in box 2", "512 38 9047"),
    ("ssn", "name,ss_number\nDana Ruiz,512389047", "512389047"),
    ("card", "Maestro 6759 1234 5678 9015 expired", "6759 1234 5678 9015"),
    ("card", "card 6304987654321015", "6304987654321015"),
    ("iban", "moved funds to de89370400440532013000 yesterday", "de89370400440532013000"),
    ("iban", "payout_iban\ngb29nwbk60161331926819", "gb29nwbk60161331926819"),
    ("phone_national", "my number is 0172 555 0183", "0172 555 0183"),
    ("phone_national", "Rückruf bitte unter 0171/5550199", "0171/5550199"),
    ("phone_area", "meu celular é (11) 98765-4321", "(11) 98765-4321"),
    ("phone_national", "meu celular é 11 98765-4321", "11 98765-4321"),
    ("phone_national", "telefone: 21 35550147", "21 35550147"),
    ("phone_national", "my number is 0412 555 019", "0412 555 019"),
    ("phone", "ask for Lou, +33 (0)6 12 34 56 78", "+33 (0)6 12 34 56 78"),
    ("phone_nanp", "dial 1-415-555-0132 tomorrow", "1-415-555-0132"),
    ("phone_area", "office (03) 9555 0123 until 5", "(03) 9555 0123"),
    ("phone_area", "Zentrale (030) 5550 1234", "(030) 5550 1234"),
    ("phone_national", "name,mobile,team\nSam,07700 900123,ops", "07700 900123"),
    ("phone_national", "| name | phone |\n|---|---|\n| Sam | 030 55501234 |", "030 55501234"),
    ("phone_national", "contact_number;city\n0611 5550177;Wiesbaden", "0611 5550177"),
]


@pytest.mark.parametrize(("rule", "text", "value"), CASES)
def test_each_form_is_found_whole(rule, text, value):
    assert (rule, value) in [(f.rule.name, f.value) for f in DETECTOR.find(text)]


@pytest.mark.parametrize("carrier", ["message", "tool_arguments"])
def test_each_form_is_redacted_where_a_trace_holds_it(carrier):
    redactor = Redactor(DETECTOR, lambda _trace: Pseudonyms(), Pseudonyms, {})
    for rule, text, value in CASES:
        held = json.dumps({"cmd": f"> {text}\nexit 1", "cwd": "/srv"}) if carrier == "tool_arguments" \
            else f"> {text}\nexit 1"
        out = redactor.text(held, is_json=carrier == "tool_arguments")
        assert value not in out and json.dumps(value)[1:-1] not in out, (rule, out)
        if carrier == "tool_arguments":
            json.loads(out)


@pytest.mark.parametrize("text", [
    "id,count,total\n1,512389047,3",  # nine digits under a header that names nothing personal
    "device,phone_count\nA,0301234567",
    "sizes 100 512 38 9047 2048",  # a column of figures, not an SSN standing alone
    "| version | 1.24.3 |\n| build | 20240502 |",
    "cat tokens.txt | wc -l",
    "label=_(\"Password\"),\nstrip=False,\nhelp_text=password_validation.help_text_html(),",
    "ref ab12cdef3456789012345",  # compact lower case without an IBAN's structure or checksum
    "see (12) 3456 for details",
    "Maestro 6759 1234 5678 9016 expired",  # Luhn fails
    "ss 000 12 3456",  # area 000 is never issued
])
def test_near_misses_are_left_alone(text):
    assert DETECTOR.find(text) == []


def test_cells_take_their_column_header_or_their_row_label():
    csv = "2024-05-02 10:11:12,345 INFO name,phone\nSam,0301 2345678"  # a log prefix with a comma
    assert [(label, csv[s:e]) for label, s, e in labelled_cells(csv)] == [("phone", "0301 2345678")]
    tail = '{"cmd": "> name,phone\\nSam,0301 2345678", "cwd": "/srv"}'  # in JSON text, the document's rest after
    assert [f.value for f in DETECTOR.find(tail)] == ["0301 2345678"]
    table = "| field | value |\n|---|---|\n| API key | `k1` |"
    found = {(label, table[s:e]) for label, s, e in labelled_cells(table)}
    assert ("API key", "k1") in found and ("value", "k1") in found
    assert labelled_cells("one line, no table") == []


def test_a_zeroed_twilio_token_is_no_secret_but_its_sid_is_found():
    text = f"-u {TWILIO_SID}:00000000000000000000000000000000"
    assert [(f.rule.name, f.value) for f in DETECTOR.find(text)] == [("twilio_sid", TWILIO_SID)]
