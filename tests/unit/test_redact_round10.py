"""Redaction's misses by cause (the tenth corpus's round): private keys by their files' formats (PuTTY `.ppk`, age
identities, a PEM block base64-encoded), issuers' documented token formats (Terraform Cloud, CircleCI, Square),
password carriers by their documented formats (`.pgpass`, `define()` in wp-config.php, 1Password's `designation`,
FileZilla's `<Pass>`, Docker's `auth`), labels of more languages and a dash between label and value, session cookies
set in code or exported with fields between name and value, and a digest's name read in the label only. Values and
texts written for these tests, each cause with near misses that stay."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()
KEY = "Wq7Hs2Kd9Lm4Np6Rt8Vx3Zb5Cf1Gj0Yp"
B64 = "WcWnR+Fq110pthQUC0tQE9E1YpmS7pW9qgaJRUydgzP/"
PW = "Tr4il-Mix9!q"
AGE_SECRET = "AGE-SECRET-KEY-1096M62FMDXK3FE7HYQJFFTPVMXPPYRRJVWYWJN0D4G5977CZHTYWU3PXZC"
AGE_PUBLIC = "age184d0rxlukznxqt9pu0pz0dse5d3sldqgurlvm2p07gf0w9065nucgel7q4"
PPK_PRIVATE = "AAAAIHp3Qk9mLxT0vR2sYc8WnE5aJ7uDg4KfBq1iZ6oMhN3r"
PEM_B64 = ("LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1IY0NBUUVFSUJrMkxxOVZkN3JUM3hXMGFaMW1ONHBROHNZNnVFNWNIMmpGN2dLMG"
           "xSOW8KLS0tLS1FTkQgRUMgUFJJVkFURSBLRVktLS0tLQo=")
CERT_B64 = ("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJrVENCK3dJSkFLSEhJRzR5M3ZTT01BMEdDU3FHU0liM0RRRUJDd1VBTUJReEVqQV"
            "FCZ05WQkFNTUNXeHYKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=")


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


def _ppk(newline: str = "\n") -> str:
    return newline.join(["PuTTY-User-Key-File-3: ssh-ed25519", "Encryption: none", "Comment: build-box",
                         "Public-Lines: 2", "AAAAC3NzaC1lZDI1NTE5AAAAIGq8Tz1Yk4Rw9", "Lx2V", "Private-Lines: 1",
                         PPK_PRIVATE, "Private-MAC: 6b0f3c1e9a2d4b7f8c5e0a1d3f6b9c2e4a7d0f1b3c5e8a9d2f4b6c8e0a1d3f5b"])


@pytest.mark.parametrize("text,value", [
    (_ppk(), PPK_PRIVATE),
    ('{"key": "' + _ppk("\\n") + '"}', PPK_PRIVATE),                     # inside JSON text
    ("ppk: |\n  " + _ppk("\n  "), PPK_PRIVATE),                           # indented in YAML
    (f"# created: 2026-01-02T10:00:00Z\n# public key: {AGE_PUBLIC}\n{AGE_SECRET}\n", AGE_SECRET),
    (f"restore with → {AGE_SECRET}", AGE_SECRET),
    (f"    client-key-data: {PEM_B64}\n", PEM_B64),
    (f'{{"tls.key": "{PEM_B64}"}}', PEM_B64),
])
def test_private_keys_by_their_file_formats(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text", [
    f"# public key: {AGE_PUBLIC}",                 # an age recipient is public
    f"recipients: {AGE_PUBLIC}",
    f"    client-certificate-data: {CERT_B64}",     # a certificate, not a key
    "AGE-SECRET-KEY-1XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",  # a placeholder
    "PuTTY-User-Key-File-3: ssh-ed25519\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5AAAAIGq8Tz1Yk4Rw9\n",
])
def test_public_halves_and_placeholders_stay(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("value", [
    "2rYmteEri20RGU.atlasv1.FuwKK70tMTm6k69zWiK_dQ5L4-v2zMUJqJ-o1afn6mY-RBca12oyKRbhiTHzCR9cTYl",
    "CCIPAT_5MjQkpd9rGz81MTIo7DzP8_598c69886ea9b791ad0af9720eab39e8132631a1",
    "CCIPRJ_5MjQkpd9rGz81MTIo7DzP8_598c69886ea9b791ad0af9720eab39e8132631a1",
    "EAAAEE5y3ZINH0sDIhnHEmgHtE9JAf0-Uu-KtaHCB9MyebgsUPVCosfavVvreOcm",
    "sq0atp-QZ-iM2Q22c7mfTKEa0cUhp",
    "sq0csp-aAYs_ixwO2diYUPvDkk-03YiEpKkdDocepP26D33W4D",
])
@pytest.mark.parametrize("template", ["use {} for now", "Иван | → {}", '{{"value": "{}"}}'])
def test_issuer_tokens_bare(value: str, template: str) -> None:
    assert value in _values(template.format(value))


@pytest.mark.parametrize("text", [
    "sq0idp-QZ-iM2Q22c7mfTKEa0cUhp",                                 # Square's application id: public
    "CCIPAT_XXXXXXXXXXXXXXXXXXXXXX_0000000000000000000000000000000000000000",
    "app.atlasv1.config",
])
def test_issuer_token_near_misses(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("text,value", [
    (f"$ cat ~/.pgpass\npg.internal:5432:ledger:svc_ledger:{PW}\n", PW),
    (f"*:*:*:report:{PW}", PW),
    (f'{{"out": "h1.example:6432:*:bob:{PW}\\n"}}', PW),
    (f"define( 'DB_PASSWORD', '{PW}' );\ndefine( 'DB_HOST', 'localhost' );", PW),
    (f'putenv("SMTP_PASSWORD", "{PW}");', PW),
    (f'{{"loginFields": [{{"designation": "password", "value": "{PW}", "fieldType": "P"}}]}}', PW),
    ("<Server>\n  <User>upload</User>\n  <Pass encoding=\"base64\">VHI0aWwtTWl4OSFx</Pass>\n</Server>",
     "VHI0aWwtTWl4OSFx"),
    ('{"auths": {"registry.example": {"auth": "ZGVwbG95OlRyNGlsLU1peDkh"}}}', "ZGVwbG95OlRyNGlsLU1peDkh"),
    ("//registry.example/:_auth=ZGVwbG95OlRyNGlsLU1peDkh", "ZGVwbG95OlRyNGlsLU1peDkh"),
])
def test_password_carriers_by_their_formats(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text", [
    "pg.internal:5432:ledger:svc_ledger:*",              # a .pgpass wildcard is no password
    "*:*:*:*:*",
    "10:30:45:12:2026",                                  # times and figures
    "define( 'DB_HOST', 'db7.internal.example' );",      # a name that is no password's
    '{"designation": "username", "value": "ops-admin-7"}',
    '{"auth": "dGhlbWU="}',                              # decodes to no user:password
    '{"auth": "required", "mode": "strict"}',
    '{"PASS": "tests/unit/test_api.py"}',                # a test report's result, not an XML <Pass>
])
def test_password_carrier_near_misses(text: str) -> None:
    assert _values(text) == []


HEX_KEY = "a4c123b1612dd272d1371c17149d439536b3216fdaeeb975729fae923d5a4fd1"
SHA_KEY = f"Xk{'shA1'}q9Lm2Np4Rt6Vx8Zb0Cf3Gj5Hs"


@pytest.mark.parametrize("text,value", [
    *[(f"{label}: {KEY}", KEY) for label in ("API ključ", "АПИ кључ", "API võti", "API-lykill", "Ufunguo wa API",
                                             "API atslēga", "Çelësi API", "Tajni ključ")],
    (f"Client Secret - {B64}", B64), (f"API Key – {KEY}", KEY),
    (f"[Form] API ključ: {HEX_KEY}", HEX_KEY),
    (f"token: {SHA_KEY}", SHA_KEY),       # a digest's name inside the value is no label
])
def test_key_labels_of_more_languages(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text,value", [
    (f"Passwort - {PW}", PW), (f"Parool - {PW}", PW), (f"パスワード - {PW}", PW), (f"Kata laluan - {PW}", PW),
    (f"Lozinka: {PW}", PW), (f"Лозинка је {PW}", PW),
])
def test_password_labels_with_a_dash_or_more_languages(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text", [
    "Ključ je u ladici, javi se kad stigneš.",          # words of the new languages in ordinary sentences
    "Võti on laual, tule homme.",
    "Lykill að velgengni er þolinmæði.",
    "Password - reset it tomorrow",
    "API Key - see the vault entry",
    "Cep telefonunu unuttum, yarın ararım.",
])
def test_new_words_in_ordinary_sentences_stay(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("text,value", [
    ("Mobiil: 0151 23456789", "0151 23456789"),
    ("helista mulle 030 9012345", "030 9012345"),
    ("Símanúmer: 030 9012345", "030 9012345"),
    ("skambinkite 030 9012345", "030 9012345"),
    ("nipigie kwa 030 9012345", "030 9012345"),
    ("Telefón: 0171-2345678", "0171-2345678"),
    ("позовите ме на 030 9012345", "030 9012345"),
    ("Тел.: 0532-412-7788", "0532-412-7788"),
    ("Cep: 0532 412 77 88", "0532 412 77 88"),
    ("beni şu numaradan arayın 0216 412 77 88", "0216 412 77 88"),
    ("truca'm al 0044 20 7946 0321", "0044 20 7946 0321"),
    ("Soc. Sec. No. 219 09 9999", "219 09 9999"),
    ("Soc. Sec. No. 219099999", "219099999"),
])
def test_phone_and_ssn_words_of_more_languages(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text,value", [
    ("s.cookies.set('sessionid', 'q8w2e4r6t1y3u5i7o9p0', domain='app.example')", "q8w2e4r6t1y3u5i7o9p0"),
    ("res.cookie('connect.sid', 's%3Aq8w2e4r6t1y3u5i7o9p0.Zx', { httpOnly: true })", "s%3Aq8w2e4r6t1y3u5i7o9p0.Zx"),
    ('[{"domain": "app.example", "httpOnly": true, "name": "PHPSESSID", "path": "/", "secure": true, '
     '"value": "q8w2e4r6t1y3u5i7o9p0"}]', "q8w2e4r6t1y3u5i7o9p0"),
])
def test_session_cookies_set_in_code_or_exported(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text", [
    "setcookie('theme', 'dark-mode-enabled-2026', time() + 3600);",
    "s.cookies.set('sessionid', 'short1', domain='app.example')",
    '[{"name": "theme", "path": "/", "value": "dark-mode-enabled-2026"}]',
])
def test_cookie_near_misses(text: str) -> None:
    assert _values(text) == []
