"""Values the label does not stand right beside, or whose name no list holds (issue 40): a password a few words
after its label, a passphrase, the password flags of Windows' `net use`, the archivers and Impacket, and cookies
of any name where HTTP and browsers write them. Values written for these tests."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "value"), [
    ("The password, as requested: Dc9#mPq2vL", "Dc9#mPq2vL"),
    ("Kennwort für den Zugang (gültig 24 h) -> Wq7!zLp3Rt", "Wq7!zLp3Rt"),
    ("password reset done; the new one, valid until Friday, Hm4$tXq8Jw.", "Hm4$tXq8Jw"),
    ("pwd for the NAS (admin) should be Rqvts8_s26xw6G now", "Rqvts8_s26xw6G"),
    ("Vendor portal password — see below\tlantern-maple-cobalt-27", "lantern-maple-cobalt-27"),
    (json.dumps({"note": "SFTP password (rotated) Copper.Saffron.Meadow.Ember56"}),
     "Copper.Saffron.Meadow.Ember56")])
def test_a_password_a_few_words_after_its_label(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "password policy: see TestLogin_2FA and the v2.Alpha-3 branch",
    "Reset the password in PostgreSQL14 with ALTER ROLE",
    "password strength meter from zxcvbn-ts/core-v3",
    "class PasswordForm(BaseForm_V2): pass"])
def test_no_password_in_names_beside_the_word(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("the wifi pass for guests is BlueOcean77", "BlueOcean77"),
    ("net use Z: \\\\fs01\\share Xk9mPq2vP7 /user:ACME\\svc", "Xk9mPq2vP7"),
    ("net use \\\\fs01\\share /user:ACME\\svc Xk9mPq2vP7", "Xk9mPq2vP7"),
    ("unrar x -pAc9mPq2vL4 backup.rar", "Ac9mPq2vL4"),
    ("7z a -p'Qm4 zL8 rT2' archive.7z docs/", "Qm4 zL8 rT2"),
    ("impacket-psexec acme/admin:Ar9#mP@q2vL@10.0.0.5", "Ar9#mP@q2vL"),
    ("python3 secretsdump.py corp.local/svc_backup:Winter2025@dc01.corp.local", "Winter2025")])
def test_password_flags_of_windows_archivers_and_impacket(text: str, value: str) -> None:
    assert _values(text) == [value]
    assert _values("net use Z: \\\\fs01\\share /persistent:yes") == []


_SESSION = "AQEDAGeRzxWkdgeV6iYplGODlYx5uVECweGThdgH9hmsOazM4n8PVGXpV9Wv4Esb"
_CAS = "65426f74bde94fb78c8d5f08b79affd2"


@pytest.mark.parametrize("text", [
    f"Cookie: theme=dark; li_at={_SESSION}; lang=en",
    f"Set-Cookie: li_at={_SESSION}; Path=/; Domain=.example.com; HttpOnly; Secure",
    f'curl -sS -b "li_at={_SESSION}" https://app.example.com/api/me',
    f"document.cookie = 'li_at={_SESSION}; path=/'",
    f".example.com\tTRUE\t/\tTRUE\t1767225600\tli_at\t{_SESSION}",
    f"<RequestsCookieJar[<Cookie li_at={_SESSION} for .example.com/>]>",
    f"Cookie(version=0, name='li_at', value='{_SESSION}', port=None, domain='.example.com')",
    json.dumps({"cookies": [{"name": "li_at", "value": _SESSION, "domain": ".example.com", "path": "/"}]}),
    str([{"domain": ".example.com", "httpOnly": True, "name": "li_at", "path": "/", "value": _SESSION}])])
def test_a_cookie_of_any_name_where_http_writes_cookies(text: str) -> None:
    assert _values(text) == [_SESSION]


def test_a_hex_cookie_of_any_name_in_a_header_and_a_jar_inside_json() -> None:
    assert _values(f"Cookie: MOD_AUTH_CAS={_CAS}") == [_CAS]
    assert _values(json.dumps({"jar": f".example.com\tTRUE\t/\tTRUE\t1767225600\tMOD_AUTH_CAS\t{_CAS}"})) == [_CAS]


@pytest.mark.parametrize("text", [
    "Cookie: _ga=GA1.2.1234567890.1767225600; _gcl_au=1.1.1234567890.1767225600; theme=dark",
    "Set-Cookie: OptanonConsent=isGpcEnabled=0&datestamp=Mon+Dec+07+2026&version=202409.1.0; Path=/",
    'headers = {"Cookie": "_hjSessionUser_3141592=eyJpZCI6ImFiYyIsImNyZWF0ZWQiOjE3Njd9"}',
    json.dumps({"cookies": [{"name": "_ga_X1Y2Z3", "value": "GS1.1.1767225600.3.1.1767225700.0.0.0",
                             "domain": ".example.com"}]})])
def test_analytics_and_consent_cookies_are_not_read(text: str) -> None:
    assert _values(text) == []
