"""The formats real logs hold values in (issue 40): env, YAML, JSON and CLI passwords, AWS secret keys, webhooks,
connection-string keys, labels with spaces, SSNs, national phone numbers, card and IBAN separators, and values
disguised by invisible characters, full-width forms and escapes. Values written for these tests."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector
from tracegym.redact.disguise import normalize
from tracegym.redact.pseudonyms import Pseudonyms
from tracegym.redact.tables import Redactor

DETECTOR = Detector()
AWS_SECRET = "Zq3R8tYv1Lm9Xc2Wb7Nk/Hs6Jd0Pf5Ga8Te1UyQw"  # 40 characters of base64, as AWS issues them
AZURE_KEY = "Jm4Qp8Zt2Xw6Rb1Nc5Vk9Hd3Gf7Ls0Ya/m4Qp8Zt2Xw6Rb1Nc5Vk9Hd3Gf7Ls0YaPe2Tu6Wi9Oq3Zx7Cv1Bn5M=="  # 88
DISCORD = "Ab-Cd_Ef12Gh34Ij56Kl78Mn90Op-Qr_St12Uv34Wx56Yz78Ab90Cd-Ef_Gh12Ij34Kl56"

# (rule, text, value that must go): each written as a config, a shell or a person writes it.
CASES = [
    ("password", "DB_PASSWORD=Kestrel-2291!x", "Kestrel-2291!x"),
    ("password", "PGPASSWORD=gr4nite#Owl psql -h pg.local -U ops", "gr4nite#Owl"),
    ("password", "services:\n  db:\n    environment:\n      MYSQL_ROOT_PASSWORD: Lantern_8812", "Lantern_8812"),
    ("password", '{"login": "ops", "userPassword": "Qu1ck!Fox77"}', "Qu1ck!Fox77"),
    ("password", "mysqldump -u backup --password m0ssy_Stone5 shop", "m0ssy_Stone5"),
    ("password", "REDIS_PASS=Tangerine.4417", "Tangerine.4417"),
    ("password", "<Password>Harbor9^Gull</Password>", "Harbor9^Gull"),
    ("password", "Passwort: Sonne2024!", "Sonne2024!"),
    ("password", "mot de passe : Soleil-77", "Soleil-77"),
    ("aws_secret_key", f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
    ("aws_secret_key", f'{{"AccessKeyId": "AKIAQ2W3E4R5T6Y7U8I9", "SecretAccessKey": "{AWS_SECRET}"}}', AWS_SECRET),
    ("aws_secret_key", f"AKIAQ2W3E4R5T6Y7U8I9,{AWS_SECRET}", AWS_SECRET),
    ("slack_webhook", "hook: https://hooks.slack.com/services/T0ABCDEF1/B0GHIJKL2/q9W8e7R6t5Y4u3I2o1P0aSdF",
     "T0ABCDEF1/B0GHIJKL2/q9W8e7R6t5Y4u3I2o1P0aSdF"),
    ("discord_webhook", f"curl -d @msg.json https://discord.com/api/webhooks/112233445566778899/{DISCORD}",
     f"112233445566778899/{DISCORD}"),
    ("stripe_webhook_secret", "STRIPE_SIGNING=whsec_Lq8Zr2Wx5Tn9Vb3Mk7Pj1Hd6Gf4Sc0Ya",
     "whsec_Lq8Zr2Wx5Tn9Vb3Mk7Pj1Hd6Gf4Sc0Ya"),
    ("connection_string_key", f"DefaultEndpointsProtocol=https;AccountName=logs7;AccountKey={AZURE_KEY};"
     "EndpointSuffix=core.windows.net", AZURE_KEY),
    ("connection_string_key", "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=send;"
     "SharedAccessKey=c2VuZC1vbmx5LWtleS0xMjM0NTY3ODkwYWJjZGVm0=", "c2VuZC1vbmx5LWtleS0xMjM0NTY3ODkwYWJjZGVm0="),
    ("labelled_key", "API Key: 7d1f0c9e2b8a4635af10be92c4d7e5f3", "7d1f0c9e2b8a4635af10be92c4d7e5f3"),
    ("labelled_key", "Your Access Token is Vt83kQm2Lz7Rw0Xy5Nb1Hc4Jd9", "Vt83kQm2Lz7Rw0Xy5Nb1Hc4Jd9"),
    ("ssn", "applicant SSN 512-38-9047 on file", "512-38-9047"),
    ("ssn", "social security number: 512 38 9047", "512 38 9047"),
    ("phone_national", "phone 7185550132", "7185550132"),
    ("phone_national", "Tel: 0113 496 0731", "0113 496 0731"),
    ("phone_national", "portable : 07 45 12 86 39", "07 45 12 86 39"),
    ("phone_national", "Handy: 0172 5550183", "0172 5550183"),
    ("phone_national", "mobile no. 91234 56780", "91234 56780"),
    ("phone_national", "mob: 07911 123456", "07911 123456"),
    ("phone", "WhatsApp +91 91234 56780", "+91 91234 56780"),
    ("card", "paid with 4526_0181_5908_3012", "4526_0181_5908_3012"),
    ("card", "card 5298.2597.9190.7480 declined", "5298.2597.9190.7480"),
    ("iban", "refund to gb82 west 1234 5698 7654 32 please", "gb82 west 1234 5698 7654 32"),
    ("iban", "IBAN de89370400440532013000", "de89370400440532013000"),
    ("email", "ESCALATE TO BILLING@ACME-EXAMPLE.ORG NOW", "BILLING@ACME-EXAMPLE.ORG"),
    ("email", "Kontakt: zoë.brandt@bücherei.example", "zoë.brandt@bücherei.example"),
    ("email", "GET /unsubscribe?addr=ops.lead%40acme-example.org HTTP/1.1", "ops.lead%40acme-example.org"),
    ("email", 'raw body {"to": "r.ng\\u0040acme.io"}', "r.ng\\u0040acme.io"),
    ("openai_key", "key sk-proj-R7t\u200bQ2w9Zx4Lm8Nc3Vb6Hk1Jd5Gf0Sa", "sk-proj-R7t\u200bQ2w9Zx4Lm8Nc3Vb6Hk1Jd5Gf0Sa"),
    ("github_token", "token ghp\uff3fA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
     "ghp\uff3fA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"),
]


@pytest.mark.parametrize(("rule", "text", "value"), CASES)
def test_each_format_is_found_whole(rule, text, value):
    assert (rule, value) in [(f.rule.name, f.value) for f in DETECTOR.find(text)]


@pytest.mark.parametrize("carrier", ["message", "tool_arguments", "tool_result", "metadata"])
def test_each_format_is_redacted_where_a_trace_holds_it(carrier):
    redactor = Redactor(DETECTOR, lambda _trace: Pseudonyms(), Pseudonyms, {})
    for rule, text, value in CASES:
        held = json.dumps({"note": f"see below\n{text}\nthanks"}) if carrier in ("tool_arguments", "metadata") \
            else f"see below\n{text}\nthanks"
        out = redactor.text(held, is_json=carrier in ("tool_arguments", "metadata"))
        assert value not in out and json.dumps(value)[1:-1] not in out, (rule, out)
        if carrier in ("tool_arguments", "metadata"):
            json.loads(out)  # still JSON


@pytest.mark.parametrize("text", [
    "DB_PASSWORD=${DB_PASSWORD}", "password: ********", "POSTGRES_PASSWORD_FILE=/run/secrets/pg",
    "PASS: tests/test_io.py::test_roundtrip", "docker login --password-stdin", "bypass=cache1234",
    "call_id: 012345678901", "contact count 2", "SSN 666-12-3456", "ssn: 123-00-4567",
    "IBAN DE00 3704 0044 0532 0130 00", "card 4111.1111.1111.1112", "trace 9f86d081884c7d659a2feaa0c55ad015",
    "api_key_path = /etc/app/keys/primary.pem", "Telefon 030",
])
def test_near_misses_are_left_alone(text):
    assert DETECTOR.find(text) == []


def test_normalized_findings_map_back_to_the_written_span_and_share_a_placeholder():
    text = "mail ana%40example.org or ana@example.org"
    norm = normalize(text)
    assert norm is not None and norm.text == "mail ana@example.org or ana@example.org"
    assert norm.original(5, 20) == (5, 22)
    found = DETECTOR.find(text)
    assert [f.value for f in found] == ["ana%40example.org", "ana@example.org"]
    names = Pseudonyms()
    assert {names.placeholder(f.rule.label, f.key) for f in found} == {"<EMAIL_1>"}


def test_invisible_characters_at_a_values_edge_are_not_taken():
    text = "key:\u200bsk-proj-R7tQ2w9Zx4Lm8Nc3Vb6Hk1Jd5Gf0Sa\u200b."
    [found] = DETECTOR.find(text)
    assert found.value == "sk-proj-R7tQ2w9Zx4Lm8Nc3Vb6Hk1Jd5Gf0Sa"
