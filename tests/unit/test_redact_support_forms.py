"""Secrets as support desks and their customers write them (issue 40, the twenty-eighth corpus's causes): a
login's user and password as a pair, a short secret a person chose after a word naming a credential, Google's
backup codes, an authenticator secret after a long label. Values written for these tests."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "value"), [
    ("Vendor portal (carrier claims) login: noor13 / Tmp-i12R-8807&", "Tmp-i12R-8807&"),
    ("[Internal note] login: chloé45 / cobalt-harbor-maple-12\n(not visible to the customer)",
     "cobalt-harbor-maple-12"),
    ("Caller stated: login: maya74 / Lighthouse734#.", "Lighthouse734#"),
    ("creds: svc_backup:Qv7-mPz-0xk", "Qv7-mPz-0xk"),
    ("Username/password: bob / Hunter2!", "Hunter2!")])
def test_a_login_written_as_user_and_password(text: str, value: str) -> None:
    assert _values(text) == [value]
    assert _values(json.dumps({"body": text})) == [value]


@pytest.mark.parametrize("text", ["login: https://portal.example.com/login", "last login: 2024-09-15T06:32:00Z",
                                  "login: bob", "sign-in: Mon 12:30", "Login: via SSO / SAML",
                                  '{"subject": "Cannot log in after reset", "description": "static/js/main.44d2.js"}'])
def test_a_login_without_a_password_stays(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("(copied from the customer's PDF) secret: Kolibri264_", "Kolibri264_"),
    ("<p>token: Niebieski138&</p>", "Niebieski138&"),
    ("as typed on the phone keyboard: API key: Tmp-6Fj0-4579&", "Tmp-6Fj0-4579&"),
    ("pasted from Word: secret: 5CfO%EwqXmQY*", "5CfO%EwqXmQY*")])
def test_a_short_secret_a_person_chose_after_a_credential_word(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", ["token: refreshToken2", "secret: MY_SECRET_2", "the token is Expired!",
                                  "secret: prod/MySecret_v2", "API key: ${OPENAI_API_KEY}", "token: <Your-Token-1>"])
def test_names_and_references_after_a_credential_word_stay(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [("Note: Recovery code: 3788 3833", "3788 3833"),
                                             ("Customer read out recovery code 1177 1147 - escalate", "1177 1147")])
def test_a_google_backup_code_of_three_distinct_digits(text: str, value: str) -> None:
    assert _values(text) == [value]
    assert _values("Recovery code: 0000 0000") == []


def test_an_authenticator_secret_after_a_long_label() -> None:
    text = "> 2FA secret (from the old phone's authenticator export): ZPVLLYWLQ3CNUSNL\n"
    assert _values(text) == ["ZPVLLYWLQ3CNUSNL"]
