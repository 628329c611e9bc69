"""Forms issue 40's fresh corpus found missed, generalised from the specifications: passwords as shells, logs, XML
config and prose in several languages write them, Teams and workflow webhook URLs and secrets in URL query
parameters, Twilio SIDs and their positional secrets, the national plans of Spain, Italy and Japan; and near
misses that are not values (image-density file names, SSH remotes, YAML tags). Values written for these tests."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector
from tracegym.redact.pseudonyms import Pseudonyms
from tracegym.redact.tables import Redactor

DETECTOR = Detector()
SID = "AC" + "4e8b2d6f0a9c1e3b5d7f2a4c6e8b0d1f"
KEY_SID = "SK" + "9d1f3b5e7a0c2e4f6b8d0a1c3e5f7b9d"
HEX_TOKEN = "b7e2c9a4f1d8053e6a2c7b9d4f0e1a8c"
TEAMS_PATH = ("3f2a9c1e-7b4d-4e8a-9c2f-1d6b8e0a4c7f@8e1d4b7a-2c9f-4a6e-b3d1-7f0c5e9a2b4d/IncomingWebhook/"
              "c41e9a7f2b8d4e6a0c3f5b7d9e1a2c4f/5b8e1d4a-7c2f-4b9e-a6d3-0f8c2e5a7b1d")
WORKFLOW_SIG = "Qm7-tZ2_kR9vX4pL1wN8sB3yH6cF0dJ5gA2eK7uM9oE"
AMZ_SIG = "7d3e9a1c5b8f2e4d6a0c9b7e1f3a5d8c2e4b6f9a1d3c5e7b9f0a2c4e6d8b1f3a"

# (rule, text, value that must go)
CASES = [
    ("password", "curl -u mkowalski:tundra-Violet-82 https://ci.example.net/api/json", "tundra-Violet-82"),
    ("password", "curl --user=ops:R7#kq!2mZ -X POST https://ci.example.net", "R7#kq!2mZ"),
    ("password", "2025-03-02T10:00:00Z WARN auth failed user=lena pass=Gq4!vT9e reason=expired", "Gq4!vT9e"),
    ("password", "keytool -importkeystore -srcstorepass Ch4ngeIt.now -destkeystore a.p12", "Ch4ngeIt.now"),
    ("password", "openssl pkcs12 -export -passout pass:Pk12-export-55 -out cert.p12", "pass:Pk12-export-55"),
    ("password", "sshpass -p 'W1ndow$ill' ssh deploy@build.example.org", "W1ndow$ill"),
    ("password", "mysqldump -u backup -pBk9_nightly shop > shop.sql", "Bk9_nightly"),
    ("password", '<add key="SmtpPassword" value="mail-Relay-2024" />', "mail-Relay-2024"),
    ("password", "the password for the build VM is Harbor-light-77, rotate it after", "Harbor-light-77"),
    ("password", "admin password reset to Quill8842! by the helpdesk", "Quill8842!"),
    ("password", "new passcode: 7z!Rk2Pw (valid 24h)", "7z!Rk2Pw"),
    ("password", "Le mot de passe est : abricot-Lune-31", "abricot-Lune-31"),
    ("password", "Minha senha é jaguar.azul.19", "jaguar.azul.19"),
    ("password", "[konto]\nhaslo = Zimowy#Las4\n", "Zimowy#Las4"),
    ("password", "[db]\nsalasana = Revontuli-2023\n", "Revontuli-2023"),
    ("password", "mdp : girafe.violette.88", "girafe.violette.88"),
    ("password", "パスワード：sakura-Kawa-56", "sakura-Kawa-56"),
    ("password", "clave de acceso: naranja_Roja_42", "naranja_Roja_42"),
    ("teams_webhook", f"TEAMS_URL=https://contoso.webhook.office.com/webhookb2/{TEAMS_PATH}", TEAMS_PATH),
    ("teams_webhook", f"POST https://outlook.office.com/webhook/{TEAMS_PATH} -> 200", TEAMS_PATH),
    ("url_secret", "https://prod-07.northeurope.logic.azure.com:443/workflows/0c2e/triggers/manual/paths/invoke"
     f"?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={WORKFLOW_SIG}", WORKFLOW_SIG),
    ("url_secret", "GET https://bucket.s3.amazonaws.com/report.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256"
     f"&X-Amz-Expires=900&X-Amz-Signature={AMZ_SIG}", AMZ_SIG),
    ("url_secret", "wss://stream.example.io/v1/feed?token=tK4p9Wz2Lq7Rx1Vb", "tK4p9Wz2Lq7Rx1Vb"),
    ("twilio_sid", f"TWILIO_ACCOUNT_SID={SID}", SID),
    ("twilio_sid", f"POST https://api.twilio.com/2010-04-01/Accounts/{SID}/Messages.json", SID),
    ("twilio_secret", f"Twilio for the pager: SID {SID} token {HEX_TOKEN}", HEX_TOKEN),
    ("twilio_secret", f'client = Client("{KEY_SID}", "{HEX_TOKEN}")', HEX_TOKEN),
    ("phone_national", "Teléfono: 612 48 90 37", "612 48 90 37"),
    ("phone_national", "tlf 914 27 38 56", "914 27 38 56"),
    ("phone_national", "phone=722918364 queue=billing", "722918364"),
    ("phone_national", "Il mio cellulare è 347 281 9036.", "347 281 9036"),
    ("phone_national", "telefono: 0432 51274", "0432 51274"),
    ("phone_national", "携帯電話は090-3847-2916です。", "090-3847-2916"),
    ("phone_national", "電話番号 06(4817)3920 までご連絡ください", "06(4817)3920"),
    ("phone_national", "TEL: 03-5847-2019", "03-5847-2019"),
    ("phone_national", "name,電話番号,city\nHaruto Ito,0459183720,Yokohama", "0459183720"),
    ("ssn", '{"out": "| Name | SSN | Verified |\\n|---|---|---|\\n| Ada Ng | 512389047 | yes |", "rc": 0}',
     "512389047"),
    ("card", "cc_name=Ana+Ruiz&cc_number=4526+0181+5908+3012&cc_exp=09%2F27", "4526+0181+5908+3012"),
]


@pytest.mark.parametrize(("rule", "text", "value"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_form_is_found_whole(rule, text, value):
    found = [(f.rule.name, f.value) for f in DETECTOR.find(text)]
    assert (rule, value) in found, found


@pytest.mark.parametrize("text", [
    "git clone git@github.com:acme/billing.git",
    "remote: git@gitlab.example.com:group/app.git",
    '<img src="hero@2x.png" srcset="hero@3x.png 3x">',
    "background: url(icons/close@1.5x.webp)",
    "password: !vault |",
    "password: $DB_PASSWORD",
    "password: ${{ secrets.DB_PASSWORD }}",
    "set PGPASSWORD=%PGPASS% before psql",
    "password error: connection refused",
    "mysql -u root -p shop",
    "curl -u token: https://api.example.com",
    "passed=12 failed=0 skipped=3",
    "jdbc:sqlserver://db.example.com:1433;databaseName=crm;user=app;integratedSecurity=true",
    "https://example.com/search?q=quarterly+report&key=value",
    "order 612 48 90 37 shipped",
    "Il lotto 347 281 9036 è pronto",
])
def test_near_misses_are_left_alone(text):
    assert DETECTOR.find(text) == []


def test_an_email_beside_a_remote_and_an_image_is_still_found():
    found = [(f.rule.name, f.value) for f in DETECTOR.find(
        "mail ana.ruiz@example.org about git@github.com:acme/app.git and logo@2x.png")]
    assert found == [("email", "ana.ruiz@example.org")]


def test_a_jdbc_password_with_an_encoded_at_sign_is_redacted_whole():
    text = "jdbc:sqlserver://db.example.com:1433;databaseName=crm;user=app;password=Rk7~%40w2Lp9;encrypt=true"
    redacted = Redactor(DETECTOR, lambda _trace: Pseudonyms(), Pseudonyms, {}).text(text, is_json=False)
    assert "w2Lp9" not in redacted and "Rk7" not in redacted, redacted
    assert "encrypt=true" in redacted


@pytest.mark.parametrize(("text", "value"), [
    (f"Twilio: SID {SID} token {HEX_TOKEN}", HEX_TOKEN),
    ("Teléfono de contacto: 612 48 90 37", "612 48 90 37"),
    ("パスワード：sakura-Kawa-56", "sakura-Kawa-56"),
])
def test_forms_are_redacted_inside_json_tool_results(text, value):
    carried = json.dumps({"stdout": text, "exit_code": 0})
    redacted = Redactor(DETECTOR, lambda _trace: Pseudonyms(), Pseudonyms, {}).text(carried, is_json=True)
    assert value not in json.loads(redacted)["stdout"]
    assert json.loads(redacted)["exit_code"] == 0
