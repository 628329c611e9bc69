"""Values as coding agents' changes and CI logs hold them (issue 40, the twenty-sixth corpus's causes): session
cookies by their frameworks' formats and under keys that say cookie, `oathtool` keys, recovery codes a blank line
(or a diff's prefix) below their label, dotted property names, API keys in query parameters, and the label words
of the translation table for recovery codes, setup keys, social security and identity numbers. Values written for
these tests; the near misses beside each form must stay."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()
ASPNET = "CfDJ8Kq2Zr7Tn4Lw9Xb1Mv6Pc3Hd8Gf5Ys0Ua2Xo4Qe7Rt1Yu3Io5Pa9Sd2Fg6Hj8Kl0Zx4Cv7Bn1Mq3We5Rt"
LARAVEL = "eyJpdiI6IkJxN2RaM0xwUTl0Vm1LeFI0bkhzQWc9PSIsInZhbHVlIjoiUzJkTXBWN3JLcUx3WjluQmg0VGY2WWMxIn0%3D"
FLASK = "eyJ1c2VyX2lkIjogIjQ4MTUifQ.Zx9Kq2.Rt7Yu3Io5Pa9Sd2Fg6Hj8Kl0Zx4"
EXPRESS = "s%3AQm7Zt2Rk9Wx4Lp1Vn6Hc3Jd8Gs5Fb0.Ye2Ua7To4Xq8Zr1Mw6Pv3Kc9Hn5Jb2Ld7Tg0Sf4Ra"


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize("cookie", [ASPNET, LARAVEL, FLASK, EXPRESS])
def test_framework_session_cookies_anywhere(cookie: str) -> None:
    assert _values(f"curl -b {cookie} https://staging.internal/api") == [cookie]


@pytest.mark.parametrize("text", [
    "SESSION_COOKIE=vq3k8zt1mw7rj2xc9pl4hn6sd0fb5gya",                       # a PHP session id under its env name
    'session_cookie = "vq3k8zt1mw7rj2xc9pl4hn6sd0fb5gya"',                    # TOML
    json.dumps({"sessionCookie": "vq3k8zt1mw7rj2xc9pl4hn6sd0fb5gya"}),
    'requests.get(url, cookies={"session": "vq3k8zt1mw7rj2xc9pl4hn6sd0fb5gya"})',
    'os.environ["SESSION_COOKIE"] = "vq3k8zt1mw7rj2xc9pl4hn6sd0fb5gya"',
])
def test_a_session_cookie_under_a_key_that_says_cookie(text: str) -> None:
    assert _values(text) == ["vq3k8zt1mw7rj2xc9pl4hn6sd0fb5gya"]


@pytest.mark.parametrize("text", ["cookie_consent: accepted_all_2024_banner", "CookieBanner: dismissed",
                                  "SESSION_COOKIE_SECURE=true", "session_cookie_name = \"app_session_v2\"",
                                  '{"sessionId": "sess_Kq2Zr7Tn4Lw9Xb1Mv6Pc3Hd8"}'])  # a trace platform's session
def test_cookie_settings_stay(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "key"), [
    ("$ oathtool --totp -b K7QW2XZP4MNR5TVB", "K7QW2XZP4MNR5TVB"),
    ('oathtool -b --totp "K7QW2XZP4MNR5TVB"', "K7QW2XZP4MNR5TVB"),
    ("oathtool --totp --digits=8 9f3a1c77e0b24d58a6c2", "9f3a1c77e0b24d58a6c2"),   # hex, the default
    ("app.mfa.seed=K7QW2XZP4MNR5TVB", "K7QW2XZP4MNR5TVB"),
])
def test_authenticator_keys_given_to_oathtool_and_in_properties(text: str, key: str) -> None:
    assert _values(text) == [key]


@pytest.mark.parametrize(("text", "code"), [
    ("Your two-factor authentication recovery codes are:\n\n7c2d9-a41f3\n\nDuring sign in, use one", "7c2d9-a41f3"),
    (json.dumps({"observation": "Your recovery codes are:\n\n6172 9034\n\nKeep them safe"}), "6172 9034"),
    ("-Your two-factor authentication recovery codes are:\n-\n-7c2d9-a41f3\n-\n", "7c2d9-a41f3"),  # a diff
    ("app.recovery.code=7c2d9-a41f3", "7c2d9-a41f3"),
])
def test_recovery_codes_below_a_blank_line_and_in_properties(text: str, code: str) -> None:
    assert _values(text) == [code]


def test_an_api_key_in_a_query_parameter() -> None:
    url = "GET https://api.openweathermap.org/data/2.5/weather?q=Oslo&appid=5c1e9a7f3b2d4860a9e7c5b3d1f2e4a6"
    assert _values(url) == ["5c1e9a7f3b2d4860a9e7c5b3d1f2e4a6"]
    assert _values("GET /search?q=Oslo&units=metric&page=2") == []


@pytest.mark.parametrize(("text", "value"), [
    ("Mã khôi phục: 7c2d9-a41f3", "7c2d9-a41f3"),                 # Vietnamese: recovery code
    ("Κλειδί ρύθμισης: K7QW2XZP4MNR5TVB", "K7QW2XZP4MNR5TVB"),     # Greek: setup key
    ("Ключ налаштування: K7QW2XZP4MNR5TVB", "K7QW2XZP4MNR5TVB"),   # Ukrainian: setup key
    ("หมายเลขประกันสังคม: 219099999", "219099999"),                  # Thai: social security number
    ("Numărul de securitate socială: 219-09-9999", "219-09-9999"),  # Romanian
    ("Номер документа: 811228-9874", "811228-9874"),                # Russian: document number (a personnummer)
    ("Azonosítószám: 811228-9874", "811228-9874"),                  # Hungarian: identification number
    ("证件号码：811228-9874", "811228-9874"),                        # Chinese: document number
])
def test_label_words_of_the_translation_table(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_translated_labels_before_other_numbers_stay() -> None:
    assert _values("Номер документа: 2024-118") == []
    assert _values("Mã khôi phục: không có") == []


@pytest.mark.parametrize("stamp", ["2026-07-25T03:04:14.6578560Z ", "[2026-01-21T22:23:14.127Z] ",
                                   "\x1b_bk;t=1782966657617\x07"])
def test_a_ci_logs_line_stamps_stand_between_label_and_value(stamp: str) -> None:
    lines = ["Your two-factor authentication recovery codes are:", "", "7c2d9-a41f3", "", "Keep them safe"]
    log = "\n".join(stamp + line for line in lines)
    assert _values(log) == ["7c2d9-a41f3"]
    assert _values(json.dumps({"log": log})) == ["7c2d9-a41f3"]
