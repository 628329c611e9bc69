"""Redaction's misses by cause (the seventh corpus's round): credentials after any HTTP auth scheme (RFC 7235),
quoted-printable mail bodies, labels in more languages from one table, labels given by structure, national phone
numbering plans from one table. Values and texts written for these tests, each cause with near misses that stay."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()
TOKEN40 = "q7Lm2Xv9Rt4Kb8Nw1Zc6Hd3Fs5Gj0Py2Ae7Ux4Wo"
OKTA = "00aB3cD4eF5gH6iJ7kL8mN9oP0qR1sT2uV3wX4yZ5a"
HEX32 = "5b2e8f1c9a4d7e30b6c1f8a2d5e9b7c4"
HEX64 = "8e1f4a7c2b9d6e3f0a5c8b1d4e7f2a9c6b3e0d5f8a1c4b7e2d9f6a3c0b5e8d1f"
B64SIG = "Zr8kQ2mV7xL1pN4wT9cB6hJ3sF0dG5yA2eU8iO1kR7M="


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize("text,value", [
    (f"Authorization: Token {TOKEN40}", TOKEN40),
    (f"curl -H 'Authorization: SSWS {OKTA}' https://acme.okta.example/api/v1/users", OKTA),
    (f'{{"headers": {{"authorization": "ApiKey {B64SIG}"}}}}', B64SIG),
    (f'-Headers @{{"Authorization"="Token {TOKEN40}"}}', TOKEN40),
    (f'[{{"name": "Proxy-Authorization", "value": "Negotiate {TOKEN40}"}}]', TOKEN40),
    (f"Authorization: FlyV1 fm2_{TOKEN40},fm2_{OKTA}", f"fm2_{TOKEN40},fm2_{OKTA}"),
    (f'Authorization: Digest username="li", realm="x", nonce="ab12", uri="/a", response="{HEX32}"', HEX32),
    (f"Authorization: AWS4-HMAC-SHA256 Credential=AKIAZ7QX3MNB4V2LKP6T/20250101/us-east-1/s3/aws4_request, "
     f"SignedHeaders=host;x-amz-date, Signature={HEX64}", HEX64),
    (f'Authorization: hmac username="li", algorithm="hmac-sha256", headers="date", signature="{B64SIG}"', B64SIG),
    (f'Signature: keyId="k1",algorithm="rsa-sha256",signature="{B64SIG}"', B64SIG),
])
def test_credentials_after_any_http_auth_scheme(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text", [
    "Authorization: required for every admin endpoint",
    "Authorization: Bearer YOUR_ACCESS_TOKEN_HERE",
    'Authorization: Digest username="li", realm="x", nonce="ab12", uri="/a", response="ok"',
    "the response=200 came back after signature checks",
    "Authorization header missing (see docs/authorization_guide_v2.md)",
])
def test_http_auth_near_misses_stay(text: str) -> None:
    assert _values(text) == [], text


PW = "Qm4!vR8#tL2x"
KEY40 = "Hn3Wq8Lz5Kc2Vb7Xd1Mf6Rg9Tp4Js0Ya8Ue2Io5P"


@pytest.mark.parametrize("text,value", [
    (f"contrasenya: {PW}", PW),                            # Catalan
    (f"parolă: {PW}", PW),                                 # Romanian
    (f"Nenosiri ni {PW}", PW),                             # Swahili, and its "is"
    (f"kata laluan saya ialah {PW}", PW),                  # Malay, a possessive between label and "is"
    (f"পাসওয়ার্ড: {PW}", PW),                               # Bengali
    (f"رمز عبور: {PW}", PW),                                # Farsi
    (f"lozinka: {PW}", PW),                                # Croatian
    (f"salasana on {PW}", PW),                             # Finnish "is"
    ("adgangskode: Tk;9v!Lm2#q", "Tk;9v!Lm2#q"),          # a `;` inside a value
    (f"rahsia: {KEY40}", KEY40),                           # Malay secret
    (f"titkos kulcs: {KEY40}", KEY40),                     # Hungarian secret key
    (f"salainen avain on {KEY40}", KEY40),                 # Finnish
    (f"کلید مخفی: {KEY40}", KEY40),                         # Farsi
    (f"siri ni {KEY40}", KEY40),                           # Swahili
])
def test_labels_from_the_translation_table(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text,value", [
    (f":70:hemmelighet {KEY40}\n:71A:SHA", KEY40),            # a SWIFT free-text field: label, a space, value
    ("E2EDKA1 DB_PASSWORD        river-olive-42\n", "river-olive-42"),  # a fixed-width record
    (f"Id,Name,kontrasenya\n7,Acme,{PW}", PW),               # a CSV column in Tagalog
])
def test_labels_with_only_spaces_before_the_value(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text", [
    "the password field is constructed.",
    "Validate that the old_password field is correct.",
    "with password flag{0a1b2c3d4e5f60718293a4b5c6d7e8f9}",  # braces: a CTF flag, as the structure pass reads it
    "raw_password    varchar(128) NOT NULL",
    "password protected archive",
    "jdbc:sqlserver://db:1433;user=app;password=Rk7~q2Lp9;encrypt=true",
])
def test_label_near_misses_stay(text: str) -> None:
    found = _values(text)
    assert all(v in ("Rk7~q2Lp9",) for v in found), (text, found)


@pytest.mark.parametrize("text,value", [
    ('{"extension": [{"url": "https://ehr.example/StructureDefinition/api_secret", "valueString": "%s"}]}'
     % KEY40, KEY40),
    ('{"identifier": [{"system": "http://hl7.org/fhir/sid/us-ssn", "value": "512389047"}]}', "512389047"),
    ('{"telecom": [{"system": "phone", "value": "0171 5550199", "use": "mobile"}]}', "0171 5550199"),
    ('"{\\\\\\"name\\\\\\": \\\\\\"DB_PASSWORD\\\\\\", \\\\\\"value\\\\\\": \\\\\\"%s\\\\\\"}"' % PW, PW),
])
def test_values_named_by_a_uri_or_a_field_escaped_twice(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text,number", [
    ("telefon: 32 14 58 76", "32 14 58 76"),                 # Denmark: a closed 8-digit plan, no trunk
    ("mobil 48 27 61 93", "48 27 61 93"),                    # Norway
    ("phone: 8123 4567", "8123 4567"),                       # Singapore
    ("puhelin 045 123 4567", "045 123 4567"),                # Finland, trunk 0
    ("telefonszám: 06 30 123 4567", "06 30 123 4567"),       # Hungary, trunk 06
    ("телефон: 8 (812) 345-67-89", "8 (812) 345-67-89"),     # Russia, trunk 8
    ("telemóvel: 912 345 678", "912 345 678"),               # Portugal, no trunk
    ("tel 0032 471 23 45 67", "0032 471 23 45 67"),          # Belgium from abroad, 00
    ("Tel: 00971 50 123 4567", "00971 50 123 4567"),         # the UAE from abroad
    ("nombor telefon 012-345 6789", "012-345 6789"),         # Malaysia
    ("ফোন নম্বর: 01712 345678", "01712 345678"),              # a Bengali label
])
def test_phone_numbers_of_the_plan_table(text: str, number: str) -> None:
    assert number in _values(text), text


@pytest.mark.parametrize("text", [
    "call back later, ticket 4471 2281",        # an id's name between the word and the number
    "telefon: 12 34",                          # too short for any plan
    "Tel: 0044 12",                            # a country code of the table, no NSN of its plan
    "phone order 31 22 45 67",
])
def test_phone_plan_near_misses_stay(text: str) -> None:
    assert _values(text) == [], text


def test_a_value_found_once_is_replaced_wherever_its_text_repeats_it() -> None:
    text = "6224415880600487 12 34 56    ACME\n705telefon 0487 12 34 56"
    assert _values(text) == ["0487 12 34 56", "0487 12 34 56"]


def test_an_hl7_telephone_field_is_a_phone_number() -> None:
    text = "PID|1||4471^^^HOSP^MR||ROE^JO||19800101|F|||||0471 23 45 67^PRN^PH|||"
    assert "0471 23 45 67" in _values(text)


def test_a_csv_header_with_combining_marks_labels_its_column() -> None:
    assert _values("Id,เบอร์โทร,Stage\n11,081 234 5678,lead") == ["081 234 5678"]


QP_MAIL = ("Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n"
           "Ol=C3=A1, escreva para lena.quist=40example.org ou ligue +46 70 123 45=\n67.\n"
           "password=3DHv8!rq2Ltw\nkey: ghp_Zt5Wq8Lm2Xv9Rt4Kb8Nw1Zc6Hd3Fs5Gj0P=\ny2A\n")


@pytest.mark.parametrize("value,normal", [
    ("lena.quist=40example.org", "lena.quist@example.org"),             # `@` written =40
    ("+46 70 123 45=\n67", "+46 70 123 4567"),                          # a soft line break inside a number
    ("Hv8!rq2Ltw", "Hv8!rq2Ltw"),                                       # after an encoded `=`
    ("ghp_Zt5Wq8Lm2Xv9Rt4Kb8Nw1Zc6Hd3Fs5Gj0P=\ny2A", "ghp_Zt5Wq8Lm2Xv9Rt4Kb8Nw1Zc6Hd3Fs5Gj0Py2A"),
])
def test_a_quoted_printable_mail_body_is_read_decoded(value: str, normal: str) -> None:
    found = {f.value: f.key for f in DETECTOR.find(QP_MAIL)}
    assert found.get(value) == normal, found


def test_quoted_printable_inside_json_text() -> None:
    text = ('{"raw": "Content-Transfer-Encoding: quoted-printable\\n\\nsalasana: Rk7x=\\nQ2pLm9v\\n'
            'mail anna=40example.com"}')
    assert {f.key for f in DETECTOR.find(text)} == {"Rk7xQ2pLm9v", "anna@example.com"}


@pytest.mark.parametrize("text", [
    "limit=40&offset=20",                       # escapes' shapes outside a quoted-printable text
    "x =\n  compute(a=3)",
    "Content-Transfer-Encoding: quoted-printable\n\nsee you at 10=3D20 minutes",
])
def test_quoted_printable_near_misses_stay(text: str) -> None:
    assert _values(text) == [], text


@pytest.mark.parametrize("text,value", [
    ("redis_auth=Wq7#tR2!xLp", "Wq7#tR2!xLp"),       # Redis's AUTH password, as a name's end
    ('redisAuth: "Wq7#tR2!xLp"', "Wq7#tR2!xLp"),
    ("la Pass è Wq7#tR2!xLp", "Wq7#tR2!xLp"),        # `pass` alone before "is"
])
def test_auth_and_pass_labels(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text,value", [
    ("curl -su ana.ops:Tq7*vL2!mX9p https://ci.example.net/api/json", "Tq7*vL2!mX9p"),  # -u among short flags
    ("contact_phone=0xx21 98765-4321 attempt=2", "0xx21 98765-4321"),      # Anatel's 0xx carrier notation
    ("Telefone: +55 (21) 9 8765-4321", "+55 (21) 9 8765-4321"),           # Brazil's mobile 9 apart
])
def test_shell_user_flags_and_brazilian_notations(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("text,value", [
    ("bot token 7302518846:AAGk2Lm9Qx7Vb4Nc8Rt1Zw5Hy3Pd6Sf0JuE ok", "7302518846:AAGk2Lm9Qx7Vb4Nc8Rt1Zw5Hy3Pd6Sf0JuE"),
    (f"ключ API Zendesk: {KEY40}", KEY40),             # a key word, API and a provider's name before the `:`
    (f":70:API-nøgle Zendesk {KEY40}\n", KEY40),        # ... and before the value with a space alone
    (f"Id,kunci API Zendesk\n7,{KEY40}", KEY40),        # as a CSV column's header
    (f"คีย์ API: {KEY40}", KEY40),                       # Thai
])
def test_tokens_and_keys_named_with_a_provider(text: str, value: str) -> None:
    assert value in _values(text), text


ADYEN = "AQEz7Kq2Lm9Xv4Rt8Nw1Zc6Hd3Fs5Gj0Py2Ae7Ux4WoBv==-Tq4Zm8Rw2Kx6Lb1Vn9Hc5Jd3Gs7Fb0Ye4Ua2To8X=-k3#Vb!9qLm"


@pytest.mark.parametrize("text,value", [
    (f"ADYEN_API_KEY: {ADYEN}", ADYEN),
    ("PASS oauth:k2v9x4q7m1z8r3t6w0y5b2n7c4d9fh", "oauth:k2v9x4q7m1z8r3t6w0y5b2n7c4d9fh"),
    ("token=access_token$production$k2v9x4q7m1z8r3t6$5b2e8f1c9a4d7e30b6c1f8a2d5e9b7c4",
     "access_token$production$k2v9x4q7m1z8r3t6$5b2e8f1c9a4d7e30b6c1f8a2d5e9b7c4"),
    ("Plaid secret: 7c1e9a4f20b85d36e1a09f4c7b2d8e", "7c1e9a4f20b85d36e1a09f4c7b2d8e"),  # 30 hex
])
def test_provider_formats_of_the_round(text: str, value: str) -> None:
    assert value in _values(text), text


@pytest.mark.parametrize("number", [
    "9792 0000 0000 0003",     # Troy
    "6363 6800 0000 0007",     # Elo
    "6082 0000 0000 0008",     # RuPay
])
def test_cards_of_more_issuers(number: str) -> None:
    assert _values(f"card {number} ok") == [number]


def test_a_digest_s_name_before_a_key_word_keeps_a_bare_value() -> None:
    assert _values("cache key Tq4Zm8Rw2Kx6Lb1Vn9Hc5Jd3Gs7Fb0Ye") == []
