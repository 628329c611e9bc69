"""Redaction's misses by cause (the ninth corpus's round): national ids by their public checks (UK NINO, Spanish
DNI/NIE, Canadian SIN), issuers' documented token formats, bot webhooks of more chat services, labels closed by a
quote, a backtick or a parenthesis, values named by a Terraform plan's `name` or a Redis command, and "call me" in
more languages before a phone number, session cookies in cookie jars, devtools exports and Rails' `_session_id`.
Values and texts written for these tests, each cause with near misses that stay."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()
KEY = "Rw4Lp9Xq2Nz7Kb5Jc8Hd3Ms6Tf1Gv0Ye"
HEX = "3c9e1f7a2b8d4e6f0a5c9b2d7e1f4a8c"
PW = "Vt7^kQ2!mZr9"


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


def _rules(text: str) -> list[str]:
    return [f.rule.name for f in DETECTOR.find(text)]


@pytest.mark.parametrize("text,value", [
    ("NI number: JK 31 42 77 B", "JK 31 42 77 B"),
    ("claimant JK 31 42 77 B, payroll ref 5521", "JK 31 42 77 B"),      # spaced: its shape alone
    ('{"nino": "JK314277B", "tax_code": "1257L"}', "JK314277B"),
    ("National Insurance No. JK314277B", "JK314277B"),
    ("employee_id,ni_number,status\n8812,JK314277B,active", "JK314277B"),
    ("DNI: 48213957T", "48213957T"),
    ("Spanish ID (DNI): 48213957-T", "48213957-T"),
    ('{"nie": "X4821395C"}', "X4821395C"),
    ("NIE Y7301926S", "Y7301926S"),
    ("SIN: 273 184 606", "273 184 606"),
    ("Social Insurance Number 519-027-361", "519-027-361"),
    ("NAS : 631702859", "631702859"),
    ('{"sin": "273184606"}', "273184606"),
    ('{"spanish_id_(dni)": "48213957T"}', "48213957T"),
    ("ticket,status,dni,created\n6381,open,48213957-T,2026-05-20", "48213957-T"),   # a column's header
    ('1769883434.98 [0 10.0.4.24:7999] "HSET" "user:7999" "nas" "273-184-606"', "273-184-606"),
])
def test_national_ids_by_their_checks(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text", [
    "NI number: QQ123456C",               # Q never opens a NINO
    "NI number: BG314277B",               # a prefix HMRC never issued
    "NI number: JK314277E",               # suffix beyond A-D
    "ref AB 12 34 56 E",
    "DNI: 48213957A",                     # the mod-23 letter is T
    "NIE X4821395D",
    "SIN: 273 184 607",                   # fails Luhn
    "SIN: 046 454 286",                   # Service Canada's own example: 0 is never issued
    "SIN: 819 027 368",                   # 8: business numbers, not people
    "sin problemas, pedido 273184606",    # Spanish "without"
    "sin, pero el pedido 273184606 llegó",
    "Ich habe nie 48213957T gesehen",     # German "never"
    "order 273184606 shipped",
])
def test_national_id_near_misses_stay(text: str) -> None:
    assert "national_id" not in _rules(text), text


OKTA = "00Ab3dEf5gH7jK9mN1pQ3rS5tU7vW9xY1zA3bC5dE7"
ATLASSIAN = "ATATT3xFfGF0" + "Qm7-Zt2_Lp9" * 16 + "=1A2B3C4D"


@pytest.mark.parametrize("text,value", [
    (f"falling back to confluence.token {ATLASSIAN}", ATLASSIAN),
    (f"export BB_AUTH_STRING=ATBB{KEY}", f"ATBB{KEY}"),
    (f"repo token ATCTT3xFfGN0{KEY}", f"ATCTT3xFfGN0{KEY}"),
    (f"using databricks.token dapi{HEX}-2", f"dapi{HEX}-2"),
    (f"airtable: patQ7m2Zt9Lp4Xw8K.{HEX}{HEX}", f"patQ7m2Zt9Lp4Xw8K.{HEX}{HEX}"),
    ("DT dt0c01.Q7M2ZT9LP4XW8KR3N6B1V5C0." + "A7K2M9Q4" * 8, "dt0c01.Q7M2ZT9LP4XW8KR3N6B1V5C0." + "A7K2M9Q4" * 8),
    ("VAULT_TOKEN=hvs.q7Lm2Np9Rt4Vx8Zb3Cd6Fg1H", "hvs.q7Lm2Np9Rt4Vx8Zb3Cd6Fg1H"),
    ("vault_token: hvs.qLmNpRtVxZbCdFgHjWqEcAaK", "hvs.qLmNpRtVxZbCdFgHjWqEcAaK"),     # base62 with no digit
    ("newrelic.user_key NRAK-Q7LM2NP9RT4VX8ZB3CD6FG1HJ5W", "NRAK-Q7LM2NP9RT4VX8ZB3CD6FG1HJ5W"),
    (f"sentry: sntryu_{HEX}{HEX}", f"sntryu_{HEX}{HEX}"),
    ("ca key v1.0-3c9e1f7a2b8d4e6f0a5c9b2d-" + HEX * 4 + "3c9e1f7a2b8d4e6f0a",
     "v1.0-3c9e1f7a2b8d4e6f0a5c9b2d-" + HEX * 4 + "3c9e1f7a2b8d4e6f0a"),
    (f"falling back to okta.client.token {OKTA}", OKTA),
    ('"headers": [["Host", "shop.example"], ["Authorization", "SSWS ' + OKTA + '"]]', OKTA),
])
def test_issuer_token_formats(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text", [
    "VAULT_TOKEN=hvs.XXXXXXXXXXXXXXXXXXXXXXXXXXXX",
    "see hvs.your_vault_token_goes_here_please",
    "token dapi00000000000000000000000000000000",
    "set NRAK-XXXXXXXXXXXXXXXXXXXXXXXXXXX in the env",
    "the okta org id 00o1a2b3c4d5e6f7g8h9",          # an Okta object id, not 00 + 40
    '"headers": [["Accept", "application/json"], ["User-Agent", "python-requests/2.32.3"]]',
])
def test_issuer_token_near_misses_stay(text: str) -> None:
    assert _values(text) == [], text


@pytest.mark.parametrize("text,value", [
    ("notify https://api.telegram.org/bot7012345678:AAq7Lm2Np9Rt4Vx8Zb3Cd6Fg1Hj5Wq2E4C6/sendMessage",
     "7012345678:AAq7Lm2Np9Rt4Vx8Zb3Cd6Fg1Hj5Wq2E4C6"),
    ("alert to https://open.feishu.cn/open-apis/bot/v2/hook/3c9e1f7a-2b8d-4e6f-8a5c-9b2d7e1f4a8c",
     "3c9e1f7a-2b8d-4e6f-8a5c-9b2d7e1f4a8c"),
    ("https://open.larksuite.com/open-apis/bot/v2/hook/7d2a9c4e-1b3f-4a5d-9e8c-2f6b0a4d8c1e",
     "7d2a9c4e-1b3f-4a5d-9e8c-2f6b0a4d8c1e"),
    ("https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=5b8e2d1c-9a4f-4e7b-8c3d-1f6a0b9e2d4c",
     "5b8e2d1c-9a4f-4e7b-8c3d-1f6a0b9e2d4c"),
    (f"https://oapi.dingtalk.com/robot/send?access_token={HEX}{HEX}", f"{HEX}{HEX}"),
    ("ROCKET_URL=https://chat.example.dev/hooks/q7Lm2Np9Rt4Vx8Zb3/Cd6Fg1Hj5Wq2E4C6A8B0q7Lm2Np9Rt4Vx8Zb3Cd6Fg1Hj5Wq2",
     "q7Lm2Np9Rt4Vx8Zb3/Cd6Fg1Hj5Wq2E4C6A8B0q7Lm2Np9Rt4Vx8Zb3Cd6Fg1Hj5Wq2"),
])
def test_bot_webhooks(text: str, value: str) -> None:
    assert value in _values(text), text


def test_a_webhook_with_zeroed_ids_but_a_real_secret_is_found() -> None:
    """Only a value that is filler in every part is a documented placeholder."""
    found = _values("https://hooks.slack.com/services/T00000000/B00000000/q9W8e7R6t5Y4u3I2o1P0aSdF")
    assert any("q9W8e7R6t5Y4u3I2o1P0aSdF" in v for v in found)


@pytest.mark.parametrize("text", [
    "https://hooks.slack.com/services/XXX/YYY/ZZZ",
    "SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "https://discord.com/api/webhooks/000000000000000000/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "https://open.feishu.cn/open-apis/bot/v2/hook/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "https://open.feishu.cn/open-apis/bot/v2/hook/your-webhook-token-goes-here",
    "see https://core.telegram.org/bots/api#sendmessage",
])
def test_webhook_near_misses_stay(text: str) -> None:
    assert _values(text) == [], text


@pytest.mark.parametrize("text,value", [
    (f"token configurado (JIRA_API_TOKEN): {KEY}", KEY),
    (f"SELECT id FROM accounts WHERE `smtp_pass` = '{PW}' LIMIT 1;", PW),
    (f'{{"API-Schlüssel": "{HEX}{HEX}"}}', f"{HEX}{HEX}"),
    (f'{{"vars": {{"Chiave_API": "\'{KEY}\'"}}}}', KEY),
    (f"Пароль БД: {PW}", PW),
])
def test_labels_closed_by_a_quote_or_parenthesis(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text", [
    "refresh (ACCESS_TOKEN): see the vault entry",
    "A1 = '%s:%s' % (self.username, self.password)\nA2 = '%s:%s' % (method, path)",
    "SELECT id FROM users WHERE `password` = ? LIMIT 1;",
    "WHERE `api_key` = :api_key",
    '{"vars": {"api_key": "\'<redacted>\'"}}',
])
def test_closed_label_near_misses_stay(text: str) -> None:
    assert _values(text) == [], text


@pytest.mark.parametrize("text,value", [
    ('  + resource "aws_ssm_parameter" "db" {\n      + name  = "/prod/PGPASSWORD"\n      + type  = "SecureString"\n'
     f'      + value = "{PW}"\n    }}', PW),
    ('  + resource "aws_ssm_parameter" "k" {\n      + name  = "/prod/Chiave API"\n      + type  = "String"\n'
     f'      + value = "{KEY}"\n    }}', KEY),
    (f'1767222821.722282 [0 unix:/run/redis.sock] "HSET" "user:7" "api_key" "{KEY}" "plan" "pro"', KEY),
    (f'1767222821.722282 [0 10.0.1.21:16923] "AUTH" "{PW}"', PW),
    (f'1767222821.722282 [0 10.0.1.21:16923] "AUTH" "svc" "{PW}"', PW),
    (f'1767222821.722282 [0 10.0.1.21:16923] "SETEX" "db_password" "300" "{PW}"', PW),
])
def test_values_named_by_plans_and_redis_commands(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text", [
    '  + resource "aws_ssm_parameter" "lvl" {\n      + name  = "/prod/LOG_LEVEL"\n      + value = "debug"\n    }',
    '1767222821.722282 [0 10.0.1.21:16923] "GET" "password_reset:42"',
    '1767222821.722282 [0 10.0.1.21:16923] "SET" "password_reset:42" "1"',
    '1767222821.722282 [0 10.0.1.21:16923] "HSET" "user:7" "api_key_rotated_at" "2026-01-05T10:00:00Z"',
])
def test_plan_and_redis_near_misses_stay(text: str) -> None:
    assert _values(text) == [], text


@pytest.mark.parametrize("text,value", [
    ("звоните по номеру 8 (912) 345-67-80", "8 (912) 345-67-80"),
    ("моб. 8-916-204-33-71", "8-916-204-33-71"),
    ("hívjon a 055 2841 937 számon", "055 2841 937"),
    ("soita 3471208654, kiitos", "3471208654"),
    ("ring meg på 512-604-318", "512-604-318"),
    ("me liga no 348 120 7719", "348 120 7719"),
    ("sunați-mă la 347-1208654", "347-1208654"),
    ("recapito telefonico: 347 120 8654", "347 120 8654"),
    ("zadzwoń pod 512 604 318", "512 604 318"),
    ("zadzwoń 512-604-318", "512-604-318"),
])
def test_call_me_before_a_phone_number(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text", [
    "звоните по номеру горячей линии, код 12",
    "soita huomenna klo 14.30",
    "hívjon 2 munkanapon belül",
    "zadzwoń pod numer zamówienia",
])
def test_call_me_near_misses_stay(text: str) -> None:
    assert _values(text) == [], text


COOKIE = "q7lm2np9rt4vx8zb3cd6fg1hj5wq2e4c"


@pytest.mark.parametrize("text,value", [
    (f"shop.example\tTRUE\t/\tTRUE\t1796000000\tsessionid\t{COOKIE}", COOKIE),             # a Netscape cookie jar
    (f'{{"out": "shop.example\\tTRUE\\t/\\tFALSE\\t1796000000\\tPHPSESSID\\t{COOKIE}"}}', COOKIE),  # ... in JSON
    (f'[{{"name": "connect.sid", "value": "s%3A{COOKIE}.Kp3Zq8Lm2Nx7", "domain": ".shop.example"}}]',
     f"s%3A{COOKIE}.Kp3Zq8Lm2Nx7"),                                                        # a devtools export
    (f"Set-Cookie: _session_id={HEX}; path=/; HttpOnly", HEX),                              # Rails
    (f'curl -b "_session_id={HEX}" https://shop.example/', HEX),
])
def test_session_cookies_in_jars_and_exports(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text", [
    f'{{"name": "session_id", "value": "{HEX}"}}',                 # an id, not a credential
    f"trace session_id={HEX} span_id=9f1c2a7b3e4d5f60",
    "shop.example\tTRUE\t/\tTRUE\t1796000000\t_ga\tGA1.2.1234567890.1700000000",
    f"self._session_id={HEX[:8]}",
])
def test_cookie_near_misses_stay(text: str) -> None:
    assert _values(text) == [], text
